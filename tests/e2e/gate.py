"""A gate between the CLI and the emulator: forwards every request, and holds one chosen
request until the test opens the gate, so a test can act while a run is in the middle of
its work without any timing."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

import httpx

FORWARDED_HEADERS = ("authorization", "content-type", "idempotency-key", "accept", "user-agent")
RETURNED_HEADERS = ("content-type", "retry-after")


def _is_post(method: str, path: str) -> bool:
    return method == "POST"


class GatedProxy:
    """Forwards to ``upstream``; the ``hold``-th POST (or the ``hold``-th request that
    ``select`` takes, by method and path) waits at the gate until ``open()``."""

    def __init__(
        self, upstream: str, *, hold: int, select: Callable[[str, str], bool] = _is_post
    ) -> None:
        self.hold = hold
        self.held = threading.Event()  # the chosen request is waiting at the gate
        self.forwarded = threading.Event()  # the chosen request reached the upstream
        self._open = threading.Event()
        self._dropped = threading.Event()
        self._count = threading.Lock()
        self._select = select
        self._selected = 0
        self.posts = 0
        self.posts_after_open = 0  # requests that arrived after the gate was opened
        self._upstream = httpx.Client(base_url=upstream, timeout=30)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> GatedProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._open.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
        self._upstream.close()

    def open(self) -> None:
        """Let the held request through, and every later one."""
        self._open.set()

    def drop(self) -> None:
        """Close the held request's connection without forwarding it (the service never
        hears of it, as if the run had been killed before it left), and let later ones
        through."""
        self._dropped.set()
        self._open.set()

    def _arrived(self, method: str, path: str) -> bool:
        """Count the request; hold it if it is the chosen one (then return True)."""
        with self._count:
            if method == "POST":
                if self._open.is_set():
                    self.posts_after_open += 1
                self.posts += 1
            mine = False
            if self._select(method, path):
                self._selected += 1
                mine = self._selected == self.hold
        if mine:
            self.held.set()
            self._open.wait(timeout=60)
        return mine

    def _forward(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> httpx.Response:
        return self._upstream.request(method, path, headers=headers, content=body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                mine = proxy._arrived(self.command, self.path)
                if mine and proxy._dropped.is_set():
                    self.close_connection = True
                    return
                headers = {
                    name: value
                    for name, value in self.headers.items()
                    if name.lower() in FORWARDED_HEADERS
                }
                answer = proxy._forward(self.command, self.path, headers, body)
                if mine:
                    proxy.forwarded.set()
                try:
                    self.send_response(answer.status_code)
                    for name in RETURNED_HEADERS:
                        if name in answer.headers:
                            self.send_header(name, answer.headers[name])
                    self.send_header("Content-Length", str(len(answer.content)))
                    self.end_headers()
                    self.wfile.write(answer.content)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client was killed while its request was held

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

            def log_message(self, format: str, *args: object) -> None:
                return

        return Handler
