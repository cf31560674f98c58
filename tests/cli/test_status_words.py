"""A status the service writes as the API document's transit list does (upper-case) is the
same state as its lower-case word: a departure answered INVALID is rejected, never done.
Through the CLI against the local emulator, whose answers a transport rewrites."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from customs_batch.environments import _connect
from customs_batch.environments._environment import Environment
from tests.cli.conftest import run

_TRANSIT = re.compile(r"^/v1/declarations/transit/[0-9]+$")


class _UpperInvalid(httpx.BaseTransport):
    """The emulator, but every transit declaration read shows ``INVALID`` with an error."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method != "GET" or not _TRANSIT.match(request.url.path):
            return response
        error = {"code": "E1", "field": "totalWeight", "message": "weight mismatch"}
        body = {**json.loads(response.read()), "status": "INVALID", "errors": [error]}
        return httpx.Response(response.status_code, json=body, request=request)

    def close(self) -> None:
        self.inner.close()


def test_a_departure_answered_upper_case_invalid_is_rejected_not_done(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for manifest in (project / "manifests").iterdir():
        if manifest.name != "departures.yaml":
            manifest.unlink()
    monkeypatch.chdir(project)
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, out + err
    local = _connect.local_transport

    def upper(environment: Environment) -> httpx.BaseTransport:
        return _UpperInvalid(local(environment))

    monkeypatch.setattr(_connect, "local_transport", upper)
    code, out, _ = run(capsys, "apply", "--auto-approve", "--wait")
    assert code == 1, out
    assert out.count("is INVALID: E1 totalWeight weight mismatch") >= 2
    assert "0 succeeded" in out
    code, out, _ = run(capsys, "status")
    assert out.count("INVALID  rejected  1 error(s)") == 2, out
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 1 and out.count("! rejected") == 2, out
