"""Serving the emulator over real HTTP with uvicorn (``customs-batch sandbox serve``)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from customs_batch.errors import ConfigError
from customs_batch.sandbox import contract
from customs_batch.sandbox.app import create_app
from customs_batch.sandbox.auth import key_digest, revoked
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.faults import ConnectionDropped, FaultSpec
from customs_batch.sandbox.gate import Gate
from customs_batch.sandbox.persistence import held_alone
from customs_batch.sandbox.ratelimit import RateLimit
from customs_batch.sandbox.requestlog import TIMED_OUT
from customs_batch.sandbox.seed import Seed, builtin_seed, load_seed
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.web import error


@dataclass(frozen=True)
class ServeOptions:
    """What ``sandbox serve`` was asked to do."""

    host: str = "127.0.0.1"
    port: int = 8080
    seed_path: Path | None = None
    db_path: Path | None = None
    rate_limit: RateLimit | None = None
    processing_seconds: float = 2.0
    manual_clock: bool = False
    faults: FaultSpec | None = None
    fault_seed: int | None = None


class _HideDrops(logging.Filter):
    """Injected connection drops are on purpose: keep their tracebacks out of the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], ConnectionDropped))


def serve(options: ServeOptions, announce: Callable[[str], None]) -> None:
    """Serve until SIGTERM or Ctrl-C; ``announce`` receives the start-up lines."""
    seed = load_seed(options.seed_path) if options.seed_path else builtin_seed()
    with ExitStack() as held:
        if options.db_path is not None:
            # One emulator per database, for as long as it serves (persistence.held_alone).
            held.enter_context(held_alone(options.db_path))
        _serve(options, seed, announce)


def _serve(options: ServeOptions, seed: Seed, announce: Callable[[str], None]) -> None:
    app = create_app(
        seed=seed,
        db_path=options.db_path,
        rate_limit=options.rate_limit,
        processing_seconds=options.processing_seconds,
        manual_clock=options.manual_clock,
        faults=options.faults,
        fault_seed=options.fault_seed,
        request_log=sys.stderr,
    )
    listener = _bind(options.host, options.port)
    _configure_logging()
    host, port = listener.getsockname()[:2]
    shown_host = f"[{host}]" if ":" in host else host
    announce(f"customs-batch sandbox listening on http://{shown_host}:{port}")
    announce(_keys_line(seed, app.state.sandbox, options.db_path))
    config = uvicorn.Config(
        app,
        http=_ApiRefusals,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="off",
    )
    with _quiet_signals():
        _Server(config, app.state.gate).run(sockets=[listener])
    app.state.sandbox.store.close()


class _BoundedHead(h11.Connection):
    """h11's connection with one bound on a request head, however its bytes arrive.

    h11 bounds only a head still incomplete (``max_incomplete_event_size``): a head that
    arrived in one read was taken at any size, the same head arriving in parts was refused
    past 16 KiB. Here a complete head past ``MAX_HEAD_BYTES`` is refused as an incomplete
    one is (h11 hints 431 for that), so the answer does not depend on the network.
    """

    head_too_large = False

    def next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        """h11's next event; a head past the bound raises as h11 does for an incomplete one."""
        reading_head = self.their_state is h11.IDLE  # not a chunk line of a body
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as exc:
            self.head_too_large = reading_head and exc.error_status_hint == contract.HEAD_TOO_LARGE
            raise
        if isinstance(event, h11.Request):
            if _head_bytes(event) > contract.MAX_HEAD_BYTES:
                self.head_too_large = True
                raise h11.RemoteProtocolError(
                    "request head too large", error_status_hint=contract.HEAD_TOO_LARGE
                )
            _require_clear_framing(event)
        return event


_HOST = re.compile(rb"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]*)(:[0-9]*)?")
"""A ``Host`` value as RFC 9110 (section 7.2) has it: a host (a name, an IPv4 address or an
IP literal in brackets) and an optional port."""


