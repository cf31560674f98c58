"""kill -9 of apply at random instants, over batches of every kind, on a local and on a
PostgreSQL state: after re-runs, nothing is created twice, nothing the service created is
missing from the state, no decision is asked about a request that never left, and the
history verifies and names every object the emulator holds."""

from __future__ import annotations

import os
import random
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import SECRET, Project, Running, assert_secret_nowhere
from tests.e2e.test_postgres_state import PgProject
from tests.postgres import PostgresCluster
from tests.reliability.kills import kill_at_random
from tests.reliability.runs import apply_until_done
from tests.reliability.world import Mix, SeededSandbox, audit, history_figures, write_batch

pytestmark = pytest.mark.reliability

TRIALS = int(os.environ.get("RELIABILITY_KILL_TRIALS", "10"))
"""Trials on a local state (files in the state folder)."""
PG_TRIALS = int(os.environ.get("RELIABILITY_KILL_TRIALS_PG", "5"))
"""Trials on a PostgreSQL state."""
BACKENDS = [("local", n) for n in range(1, TRIALS + 1)]
BACKENDS += [("postgres", TRIALS + n) for n in range(1, PG_TRIALS + 1)]
KILLS_PER_TRIAL = 2
MIX = Mix()
WINDOW = float(os.environ.get("RELIABILITY_KILL_WINDOW", "8"))
"""Seconds after ``Applying`` within which a kill strikes (about a whole run's length)."""


def never_sent(forgotten: int, received: int, created: int) -> int:
    """How many forgotten departures never reached the emulator at all.

    A forgotten departure (one the emulator does not hold) either never left the client, or
    reached the emulator and was dropped: the emulator discards a request whose client
    vanished before it read the body (its log shows it ended in ``error``). Every POST it
    logged either created a departure or was dropped, so the dropped ones are the received
    less the created; only forgotten ones beyond those can have never been sent.
    """
    return max(0, forgotten - (received - created))


@pytest.mark.parametrize(("backend", "trial"), BACKENDS, ids=[f"{b}-{t}" for b, t in BACKENDS])
def test_kill_9_of_apply_at_random_instants(
    backend: str,
    trial: int,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    results: dict[str, Any],
) -> None:
    rng = random.Random(trial)
    sandbox = SeededSandbox(tmp_path / "server", MIX.spares)
    try:
        sandbox.start(faults="slow=0.3:0.2s", fault_seed=trial)
        if backend == "postgres":
            cluster: PostgresCluster = request.getfixturevalue("postgres")
            project: Project = PgProject(
                tmp_path / "project", sandbox, cluster.new_database(), parallelism=4
            )
        else:
            project = Project(tmp_path / "project", sandbox)
        write_batch(project, MIX)
        kills = [kill_at_random(project, rng, WINDOW) for _ in range(KILLS_PER_TRIAL)]
        sandbox.start()  # the same data, no slowness: the re-runs
        project.write_config()
        runs = apply_until_done(project)
        found = audit(project, sandbox, MIX)
        created = len(sandbox.created_transit())
        if backend == "local":
            assert_secret_nowhere(project)
        else:  # no state file to search: what it printed and wrote (the test_secrets rows)
            assert not any(SECRET in text for text in project.outputs)
            for path in project.root.rglob("*"):
                assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path
        received = sum(
            log.read_text().count("POST /v1/declarations/transit ")
            for log in sandbox.directory.glob("server-*.log")
        )
    finally:
        Running.reap_all()
        sandbox.stop()
    results.setdefault("kill_apply", []).append(
        {
            "trial": trial,
            "backend": backend,
            "resources": found.resources,
            "kills": [asdict(k) for k in kills],
            "reruns": runs.runs,
            "duplicates": found.duplicates,
            "lost": found.lost,
            "phantoms": found.phantoms,
            "decisions": runs.decisions,
            "decisions_forgotten": runs.forgotten,
            "departure_posts_received": received,
            "departures_created": created,
            "decisions_never_sent": never_sent(runs.forgotten, received, created),
            "converged": found.converged and not found.not_applied,
            "history": history_figures(found.history),
        }
    )
    assert found.details == [], found.details
    assert (found.duplicates, found.lost, found.phantoms) == (0, 0, 0)
    assert never_sent(runs.forgotten, received, created) == 0, runs.history
    assert found.converged
