"""Connections to a real server: each thread that sends keeps one of its own.

A server on a local port names the connection (the client's port) of every request and says
when a connection ends, so the tests see what the network sees.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from customs_batch.client import NotSentError, RetryPolicy, Sender, TlsFailedError
from tests.tls import HandshakeCounter, make_certificate

WAIT = 30.0  # seconds: only a bound on a gate that opens at once when all is well


class _Server:
    """An HTTP/1.1 server answering every GET with the port of the client's connection
    (over TLS with ``tls``: a certificate and its key)."""

    def __init__(self, tls: tuple[Path, Path] | None = None) -> None:
        self.ended: list[int] = []
        self.changed = threading.Condition()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep the connection alive between requests

            def do_GET(self) -> None:  # the name http.server calls
                body = str(self.client_address[1]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def finish(self) -> None:
                super().finish()
                with server.changed:
                    server.ended.append(self.client_address[1])
                    server.changed.notify_all()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.http.socket = context.wrap_socket(self.http.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.http.server_address[1]}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def wait_ended(self, ports: set[int]) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: ports <= set(self.ended), WAIT), self.ended

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()
        self.thread.join(WAIT)


@pytest.fixture
def server() -> Iterator[_Server]:
    running = _Server()
    yield running
    running.close()


def _port(sender: Sender) -> int:
    answer = sender.send("GET", "/v1/port")
    assert isinstance(answer, int)
    return answer


def _in_thread(
    sender: Sender, hold: threading.Event | None = None
) -> tuple[list[int], threading.Thread]:
    """Send once in a new thread, then (with ``hold``) wait for it and send again."""
    ports: list[int] = []
    sent = threading.Event()

    def work() -> None:
        ports.append(_port(sender))
        sent.set()
        if hold is not None:
            assert hold.wait(WAIT)
            ports.append(_port(sender))

    thread = threading.Thread(target=work)
    thread.start()
    assert sent.wait(WAIT)
    return ports, thread


def test_each_thread_keeps_a_connection_of_its_own(server: _Server) -> None:
    sender = Sender(server.url, "k")
    try:
        hold = threading.Event()
        first, first_thread = _in_thread(sender, hold)
        # The first thread's connection is idle now: a shared pool would lend it out.
        second, second_thread = _in_thread(sender, hold)
        hold.set()
        first_thread.join(WAIT)
        second_thread.join(WAIT)
        assert first[0] == first[1], "a thread's requests go over its one kept-alive connection"
        assert second[0] == second[1]
        assert first[0] != second[0], "two threads never share a connection"
        assert _port(sender) not in (first[0], second[0])
    finally:
        sender.close()


def test_the_connections_of_ended_threads_and_then_all_are_closed(server: _Server) -> None:
    sender = Sender(server.url, "k")
    try:
        ended, thread = _in_thread(sender)
        thread.join(WAIT)
        assert server.ended == []  # kept alive until a new pool is made or the sender closes
        main = _port(sender)  # a new pool: the ended thread's is closed
        server.wait_ended({ended[0]})
        assert _port(sender) == main
    finally:
        sender.close()
    server.wait_ended({ended[0], main})


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, and its key."""
    return make_certificate(tmp_path_factory.mktemp("tls"))


def test_the_pools_verify_the_server_as_httpx_does(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each thread's pool is made by the client, not by httpx: it still refuses a
    certificate no authority vouches for, and trusts one named by SSL_CERT_FILE."""
    server = _Server(tls=certificate)
    try:
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        untrusting = Sender(server.url, "k", sleep=_no_wait)
        with pytest.raises(TlsFailedError, match=r"not trusted here .*self-signed certificate"):
            untrusting.send("GET", "/v1/port")
        untrusting.close()
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
        trusting = Sender(server.url, "k")
        try:
            assert isinstance(_port(trusting), int)
        finally:
            trusting.close()
    finally:
        server.close()


def _no_wait(seconds: float) -> None:
    raise AssertionError(f"the sender waited {seconds} s to send again")


def test_an_untrusted_certificate_is_one_handshake_and_says_what_to_do(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sending again cannot mend a certificate: one handshake, no backoff, and the hint
    names SSL_CERT_FILE. Nothing was sent, so it is a NotSentError all the same."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    server = HandshakeCounter(certificate)
    sender = Sender(server.url, "k", sleep=_no_wait)
    try:
        with pytest.raises(TlsFailedError) as refused:
            sender.send("POST", "/v1/things", body={"a": 1})
    finally:
        sender.close()
        server.close()
    assert server.connections == 1
    assert isinstance(refused.value, NotSentError)
    assert "nothing was sent" in refused.value.message
    assert refused.value.hint is not None and "SSL_CERT_FILE" in refused.value.hint


def test_a_server_without_tls_behind_https_is_one_attempt_and_names_the_scheme() -> None:
    """``https://`` to a server that answers in plain HTTP: not retried, and the hint
    points at the base URL's scheme."""
    server = HandshakeCounter(None)
    sender = Sender(server.url, "k", sleep=_no_wait)
    try:
        with pytest.raises(TlsFailedError, match="does not answer in TLS") as refused:
            sender.send("GET", "/v1/shipments")
    finally:
        sender.close()
        server.close()
    assert server.connections == 1
    assert refused.value.hint is not None and "http://" in refused.value.hint


def test_a_refused_connection_is_still_sent_again() -> None:
    """The other failures to connect may pass by themselves (a service restarting): they
    are retried as before, with the policy's backoff."""
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now: the connection is refused
    waits: list[float] = []
    sender = Sender(f"http://127.0.0.1:{port}", "k", sleep=waits.append)
    try:
        with pytest.raises(NotSentError) as failed:
            sender.send("GET", "/v1/shipments")
    finally:
        sender.close()
    assert not isinstance(failed.value, TlsFailedError)
    assert len(waits) == RetryPolicy().max_attempts - 1


class _Proxy:
    """A forward HTTP proxy on a local port: answers each request itself, with the target
    it was asked for (the absolute URL a client sends a proxy), and keeps those targets."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the name http.server calls
                proxy.asked.append(self.path)
                body = json.dumps({"via": "proxy", "target": self.path}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()
        self.thread.join(WAIT)


@pytest.fixture
def proxy() -> Iterator[_Proxy]:
    running = _Proxy()
    yield running
    running.close()


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_a_proxy_the_environment_names_is_used(
    proxy: _Proxy, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    """Behind a proxy (a company network), requests go through the one HTTP_PROXY,
    HTTPS_PROXY or ALL_PROXY names, as httpx's own client sends them; the host of the
    base URL is one no resolver knows, so only the proxy can answer."""
    monkeypatch.setenv(variable, proxy.url)
    sender = Sender("http://customs.invalid", "k")
    try:
        answer = sender.send("GET", "/v1/shipments")
    finally:
        sender.close()
    assert answer == {"via": "proxy", "target": "http://customs.invalid/v1/shipments"}
    assert proxy.asked == ["http://customs.invalid/v1/shipments"]


def test_no_proxy_reaches_its_hosts_directly(
    proxy: _Proxy, server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host NO_PROXY names is reached directly, past the proxy."""
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    sender = Sender(server.url, "k")
    try:
        assert isinstance(_port(sender), int)
    finally:
        sender.close()
    assert proxy.asked == []