def _require_clear_framing(request: h11.Request) -> None:
    """Refuse what RFC 9112 has a server refuse, or take only with a closed connection, and
    h11 takes: a request with both ``Transfer-Encoding`` and ``Content-Length`` (section
    6.3: read as chunked, it was answered and the connection kept open, the way a request
    is smuggled past a proxy that read the length), ``Transfer-Encoding`` in HTTP/1.0
    (section 6.1: faulty framing), and a ``Host`` that is no host (section 3.2: 400)."""
    names = {name for name, _ in request.headers}
    chunked = b"transfer-encoding" in names
    if chunked and (b"content-length" in names or request.http_version == b"1.0"):
        raise h11.RemoteProtocolError("unclear framing", error_status_hint=contract.BAD_REQUEST)
    for name, value in request.headers:
        if name == b"host" and not _HOST.fullmatch(value):
            raise h11.RemoteProtocolError("invalid Host", error_status_hint=contract.BAD_REQUEST)


def _head_bytes(request: h11.Request) -> int:
    """The size of ``request``'s head as a client writes it: ``Name: value`` lines."""
    line = len(request.method) + len(request.target) + len(b"  HTTP/1.1\r\n")
    fields = sum(len(name) + len(value) + len(b": \r\n") for name, value in request.headers)
    return line + fields + len(b"\r\n")


# How long a refused connection keeps reading (and dropping) what its client still sends.
_LINGER_SECONDS = 2.0


