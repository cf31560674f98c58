"""A CI runner lost outright under the recipe of examples/ci (the state folder committed by
a step after apply): its machine gone, the step never runs, and what its apply submitted is
known only to the service. The next run, from a clone of what was committed before, holds
every departure the service may already hold for a decision instead of declaring the goods
a second time; a person adopts each (or forgets it), and the service ends with one
declaration per document."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.e2e import batches
from tests.e2e.conftest import Project, Sandbox
from tests.e2e.recovery import apply_until_done, departure_weights, pending_departures

pytestmark = pytest.mark.e2e

DEPARTURES = 8
STATE_FILES = ("state.json", "journal.jsonl", "state.json.backup", "history.jsonl", "environment")
"""What the recipe commits of the state folder."""


def _keep(project: Project, into: Path) -> None:
    """What the commit step would have committed: the state files as they are now."""
    into.mkdir()
    if not project.state_dir.exists():
        return  # a first run: nothing was committed
    for name in STATE_FILES:
        if (project.state_dir / name).exists():
            shutil.copy2(project.state_dir / name, into / name)


def _next_runner(tmp_path: Path, sandbox: Sandbox, kept: Path) -> Project:
    """The next runner's checkout, on another machine: the manifests and the state files
    as they were committed, nothing of the lost run's."""
    project = Project(tmp_path / "next", sandbox)
    project.write("manifests/departures.yaml", batches.departures(DEPARTURES))
    project.state_dir.mkdir(parents=True)
    for name in STATE_FILES:
        if (kept / name).exists():
            shutil.copy2(kept / name, project.state_dir / name)
    return project


def _lose_a_run(tmp_path: Path, sandbox: Sandbox, applied_before: int) -> Project:
    """An earlier run applied ``applied_before`` departures and its state was committed;
    the next run submitted all of ``DEPARTURES`` and its runner was lost. Returns the
    checkout of the run after."""
    runner = Project(tmp_path / "runner", sandbox)
    if applied_before:
        runner.write("manifests/departures.yaml", batches.departures(applied_before))
        first = runner.run("apply", "--auto-approve")
        assert first.returncode == 0, first.stdout + first.stderr
    kept = tmp_path / "committed"
    _keep(runner, kept)
    runner.write("manifests/departures.yaml", batches.departures(DEPARTURES))
    lost = runner.run("apply", "--auto-approve")
    assert lost.returncode == 0, lost.stdout + lost.stderr
    assert len(sandbox.created_transit()) == DEPARTURES
    return _next_runner(tmp_path, sandbox, kept)


@pytest.mark.parametrize("applied_before", [0, 4], ids=["a first run lost", "a later run lost"])
def test_the_run_after_a_lost_runner_declares_nothing_twice(
    tmp_path: Path, sandbox: Sandbox, applied_before: int
) -> None:
    sandbox.start()
    project = _lose_a_run(tmp_path, sandbox, applied_before)

    again = project.run("apply", "--auto-approve")
    assert again.returncode == 1, again.stdout + again.stderr
    lost = [f"dep-e2e-{n:02d}" for n in range(applied_before + 1, DEPARTURES + 1)]
    for name in lost:
        assert f"? needs decision DepartureDeclaration/{name}" in again.stdout, again.stdout
    assert "run whose records were not kept" in again.stdout
    # Nothing submitted: the service holds one declaration per document, as before.
    assert len(sandbox.created_transit()) == DEPARTURES
    held = pending_departures(project.state())
    assert held == [f"DepartureDeclaration/{name}" for name in lost]
    assert all(project.state()[address].get("lookSince") for address in held)

    # Each held one is found again by the next run (not sent), adopted by a person, and
    # the run after that has nothing left to do.
    runs = apply_until_done(project)
    assert runs == 2, project.outputs
    created = sandbox.created_transit()
    assert sorted(d["totalWeight"] for d in created.values()) == departure_weights(DEPARTURES)
    records = project.state()
    assert {r["outputs"]["declarationId"] for r in records.values()} == set(created)
    assert not any("lookSince" in record for record in records.values())


