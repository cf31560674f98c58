"""TLS for the tests: a self-signed certificate made by the ``openssl`` command, and a
server on a local port that takes secure handshakes and counts them.

The certificate is for 127.0.0.1 and vouched for by no authority, so a client that trusts
the usual authorities refuses it, and one told to trust it (``SSL_CERT_FILE``) accepts it.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import pytest

WAIT = 30.0  # seconds: only a bound on a join that ends at once when all is well


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, written in ``folder`` by the
    ``openssl`` command (``make test`` installs it where the machine has none)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("the TLS tests need the openssl command: make test installs it as root")
    cert, key = folder / "cert.pem", folder / "key.pem"
    command = [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    command += ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"]
    command += ["-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(command, check=True, capture_output=True)
    return cert, key


class HandshakeCounter:
    """A server on a local port that answers each connection with a TLS handshake (with
    ``certificate``; without one, with a line of plain HTTP, as a server that does not speak
    TLS would) and closes it. ``connections`` counts the connections it accepted."""

    def __init__(self, certificate: tuple[Path, Path] | None) -> None:
        self._context: ssl.SSLContext | None = None
        if certificate is not None:
            self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self._context.load_cert_chain(*certificate)
        self._listener = socket.create_server(("127.0.0.1", 0))
        port = self._listener.getsockname()[1]
        self.url = f"https://127.0.0.1:{port}"
        self.connections = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:  # closed: the test is over
                return
            self.connections += 1
            with connection:
                connection.settimeout(WAIT)
                try:
                    if self._context is None:
                        connection.recv(4096)  # the client's hello, answered in plain HTTP
                        connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                    else:
                        with self._context.wrap_socket(connection, server_side=True):
                            pass
                except OSError:  # the client refused the handshake: what the tests expect
                    pass

    def close(self) -> None:
        """Stop taking connections (``connections`` is final once this returns); closing
        again does nothing."""
        if self._listener.fileno() >= 0:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept that waits (Linux)
            self._listener.close()
        self._thread.join(WAIT)
        assert not self._thread.is_alive()
