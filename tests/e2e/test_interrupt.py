"""Ctrl-C during apply: the first stops new work and records what is in flight (exit 130);
a second stops at once, and the journal still holds every intent."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import yaml

from tests.e2e import batches
from tests.e2e.conftest import Project, Running, Sandbox, assert_secret_nowhere
from tests.e2e.gate import GatedProxy
from tests.e2e.recovery import apply_until_done

pytestmark = pytest.mark.e2e

LANES, PER_LANE = 4, 6
PARALLELISM = 4


@pytest.fixture
def held_project(tmp_path: Path, sandbox: Sandbox) -> Project:
    """A project whose apply has one request per lane in flight at a time (four), against
    an emulator without faults: the tests hold requests in flight at a gate instead."""
    sandbox.start()
    project = Project(tmp_path / "project", sandbox, parallelism=PARALLELISM)
    project.write("manifests/movements.yaml", batches.movements(PER_LANE, LANES))
    return project


def _held_at_the_gate(project: Project) -> Running:
    """Start an apply whose first request on every lane waits at the closed gate (the
    sandbox fixture stops the run, whatever the test asserted)."""
    project.sandbox.close_gate()
    run = project.start("apply", "--auto-approve")
    project.sandbox.wait_until_held(PARALLELISM)
    return run


def _stopping(run: Running) -> None:
    """Ctrl-C, and wait until the run says it is stopping (its handler ran)."""
    run.process.send_signal(signal.SIGINT)
    assert run.wait_for_line(lambda line: line.startswith("Stopping:"), stderr=True)


def test_ctrl_c_finishes_and_records_what_is_in_flight(held_project: Project) -> None:
    project, sandbox = held_project, held_project.sandbox
    run = _held_at_the_gate(project)
    _stopping(run)
    sandbox.open_gate()  # what was in flight at the Ctrl-C is answered now
    code, stdout, stderr = run.finish()

    assert code == 130, stdout + stderr
    assert "Stopping: no new requests; finishing and recording those in flight" in stderr
    assert "Interrupted: what was in flight is recorded; run apply again to go on." in stderr
    records = project.state()
    assert all(r["status"] == "applied" for r in records.values()), records
    created = sandbox.movements()
    assert len(created) == PARALLELISM, "the requests in flight were answered and recorded"
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
    held_project: Project,
) -> None:
    project, sandbox = held_project, held_project.sandbox
    # The first movement is held between the tool and the service: the run cannot finish
    # while it is, so the second Ctrl-C always finds it in flight.
    with GatedProxy(sandbox.url, hold=1) as gate:
        project.edit("customs-batch.yaml", sandbox.url, gate.url)
        run = project.start("apply", "--auto-approve")
        assert gate.held.wait(timeout=60), "the apply never sent a movement"
        _stopping(run)
        run.process.send_signal(signal.SIGINT)
        code, stdout, stderr = run.finish()
        # The held request reaches the service after the tool is gone, and is answered.
        gate.open()
        assert gate.forwarded.wait(timeout=60)
    project.write_config()

    assert code == 130, stdout + stderr
    assert "Apply:" not in stdout, "the second Ctrl-C let the run finish"
    assert (project.state_dir / "journal.jsonl").exists()
    listed = project.run("state", "list")
    assert listed.returncode == 0, listed.stderr
    # (Movements in flight: re-sent with their recorded keys by the next apply, no decision.)
    assert "  pending" in listed.stdout, "nothing was in flight at the second Ctrl-C"
    assert_secret_nowhere(project)  # the journal a crash leaves behind, too
    records = project.state()
    pending = [r for r in records.values() if r["status"] == "pending"]
    assert all(r["idempotencyKey"] for r in pending)
    # Every movement the service holds, the held one answered after the tool was gone
    # among them, is an intent or an outcome in the journal.
    applied = [r for r in records.values() if r["status"] == "applied"]
    recorded = {batches.movement_identity(r["spec"]) for r in records.values()}
    created = sandbox.movements()
    assert len(created) > len(applied)
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


def _rate_limited(tmp_path: Path, sandbox: Sandbox) -> Project:
    """Three movements of three lanes, three workers and one request an hour: the first
    leaves at once, the other two wait for their turn under the rate limit for as long as
    the test lasts. (Movements: before it submits a departure, apply reads the service,
    which would take that one request.)"""
    sandbox.start()
    project = Project(tmp_path / "project", sandbox, parallelism=3)
    settings = project.environment() | {"rate_limit": "1/hour"}
    config = {"default_environment": "e2e", "environments": {"e2e": settings}}
    project.write("customs-batch.yaml", yaml.safe_dump(config))
    project.write("manifests/movements.yaml", batches.movements(1, 3))
    return project


def test_ctrl_c_sends_nothing_that_waits_for_the_rate_limit(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # Reported: "Stopping: no new requests" was printed, and the requests waiting for their
    # turn under the rate limit still went out, one spacing after another, before the run
    # ended; plan and status meanwhile called them in flight.
    project = _rate_limited(tmp_path, sandbox)
    sandbox.close_gate()
    run = project.start("apply", "--auto-approve")
    sandbox.wait_until_held(1)  # the first movement left; the others wait an hour
    _stopping(run)
    sandbox.open_gate()
    code, stdout, stderr = run.finish()  # within the minute, not the hour

    assert code == 130, stdout + stderr
    assert len(sandbox.movements()) == 1
    records = project.state()
    assert [r["status"] for r in records.values()] == ["applied"], records
    assert "Apply: 1 succeeded, 0 failed, 0 skipped, 2 not-started in " in stdout
    planned = project.run("plan", "--detailed-exitcode")
    assert planned.returncode == 2, planned.stdout + planned.stderr
    assert "2 to create" in planned.stdout and "needs decision" not in planned.stdout


def test_a_second_ctrl_c_leaves_no_intent_of_what_waited_for_the_rate_limit(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # Reported: a second Ctrl-C left the intents of departures that never left, which the
    # next plan held for a decision and the next apply looked for at the service. (Shown
    # with movements: what waits for the rate limit is the same for every kind.)
    project = _rate_limited(tmp_path, sandbox)
    sandbox.close_gate()
    run = project.start("apply", "--auto-approve")
    sandbox.wait_until_held(1)
    _stopping(run)
    run.process.send_signal(signal.SIGINT)
    code, stdout, stderr = run.finish()
    sandbox.open_gate()

    assert code == 130, stdout + stderr
    records = project.state()
    # Only the movement that left is recorded (its outcome unknown to the tool).
    assert [r["status"] for r in records.values()] == ["pending"], records
    planned = project.run("plan")
    assert "needs decision" not in planned.stdout, planned.stdout
    # The one that left is sent again under its key; the two that waited, as new.
    assert planned.stdout.count("re-sent with its recorded Idempotency-Key") == 1
    assert "3 to create" in planned.stdout, planned.stdout
