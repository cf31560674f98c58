"""A synchronous httpx transport that runs an ASGI application in-process.

httpx's own ``ASGITransport`` is async-only, but the API client uses a synchronous
``httpx.Client``. This transport runs the application on a private event loop in a
background thread and hands each request to it, as ``starlette.testclient`` does with an
anyio portal. Handing over is thread-safe, so several worker threads may send through one
transport at once; the event loop interleaves their requests. The loop thread is a daemon
(unlike anyio's portal thread), so a program that forgets ``close()`` still exits.

Usage::

    client = httpx.Client(transport=InProcessTransport(app), base_url="http://sandbox.local")
"""

from __future__ import annotations

import asyncio
import threading
from urllib.parse import unquote

import httpx
from starlette.types import ASGIApp, Message

from customs_batch.sandbox.faults import ConnectionDropped


class InProcessTransport(httpx.BaseTransport):
    """Send requests to an ASGI ``app`` running on a private event loop thread."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Run ``request`` through the application and return its buffered response."""
        request.read()
        future = asyncio.run_coroutine_threadsafe(self._send(request), self._started_loop())
        try:
            status, headers, content = future.result()
        except ConnectionDropped as exc:
            # Over real HTTP the server closes the socket; give the client the same error.
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            ) from exc
        return httpx.Response(status, headers=headers, content=content, request=request)

    async def _send(self, request: httpx.Request) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """Run the ASGI application for one request and collect its response.

        Written out rather than delegated to httpx's ``ASGITransport``, which tries to
        import ``sniffio`` on every request (a third of a millisecond when it is absent).
        """
        url = request.url
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(key.lower(), value) for key, value in request.headers.raw],
            "scheme": url.scheme,
            "path": unquote(url.path),
            "raw_path": url.raw_path.split(b"?")[0],
            "query_string": url.query,
            "root_path": "",
            "server": (url.host, url.port or (443 if url.scheme == "https" else 80)),
            "client": ("127.0.0.1", 0),
        }
        body_sent = False
        complete = asyncio.Event()
        status = 500
        headers: list[tuple[bytes, bytes]] = []
        chunks: list[bytes] = []

        async def receive() -> Message:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": request.content, "more_body": False}
            await complete.wait()  # like a client that stays until the response is done
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            nonlocal status, headers
            if message["type"] == "http.response.start":
                status, headers = message["status"], list(message.get("headers", []))
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    complete.set()

        try:
            await self._app(scope, receive, send)
        finally:
            complete.set()
        return status, headers, b"".join(chunks)

    def _started_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="customs-batch-sandbox", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def close(self) -> None:
        """Stop the event loop thread; a later request starts a new one."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop, self._thread = None, None
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()
