"""kill -9 of apply at many instants: the state always loads, and re-runs create nothing
twice and forget nothing the service created (DESIGN section 9, "Nothing lost")."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from customs_batch.state import LocalBackend
from tests.e2e import batches
from tests.e2e.conftest import Project, Running, Sandbox, assert_secret_nowhere
from tests.e2e.recovery import apply_until_done, departure_weights

pytestmark = pytest.mark.e2e

LANES, PER_LANE, DEPARTURES = 4, 15, 3
PARALLELISM = 4
"""At most this many requests are in flight."""

# Where each run is killed: after this many outcome lines (None: while it starts up,
# loading the manifests or folding the previous run's journal), then after this delay. The
# emulator's gate is closed at that point, so the run cannot end before its kill: it waits
# at the door for its next request while the requests already past it finish, or not, by
# the instant of the kill.
KILL_POINTS = (
    (None, 0.6),
    (0, 0.0),
    (1, 0.0),
    (0, 0.15),
    (2, 0.05),
    (None, 0.9),
    (3, 0.1),
    (1, 0.25),
    (4, 0.0),
    (0, 0.35),
    (2, 0.2),
)
# Every run must still have requests to make when it is killed: a run records at most its
# kill point's outcomes plus the requests in flight when the gate closed.
assert (
    sum(n if n is not None else 0 for n, _ in KILL_POINTS) + PARALLELISM * len(KILL_POINTS)
    < LANES * PER_LANE + DEPARTURES
)


def _kill_at(sandbox: Sandbox, run: Running, outcomes: int | None, delay: float) -> None:
    """Kill the run at that point (the gate closed from then on, or already closed when it
    is killed while it starts up), then open the gate."""
    if outcomes is not None:
        seen = 0

        def counts(line: str) -> bool:
            nonlocal seen
            if line.startswith(("done ", "FAILED ", "skipped ")):
                seen += 1
            if outcomes == 0:
                return line.startswith("Applying ")
            return seen >= outcomes

        if run.wait_for_line(counts) is None:
            pytest.fail(f"the apply ended before {outcomes} outcome(s): {run.finish()}")
        sandbox.close_gate()
    time.sleep(delay)  # the instant of the kill varies; no outcome depends on it
    assert run.process.poll() is None, f"the apply ended before its kill: {run.finish()}"
    run.kill()
    sandbox.open_gate()  # requests held at the door now reach the service: unknown outcomes


def test_kill_9_at_many_instants_loses_and_duplicates_nothing(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    sandbox.start(faults="slow=0.5:0.3s", fault_seed=5)
    project = Project(tmp_path / "project", sandbox, parallelism=PARALLELISM)
    project.write("manifests/movements.yaml", batches.movements(PER_LANE, LANES))
    project.write("manifests/departures.yaml", batches.departures(DEPARTURES))

    for outcomes, delay in KILL_POINTS:
        if outcomes is None:
            sandbox.close_gate()  # killed while it starts up, before any request of its own
        _kill_at(sandbox, project.start("apply", "--auto-approve"), outcomes, delay)
        LocalBackend(project.state_dir).read()  # the state loads after every kill

    sandbox.start()  # the same data, no faults from here on
    project.write_config()
    runs = apply_until_done(project)
    assert runs <= 3

    created = sandbox.movements()
    assert not batches.duplicates(created), batches.duplicates(created)
    wanted = {
        batches.movement_identity(doc["spec"])
        for doc in _documents(project, "manifests/movements.yaml")
    }
    assert {batches.movement_identity(m) for m in created} == wanted
    assert len(created) == LANES * PER_LANE

    records = project.state()
    recorded_movements = {
        r["outputs"]["movementId"] for a, r in records.items() if a.startswith("Movement/")
    }
    assert recorded_movements == {m["movementId"] for m in created}
    assert all(r["status"] == "applied" for r in records.values()), records
    transit = sandbox.created_transit()
    assert sorted(d["totalWeight"] for d in transit.values()) == departure_weights(DEPARTURES)
    recorded_departures = {
        r["outputs"]["declarationId"]
        for a, r in records.items()
        if a.startswith("DepartureDeclaration/")
    }
    assert recorded_departures == set(transit)
    done = project.run("plan", "--detailed-exitcode")
    assert done.returncode == 0, done.stdout
    assert_secret_nowhere(project)  # the history's files included
    _assert_history_complete(project, {m["movementId"] for m in created})


def _assert_history_complete(project: Project, movements: set[str]) -> None:
    """After every kill, the history's chain is unbroken, and every movement at the service
    has the answer that gave its ID in the history (a lost answer came back to the request
    re-sent with the same key)."""
    verified = project.run("history", "verify")
    assert verified.returncode == 0, verified.stderr
    shown = project.run("history", "--format", "json")
    entries = json.loads(shown.stdout)["entries"]
    assert movements <= {entry["ids"].get("movementId") for entry in entries}


def _documents(project: Project, relative: str) -> list[dict[str, Any]]:
    return list(yaml.safe_load_all((project.root / relative).read_text()))
