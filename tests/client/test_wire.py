"""The sender's own way to the network (each thread's httpcore pool, no proxy) sends the
very requests httpx's client sends, reads the answers as it does, and fails as it does."""

from __future__ import annotations

import gzip
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from customs_batch.client import ConnectionFailedError, NotSentError, Sender
from customs_batch.client._transport import httpx_error
from customs_batch.errors import CustomsBatchError

WAIT = 30.0  # seconds: only a bound on a gate that opens at once when all is well


class _Recorder:
    """An HTTP/1.1 server that keeps each request as it arrived (method, target, headers
    in their order, body) and answers with JSON, gzipped when the path ends in ``/gz``."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, list[tuple[str, str]], bytes]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                recorder.seen.append((self.command, self.path, list(self.headers.items()), body))
                answer = json.dumps({"got": self.path, "mrn": "24NL0000000000001"}).encode()
                self.send_response(201 if self.command == "POST" else 200)
                self.send_header("Content-Type", "application/json")
                if self.path.endswith("/gz"):
                    answer = gzip.compress(answer)
                    self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            do_GET = do_POST = do_DELETE = do_PUT = _answer  # the names http.server calls

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
def recorder() -> Iterator[_Recorder]:
    running = _Recorder()
    yield running
    running.close()


REQUESTS: list[tuple[str, str, dict[str, str] | None, dict[str, object] | None, str | None]] = [
    ("POST", "/v1/shipments/S%2F1/movements", None, {"hawb": "H-1", "text": "Zoë ✓"}, "key-1"),
    ("POST", "/v1/declarations/transit", None, {"n": 1.5, "items": [{"a": None}]}, None),
    ("GET", "/v1/shipments", {"limit": "10", "q": "a b/é&c"}, None, None),
    ("GET", "/v1/shipments/gz", None, None, None),
    ("DELETE", "/v1/declarations/D-1", None, None, None),
    ("POST", "/v1/declarations/D-1/submit", None, None, None),
    ("GET", "/v1/déclarations/x y", None, None, None),
]


def _offered_anything(
    seen: list[tuple[str, str, list[tuple[str, str]], bytes]],
) -> list[tuple[str, str, list[tuple[str, str]], bytes]]:
    return [
        (method, target, [(n, "*" if n == "Accept-Encoding" else v) for n, v in headers], body)
        for method, target, headers, body in seen
    ]


def _send_all(sender: Sender) -> list[object]:
    watched = sender.watch()
    answers = [
        sender.send(method, path, params=params, body=body, idempotency_key=key)
        for method, path, params, body, key in REQUESTS
    ]
    return [answers, [(x.method, x.path, x.body_sha256, x.status, x.mrn) for x in watched]]


@pytest.mark.parametrize("prefix", ["", "/api", "/api/"])
def test_the_wire_sends_what_httpx_s_client_sends(recorder: _Recorder, prefix: str) -> None:
    """The same calls through the sender's pools and through httpx's client (a transport
    given to the sender): the server receives the same bytes, headers in the same order,
    and the sender answers and records the same."""
    wire = Sender(recorder.url + prefix, "secret-key")
    client = Sender(recorder.url + prefix, "secret-key", transport=httpx.HTTPTransport())
    try:
        assert client._wire is None and wire._wire is not None  # each takes the way asked
        through_wire = _send_all(wire)
        by_wire = list(recorder.seen)
        recorder.seen.clear()
        through_client = _send_all(client)
        by_client = list(recorder.seen)
    finally:
        wire.close()
        client.close()
    # httpx's client offers the encodings it can decode, more with brotli or zstandard
    # installed; the wire offers the two httpx always decodes.
    for name, value in by_wire[0][2]:
        if name == "Accept-Encoding":
            assert value == "gzip, deflate"
    assert _offered_anything(by_wire) == _offered_anything(by_client)
    assert through_wire == through_client
    method, target, headers, body = by_wire[0]
    assert method == "POST"
    assert target == prefix.rstrip("/") + "/v1/shipments/S%2F1/movements"
    assert json.loads(body) == {"hawb": "H-1", "text": "Zoë ✓"}
    assert ("Idempotency-Key", "key-1") in headers
    assert ("Authorization", "Bearer secret-key") in headers
    assert by_wire[2][1].endswith("/v1/shipments?limit=10&q=a+b%2F%C3%A9%26c")
    assert by_wire[6][1].endswith("/v1/d%C3%A9clarations/x%20y")
    answers = through_wire[0]
    assert isinstance(answers, list)
    assert answers[3] == {
        "got": prefix.rstrip("/") + "/v1/shipments/gz",
        "mrn": "24NL0000000000001",
    }


def test_an_answer_that_never_comes_is_a_timeout(recorder: _Recorder) -> None:
    """A server that takes the connection and never answers: the read timeout ends the
    attempt, and a POST without an Idempotency-Key is not sent again."""
    silent = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    taken = threading.Event()

    def accept() -> None:
        connection, _ = silent.accept()
        accepted.append(connection)
        taken.set()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = silent.getsockname()[1]
    sender = Sender(f"http://127.0.0.1:{port}", "k", timeout=0.2)
    try:
        with pytest.raises(ConnectionFailedError, match=r"no answer in time .*ReadTimeout"):
            sender.send("POST", "/v1/things", body={"a": 1})
    finally:
        sender.close()
        assert taken.wait(WAIT)
        thread.join(WAIT)
        for connection in accepted:
            connection.close()
        silent.close()


def test_a_connection_closed_without_an_answer_is_a_failed_connection() -> None:
    """The server reads the request and closes: the request left, so it is not a
    NotSentError, and a POST without an Idempotency-Key is not sent again."""
    server = socket.create_server(("127.0.0.1", 0))
    served = threading.Event()

    def close_after_reading() -> None:
        connection, _ = server.accept()
        with connection:
            connection.recv(65536)
        served.set()

    thread = threading.Thread(target=close_after_reading, daemon=True)
    thread.start()
    sender = Sender(f"http://127.0.0.1:{server.getsockname()[1]}", "k")
    try:
        with pytest.raises(ConnectionFailedError, match="cannot reach the service") as failed:
            sender.send("POST", "/v1/things", body={"a": 1})
    finally:
        sender.close()
        assert served.wait(WAIT)
        thread.join(WAIT)
        server.close()
    assert not isinstance(failed.value, NotSentError)


def test_each_error_of_httpcore_is_the_one_httpx_s_client_raises() -> None:
    """The wire's table of errors against httpx's own (what its transport raises)."""
    from httpx._transports.default import HTTPCORE_EXC_MAP, map_httpcore_exceptions

    assert HTTPCORE_EXC_MAP, "httpx's table moved: compare the wire's with its new place"
    for core in HTTPCORE_EXC_MAP:
        with pytest.raises(httpx.TransportError) as raised, map_httpcore_exceptions():
            raise core("it went wrong")
        ours = httpx_error(core("it went wrong"))
        assert type(ours) is type(raised.value), core
        assert str(ours) == str(raised.value) == "it went wrong"
    with pytest.raises(TypeError):
        httpx_error(ValueError("not httpcore's"))


@pytest.mark.parametrize(
    "base_url", ["http://user:secret@127.0.0.1:9", "127.0.0.1:9", "ftp://127.0.0.1:9"]
)
def test_a_url_the_pools_do_not_take_goes_through_httpx_s_client(base_url: str) -> None:
    """A user name in the URL (httpx's client sends it as basic auth) or a scheme other
    than http(s) (httpx's client refuses it when sending, as before)."""
    sender = Sender(base_url, "k")
    try:
        assert sender._wire is None and sender._http is not None
    finally:
        sender.close()


@pytest.mark.parametrize("transport", [None, httpx.HTTPTransport()])
def test_a_key_that_is_not_ascii_is_never_sent(
    recorder: _Recorder, transport: httpx.HTTPTransport | None
) -> None:
    """Both ways refuse to build the request: nothing leaves, and it says so."""
    sender = Sender(recorder.url, "clé", transport=transport)
    try:
        with pytest.raises(NotSentError, match="could not be built"):
            sender.send("POST", "/v1/things", body={"a": 1})
    finally:
        sender.close()
    assert recorder.seen == []


@pytest.mark.parametrize("transport", [None, httpx.HTTPTransport()])
def test_a_query_too_long_for_a_url_is_never_sent(
    recorder: _Recorder, transport: httpx.HTTPTransport | None
) -> None:
    """`get shipments --reference` of 100,000 characters was "internal error: InvalidURL:
    URL component 'query' too long" (httpx's client); the wire sends it for the service to
    refuse. Neither is an internal error."""
    sender = Sender(recorder.url, "k", transport=transport)
    try:
        sender.send("GET", "/v1/things", params={"reference": "x" * 100_000})
    except NotSentError as exc:
        assert "could not be built" in str(exc) and transport is not None
        assert recorder.seen == []
    except CustomsBatchError:
        pass  # the recorder's answer to what reached it
    finally:
        sender.close()


def test_the_wire_s_debug_log_names_the_request_and_never_the_key(
    recorder: _Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    sender = Sender(recorder.url + "/api", "secret-key")
    try:
        with caplog.at_level("DEBUG"):
            sender.send("GET", "/v1/shipments", params={"q": "a b"})
    finally:
        sender.close()
    logged = caplog.text
    assert f"GET {recorder.url}/api/v1/shipments?q=a+b -> 200" in logged
    assert "'authorization': 'Bearer ***'" in logged
    assert "secret-key" not in logged
