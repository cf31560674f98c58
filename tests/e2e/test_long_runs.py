"""Applies that outlive a job, with the real CLI against a real ``sandbox serve``:

- ``--time-budget`` stops a run held to a rate limit under which the batch cannot fit the
  budget, exits 4 with the command that goes on, and that command, run again until it exits
  0 (here, or from another folder on the same PostgreSQL state), applies everything once;
- two applies on two states of one database with one key keep the emulator's rate limit
  together: no 429.

Nothing waits on time: the budget cannot hold the batch at the rate limit whatever the
machine's speed, and the two applies are held at their shared rate limit (a locked row)
until both wait there."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import yaml

from customs_batch.shared_rate_limit import key_fingerprint
from tests.e2e import batches
from tests.e2e.conftest import SECRET, Project, Sandbox
from tests.e2e.test_postgres_state import PgProject

pytestmark = pytest.mark.e2e

MOVEMENTS = 16
BUDGET = "4s"
"""At 2 requests a second (one every 0.51 s) the 16 movements need 7.6 s or more, twice the
budget. The budget counts from the start of the process, so its start-up (loading, taking
the lock, connecting to PostgreSQL) must leave it time for one operation: 4 s leaves room for
a start-up several times slower than on a quiet machine (both cores busy with other work)."""
LEFT = re.compile(r"Time budget of 4s used up: (\d+) operation\(s\) not started")


class SlowProject(Project):
    """The ``e2e`` environment held to 2 requests a second, one at a time."""

    def environment(self) -> dict[str, Any]:
        return {**super().environment(), "rate_limit": "2/second", "parallelism": 1}


class SlowPgProject(PgProject):
    def environment(self) -> dict[str, Any]:
        return {**super().environment(), "rate_limit": "2/second", "parallelism": 1}


def _stopped_by_the_budget(project: Project) -> tuple[int, str]:
    """The first run: exit 4, how many operations it left, and the command it printed."""
    done = project.run("apply", "manifests", "--auto-approve", "--time-budget", BUDGET)
    assert done.returncode == 4, done.stdout + done.stderr
    found = LEFT.search(done.stderr)
    assert found, done.stderr
    left = int(found[1])
    assert 0 < left < MOVEMENTS
    assert f"{left} not-started" in done.stdout
    resume = done.stderr.rstrip().splitlines()[-1].strip()
    assert resume == f"customs-batch apply manifests --auto-approve --time-budget {BUDGET}"
    return left, resume


def _resume_until_done(project: Project, resume: str, left: int) -> None:
    """Run the printed command again until it exits 0; every run makes progress."""
    argv = shlex.split(resume)
    assert argv[0] == "customs-batch"
    for _ in range(MOVEMENTS):
        done = project.run(*argv[1:])
        if done.returncode == 0:
            assert f"Applying {left} operation(s)." in done.stdout
            return
        assert done.returncode == 4, done.stdout + done.stderr
        found = LEFT.search(done.stderr)
        assert found and int(found[1]) < left, done.stderr
        left = int(found[1])
    pytest.fail("the resumed runs never finished")


def _applied_exactly_once(project: Project, sandbox: Sandbox) -> None:
    created = sandbox.movements()
    assert len(created) == MOVEMENTS and not batches.duplicates(created)
    assert sandbox.requests("POST", "/movements") == MOVEMENTS  # nothing was sent twice
    records = project.state()
    assert {r["status"] for r in records.values()} == {"applied"}
    assert {r["outputs"]["movementId"] for r in records.values()} == {
        m["movementId"] for m in created
    }


def test_a_run_out_of_time_exits_4_and_its_command_goes_on_until_everything_is_applied(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    sandbox.start()
    project = SlowProject(tmp_path / "project", sandbox)
    project.write("manifests/movements.yaml", batches.movements(per_lane=MOVEMENTS // 2, lanes=2))

    left, resume = _stopped_by_the_budget(project)
    assert len(sandbox.movements()) == MOVEMENTS - left
    records = project.state()
    assert len(records) == MOVEMENTS - left, "what was not started is not in the state"
    assert {r["status"] for r in records.values()} == {"applied"}

    _resume_until_done(project, resume, left)
    _applied_exactly_once(project, sandbox)
    again = project.run("plan", "--detailed-exitcode")
    assert again.returncode == 0, again.stdout


def test_another_folder_on_the_same_postgres_state_goes_on_where_the_budget_stopped(
    tmp_path: Path, sandbox: Sandbox, postgres_url: str
) -> None:
    sandbox.start()
    laptop = SlowPgProject(tmp_path / "laptop", sandbox, postgres_url)
    runner = SlowPgProject(tmp_path / "runner", sandbox, postgres_url)
    for project in (laptop, runner):
        project.write(
            "manifests/movements.yaml", batches.movements(per_lane=MOVEMENTS // 2, lanes=2)
        )

    left, resume = _stopped_by_the_budget(laptop)
    _resume_until_done(runner, resume, left)
    _applied_exactly_once(runner, sandbox)
    assert laptop.run("plan", "--detailed-exitcode").returncode == 0


class NamedPgProject(PgProject):
    """A folder with a state of its own name in the shared database, at 4 requests a second."""

    def __init__(self, root: Path, sandbox: Sandbox, url: str, state_name: str) -> None:
        self.state_name = state_name
        super().__init__(root, sandbox, url, parallelism=2)

    def environment(self) -> dict[str, Any]:
        settings = super().environment()
        return {
            **settings,
            "rate_limit": "4/second",
            "state": {**settings["state"], "name": self.state_name},
        }


@contextmanager
def _rate_limit_row_held(url: str) -> Iterator[psycopg.Connection[Any]]:
    """The key's rate limit row, locked by an open transaction: every apply that takes a
    slot waits there until the test commits (the gate of the race below)."""
    with psycopg.connect(url) as connection:
        connection.execute(
            "INSERT INTO customs_batch_rate_budgets (fingerprint, next_slot) VALUES (%s, 0)",
            (key_fingerprint(SECRET),),
        )
        connection.commit()
        connection.execute(
            "SELECT 1 FROM customs_batch_rate_budgets WHERE fingerprint = %s FOR UPDATE",
            (key_fingerprint(SECRET),),
        )
        yield connection


def _waiting_for_a_slot(url: str, count: int) -> None:
    """Return once ``count`` sessions wait for the locked rate limit row."""
    query = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
    with psycopg.connect(url, autocommit=True) as connection:
        for _ in range(1200):
            row = connection.execute(query).fetchone()
            if row and row[0] >= count:
                return
            connection.execute("SELECT pg_sleep(0.05)")
    pytest.fail(f"fewer than {count} applies waited for a slot")


def _lanes(lanes: tuple[int, ...]) -> str:
    documents = [
        d
        for d in yaml.safe_load_all(batches.movements(per_lane=6))
        if int(d["metadata"]["name"].split("-")[1][1:]) in lanes
    ]
    return yaml.safe_dump_all(documents, sort_keys=False)


def test_two_states_with_one_key_keep_the_rate_limit_together(
    tmp_path: Path, sandbox: Sandbox, postgres_url: str
) -> None:
    # The emulator allows 5 requests a second per key; each apply alone would send 4.
    sandbox.start(rate_limit="5/second")
    alice = NamedPgProject(tmp_path / "alice", sandbox, postgres_url, "alice-state")
    bob = NamedPgProject(tmp_path / "bob", sandbox, postgres_url, "bob-state")
    alice.write("manifests/movements.yaml", _lanes((0, 1)))
    bob.write("manifests/movements.yaml", _lanes((2, 3)))
    assert alice.run("state", "list").returncode == 0  # the tables exist

    with _rate_limit_row_held(postgres_url) as gate:
        runs = [project.start("apply", "--auto-approve") for project in (alice, bob)]
        _waiting_for_a_slot(postgres_url, 2)  # both applies are under way, at the gate
        gate.commit()
        results = [run.finish(timeout=120) for run in runs]
    for code, stdout, stderr in results:
        assert code == 0, stdout + stderr
        assert "Apply: 12 succeeded, 0 failed" in stdout

    # Read with the seed's other key, whose rate limit the applies did not use.
    inspect = {"Authorization": "Bearer sandbox-key"}
    stats = httpx.get(f"{sandbox.url}/_sandbox/stats", headers=inspect).json()
    assert stats["rateLimited"] == 0, "together they went past the key's rate limit"
    assert stats["requests"]["POST /v1/shipments/{id}/movements"] == 24
    created = httpx.get(f"{sandbox.url}/_sandbox/movements", headers=inspect).json()
    assert len(created) == 24 and not batches.duplicates(created)
    assert len(alice.state()) == 12 and len(bob.state()) == 12
