"""Two applies on one state, round after round, and force-unlock against a live holder:
one apply runs at a time, force-unlock never frees a running apply's lock, and the rounds
together create nothing twice."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Project, Running
from tests.reliability.world import Mix, SeededSandbox, audit, write_batch

pytestmark = pytest.mark.reliability

ROUNDS = int(os.environ.get("RELIABILITY_LOCK_ROUNDS", "3"))
MIX = Mix()


def test_two_applies_on_one_state_and_force_unlock_of_a_live_holder(
    tmp_path: Path, results: dict[str, Any]
) -> None:
    sandbox = SeededSandbox(tmp_path / "server", MIX.spares)
    refused_applies = waited = force_refused = 0
    mix = MIX
    try:
        sandbox.start(faults="slow=0.3:0.2s", fault_seed=3)
        project = Project(tmp_path / "project", sandbox)
        for round_number in range(1, ROUNDS + 1):
            mix = replace(MIX, per_lane=MIX.per_lane + 5 * (round_number - 1))
            write_batch(project, mix)
            # Odd rounds: the second apply gives up at once; even rounds: it waits its turn.
            timeout = "0" if round_number % 2 else "600"
            sandbox.close_gate()
            first = project.start("apply", "--auto-approve", "--lock-timeout", timeout)
            second = project.start("apply", "--auto-approve", "--lock-timeout", timeout)
            sandbox.wait_until_held(1)  # one of them holds the lock and is sending
            note = json.loads((project.state_dir / "state.lock.info").read_text())
            for extra in ((), ("--force",)):
                refused = project.run("force-unlock", note["id"], *extra)
                assert refused.returncode == 3, refused.stdout + refused.stderr
                assert "held by a running process" in refused.stderr
                force_refused += 1
            sandbox.open_gate()
            ends = [run.finish(timeout=600) for run in (first, second)]
            codes = sorted(code for code, _, _ in ends)
            if timeout == "0":
                assert codes == [0, 3], ends
                loser = next(err for code, _, err in ends if code == 3)
                assert "the state is locked" in loser
                refused_applies += 1
                again = project.run("apply", "--auto-approve")  # what the loser did not do
                assert again.returncode == 0, again.stdout + again.stderr
            else:
                assert codes == [0, 0], ends
                waited += 1
        sandbox.start()
        project.write_config()
        found = audit(project, sandbox, mix)
    finally:
        Running.reap_all()
        sandbox.stop()
    results["concurrency"] = {
        "rounds": ROUNDS,
        "resources": mix.total,
        "second_apply_refused": refused_applies,
        "second_apply_waited_then_ran": waited,
        "force_unlock_refused": force_refused,
        "duplicates": found.duplicates,
        "lost": found.lost,
        "phantoms": found.phantoms,
        "converged": found.converged and not found.not_applied,
    }
    assert found.details == [], found.details
    assert (found.duplicates, found.lost, found.phantoms) == (0, 0, 0)
    assert found.converged
