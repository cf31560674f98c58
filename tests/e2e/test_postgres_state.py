"""The real CLI on a state kept in a real PostgreSQL server: two working folders share it,
a killed lock holder frees it, and a server restart in the middle of an apply loses
nothing. Every race is held open by a gate (a stopped emulator, a process holding the lock
until it reads a line), never by one process being slower."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.e2e import batches
from tests.e2e import test_moved_service as moved
from tests.e2e.conftest import SECRET, Project, Sandbox
from tests.postgres import PostgresCluster

pytestmark = pytest.mark.e2e

URL_ENV = "CUSTOMS_E2E_STATE_URL"
STATE_NAME = "e2e-shared"


class PgProject(Project):
    """A project folder whose ``e2e`` environment keeps its state in PostgreSQL."""

    def __init__(self, root: Path, sandbox: Sandbox, url: str, *, parallelism: int = 2) -> None:
        self.url = url
        super().__init__(root, sandbox, parallelism=parallelism)

    def environment(self) -> dict[str, Any]:
        state = {"backend": "postgres", "url_env": URL_ENV, "name": STATE_NAME}
        return {**super().environment(), "state": state}

    def env(self) -> dict[str, str]:
        return {**super().env(), URL_ENV: self.url}


@pytest.fixture
def folders(tmp_path: Path, sandbox: Sandbox) -> Iterator[Callable[[str, str], PgProject]]:
    """Make project folders on the state at a URL (what they start is reaped by conftest)."""

    def make(name: str, url: str) -> PgProject:
        return PgProject(tmp_path / name, sandbox, url)

    yield make


HOLD = textwrap.dedent(
    """
    import sys
    from customs_batch.state.postgres import PostgresBackend
    session = PostgresBackend(sys.argv[1], sys.argv[2]).open("gate")
    print(session.lock_info.id, flush=True)
    sys.stdin.readline()
    session.close()
    """
)


@pytest.fixture
def gate(postgres_url: str) -> Iterator[subprocess.Popen[str]]:
    """A process that holds the shared state's lock until a line comes on its stdin."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, postgres_url, STATE_NAME],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip()
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def _wait_until(url: str, query: str, *args: object) -> None:
    """Return once ``query`` counts at least one row: the gate of the races below (what the
    processes have done is read from the database, never guessed from time)."""
    deadline = time.monotonic() + 60
    with psycopg.connect(url, autocommit=True) as connection:
        while time.monotonic() < deadline:
            try:
                row = connection.execute(query, args).fetchone()
            except psycopg.errors.UndefinedTable:
                row = None  # the first command has not created the tables yet
            if row and row[0]:
                return
            time.sleep(0.05)
    pytest.fail(f"never true: {query}")


