"""Ctrl-C during apply: the first stops new work and records what is in flight (exit 130);
a second stops at once, and the journal still holds every intent."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.e2e import batches
from tests.e2e.conftest import Project, Running, Sandbox, assert_secret_nowhere
from tests.e2e.recovery import apply_until_done

pytestmark = pytest.mark.e2e

LANES, PER_LANE = 4, 6
PARALLELISM = 4


@pytest.fixture
def slow_project(tmp_path: Path, sandbox: Sandbox) -> Project:
    """Every response takes 0.3 s, so several requests are always in flight."""
    sandbox.start(faults="slow=1:0.3s", fault_seed=2)
    project = Project(tmp_path / "project", sandbox, parallelism=PARALLELISM)
    project.write("manifests/movements.yaml", batches.movements(PER_LANE, LANES))
    return project


def _outcomes(run: Running, count: int) -> None:
    """Read until ``count`` outcome lines have been printed."""
    seen = 0

    def outcome(line: str) -> bool:
        nonlocal seen
        seen += line.startswith(("done ", "FAILED "))
        return seen == count

    assert run.wait_for_line(outcome), run.lines


def _stop_twice(run: Running) -> None:
    """Ctrl-C twice while requests are in flight. Every response takes as long, so the
    workers go in rounds; right after the last outcome of the first round the next round
    has started (a stop any earlier could find nothing in flight)."""
    _outcomes(run, PARALLELISM)
    run.process.send_signal(signal.SIGINT)
    # Two signals before Python runs its handler count as one: wait for the first to land.
    assert run.wait_for_line(lambda line: line.startswith("Stopping:"), stderr=True)
    run.process.send_signal(signal.SIGINT)


def _settled_movements(sandbox: Sandbox) -> list[dict[str, object]]:
    """The emulator's movements once the requests a dead client left behind are handled."""
    found = sandbox.movements()
    while True:
        time.sleep(0.4)  # longer than the slow responses of this test
        again = sandbox.movements()
        if len(again) == len(found):
            return again
        found = again


def test_ctrl_c_finishes_and_records_what_is_in_flight(slow_project: Project) -> None:
    project, sandbox = slow_project, slow_project.sandbox
    run = project.start("apply", "--auto-approve")
    _outcomes(run, 1)
    run.process.send_signal(signal.SIGINT)
    code, stdout, stderr = run.finish()

    assert code == 130, stdout + stderr
    assert "Stopping: no new requests; finishing and recording those in flight" in stderr
    assert "Interrupted: what was in flight is recorded; run apply again to go on." in stderr
    records = project.state()
    assert all(r["status"] == "applied" for r in records.values()), records
    created = sandbox.movements()
    assert 0 < len(created) < LANES * PER_LANE
    left = LANES * PER_LANE - len(created)
    summary = f"Apply: {len(created)} succeeded, 0 failed, 0 skipped, {left} not-started in "
    assert summary in stdout
    assert {r["outputs"]["movementId"] for r in records.values()} == {
        m["movementId"] for m in created
    }

    assert apply_until_done(project) == 1
    created = sandbox.movements()
    assert len(created) == LANES * PER_LANE
    assert not batches.duplicates(created)
    assert_secret_nowhere(project)


def test_a_second_ctrl_c_stops_at_once_and_the_journal_keeps_every_intent(
    slow_project: Project,
) -> None:
    project, sandbox = slow_project, slow_project.sandbox
    run = project.start("apply", "--auto-approve")
    _stop_twice(run)
    code, stdout, stderr = run.finish()

    assert code == 130, stdout + stderr
    assert "Apply:" not in stdout, "the second Ctrl-C let the run finish"
    assert (project.state_dir / "journal.jsonl").exists()
    listed = project.run("state", "list")
    assert listed.returncode == 0, listed.stderr
    assert "needs-decision" in listed.stdout, "nothing was in flight at the second Ctrl-C"
    assert_secret_nowhere(project)  # the journal a crash leaves behind, too
    records = project.state()
    pending = [r for r in records.values() if r["status"] == "pending"]
    assert all(r["idempotencyKey"] for r in pending)
    # Every movement the service holds, even those answered after the tool was gone, is
    # an intent or an outcome in the journal.
    recorded = {batches.movement_identity(r["spec"]) for r in records.values()}
    created = _settled_movements(sandbox)
    assert {batches.movement_identity(m) for m in created} <= recorded

    assert apply_until_done(project) == 1
    created = sandbox.movements()
    assert len(created) == LANES * PER_LANE
    assert not batches.duplicates(created)
    records = project.state()
    assert all(r["status"] == "applied" for r in records.values())
    assert {r["outputs"]["movementId"] for r in records.values()} == {
        m["movementId"] for m in created
    }
    assert_secret_nowhere(project)
