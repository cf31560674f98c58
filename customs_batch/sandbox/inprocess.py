"""A synchronous httpx transport that runs an ASGI application in-process.

httpx's own ``ASGITransport`` is async-only, but the API client uses a synchronous
``httpx.Client``. This transport runs the application on an event loop of the calling
thread's own, so a request costs no hand-over between threads (the emulator keeps its data
behind thread locks and never awaits while holding one, so it serves several loops at
once). Several worker threads may send through one transport at the same time, each on its
own loop, as they would over sockets. ``close()`` closes every loop it made.

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
    """Send requests to an ASGI ``app``, run on an event loop of the calling thread."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self._lock = threading.Lock()
        self._local = threading.local()
        self._loops: list[asyncio.AbstractEventLoop] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Run ``request`` through the application and return its buffered response."""
        request.read()
        try:
            status, headers, content = self._own_loop().run_until_complete(self._send(request))
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

    def _own_loop(self) -> asyncio.AbstractEventLoop:
        loop: asyncio.AbstractEventLoop | None = getattr(self._local, "loop", None)
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            self._local.loop = loop
            with self._lock:
                self._loops.append(loop)
        return loop

    def close(self) -> None:
        """Close the event loops; a later request makes a new one."""
        with self._lock:
            loops, self._loops = self._loops, []
        for loop in loops:
            if not loop.is_running():
                loop.close()
