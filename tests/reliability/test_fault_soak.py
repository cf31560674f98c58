"""A fault soak: a thousand documents against an emulator that fails one request in two, in
every way it can (503 before and after the effect, connections dropped before and after,
spurious 429s, slow answers), re-run until done: nothing twice, nothing lost, the history
verified and complete, and each run's end-of-run notification received by a local
webhook."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_notify import Receiver
from tests.e2e.conftest import SECRET, Project, Running, assert_secret_nowhere
from tests.reliability.runs import apply_until_done
from tests.reliability.world import (
    WRITES,
    Mix,
    SeededSandbox,
    audit,
    history_figures,
    write_batch,
)

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


NOTIFY_ENV = "CUSTOMS_RELIABILITY_NOTIFY_URLS"


class NotifiedProject(Project):
    """A project whose environment notifies a local webhook at the end of every apply."""

    def __init__(self, root: Path, sandbox: SeededSandbox, hook: str) -> None:
        self.hook = hook
        super().__init__(root, sandbox, parallelism=8)

    def environment(self) -> dict[str, Any]:
        notify = {"urls_env": NOTIFY_ENV, "on": ["end", "rejection", "needs-decision"]}
        return {**super().environment(), "notify": notify}

    def env(self) -> dict[str, str]:
        return {**super().env(), NOTIFY_ENV: self.hook}


def test_fault_soak(tmp_path: Path, results: dict[str, Any]) -> None:
    sandbox = SeededSandbox(tmp_path / "server", MIX.spares)
    receiver = Receiver()
    try:
        sandbox.start(faults=FAULTS, fault_seed=10)
        project = NotifiedProject(tmp_path / "project", sandbox, receiver.url)
        write_batch(project, MIX)
        runs = apply_until_done(project, runs=12, timeout=900)
        counted = sandbox.get("/_sandbox/stats")["requests"]
        requests = sum(counted.values())
        writes = sum(n for name, n in counted.items() if name.startswith(WRITES))
        sandbox.start()
        project.write_config()
        found = audit(project, sandbox, MIX)
        assert_secret_nowhere(project)
    finally:
        Running.reap_all()
        sandbox.stop()
        receiver.close()
    messages = receiver.received
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
        "history": history_figures(found.history),
        "writes_received": writes,
        "notifications": len(messages),
        "notifications_naming_a_decision": sum(
            1 for m in messages if "a decision" in str(m.get("title"))
        ),
        "last_notification": str(messages[-1].get("title")) if messages else "",
    }
    assert found.details == [], found.details
    assert (found.duplicates, found.lost, found.phantoms) == (0, 0, 0)
    assert found.converged
    # One message per apply run (each got as far as a plan), the last one a clean end; the
    # webhook never sees the key.
    assert len(messages) == runs.runs, messages
    assert "(exit code 0)" in str(messages[-1].get("message")), messages[-1]
    assert all(SECRET not in json.dumps(m) for m in messages)
    # No run is killed here: every request that changes something and reached the emulator
    # is in the history, with what came back (retries each count).
    assert found.history.write_exchanges >= writes, (found.history.write_exchanges, writes)
