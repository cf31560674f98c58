"""One log line per request (method, path, status, milliseconds), on the ``customs_batch.sandbox`` logger."""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from customs_batch.sandbox.faults import ConnectionDropped

LOGGER = logging.getLogger("customs_batch.sandbox")


class RequestLog:
    """ASGI middleware that logs each request once its response has started."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not LOGGER.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def logged_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        outcome = ""
        try:
            await self.app(scope, receive, logged_send)
            outcome = str(status)
        except ConnectionDropped:
            outcome = "dropped"
            raise
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            LOGGER.info(
                "%s %s %s %.1fms", scope["method"], scope["path"], outcome or "error", elapsed
            )
