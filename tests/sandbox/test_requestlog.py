"""The request log: one line per request, with its time, outcome and duration."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

import httpx
import pytest
from starlette.requests import ClientDisconnect
from starlette.types import Message, Receive, Scope, Send

from customs_batch.sandbox import parse_faults
from customs_batch.sandbox.context import Stats
from customs_batch.sandbox.requestlog import TIMED_OUT, RequestLog
from tests.sandbox.conftest import MOVEMENTS, ClientFactory, movement

LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (?P<request>[A-Z]+ \S+ \S+) \d+\.\dms")


def _requests(lines: io.StringIO) -> list[str]:
    found = [LINE.fullmatch(line) for line in lines.getvalue().splitlines()]
    assert all(found), lines.getvalue()
    return [match["request"] for match in found if match]


def test_a_line_per_request_with_its_status(make_api: ClientFactory) -> None:
    lines = io.StringIO()
    api = make_api(request_log=lines)
    api.get("/_sandbox/stats")
    api.post("/v1/declaration-templates/groups", json={"name": "x", "code": "X", "companyId": 1})
    api.put("/v1/declaration-templates/groups")
    api.get("/v1/shipments", headers={"Authorization": "Bearer wrong"})
    assert _requests(lines) == [
        "GET /_sandbox/stats 200",
        "POST /v1/declaration-templates/groups 201",
        "PUT /v1/declaration-templates/groups 405",
        "GET /v1/shipments 401",
    ]


def test_a_dropped_connection_is_logged_as_dropped(make_api: ClientFactory) -> None:
    lines = io.StringIO()
    api = make_api(request_log=lines, faults=parse_faults("drop=1"))
    with pytest.raises(httpx.RemoteProtocolError):
        api.post(MOVEMENTS, json=movement())
    assert _requests(lines) == [f"POST {MOVEMENTS} dropped"]


def test_a_closed_log_does_not_fail_the_request(make_api: ClientFactory) -> None:
    lines = io.StringIO()
    api = make_api(request_log=lines)
    lines.close()
    assert api.get("/_sandbox/stats").status_code == 200


def test_a_request_the_emulator_fails_on_is_logged_as_error(
    make_api: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Stats) -> dict[str, object]:
        raise RuntimeError("a bug")

    monkeypatch.setattr(Stats, "snapshot", broken)
    lines = io.StringIO()
    api = make_api(request_log=lines)
    with pytest.raises(RuntimeError):  # in-process the error reaches the caller
        api.get("/_sandbox/stats")
    assert _requests(lines) == ["GET /_sandbox/stats error"]


def test_the_docs_show_the_line_as_it_is_written() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "sandbox.md").read_text("utf-8")
    paragraph = docs.split("logs one line per request", 1)[1].split("\n\n", 2)
    shown = [line for line in paragraph[1].splitlines() if not line.startswith("```")]
    assert len(shown) == 1 and LINE.fullmatch(shown[0]), shown
    described = " ".join(paragraph[2].split())
    for words in (
        "`error`",
        "500",
        "`dropped`",
        "`disconnected`",
        "milliseconds",
        "without the query",
    ):
        assert words in described, words


def test_a_path_holding_a_line_break_stays_on_its_own_line(make_api: ClientFactory) -> None:
    # Decoded, %0A ended the line and the rest of the path became a line of the client's
    # choosing: a forged "POST .../movements 201" for a test that counts the log's lines.
    lines = io.StringIO()
    api = make_api(request_log=lines)
    forged = f"2026-11-29 10:00:00,000 POST {MOVEMENTS} 201 1.0ms"
    api.get("/v1/shipments/x%0A" + forged.replace(" ", "%20") + "/hawbs")
    api.get("/v1/shipments/a%09b%25c%E2%80%A8d%C2%A0e/hawbs")
    api.get("/v1/shipments/shp%5Fé/hawbs")
    api.get("/v1/shipments/shp_%FF%C3%A9%25%0A\ufffd/hawbs")  # not UTF-8: shown as bytes
    assert _requests(lines) == [
        "GET /v1/shipments/x%0A" + forged.replace(" ", "%20") + "/hawbs 404",
        "GET /v1/shipments/a%09b%25c%E2%80%A8d%C2%A0e/hawbs 404",
        "GET /v1/shipments/shp_é/hawbs 404",
        "GET /v1/shipments/shp_%FF%C3%A9%25%0A%EF%BF%BD/hawbs 404",
    ]


def test_a_body_the_server_timed_out_is_logged_as_its_408() -> None:
    # Found probing: logged "disconnected", as a client that left, when the client was
    # there and had been answered 408 by the server.
    async def reading(scope: Scope, receive: Receive, send: Send) -> None:
        raise ClientDisconnect()

    lines = io.StringIO()
    log = RequestLog(reading, lines)
    scope = {"type": "http", "method": "POST", "path": "/v1/declarations/transit"}

    async def nothing() -> Message:
        return {"type": "http.disconnect"}

    async def ignore(message: Message) -> None:
        pass

    asyncio.run(log({**scope, TIMED_OUT: True}, nothing, ignore))
    asyncio.run(log(scope, nothing, ignore))
    assert _requests(lines) == [
        "POST /v1/declarations/transit 408",
        "POST /v1/declarations/transit disconnected",
    ]