def _someone_waits_for_the_lock(url: str) -> None:
    _wait_until(url, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")


def _intents_recorded(url: str) -> None:
    """An apply holds the lock and has recorded the intents of the requests it sent."""
    _wait_until(url, "SELECT count(*) FROM customs_batch_journal WHERE state = %s", STATE_NAME)


def _assert_all_applied(project: Project, sandbox: Sandbox, count: int) -> None:
    created = sandbox.movements()
    assert not batches.duplicates(created), batches.duplicates(created)
    assert len(created) == count
    records = project.state()
    assert len(records) == count
    assert all(r["status"] == "applied" for r in records.values()), records
    assert {r["outputs"]["movementId"] for r in records.values()} == {
        m["movementId"] for m in created
    }
    for text in project.outputs:
        assert SECRET not in text and "postgresql://" not in text


_STATE_TABLES = ("customs_batch_states", "customs_batch_resources")


def _back_up_state_rows(url: str) -> None:
    """A copy of the state's rows in the same database, as a backup of those tables holds."""
    with psycopg.connect(url) as connection:
        for table in _STATE_TABLES:
            connection.execute(f"CREATE TABLE backup_{table} AS SELECT * FROM {table}")


def _put_back_state_rows(url: str) -> None:
    """The state's rows replaced by the backup's, as a restore of it does."""
    with psycopg.connect(url) as connection:
        for table in reversed(_STATE_TABLES):
            connection.execute(f"DELETE FROM {table}")
        for table in _STATE_TABLES:
            connection.execute(f"INSERT INTO {table} SELECT * FROM backup_{table}")


def test_state_rows_put_back_from_an_older_backup_are_refused_not_declared_again(
    sandbox: Sandbox, postgres_url: str, folders: Callable[[str, str], PgProject]
) -> None:
    sandbox.start()
    project = folders("alice", postgres_url)
    project.write("manifests/movements.yaml", batches.movements(per_lane=2, lanes=1))
    assert project.run("apply", "--auto-approve").returncode == 0
    _back_up_state_rows(postgres_url)
    project.write("manifests/movements.yaml", batches.movements(per_lane=3, lanes=1))
    assert project.run("apply", "--auto-approve").returncode == 0
    assert len(sandbox.movements()) == 3

    _put_back_state_rows(postgres_url)  # the state's rows, not the history's beside them
    for command in (("plan",), ("apply", "--auto-approve")):
        refused = project.run(*command)
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert f"the state {STATE_NAME} in the database is older than its history" in (
            refused.stderr
        )
        assert "Movement/mov-l0-03 (movementId=" in refused.stderr
        assert "customs-batch import ADDR ID" in refused.stderr
    assert len(sandbox.movements()) == 3  # nothing declared again

    # The way out the message names: the object recorded again, then nothing to send.
    created = {m["quantity"]: m["movementId"] for m in sandbox.movements()}
    imported = project.run("import", "Movement/mov-l0-03", str(created[3]))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    again = project.run("apply", "--auto-approve")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Nothing to apply." in again.stdout
    _assert_all_applied(project, sandbox, 3)


def _service_of_the_state(url: str) -> str | None:
    with psycopg.connect(url) as connection:
        row = connection.execute(
            "SELECT service FROM customs_batch_services WHERE state = %s", (STATE_NAME,)
        ).fetchone()
    return None if row is None else str(row[0])


def test_a_state_in_the_database_pointed_at_another_service_sends_nothing_there(
    tmp_path: Path, sandbox: Sandbox, postgres_url: str, folders: Callable[[str, str], PgProject]
) -> None:
    # As for a local state (test_moved_service.py): the records' IDs at another service are
    # other objects, here another team's template group, which the PATCH renamed.
    sandbox.start()
    project = folders("alice", postgres_url)
    project.write("manifests/group.yaml", moved.GROUP.format(name="My road imports"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    (mine,) = [g for g in moved.groups(sandbox) if g["code"] == "MY-ROAD"]
    assert _service_of_the_state(postgres_url) == sandbox.url

    other = moved.another_service(tmp_path)
    try:
        before = moved.groups(other)
        assert [g["code"] for g in before if g["id"] == mine["id"]] == ["OTHER"]
        project.sandbox = other
        project.write_config()
        project.write("manifests/group.yaml", moved.GROUP.format(name="My road imports (EU)"))
        planned = project.run("plan")
        assert f"the state was written for the service at {sandbox.url}" in planned.stderr
        refused = project.run("apply", "--auto-approve")
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert f"the PostgreSQL state {STATE_NAME} holds the state of environment" in (
            refused.stderr
        )
        assert "its row in customs_batch_services says so" in refused.stderr
        assert f"now at {other.url}, which does not hold its records" in refused.stderr
        assert moved.groups(other) == before, "nothing was sent to the other service"
        assert _service_of_the_state(postgres_url) == sandbox.url
    finally:
        other.stop()

    # The first service again, at a new address: it holds the records, so it is taken.
    sandbox.start()
    project.sandbox = sandbox
    project.write_config()
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _service_of_the_state(postgres_url) == sandbox.url
    (updated,) = [g for g in moved.groups(sandbox) if g["code"] == "MY-ROAD"]
    assert (updated["id"], updated["name"]) == (mine["id"], "My road imports (EU)")


def test_an_environment_moved_to_the_database_without_its_state_is_refused(
    tmp_path: Path, sandbox: Sandbox, postgres_url: str, folders: Callable[[str, str], PgProject]
) -> None:
    # The migration's push forgotten: the new state in the database is empty while the
    # environment's state folder holds what its runs created.
    sandbox.start()
    local = Project(tmp_path / "p", sandbox)
    local.write("manifests/movements.yaml", batches.movements(per_lane=2, lanes=1))
    assert local.run("apply", "--auto-approve").returncode == 0
    left = local.state_dir / "state.json"
    project = folders("p", postgres_url)  # the same folder, its state now in the database
    for command in (("plan",), ("apply", "--auto-approve")):
        refused = project.run(*command)
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert f"the state {STATE_NAME} in the database is new and empty, but {left}" in (
            refused.stderr
        )
        assert "holds 2 record(s)" in refused.stderr
        assert f"customs-batch state push {left}" in refused.stderr
    assert len(sandbox.movements()) == 2  # nothing declared again

    pushed = project.run("state", "push", str(left))
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    again = project.run("apply", "--auto-approve")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Nothing to apply." in again.stdout
    _assert_all_applied(project, sandbox, 2)


def test_two_folders_share_one_state_one_at_a_time(
    sandbox: Sandbox,
    postgres_url: str,
    gate: subprocess.Popen[str],
    folders: Callable[[str, str], PgProject],
) -> None:
    sandbox.start()
    alice = folders("alice", postgres_url)
    bob = folders("bob", postgres_url)
    manifest = batches.movements(per_lane=3, lanes=2)
    for project in (alice, bob):
        project.write("manifests/movements.yaml", manifest)

    refused = alice.run("apply", "--auto-approve", "--lock-timeout", "0")
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert f"the state {STATE_NAME} is locked" in refused.stderr
    assert f"(process {gate.pid}) for gate" in refused.stderr
    assert "Applying" not in refused.stdout

    waiting = bob.start("apply", "--auto-approve", "--lock-timeout", "120")
    _someone_waits_for_the_lock(postgres_url)
    assert gate.stdin is not None
    gate.stdin.write("\n")
    gate.stdin.flush()
    code, stdout, stderr = waiting.finish()
    assert code == 0, stdout + stderr
    assert "Applying 6 operation(s)." in stdout

    again = alice.run("apply", "--auto-approve", "--lock-timeout", "0")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Nothing to apply." in again.stdout  # alice sees what bob applied
    _assert_all_applied(alice, sandbox, 6)
    # bob's requests are in the state's history, which alice reads from the database.
    shown = alice.run("history", "--format", "json")
    entries = json.loads(shown.stdout)["entries"]
    assert shown.returncode == 0 and len(entries) == 6
    assert {e["status"] for e in entries} == {201}
    verified = alice.run("history", "verify")
    assert verified.returncode == 0 and "unbroken: 12 entries" in verified.stdout


def _stopped(sandbox: Sandbox) -> Iterator[None]:
    """The emulator frozen (SIGSTOP): requests in flight wait, none is answered."""
    assert sandbox.process is not None
    os.kill(sandbox.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(sandbox.process.pid, signal.SIGCONT)


def test_a_killed_lock_holder_lets_the_waiting_apply_finish_its_work(
    sandbox: Sandbox, postgres_url: str, folders: Callable[[str, str], PgProject]
) -> None:
    sandbox.start()
    first = folders("first", postgres_url)
    second = folders("second", postgres_url)
    manifest = batches.movements(per_lane=5, lanes=2)
    for project in (first, second):
        project.write("manifests/movements.yaml", manifest)

    stopped = _stopped(sandbox)
    next(stopped)  # the emulator frozen: the holder's first requests wait for their answer
    try:
        holder = first.start("apply", "--auto-approve")
        _intents_recorded(postgres_url)
        waiting = second.start("apply", "--auto-approve", "--lock-timeout", "120")
        _someone_waits_for_the_lock(postgres_url)
        assert holder.process.poll() is None
        holder.kill()
    finally:
        next(stopped, None)
    code, stdout, stderr = waiting.finish()
    assert code == 0, stdout + stderr
    _assert_all_applied(second, sandbox, 10)
    done = second.run("plan", "--detailed-exitcode")
    assert done.returncode == 0, done.stdout


@pytest.fixture
def own_server() -> Iterator[PostgresCluster]:
    """A server of this test only, since the test restarts it."""
    cluster = PostgresCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


def test_a_server_restart_in_the_middle_of_an_apply_loses_nothing(
    sandbox: Sandbox, own_server: PostgresCluster, folders: Callable[[str, str], PgProject]
) -> None:
    sandbox.start()
    project = folders("project", own_server.new_database())
    project.write("manifests/movements.yaml", batches.movements(per_lane=5, lanes=2))

    stopped = _stopped(sandbox)
    next(stopped)  # the emulator frozen: the first requests wait for their answer
    try:
        run = project.start("apply", "--auto-approve")
        _intents_recorded(project.url)
        own_server.restart()  # ends every session: the apply's lock and connection go
    finally:
        next(stopped, None)  # the answers come; recording them fails
    code, stdout, stderr = run.finish()
    assert code == 3, stdout + stderr
    assert "the state database: cannot record an operation" in stderr
    assert "run the same command again" in stderr

    records: dict[str, Any] = project.state()
    assert records and len(records) < 10
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    _assert_all_applied(project, sandbox, 10)
