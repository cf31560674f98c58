"""The secret search: runs with a recognisable API key and a PostgreSQL password, on a local
and on a PostgreSQL state, including an interrupted run and failed connections; then every
file the runs wrote, everything they printed and every row of every table of the state
database (resources, journal, lock holders, rate budgets) is searched for both.

Guarantee access codes are not searched for here: tests/e2e/test_sensitive_at_rest.py
searches for one (the state keeps them only as digests)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from tests.e2e.conftest import SECRET, Project, Running
from tests.postgres import PASSWORD, PASSWORD_ROLE, PostgresCluster
from tests.reliability.kills import kill_at_random
from tests.reliability.world import Mix, SeededSandbox, write_batch

pytestmark = pytest.mark.reliability

URL_ENV = "CUSTOMS_RELIABILITY_STATE_URL"
MIX = Mix(per_lane=10, departures=5, groups=3, party_updates=2, deactivations=2, cancellations=2)
SECRETS = (SECRET.encode(), PASSWORD.encode())


class PgProject(Project):
    """A project whose ``e2e`` environment keeps its state in PostgreSQL, at ``url``."""

    def __init__(self, root: Path, sandbox: SeededSandbox, url: str) -> None:
        self.url = url
        super().__init__(root, sandbox)

    def environment(self) -> dict[str, Any]:
        state = {"backend": "postgres", "url_env": URL_ENV, "name": "reliability"}
        # A rate limit: the key's budget is kept in the database too.
        return {**super().environment(), "state": state, "rate_limit": "40/second"}

    def env(self) -> dict[str, str]:
        return {**super().env(), URL_ENV: self.url}


def _commands(project: Project, rng: random.Random) -> int:
    """Everything a user does that could leak: returns how many commands ran."""
    before = len(project.outputs)
    project.run("validate", "manifests", "-o", "validate-report.json", "--format", "json")
    kill_at_random(project, rng, 1.0)  # an interrupted run: journal and lock note left
    _, _, found = _search(project.root, project.sandbox.directory, [])
    assert found == [], found
    done = project.run("plan", "-out", "first.plan")
    assert done.returncode in (0, 1), done.stderr  # 1: a departure may need a decision
    done = project.run("apply", "first.plan", "--verbose", timeout=300)
    assert done.returncode in (0, 1), done.stderr
    for argv in (
        ("apply", "--auto-approve", "-v", "--format", "json"),
        ("refresh", "--verbose"),
        ("state", "list", "--format", "json"),
        ("status",),
        ("plan", "-out", "second.plan", "--format", "json"),
        ("get", "declarations", "--type", "EXPORT", "--all"),
    ):
        project.run(*argv, timeout=300)
    pulled = project.run("state", "pull")
    (project.root / "pulled-state.json").write_text(pulled.stdout, encoding="utf-8")
    return (len(project.outputs) - before) // 2


def _table_rows(url: str) -> dict[str, list[str]]:
    """Every row of every table of the database at ``url``, each row as text."""
    with psycopg.connect(url, autocommit=True) as connection:
        tables = connection.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name"
        ).fetchall()
        return {
            name: [
                row[0]
                for row in connection.execute(
                    sql.SQL("SELECT t::text FROM {} AS t").format(sql.Identifier(name))
                )
            ]
            for (name,) in tables
        }


def _held_run_rows(project: PgProject, admin_url: str) -> dict[str, list[str]]:
    """The tables while an apply holds the lock with requests under way (the emulator's gate
    holds them): its lock row and its journal rows are there. The run is then killed, so
    they stay for the next run to find."""
    project.sandbox.close_gate()
    try:
        run = project.start("apply", "--auto-approve")
        # Until the run's first write is held: before it, the held requests are reads (the
        # run looks at the service for departures whose submission was lost: as many reads,
        # and retries of them, as the earlier faulty runs left to look for, so no fixed
        # count). Each is let through and the next held; the run cannot end without writing
        # its new documents, and a run that did is said so.
        while True:
            project.sandbox.wait_until_held(timeout=120)
            rows = _table_rows(admin_url)
            if rows.get("customs_batch_journal"):
                break
            assert run.process.poll() is None, "the apply ended before writing anything"
            project.sandbox.open_gate()
            project.sandbox.close_gate()
        run.kill()
    finally:
        project.sandbox.open_gate()
    return rows


def _search_rows(snapshots: list[dict[str, list[str]]]) -> tuple[dict[str, int], list[str]]:
    """Rows searched per table (the most of any snapshot), and where a secret was found."""
    searched: dict[str, int] = {}
    found = []
    for number, tables in enumerate(snapshots):
        for name, rows in tables.items():
            searched[name] = max(searched.get(name, 0), len(rows))
            found += [
                f"table {name} (snapshot {number})"
                for row in rows
                if any(secret.decode() in row for secret in SECRETS)
            ]
    return searched, found


def _search(root: Path, skip: Path, outputs: list[str]) -> tuple[int, int, list[str]]:
    """Files and bytes searched under ``root`` (but ``skip``), and where a secret was found."""
    found = [
        f"output {n}" for n, text in enumerate(outputs) if any(s.decode() in text for s in SECRETS)
    ]
    files = size = 0
    for path in root.rglob("*"):
        if not path.is_file() or path.is_symlink() or skip in path.parents:
            continue
        data = path.read_bytes()
        files, size = files + 1, size + len(data)
        if any(secret in data for secret in SECRETS):
            found.append(str(path))
    return files, size, found


def test_no_key_and_no_password_in_any_output_or_file(
    tmp_path: Path, postgres: PostgresCluster, results: dict[str, Any]
) -> None:
    rng = random.Random(11)
    sandbox = SeededSandbox(tmp_path / "server", MIX.spares)
    database = postgres.new_database().rsplit("/", 1)[1]
    try:
        sandbox.start(faults="slow=0.3:0.2s,5xx-after=0.05", fault_seed=11)
        local = Project(tmp_path / "local", sandbox)
        write_batch(local, MIX)
        commands = _commands(local, rng)
        url = postgres.url(database, user=PASSWORD_ROLE, password=PASSWORD)
        shared = PgProject(tmp_path / "shared", sandbox, url)
        write_batch(shared, MIX)
        commands += _commands(shared, rng)
        write_batch(shared, replace(MIX, per_lane=MIX.per_lane + 4))
        held = _held_run_rows(shared, postgres.url(database))
        commands += 1
        snapshots = [held, _table_rows(postgres.url(database))]
        for wrong in (
            postgres.url(database, user=PASSWORD_ROLE, password=PASSWORD + "-wrong"),
            postgres.url(database, user=PASSWORD_ROLE, password=PASSWORD).replace(
                f":{postgres.port}/", ":1/"
            ),
        ):
            shared.url = wrong
            failed = shared.run("plan")
            assert failed.returncode == 3, failed.stdout + failed.stderr
            commands += 1
    finally:
        Running.reap_all()
        sandbox.stop()
    outputs = local.outputs + shared.outputs
    files, size, found = _search(tmp_path, sandbox.directory, outputs)
    rows, found_in_rows = _search_rows(snapshots)
    found += found_in_rows
    results["secrets"] = {
        "commands": commands,
        "outputs_searched": len(outputs),
        "files_searched": files,
        "bytes_searched": size,
        "table_rows_searched": rows,
        "found": found,
    }
    assert files > 10
    # Every kind of row was there to search: records, a held run's journal and lock, budgets.
    for table in (
        "customs_batch_resources",
        "customs_batch_journal",
        "customs_batch_locks",
        "customs_batch_rate_budgets",
        "customs_batch_rate_requests",
    ):
        assert rows.get(table), (table, rows)
    assert any("'authorization': 'Bearer ***'" in text for text in outputs), "nothing logged"
    assert found == []
