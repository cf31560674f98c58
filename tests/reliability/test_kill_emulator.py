"""kill -9 of the emulator (``sandbox serve --db FILE``) in the middle of an apply, restarted
in place on the same data: the apply goes on or stops cleanly, and after the re-runs nothing
is created twice and nothing the service holds is missing from the state."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Project, Running
from tests.reliability.runs import apply_until_done
from tests.reliability.world import Mix, SeededSandbox, audit, history_figures, write_batch

pytestmark = pytest.mark.reliability

TRIALS = int(os.environ.get("RELIABILITY_SERVER_TRIALS", "3"))
MIX = Mix()


@pytest.mark.parametrize("trial", range(1, TRIALS + 1))
def test_kill_9_of_the_emulator_mid_apply(
    trial: int, tmp_path: Path, results: dict[str, Any]
) -> None:
    rng = random.Random(100 + trial)
    sandbox = SeededSandbox(tmp_path / "server", MIX.spares)
    try:
        sandbox.start(faults="slow=0.3:0.2s", fault_seed=trial)
        sandbox.port = int(sandbox.url.rsplit(":", 1)[1])  # restarted where the apply sends
        project = Project(tmp_path / "project", sandbox)
        write_batch(project, MIX)
        run = project.start("apply", "--auto-approve")
        assert run.wait_for_line(lambda line: line.startswith("Applying "), timeout=120)
        delay = rng.uniform(0.3, 4.0)
        time.sleep(delay)
        sandbox.kill()
        sandbox.start(faults="slow=0.3:0.2s", fault_seed=trial)
        code, _, stderr = run.finish(timeout=600)
        assert code in (0, 1), stderr
        first_run = code
        runs = apply_until_done(project)
        sandbox.start()
        found = audit(project, sandbox, MIX)
    finally:
        Running.reap_all()
        sandbox.stop()
    results.setdefault("kill_emulator", []).append(
        {
            "trial": trial,
            "resources": found.resources,
            "killed_after_seconds": round(delay, 2),
            "interrupted_run_exit": first_run,
            "reruns": runs.runs,
            "duplicates": found.duplicates,
            "lost": found.lost,
            "phantoms": found.phantoms,
            "decisions": runs.decisions,
            "decisions_never_sent": runs.forgotten,
            "converged": found.converged and not found.not_applied,
            "history": history_figures(found.history),
        }
    )
    assert found.details == [], found.details
    assert (found.duplicates, found.lost, found.phantoms) == (0, 0, 0)
    assert found.converged
