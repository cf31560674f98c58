"""A fault soak: a thousand documents against an emulator that fails one request in two, in
every way it can (503 before and after the effect, connections dropped before and after,
spurious 429s, slow answers), re-run until done: nothing twice, nothing lost."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Project, Running, assert_secret_nowhere
from tests.reliability.runs import apply_until_done
from tests.reliability.world import Mix, SeededSandbox, audit, write_batch

pytestmark = pytest.mark.reliability

FAULTS = "5xx=0.1,drop=0.1,5xx-after=0.1,drop-after=0.1,429=0.1,slow=0.1:0.2s"
SCALE = int(os.environ.get("RELIABILITY_SOAK_SCALE", "10"))
# Movements go one at a time in each of the four lanes, and each spurious 429 pauses every
# sender for a second: most documents are of the kinds that run side by side.
MIX = Mix(
    lanes=4,
    per_lane=5 * SCALE,
    departures=8 * SCALE,
    groups=15 * SCALE,
    party_updates=4 * SCALE,
    deactivations=26 * SCALE + SCALE // 2,
    cancellations=26 * SCALE + SCALE // 2,
)


def test_fault_soak(tmp_path: Path, results: dict[str, Any]) -> None:
    sandbox = SeededSandbox(tmp_path / "server", MIX.spares)
    try:
        sandbox.start(faults=FAULTS, fault_seed=10)
        project = Project(tmp_path / "project", sandbox, parallelism=8)
        write_batch(project, MIX)
        runs = apply_until_done(project, runs=12, timeout=900)
        requests = sum(sandbox.get("/_sandbox/stats")["requests"].values())
        sandbox.start()
        project.write_config()
        found = audit(project, sandbox, MIX)
        assert_secret_nowhere(project)
    finally:
        Running.reap_all()
        sandbox.stop()
    results["fault_soak"] = {
        "faults": FAULTS,
        "resources": found.resources,
        "requests": requests,
        "runs": runs.runs,
        "duplicates": found.duplicates,
        "lost": found.lost,
        "phantoms": found.phantoms,
        "decisions_adopted": runs.adopted,
        "decisions_forgotten": runs.forgotten,
        "converged": found.converged and not found.not_applied,
    }
    assert found.details == [], found.details
    assert (found.duplicates, found.lost, found.phantoms) == (0, 0, 0)
    assert found.converged
