"""The emulator's HTTP/1.1 connections: how long a client may take to send a request, and how
many connections it holds. Driven on a fake event loop: its clock moves only by hand."""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any, cast

import h11
import pytest
import uvicorn
from uvicorn.server import ServerState

from customs_batch.sandbox import contract, create_app
from customs_batch.sandbox.requestlog import TIMED_OUT
from customs_batch.sandbox.server import _ApiRefusals


class _Timer:
    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeLoop:
    """The part of an event loop a connection uses: a clock, timers, tasks (never run)."""

    def __init__(self) -> None:
        self.now = 1_000.0
        self.timers: list[_Timer] = []

    def time(self) -> float:
        return self.now

    def call_later(self, delay: float, callback: Callable[[], None]) -> _Timer:
        timer = _Timer(self.now + delay, callback)
        self.timers.append(timer)
        return timer

    def create_task(self, coroutine: Coroutine[Any, Any, None]) -> Any:
        coroutine.close()  # the endpoint is never run: the request's body is never read

        class _Task:
            def add_done_callback(self, callback: Callable[[Any], None]) -> None:
                pass

        return _Task()

    def advance(self, seconds: float) -> None:
        """Move the clock, firing each timer due by then in order."""
        end = self.now + seconds
        while True:
            due = [t for t in self.timers if not t.cancelled and t.when <= end]
            if not due:
                break
            timer = min(due, key=lambda t: t.when)
            self.timers.remove(timer)
            self.now = timer.when
            timer.callback()
        self.now = end


class FakeTransport:
    """A socket's transport that keeps what is written to it."""

    def __init__(self) -> None:
        self.written = b""
        self.closed = False
        self.eof = False

    def write(self, data: bytes) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed or self.eof

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.eof = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


@pytest.fixture
def loop() -> FakeLoop:
    return FakeLoop()


@pytest.fixture
def connect(loop: FakeLoop) -> Callable[[], tuple[_ApiRefusals, FakeTransport]]:
    config = uvicorn.Config(create_app(rate_limit=None), log_config=None, lifespan="off")
    config.load()
    state = ServerState()

    def connect() -> tuple[_ApiRefusals, FakeTransport]:
        protocol = _ApiRefusals(config, state, {}, _loop=loop)
        transport = FakeTransport()
        protocol.connection_made(transport)  # type: ignore[arg-type]
        return protocol, transport

    return connect


Connect = Callable[[], tuple[_ApiRefusals, FakeTransport]]


def _answer(transport: FakeTransport) -> tuple[bytes, dict[str, Any]]:
    head, _, body = transport.written.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0], json.loads(body)


def test_a_request_head_that_stops_halfway_is_408_and_closed(
    connect: Connect, loop: FakeLoop
) -> None:
    # Found probing: a client that sent half a head and stopped held its connection, and
    # the head's bytes, for ever.
    protocol, transport = connect()
    protocol.data_received(b"GET /v1/shipments HTTP/1.1\r\nHost: x\r\n")
    loop.advance(contract.HEAD_SECONDS - 0.1)
    protocol.data_received(b"Accept: */*\r\n")  # bytes that come do not extend the time
    assert transport.written == b""
    loop.advance(0.1)
    status, body = _answer(transport)
    assert status == b"HTTP/1.1 408 Request Timeout"
    assert body == {
        "statusCode": 408,
        "message": "the request head did not arrive whole within 10 seconds: it was not read",
        "error": "Request Timeout",
    }
    assert transport.is_closing()


def test_a_connection_that_sends_nothing_is_closed_without_an_answer(
    connect: Connect, loop: FakeLoop
) -> None:
    _, transport = connect()
    loop.advance(contract.HEAD_SECONDS)
    assert transport.closed
    assert transport.written == b""


def _post_head(length: int, *extra: bytes) -> bytes:
    return b"".join(
        [
            b"POST /v1/declarations/transit HTTP/1.1\r\nHost: x\r\n",
            b"Authorization: Bearer sandbox-key\r\nContent-Type: application/json\r\n",
            *extra,
            b"Content-Length: %d\r\n\r\n" % length,
        ]
    )


def test_a_body_that_stops_before_its_end_is_408_and_closed(
    connect: Connect, loop: FakeLoop
) -> None:
    protocol, transport = connect()
    protocol.data_received(_post_head(100) + b'{"a": ')
    loop.advance(contract.BODY_IDLE_SECONDS - 1)
    protocol.data_received(b"1")  # a body still coming is waited for
    loop.advance(contract.BODY_IDLE_SECONDS - 1)
    assert transport.written == b""
    loop.advance(1)
    status, body = _answer(transport)
    assert status == b"HTTP/1.1 408 Request Timeout"
    assert body["message"] == (
        "the request body stopped for 10 seconds before its end: it was not read"
    )
    assert protocol.cycle.disconnected  # the endpoint reading it is told
    assert cast(dict[str, object], protocol.cycle.scope)[TIMED_OUT]  # the log shows the 408
    assert transport.is_closing()


def test_a_body_sent_a_byte_at_a_time_is_408_once_it_took_its_whole_time(
    connect: Connect, loop: FakeLoop
) -> None:
    # Found probing: the stall timer began again at each byte, so a byte every 9 seconds
    # kept a body (and its connection and megabyte) going for months; 300 such clients
    # took the emulator from 50 to 368 MB.
    protocol, transport = connect()
    protocol.data_received(_post_head(1000) + b'{"a": ')
    for _ in range(6):  # 54 seconds, never stopping for 10
        loop.advance(contract.BODY_IDLE_SECONDS - 1)
        protocol.data_received(b" ")
    loop.advance(contract.BODY_SECONDS - 6 * (contract.BODY_IDLE_SECONDS - 1) - 0.5)
    assert transport.written == b""
    loop.advance(0.5)
    status, body = _answer(transport)
    assert status == b"HTTP/1.1 408 Request Timeout"
    assert body["message"] == (
        "the request body did not arrive whole within 60 seconds: it was not read"
    )
    assert transport.is_closing()


