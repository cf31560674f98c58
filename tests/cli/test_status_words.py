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
    # As docs/api-choices.md gives an entry, and as `results` shows it: CODE field: message
    # (they printed "E1 totalWeight weight mismatch", results "E1 totalWeight: weight ...").
    assert out.count("is INVALID: E1 totalWeight: weight mismatch") >= 2
    assert "0 succeeded" in out
    code, out, _ = run(capsys, "status")
    assert out.count("INVALID  rejected  1 error(s)") == 2, out
    # The service's errors in words, as apply --wait gives them: it printed
    # "{'code': 'E1', 'field': 'totalWeight', 'message': 'weight mismatch'}".
    assert out.count("\n    E1 totalWeight: weight mismatch\n") == 2, out
    assert "{'code'" not in out
    code, out, _ = run(capsys, "status", "--format", "html")
    assert code == 0 and "E1 totalWeight: weight mismatch" in out
    assert "&quot;code&quot;" not in out and '"code"' not in out
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 1 and out.count("! rejected") == 2, out


class _Restating(httpx.BaseTransport):
    """The emulator, but every transit declaration read shows ``word`` as its status."""

    def __init__(self, inner: httpx.BaseTransport, word: str) -> None:
        self.inner, self.word = inner, word

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method != "GET" or not _TRANSIT.match(request.url.path):
            return response
        body = {**json.loads(response.read()), "status": self.word}
        return httpx.Response(response.status_code, json=body, request=request)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("word", ["BLOCKED", "CONTROL", "on_hold"])
def test_a_departure_in_a_status_it_does_not_know_is_never_done(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], word: str
) -> None:
    # Found in review: a status in none of the departure's lists (the document's filter
    # words BLOCKED, CONTROL, or a new one) was taken as done: apply --wait exited 0 with
    # 'declaration 7003 is BLOCKED', plan said unchanged, status did not call it pending.
    for manifest in (project / "manifests").iterdir():
        if manifest.name != "departures.yaml":
            manifest.unlink()
    monkeypatch.chdir(project)
    local = _connect.local_transport
    monkeypatch.setattr(_connect, "local_transport", lambda env: _Restating(local(env), word))
    unknown = "(a status customs-batch does not know for it: never counted as done)"
    code, out, _ = run(capsys, "apply", "--auto-approve", "--wait", "--wait-timeout", "0")
    assert code == 1, out
    assert out.count(f"still {word} {unknown}") == 2, out
    assert "0 succeeded, 2 failed" in out, out
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 2, out
    assert out.count("* waiting") == 2, out
    assert out.count(f"is {word} at the service {unknown}: not decided yet") == 2, out
    code, out, _ = run(capsys, "status", "--format", "json")
    entries = [d for d in json.loads(out)["declarations"] if d["address"].startswith("Departure")]
    assert [(d["serviceState"], d["pending"], d["rejected"]) for d in entries] == [
        (word, True, False)
    ] * 2, out
    # Without --wait, an apply reads where they stand and says they wait: none succeeded.
    code, out, _ = run(capsys, "apply", "--auto-approve")
    assert code == 0 and out.count("waiting  DepartureDeclaration/") == 2, out
    assert "0 succeeded" in out, out
