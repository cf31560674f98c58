"""The request log: one line per request, with its time, outcome and duration."""

from __future__ import annotations

import io
import re

import httpx
import pytest

from customs_batch.sandbox import parse_faults
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