def test_a_client_awaiting_100_continue_is_not_timed_out(connect: Connect, loop: FakeLoop) -> None:
    # Its body comes once the emulator reads it (a request held at the gate reads it late).
    protocol, transport = connect()
    protocol.data_received(_post_head(10, b"Expect: 100-continue\r\n"))
    loop.advance(10 * contract.BODY_IDLE_SECONDS)
    assert transport.written == b""
    assert not transport.is_closing()


def test_a_whole_request_starts_no_timer(connect: Connect, loop: FakeLoop) -> None:
    protocol, transport = connect()
    protocol.data_received(_post_head(2) + b"{}")
    loop.advance(10 * contract.HEAD_SECONDS)  # the endpoint takes its time
    assert transport.written == b""
    assert not transport.is_closing()


def test_connections_past_the_most_are_answered_503(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(contract, "MAX_CONNECTIONS", 2)
    held = [connect(), connect()]
    refusing, refused = connect()
    status, body = _answer(refused)
    assert status == b"HTTP/1.1 503 Service Unavailable"
    assert body["message"] == (
        "the emulator holds 2 connections, its most: close one, or try again later"
    )
    assert refused.is_closing()
    refusing.connection_lost(None)  # the refused client closed once answered
    held[0][0].connection_lost(None)
    _, accepted = connect()
    assert accepted.written == b""


def test_half_a_head_sent_behind_a_request_is_timed_as_a_head(
    connect: Connect, loop: FakeLoop
) -> None:
    # Found probing: closed after uvicorn's 5 s keep-alive without an answer, the client
    # still sending its next request could not tell whether it had been read.
    protocol, transport = connect()
    protocol.data_received(b"GET /v1/shipments HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/ship")
    protocol.cycle.response_complete = True
    protocol.conn.send(h11.Response(status_code=200, headers=[("content-length", "0")]))
    protocol.conn.send(h11.EndOfMessage())
    protocol.on_response_complete()
    loop.advance(contract.HEAD_SECONDS - 0.1)
    assert not transport.is_closing()
    loop.advance(0.1)
    status, _ = _answer(transport)
    assert status == b"HTTP/1.1 408 Request Timeout"


@pytest.mark.parametrize(
    "head",
    [
        # Found probing: read as chunked, answered, and the connection kept open for the
        # next request (RFC 9112 6.3 has the server close it, or refuse the request).
        _post_head(4, b"Transfer-Encoding: chunked\r\n"),
        # RFC 9112 6.1: Transfer-Encoding in HTTP/1.0 is faulty framing; it was read as chunked.
        b"POST /v1/declarations/transit HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
        # RFC 9112 3.2: a Host that is no host is 400; it was served.
        b"GET /v1/shipments HTTP/1.1\r\nHost: a b\r\n\r\n",
        b"GET /v1/shipments HTTP/1.1\r\nHost: x/y\r\n\r\n",
    ],
)
def test_a_request_whose_framing_or_host_is_unclear_is_400_and_closed(
    connect: Connect, head: bytes
) -> None:
    protocol, transport = connect()
    protocol.data_received(head + b"2\r\n{}\r\n0\r\n\r\n")
    status, body = _answer(transport)
    assert status == b"HTTP/1.1 400 Bad Request"
    assert body["message"] == [
        "the request is not valid HTTP/1.1 (its framing: Content-Length, Transfer-Encoding, "
        "the request line or a header): it was not read"
    ]
    assert transport.is_closing()


@pytest.mark.parametrize("host", [b"x", b"127.0.0.1:8080", b"[::1]:80", b"sandbox.example"])
def test_a_host_with_or_without_a_port_is_served(connect: Connect, host: bytes) -> None:
    protocol, transport = connect()
    protocol.data_received(b"GET /v1/shipments HTTP/1.1\r\nHost: " + host + b"\r\n\r\n")
    assert transport.written == b""  # taken: the endpoint answers (never run here)
    assert not transport.is_closing()


def test_a_body_left_unsent_after_its_answer_is_closed_without_another(
    connect: Connect, loop: FakeLoop
) -> None:
    # Answered before its end (a 413, say), the rest of a body is not awaited: a client
    # that stops sending it gets no second answer, and its connection is closed.
    protocol, transport = connect()
    protocol.data_received(_post_head(100) + b'{"a": ')
    protocol.cycle.response_started = protocol.cycle.response_complete = True
    loop.advance(contract.BODY_IDLE_SECONDS)
    assert transport.closed
    assert transport.written == b""


@pytest.mark.parametrize("protocol_name", [b"websocket", b"h2c"])
def test_an_upgrade_is_ignored_and_the_request_served(
    connect: Connect, protocol_name: bytes
) -> None:
    # Found probing: Upgrade: websocket on GET /v1/shipments was answered a bare 403 (no
    # reason phrase, no body) by uvicorn's WebSocket protocol, however valid the key.
    protocol, transport = connect()
    protocol.data_received(
        b"GET /v1/shipments HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: "
        + protocol_name
        + b"\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    assert protocol.cycle is not None  # served as an HTTP request (the endpoint answers)
    assert transport.written == b""
