"""One line per request (time, method, path, status, milliseconds), written to a stream.

``sandbox serve`` writes them to stderr::

    2026-11-26 04:05:20,123 POST /v1/declaration-templates/groups 201 0.4ms

In place of the status, ``error`` marks a request the emulator failed on, ``dropped`` one a
fault dropped and ``disconnected`` one whose client left before the emulator read its whole
body (nothing done); one whose body stopped before its end, and which the HTTP server
answered 408 itself, is logged ``408``. A request the emulator had whole when its client left (a DELETE, one
held at the test gate) is carried out and logged with the status nobody received.

The path is the decoded path (``/v1/shipments/shp_7Hk2Lm/hawbs``), with each character
that could end the line or shift its fields percent-encoded as a client sends it: a control
character (``%0A``), a space or another separator (``%20``), and ``%`` itself (``%25``, so
what is shown decodes to the path, one way). A path whose escapes are not UTF-8
(``shp_%FF``) is shown as its bytes, never with the U+FFFD its decoding put in their place. A client's path holding ``%0A`` wrote a line
of its own choosing into the log, a forged ``POST .../movements 201`` line for a test that
counts them.

The line is written here rather than through the ``logging`` module, in the format its
``%(asctime)s %(message)s`` gave: a log record, its handler and its formatter cost about
10 us of CPU per request (a fifth of the emulator's own work on a small POST), the line
written here about 2 us.
"""

from __future__ import annotations

import time
from typing import TextIO
from urllib.parse import quote, unquote_to_bytes

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from customs_batch.sandbox import contract
from customs_batch.sandbox.faults import ConnectionDropped

TIMED_OUT = "customs_batch.timed_out"
"""The scope key the HTTP server sets on a request whose body stopped before its end and
which it answered 408 itself (``server.py``): logged ``408``, not ``disconnected``."""


def shown_path(path: str, raw_path: bytes | None = None) -> str:
    """``path`` as the log line shows it: a character that is not printable (a control
    character, a line or paragraph separator), a space of any kind, or ``%``, percent-encoded
    (its UTF-8 bytes); every other character as it is.

    A path whose escapes in ``raw_path`` decode to bytes that are not UTF-8 was decoded with
    U+FFFD for those bytes, which the client never sent: it is shown from its bytes, each
    one that is not printable ASCII, and ``%``, percent-encoded (``shp_%FF``).
    """
    if "\ufffd" in path and raw_path is not None:
        sent = unquote_to_bytes(raw_path)
        try:
            sent.decode("utf-8")
        except UnicodeDecodeError:
            return "".join(chr(b) if 0x20 < b < 0x7F and b != 0x25 else f"%{b:02X}" for b in sent)
    if path.isprintable() and " " not in path and "%" not in path:
        return path  # nearly every path: nothing to encode
    return "".join(
        char
        if char.isprintable() and char not in " %"
        else quote(char, safe="", errors="surrogatepass")
        for char in path
    )


class RequestLog:
    """ASGI middleware that writes a line for each request to ``lines`` once it ended."""

    def __init__(self, app: ASGIApp, lines: TextIO) -> None:
        self.app = app
        self.lines = lines
        # The second last written and its local time, one tuple replaced whole: requests of
        # several threads (the in-process transport) never pair a second with another's text.
        self._last_second: tuple[int, str] = (-1, "")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def logged_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        outcome = "error"
        try:
            await self.app(scope, receive, logged_send)
            outcome = str(status)
        except ConnectionDropped:
            outcome = "dropped"
            raise
        except ClientDisconnect:
            # The client left before its body was read (its timeout ran out during a slow
            # fault, say): nobody is there to answer, and nothing failed in the emulator.
            # Re-raised, the server would log it as an error with a traceback.
            outcome = str(contract.REQUEST_TIMEOUT) if scope.get(TIMED_OUT) else "disconnected"
        finally:
            milliseconds = (time.perf_counter() - started) * 1000
            path = shown_path(scope["path"], scope.get("raw_path"))
            self._write(scope["method"], path, outcome, milliseconds)

    def _write(self, method: str, path: str, outcome: str, milliseconds: float) -> None:
        now = time.time()
        second = int(now)
        last, text = self._last_second
        if second != last:
            text = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))
            self._last_second = (second, text)
        millisecond = int((now - second) * 1000)
        line = f"{text},{millisecond:03d} {method} {path} {outcome} {milliseconds:.1f}ms\n"
        try:
            self.lines.write(line)
            self.lines.flush()
        except (OSError, ValueError):
            pass  # a closed or broken stderr must not fail the request (as with logging)
