"""An export cancellation customs has not decided yet is pending, never done: plan, status,
apply (with and without --wait) and refresh, through the CLI against the local emulator.

The emulator runs in-process on a clock the test moves: customs decides a requested
cancellation 60 s after the request, granting it, or refusing it when the seed says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from customs_batch.environments import _connect
from customs_batch.environments._environment import Environment
from customs_batch.sandbox import InProcessTransport, create_app
from customs_batch.sandbox.seed import builtin_seed_text, parse_seed
from tests.cli.conftest import run
from tests.sandbox.conftest import FakeClock

DECIDED_AFTER = 60.0
CANCEL_502 = """\
apiVersion: customs-batch/v1
kind: ExportCancellation
metadata:
  name: cancel-502
spec:
  declarationId: 502
"""
ADDRESS = "ExportCancellation/cancel-502"


class Customs:
    """The local environment's emulator on a fake clock, with the built-in seed (502, an
    export declaration already submitted) and customs' answer to cancelling 502."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, answer: str) -> None:
        self.clock = FakeClock()
        text = builtin_seed_text().replace(
            "type: EXPORT, status: submitted,",
            f"type: EXPORT, status: submitted, cancellationAnswer: {answer},",
        )
        self.seed = parse_seed(text, "seed.yaml")
        self.apps: list[InProcessTransport] = []
        monkeypatch.setattr(_connect, "local_transport", self.transport)

    def transport(self, environment: Environment) -> httpx.BaseTransport:
        environment.state_dir.mkdir(parents=True, exist_ok=True)
        app = create_app(
            seed=self.seed,
            db_path=environment.sandbox_db,
            rate_limit=None,
            processing_seconds=DECIDED_AFTER,
            clock=self.clock,
        )
        return InProcessTransport(app)

    def decide(self) -> None:
        self.clock.advance(DECIDED_AFTER)


@pytest.fixture
def granting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Customs:
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "cancel.yaml").write_text(CANCEL_502)
    return Customs(monkeypatch, "granted")


@pytest.fixture
def refusing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Customs:
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "cancel.yaml").write_text(CANCEL_502)
    return Customs(monkeypatch, "refused")


def plan_json(capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, "plan", "--detailed-exitcode", "--format", "json")
    return code, json.loads(out)