class _ApiRefusals(H11Protocol):
    """uvicorn's HTTP/1.1, whose answer to a request it cannot read as HTTP (two
    ``Content-Length``s, a chunk size that is none, a length past any) is the API's 400,
    ``{statusCode, message, error}``, as every other refusal is: uvicorn's own is plain
    text, which a client parsing the API's errors cannot read. A head past
    ``MAX_HEAD_BYTES`` is 431 in the same shape (``_BoundedHead``).

    It also bounds what a client holds by sending slowly or not at all (uvicorn times out
    only a connection idle after an answer: one that sends half a head and stops was held,
    with its memory, for ever): a head must arrive whole within ``HEAD_SECONDS``, a body
    must not stop for ``BODY_IDLE_SECONDS`` while it is read nor take more than
    ``BODY_SECONDS`` of reading in all (else 408, or a close without
    an answer when nothing was sent), and past ``MAX_CONNECTIONS`` open connections a new
    one is answered 503. The clock is the event loop's (``call_later``, ``time``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head = _BoundedHead(h11.SERVER, contract.MAX_HEAD_BYTES)
        self.conn = self._head
        self._refused = False
        self._timer: asyncio.TimerHandle | None = None
        self._awaited: type[h11.IDLE] | type[h11.SEND_BODY] | None = None  # head or body
        self._last_read = 0.0
        self._body_checked = 0.0  # when the time the body took was last counted
        self._body_left = contract.BODY_SECONDS  # the reading time the body has left

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Refuse a connection past ``MAX_CONNECTIONS``; else wait for its request head."""
        super().connection_made(transport)  # type: ignore[arg-type]
        if len(self.connections) > contract.MAX_CONNECTIONS:
            self._answer_and_close(
                contract.SERVICE_UNAVAILABLE,
                f"the emulator holds {contract.MAX_CONNECTIONS:,} connections, its most: "
                "close one, or try again later",
            )
            return
        self._follow_client()

    def connection_lost(self, exc: Exception | None) -> None:
        """Nothing more to wait for."""
        self._stop_waiting()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """What a refused client still sends is dropped unread (see ``send_400_response``)."""
        if not self._refused:
            self._last_read = self.loop.time()
            super().data_received(data)
            self._follow_client()

    def on_response_complete(self) -> None:
        """After an answer, wait for the next request (or read one already sent)."""
        super().on_response_complete()
        if not self._refused and not self.transport.is_closing():
            if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
                # Part of the next head came with this request: uvicorn's keep-alive timer
                # would close it in 5 seconds without an answer; it has the head's time.
                self._unset_keepalive_if_required()
            self._follow_client()

    def _should_upgrade(self) -> bool:
        """Never: the API has no WebSocket or other protocol to switch to. uvicorn switched
        a request with ``Upgrade: websocket`` to its WebSocket protocol, which answered a
        bare ``403`` (no reason, no body) however valid its key; ``Upgrade`` is now ignored
        as RFC 9110 (7.8) lets a server ignore it, and the request served as HTTP."""
        return False

    def _follow_client(self) -> None:
        """Time what the emulator now waits for from the client: a head, a body, or none."""
        state = self.conn.their_state
        awaited = state if state is h11.IDLE or state is h11.SEND_BODY else None
        if awaited is self._awaited:
            return
        self._stop_waiting()
        self._awaited = awaited
        if awaited is h11.IDLE:
            self._timer = self.loop.call_later(contract.HEAD_SECONDS, self._head_late)
        elif awaited is h11.SEND_BODY:
            self._last_read = self._body_checked = self.loop.time()
            self._body_left = contract.BODY_SECONDS
            self._timer = self.loop.call_later(contract.BODY_IDLE_SECONDS, self._body_late)

    def _stop_waiting(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._awaited = None

    def _head_late(self) -> None:
        """No whole head in time: 408 for a part of one, a close for none (an idle one)."""
        self._timer = None
        if not self.conn.trailing_data[0]:
            self._awaited = None
            self.transport.close()
            return
        self._answer_and_close(
            contract.REQUEST_TIMEOUT,
            f"the request head did not arrive whole within {contract.HEAD_SECONDS:g} seconds: "
            "it was not read",
        )

    def _body_late(self) -> None:
        """408 when the body stopped for ``BODY_IDLE_SECONDS``, or took ``BODY_SECONDS`` of
        reading in all; the time the emulator does not read (its buffer full, or a client
        awaiting ``100 Continue``) does not count."""
        self._timer = None
        now = self.loop.time()
        cycle = self.cycle
        answering = cycle is not None and cycle.response_started and not cycle.response_complete
        awaiting_continue = cycle is not None and cycle.waiting_for_100_continue
        not_reading = self.flow.read_paused or awaiting_continue or answering
        if not_reading:
            self._last_read = now
        else:  # the time since the last look counts against the body's whole time
            self._body_left -= now - self._body_checked
        self._body_checked = now
        due = min(self._last_read + contract.BODY_IDLE_SECONDS, now + self._body_left)
        if now < due:
            self._timer = self.loop.call_later(due - now, self._body_late)
            return
        if cycle is not None and cycle.response_complete:
            # Answered before its body ended (a 413, say): what is left of it is not awaited.
            self._awaited = None
            self.transport.close()
            return
        if cycle is not None:  # the endpoint reading the body learns it will not come
            scope = cast(dict[str, object], cycle.scope)  # an ASGI scope takes extensions
            scope[TIMED_OUT] = True  # logged as the 408 it was, not as a client gone
            cycle.disconnected = True
            cycle.message_event.set()
        self._answer_and_close(
            contract.REQUEST_TIMEOUT,
            f"the request body stopped for {contract.BODY_IDLE_SECONDS:g} seconds before its "
            "end: it was not read"
            if self._body_left > 0
            else f"the request body did not arrive whole within {contract.BODY_SECONDS:g} "
            "seconds: it was not read",
        )

    def _answer_and_close(self, status: int, message: str) -> None:
        """Answer ``status`` in the API's error shape outside h11 (no request was read
        whole: h11 has no response to send), then close as ``_close_after_answer`` does."""
        self._stop_waiting()
        body = json.dumps(error(status, message).body, separators=(",", ":")).encode()
        reason = contract.REASONS[status].encode()
        head = (
            b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n" % (status, reason, len(body))
        )
        self.transport.write(head + body)
        self._close_after_answer()

    def send_400_response(self, msg: str) -> None:
        """Answer a request that was not read, in the API's error shape."""
        if self._head.head_too_large:
            status, reason = contract.HEAD_TOO_LARGE, b"Request Header Fields Too Large"
            message = (
                f"the request line and headers are larger than the limit of "
                f"{contract.MAX_HEAD_BYTES:,} bytes: it was not read"
            )
        else:
            status, reason = contract.BAD_REQUEST, b"Bad Request"
            message = (
                "the request is not valid HTTP/1.1 (its framing: Content-Length, "
                "Transfer-Encoding, the request line or a header): it was not read"
            )
        body = json.dumps(error(status, message).body, separators=(",", ":")).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        event = h11.Response(status_code=status, headers=headers, reason=reason)
        self.transport.write(self.conn.send(event))
        self.transport.write(self.conn.send(h11.Data(data=body)))
        self.transport.write(self.conn.send(h11.EndOfMessage()))
        self._close_after_answer()

    def _close_after_answer(self) -> None:
        """Close as a client still sending can read the answer: closed at once with its bytes
        unread, the connection is reset and the client's system may drop the answer. The
        answer is followed by the end of our side; what the client still sends is dropped,
        until it closes or for ``_LINGER_SECONDS``."""
        self._refused = True
        self._stop_waiting()
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write_eof()
        self.loop.call_later(_LINGER_SECONDS, self.transport.close)


class _Server(uvicorn.Server):
    """uvicorn's server, whose shutdown first stops the test gate: uvicorn waits for every
    request under way to end, and one held at a closed gate would wait forever for a test
    that can no longer reach the emulator to open it (``Gate.stop``)."""

    def __init__(self, config: uvicorn.Config, gate: Gate) -> None:
        super().__init__(config)
        self._gate = gate

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Answer the held requests 503, then shut down as uvicorn does."""
        self._gate.stop()
        await super().shutdown(sockets)


def _keys_line(seed: Seed, sandbox: Sandbox, db_path: Path | None) -> str:
    """The API keys that work now: the seed's that the data holds unrevoked (all of them on
    new data; on an existing database, those it holds unrevoked), and how many other keys the
    database holds, which it keeps only as digests (from the seed it was made with, which
    may not be this one, or a rotation)."""
    now = sandbox.clock()
    shown: list[str] = []
    for key in seed.api_keys:
        record = sandbox.store.get(Table.API_KEYS, key_digest(key.key))
        if record is not None and not revoked(record, now):
            inactive = "" if record["active"] else ", inactive"
            shown.append(f"{key.key} (company {record['companyId']}{inactive})")
    seeded = {key_digest(key.key) for key in seed.api_keys}
    others = sum(
        not revoked(record, now) and record.get("key") not in seeded
        for record in sandbox.store.values(Table.API_KEYS)
    )
    if others:
        plural = "s" if others > 1 else ""
        shown.append(
            f"{others}{' more' if shown else ''} kept in {db_path} only as digest{plural} "
            "(from the seed it was made with, or a rotation)"
        )
    return f"API keys: {', '.join(shown) or 'none (every request will be answered 401)'}"


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not the default 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only
    # on accepted sockets whose protocol says TCP. With Nagle on, a response's body waits for
    # the ACK of its headers, which the client delays by ~40 ms on a kept-alive connection.
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
        listener.listen(2048)  # here, not in uvicorn: a busy port must fail with our message
    except OSError as exc:
        listener.close()
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror}",
            hint="choose another --port (0 picks a free one), or stop what is using it",
        ) from None
    listener.set_inheritable(True)
    return listener


def _configure_logging() -> None:
    logging.getLogger("uvicorn.error").addFilter(_HideDrops())


@contextmanager
def _quiet_signals() -> Iterator[None]:
    """Let uvicorn shut down on SIGTERM/SIGINT, then return instead of dying by the signal.

    uvicorn re-raises the signal it caught once it has shut down, to whatever handler was
    installed before it; a no-op handler there turns a clean shutdown into exit 0.
    """
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, lambda signum, frame: None)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
