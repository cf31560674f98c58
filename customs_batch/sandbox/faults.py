"""Fault injection for reliability tests: server errors, dropped connections, slowness, 429s.

A fault spec is a comma-separated list of ``name=probability`` entries::

    5xx=0.1,drop=0.05,slow=0.2:1.5s,429=0.05,drop-after=0.02,5xx-after=0.02

``5xx`` answers 503 and ``drop`` closes the connection without a complete response, both
before the request has any effect; ``5xx-after`` and ``drop-after`` do the same AFTER the
request took effect (a movement is created, then the client never learns it); ``429`` is a
spurious rate-limit answer; ``slow=P:Ss`` delays a response by S seconds. At most one of the
refusing faults strikes a request (their probabilities must add up to at most 1); ``slow``
is drawn independently. Faults apply to ``/v1`` and the unversioned transit paths, never to
``/_sandbox`` or ``/openapi.json``. With a fault seed the draws repeat run after run.
"""

from __future__ import annotations

import json
import random
import re
import threading
from dataclasses import dataclass
from enum import Enum
from typing import NoReturn

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from customs_batch.errors import UsageError


class ConnectionDropped(Exception):
    """Raised inside the application to make the server close the connection mid-response."""


class Fault(Enum):
    """What a request suffers, at most one per request."""

    NONE = "none"
    ERROR = "5xx"
    DROP = "drop"
    ERROR_AFTER = "5xx-after"
    DROP_AFTER = "drop-after"
    RATE_LIMIT = "429"


@dataclass(frozen=True)
class FaultSpec:
    """Probabilities of each fault; ``slow_seconds`` is the delay of a slow response."""

    probabilities: tuple[tuple[Fault, float], ...] = ()
    slow_probability: float = 0.0
    slow_seconds: float = 0.0

    @property
    def active(self) -> bool:
        """Whether any fault can strike at all."""
        return bool(self.probabilities) or self.slow_probability > 0


_SLOW = re.compile(r"^(?P<p>[0-9.]+):(?P<s>[0-9.]+)s?$")
_NAMES = {fault.value: fault for fault in Fault if fault is not Fault.NONE}
_EXAMPLE = "5xx=0.1,drop=0.05,slow=0.2:1.5s,429=0.05,drop-after=0.02,5xx-after=0.02"


def parse_faults(text: str) -> FaultSpec:
    """Parse a ``--faults`` spec; an empty text means no faults."""
    probabilities: dict[Fault, float] = {}
    slow_p, slow_s = 0.0, 0.0
    named: set[str] = set()
    for entry in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = entry.partition("=")
        name = name.strip().lower()
        if not sep:
            raise _bad(f"'{entry}' has no '='")
        if name in named:  # one of its values taken silently would run other odds than asked
            raise _bad(f"{name} is named twice: give each fault once")
        named.add(name)
        if name == "slow":
            match = _SLOW.match(value.strip())
            if match is None:
                raise _bad(f"slow wants PROBABILITY:SECONDS, e.g. slow=0.2:1.5s, not '{value}'")
            slow_p, slow_s = _probability(name, match["p"]), _seconds(value, match["s"])
        elif name in _NAMES:
            probabilities[_NAMES[name]] = _probability(name, value)
        else:
            raise _bad(f"unknown fault '{name}'")
    if sum(probabilities.values()) > 1.0:
        raise _bad("the probabilities of 5xx, drop, 429, 5xx-after and drop-after add up to > 1")
    return FaultSpec(tuple(probabilities.items()), slow_p, slow_s)


def _probability(name: str, value: str) -> float:
    try:
        probability = float(value)
    except ValueError:
        raise _bad(f"{name}={value}: the probability must be a number from 0 to 1") from None
    if not 0.0 <= probability <= 1.0:
        raise _bad(f"{name}={value}: the probability must be from 0 to 1")
    return probability


def _seconds(value: str, seconds: str) -> float:
    """The delay of ``slow=P:Ss``: a number of seconds (``1.5``), never ``1.2.3`` or ``.``."""
    try:
        return float(seconds)
    except ValueError:
        raise _bad(f"slow={value}: the delay must be a number of seconds, e.g. 1.5s") from None


def _bad(what: str) -> UsageError:
    return UsageError(f"invalid --faults spec: {what}", hint=f"for example --faults '{_EXAMPLE}'")


class FaultDice:
    """Draws the fault of each request; reproducible from a seed, safe across threads."""

    def __init__(self, spec: FaultSpec, seed: int | None) -> None:
        self._spec = spec
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def draw(self) -> tuple[Fault, float]:
        """The fault of the next request, and how long to delay it."""
        with self._lock:
            roll, slow_roll = self._random.random(), self._random.random()
        delay = self._spec.slow_seconds if slow_roll < self._spec.slow_probability else 0.0
        for fault, probability in self._spec.probabilities:
            if roll < probability:
                return fault, delay
            roll -= probability
        return Fault.NONE, delay


def faultable(path: str) -> bool:
    """Whether faults (and the test gate) act on ``path``: the API, not the emulator's own."""
    return not (path.startswith("/_sandbox") or path == "/openapi.json")


class FaultMiddleware:
    """ASGI middleware that makes requests suffer the faults drawn by a ``FaultDice``."""

    def __init__(self, app: ASGIApp, dice: FaultDice) -> None:
        self.app = app
        self.dice = dice

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not faultable(scope["path"]):
            await self.app(scope, receive, send)
            return
        fault, delay = self.dice.draw()
        if delay:
            await anyio.sleep(delay)
        if fault is Fault.NONE:
            await self.app(scope, receive, send)
        elif fault in (Fault.ERROR_AFTER, Fault.DROP_AFTER):
            await self.app(scope, receive, _discard)
            await _fail(fault, send, scope)
        else:
            await _drain(receive)
            await _fail(fault, send, scope)


async def _discard(message: Message) -> None:
    """Swallow the real response: the client gets the fault instead."""


async def _drain(receive: Receive) -> None:
    message = await receive()
    while message.get("more_body", False):
        message = await receive()


_UNWRITABLE = [(b"x-fault", b"drop\r\n")]
"""A header no HTTP/1.1 server writes (a line break in its value): the server refuses the
response start that holds it before writing a byte of it."""


async def _fail(fault: Fault, send: Send, scope: Scope) -> None:
    if fault in (Fault.DROP, Fault.DROP_AFTER):
        await _drop(send, head=scope.get("method") == "HEAD")
    status = 429 if fault is Fault.RATE_LIMIT else 503
    reason = "Too Many Requests" if status == 429 else "Service Unavailable"
    body = json.dumps(
        {"statusCode": status, "message": f"fault injection: {fault.value}", "error": reason}
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 429:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _drop(send: Send, *, head: bool) -> NoReturn:
    """Close the connection without a complete response.

    The response is started (a server answers 500 for an application that fails before
    it starts one), then the application fails: the server closes the socket. A GET's start
    promises 64 bytes of body it never gets, so the client sees the connection end in the
    middle of the body. A HEAD response has no body: its status line and headers are the
    whole response, so a HEAD's start holds a header the server refuses to write, and the
    client sees the connection end before any byte of an answer.
    """
    headers = _UNWRITABLE if head else [(b"content-length", b"64")]
    try:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
    except Exception as exc:  # the server refused the unwritable header, as meant
        raise ConnectionDropped("fault injection: connection dropped") from exc
    raise ConnectionDropped("fault injection: connection dropped")