def test_a_requested_cancellation_is_waiting_not_done(
    granting: Customs, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, err
    assert f"waiting  {ADDRESS}  canceled=False declarationId=502" in out
    assert "502 is cancellation_requested: not decided yet" in out
    assert "Apply: 0 succeeded, 0 failed, 0 skipped, 0 not-started, 1 waiting" in out

    # Every later plan says so, and apply has a read to do (exit 2 with --detailed-exitcode).
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 2
    assert f"* waiting        {ADDRESS}" in out
    assert "502 is cancellation_requested at the service: not decided yet" in out
    assert "1 waiting at the service" in out and "Requests: 1" in out
    code, body = plan_json(capsys)
    (planned,) = body["changes"]
    assert (planned["action"], planned["operation"], planned["requests"]) == (
        "waiting",
        "follow",
        1,
    )
    assert body["summary"]["waiting"] == 1
    code, out, _ = run(capsys, "plan", "--format", "markdown")
    assert "#### Waiting at the service (1)" in out and "| waiting at the service | 1 |" in out

    code, out, _ = run(capsys, "status")
    assert f"{ADDRESS}  502  cancellation_requested  pending" in out

    # Not decided yet: an apply reads it, records it, and it is still waiting.
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, err
    assert f"waiting  {ADDRESS}" in out
    # --wait that runs out of time before customs decides: a failure, still pending.
    code, out, err = run(capsys, "apply", "--auto-approve", "--wait", "--wait-timeout", "0")
    assert code == 1
    assert "502 still cancellation_requested after 0 s" in out
    assert run(capsys, "plan", "--detailed-exitcode")[0] == 2

    granting.decide()
    code, out, err = run(capsys, "apply", "--auto-approve", "--wait")
    assert code == 0, err
    assert f"done     {ADDRESS}  canceled=True declarationId=502  502 is canceled" in out
    assert "Apply: 1 succeeded, 0 failed" in out
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 0 and "No changes" in out
    assert f"{ADDRESS}  502  canceled" in run(capsys, "status")[1]


def test_apply_events_count_a_requested_cancellation_waiting_with_the_service_words(
    granting: Customs, capsys: pytest.CaptureFixture[str]
) -> None:
    """--format json: the outcome carries the state the service answered, and the progress
    event counts it waiting, as the summary does, never done."""
    code, out, err = run(capsys, "apply", "--auto-approve", "--format", "json")
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    [outcome] = [e for e in events if e["type"] == "outcome"]
    assert (outcome["status"], outcome["remoteStatus"]) == ("waiting", "cancellation_requested")
    [progress] = [e for e in events if e["type"] == "progress"]
    assert (progress["done"], progress["waiting"], progress["remaining"]) == (0, 1, 0)
    summary = events[-1]
    assert (summary["succeeded"], summary["waiting"]) == (0, 1)

    # Read again, not decided yet: the same words, still waiting.
    code, out, err = run(capsys, "apply", "--auto-approve", "--format", "json")
    events = [json.loads(line) for line in out.splitlines()]
    [outcome] = [e for e in events if e["type"] == "outcome"]
    assert (outcome["status"], outcome["remoteStatus"]) == ("waiting", "cancellation_requested")
    [progress] = [e for e in events if e["type"] == "progress"]
    assert (progress["done"], progress["waiting"]) == (0, 1)


def test_apply_wait_follows_a_new_request_to_its_decision(
    refusing: Customs, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, err
    assert f"waiting  {ADDRESS}" in out

    refusing.decide()
    code, out, _ = run(capsys, "apply", "--auto-approve", "--wait")
    assert code == 1
    assert "502 is submitted: customs refused the cancellation" in out
    assert f"`customs-batch state rm {ADDRESS}`" in out
    # Refused is rejected, not unchanged: plan fails until the user acts.
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 1
    assert f"! rejected       {ADDRESS}" in out and "customs refused the cancellation" in out
    assert f"{ADDRESS}  502  submitted  rejected" in run(capsys, "status")[1]


def test_refresh_reads_the_decision(granting: Customs, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    code, out, _ = run(capsys, "refresh")
    assert code == 0 and ADDRESS not in out  # nothing decided yet: nothing changed
    assert run(capsys, "plan", "--detailed-exitcode")[0] == 2

    granting.decide()
    code, out, _ = run(capsys, "refresh")
    assert code == 0
    assert f"{ADDRESS}: status cancellation_requested -> canceled" in out
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 0 and "No changes" in out


def test_a_cancellation_granted_at_once_is_done(
    granting: Customs, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "manifests" / "cancel.yaml").write_text(
        CANCEL_502.replace("502", "501")  # 501 has not reached customs: cancelled at once
    )
    code, out, err = run(capsys, "apply", "--auto-approve", "--wait")
    assert code == 0, err
    assert "done     ExportCancellation/cancel-501  canceled=True declarationId=501" in out
    assert "waiting" not in out
    assert run(capsys, "plan", "--detailed-exitcode")[0] == 0


def _status_json(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, _ = run(capsys, "status", "--format", "json")
    assert code == 0
    body: dict[str, Any] = json.loads(out)
    assert body["formatVersion"] == 1
    return body


def test_status_as_json_and_refresh_exit_codes_follow_customs_decision(
    granting: Customs, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    body = _status_json(capsys)
    entry = next(d for d in body["declarations"] if d["address"] == ADDRESS)
    assert entry["lifecycle"] == "applied"
    assert entry["id"] == 502
    assert entry["serviceState"] == "cancellation_requested"
    assert entry["pending"] is True and entry["rejected"] is False
    assert body["summary"]["pending"] >= 1

    # Nothing decided yet: nothing changed, nothing blocks.
    code, _, err = run(capsys, "refresh", "--detailed-exitcode")
    assert code == 0, err
    granting.decide()
    code, out, _ = run(capsys, "refresh", "--detailed-exitcode")
    assert code == 2, "a change at the service exits 2 with --detailed-exitcode"
    assert f"{ADDRESS}: status cancellation_requested -> canceled" in out
    assert run(capsys, "refresh", "--detailed-exitcode")[0] == 0
    entry = next(d for d in _status_json(capsys)["declarations"] if d["address"] == ADDRESS)
    assert (entry["serviceState"], entry["pending"]) == ("canceled", False)


def test_refresh_exits_1_when_customs_refused(
    refusing: Customs, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    refusing.decide()
    code, _, err = run(capsys, "refresh", "--detailed-exitcode")
    assert code == 1
    assert f"{ADDRESS}: rejected at the service" in err
    assert run(capsys, "refresh")[0] == 0  # without the flag: 0, as before
    entry = next(d for d in _status_json(capsys)["declarations"] if d["address"] == ADDRESS)
    assert entry["rejected"] is True


class _Restating(httpx.BaseTransport):
    """The emulator, but the export declaration 502 read back shows ``word`` as its status
    (a service whose word the API document does not give)."""

    def __init__(self, inner: httpx.BaseTransport, word: str) -> None:
        self.inner, self.word = inner, word

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method != "GET" or request.url.path != "/v1/declarations/502":
            return response
        body = {**json.loads(response.read()), "status": self.word}
        return httpx.Response(response.status_code, json=body, request=request)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("word", ["cancellation_pending", "CANCELLATION_REQ"])
def test_a_status_word_the_api_does_not_give_is_never_counted_cancelled(
    granting: Customs,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    word: str,
) -> None:
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    monkeypatch.setattr(
        _connect, "local_transport", lambda env: _Restating(granting.transport(env), word)
    )
    unknown = "(a status customs-batch does not know for it: never counted as done)"
    code, out, _ = run(capsys, "apply", "--auto-approve", "--wait", "--wait-timeout", "0")
    assert code == 1, out
    assert f"FAILED   {ADDRESS}  502 still {word} {unknown} after 0 s" in out
    assert "0 succeeded, 1 failed" in out
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 2, out
    assert f"* waiting        {ADDRESS}" in out
    assert f"502 is {word} at the service {unknown}: not decided yet" in out
    code, out, _ = run(capsys, "apply", "--auto-approve")
    assert code == 0 and f"waiting  {ADDRESS}" in out and "0 succeeded" in out
    entry = next(d for d in _status_json(capsys)["declarations"] if d["address"] == ADDRESS)
    assert (entry["serviceState"], entry["pending"], entry["rejected"]) == (word, True, False)


class _Gone(httpx.BaseTransport):
    """The emulator, but the export declaration 502 is answered 404 when read."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path == "/v1/declarations/502":
            said = {"statusCode": 404, "message": "declaration 502 not found"}
            return httpx.Response(404, json=said, request=request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def test_a_pending_cancellation_whose_declaration_is_gone_is_noted_not_found(
    granting: Customs, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    monkeypatch.setattr(_connect, "local_transport", lambda env: _Gone(granting.transport(env)))
    code, out, _ = run(capsys, "apply", "--auto-approve")
    assert code == 1, out
    assert "502 is no longer found at the service; 502 was not found at the service" in out
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 1 and f"? needs decision {ADDRESS}" in out, out
    assert f"{ADDRESS}  502  not-found" in run(capsys, "status")[1]