def _held_and_forgotten(tmp_path: Path, sandbox: Sandbox) -> tuple[Project, str]:
    """A lost run's dep-e2e-07 and dep-e2e-08 held by the next apply, then dep-e2e-08
    forgotten by the user (none of what the service made is it); its look's new start."""
    sandbox.start()
    project = _lose_a_run(tmp_path, sandbox, 6)
    held = project.run("apply", "--auto-approve")
    assert held.returncode == 1, held.stdout + held.stderr
    forgot = project.run("state", "forget", "DepartureDeclaration/dep-e2e-08")
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    since = project.state()["DepartureDeclaration/dep-e2e-08"]["lookSince"]
    return project, since


def test_a_held_departure_forgotten_is_submitted_once_and_not_held_again(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    project, _ = _held_and_forgotten(tmp_path, sandbox)
    plan = project.run("plan")
    assert "? needs decision DepartureDeclaration/dep-e2e-08" in plan.stdout, plan.stdout
    assert "not sent yet" in plan.stdout
    sent = project.run("apply", "--auto-approve")
    assert sent.returncode == 1, sent.stdout + sent.stderr  # dep-e2e-07 still held
    assert "DepartureDeclaration/dep-e2e-08: held for a decision, nothing" in sent.stderr
    weights = sorted(d["totalWeight"] for d in sandbox.created_transit().values())
    assert weights == sorted([*departure_weights(DEPARTURES), batches.departure_weight(8)])
    assert project.state()["DepartureDeclaration/dep-e2e-08"]["status"] == "applied"

    # Submitted once: the next runs hold only dep-e2e-07, and send nothing.
    for _ in range(2):
        rerun = project.run("apply", "--auto-approve")
        assert rerun.returncode == 1, rerun.stdout + rerun.stderr
        assert "? needs decision DepartureDeclaration/dep-e2e-07" in rerun.stdout
        assert "needs decision DepartureDeclaration/dep-e2e-08" not in rerun.stdout
    assert len(sandbox.created_transit()) == DEPARTURES + 1


def _submitted_once_by_the_next_apply(project: Project, sandbox: Sandbox, since: str) -> None:
    record = project.state()["DepartureDeclaration/dep-e2e-08"]
    assert (record["status"], record["lookSince"]) == ("unknown", since)
    sent = project.run("apply", "--auto-approve")
    assert sent.returncode == 1, sent.stdout + sent.stderr  # dep-e2e-07 still held
    assert "? needs decision DepartureDeclaration/dep-e2e-07" in sent.stdout
    assert "needs decision DepartureDeclaration/dep-e2e-08" not in sent.stdout, sent.stdout
    assert project.state()["DepartureDeclaration/dep-e2e-08"]["status"] == "applied"
    assert len(sandbox.created_transit()) == DEPARTURES + 1


def test_a_refresh_after_a_forget_leaves_the_held_departure_to_the_next_apply(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # Taken back by the refresh, the next apply would look a day back again, before the
    # forget, and hold it for what the user said was not it.
    project, since = _held_and_forgotten(tmp_path, sandbox)
    refreshed = project.run("refresh")
    assert refreshed.returncode in (0, 2), refreshed.stdout + refreshed.stderr
    said = refreshed.stdout + refreshed.stderr
    assert (
        f"DepartureDeclaration/dep-e2e-08: held for a decision, nothing the service made "
        f"since {since} could be it now: the next apply submits it"
    ) in " ".join(said.split()), said
    _submitted_once_by_the_next_apply(project, sandbox, since)


def test_an_apply_stopped_before_it_sends_keeps_the_forgets_time(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # Apply takes the forgotten departure back to plan it as a creation; stopped then (here
    # by the large-change guard; a "no" at the prompt the same way), it puts it back held.
    project, since = _held_and_forgotten(tmp_path, sandbox)
    config = project.root / "customs-batch.yaml"
    kept = config.read_text(encoding="utf-8")
    guarded = yaml.safe_load(kept)
    guarded["environments"]["e2e"]["large_change_guard"] = {
        "min_records": 1,
        "max_create_share": 0.01,
    }
    config.write_text(yaml.safe_dump(guarded), encoding="utf-8")
    stopped = project.run("apply", "--auto-approve")
    assert stopped.returncode != 0, stopped.stdout + stopped.stderr
    planned = " ".join(stopped.stdout.split())
    assert "+ create DepartureDeclaration/dep-e2e-08" in planned, stopped.stdout
    assert "large" in stopped.stdout + stopped.stderr
    assert len(sandbox.created_transit()) == DEPARTURES
    config.write_text(kept, encoding="utf-8")
    _submitted_once_by_the_next_apply(project, sandbox, since)
