"""The secret search: runs with a recognisable API key, a PostgreSQL password and a distinct
guarantee access code in each departure, on a local state, on a PostgreSQL state and on the
local environment (the built-in emulator), including interrupted runs and failed
connections; then every file the runs wrote (state, backup, journal, history, saved plans,
every output format, the emulator's database and its ``-wal``, the local environment's,
the job summary), everything they printed and every row of every table of the state
database are searched for the key, the password and every access code."""

from __future__ import annotations

import random
import re
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml
from psycopg import sql

from tests.e2e.conftest import SECRET, Project, Running
from tests.postgres import PASSWORD, PASSWORD_ROLE, PostgresCluster
from tests.reliability.kills import kill_at_random
from tests.reliability.world import Mix, SeededSandbox, write_batch

pytestmark = pytest.mark.reliability

URL_ENV = "CUSTOMS_RELIABILITY_STATE_URL"
MIX = Mix(per_lane=10, departures=5, groups=3, party_updates=2, deactivations=2, cancellations=2)
SUMMARY = "step-summary.md"
"""The job summary file (``GITHUB_STEP_SUMMARY``) of every command."""
ACCESS_CODE = re.compile(r"accessCode: '1234'")


class Secrets:
    """What is searched for: the key, the password and every access code the manifests
    use, each a distinct text."""

    def __init__(self) -> None:
        self.named: dict[str, str] = {"API key": SECRET, "PostgreSQL password": PASSWORD}
        self.codes: list[str] = []

    def code(self, where: str, number: int) -> str:
        code = f"Acc-rel-{where}-{number:03d}-NeverAtRest"
        if code not in self.codes:
            self.codes.append(code)
        return code

    def all(self) -> list[tuple[str, str]]:
        return [*self.named.items(), *(("access code", code) for code in self.codes)]

    def found_in(self, text: str) -> list[str]:
        return [what for what, secret in self.all() if secret in text]

    def found_in_bytes(self, data: bytes) -> list[str]:
        return [what for what, secret in self.all() if secret.encode() in data]


SECRETS = Secrets()


def write_coded_batch(project: Project, mix: Mix, where: str) -> None:
    """The batch of ``mix``, each departure's guarantee with an access code of its own."""
    write_batch(project, mix)
    path = project.root / "manifests" / "departures.yaml"
    text = path.read_text(encoding="utf-8")
    numbers = iter(range(1, 1_000))
    coded = ACCESS_CODE.sub(lambda _: f"accessCode: '{SECRETS.code(where, next(numbers))}'", text)
    assert coded != text, "no access code in the departures"
    path.write_text(coded, encoding="utf-8")


@dataclass
class Searched:
    """The files searched (by name, each counted once, its largest reading), and where a
    secret was found."""

    files: dict[str, int] = field(default_factory=dict)
    found: list[str] = field(default_factory=list)

    @property
    def bytes(self) -> int:
        return sum(self.files.values())

    def names(self) -> set[str]:
        return {Path(path).name for path in self.files}

    def tree(self, root: Path, inputs: list[Path]) -> None:
        """Every file under ``root`` but the inputs (manifests hold the codes, the
        emulator's seed the key)."""
        for path in root.rglob("*"):
            if (
                not path.is_file()
                or path.is_symlink()
                or path in inputs
                or any(folder in path.parents for folder in inputs)
            ):
                continue
            try:
                data = path.read_bytes()
            except FileNotFoundError:  # a -wal checkpointed away meanwhile
                continue
            self.files[str(path)] = max(self.files.get(str(path), 0), len(data))
            self.found += [f"{what} in {path}" for what in SECRETS.found_in_bytes(data)]


class LocalProject(Project):
    """A project on the local environment: the built-in emulator, its data in the state
    folder (``sandbox.sqlite3``)."""

    def write_config(self) -> None:
        config = {
            "default_environment": "local",
            "environments": {"local": {"large_change_guard": {"min_records": 1_000_000}}},
        }
        (self.root / "customs-batch.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")

    def env(self) -> dict[str, str]:
        return {**super().env(), "GITHUB_STEP_SUMMARY": str(self.root / SUMMARY)}

    @property
    def state_dir(self) -> Path:
        return self.root / ".customs-batch" / "local"


class PgProject(Project):
    """A project whose ``e2e`` environment keeps its state in PostgreSQL, at ``url``."""

    def __init__(self, root: Path, sandbox: SeededSandbox, url: str) -> None:
        self.url = url
        super().__init__(root, sandbox)

    def environment(self) -> dict[str, Any]:
        state = {"backend": "postgres", "url_env": URL_ENV, "name": "reliability"}
        # A rate limit: the key's row is kept in the database too.
        return {**super().environment(), "state": state, "rate_limit": "40/second"}

    def env(self) -> dict[str, str]:
        return {**super().env(), URL_ENV: self.url, "GITHUB_STEP_SUMMARY": str(self.root / SUMMARY)}


class SummedProject(Project):
    """A project on a local state whose commands append to a job summary."""

    def env(self) -> dict[str, str]:
        return {**super().env(), "GITHUB_STEP_SUMMARY": str(self.root / SUMMARY)}


def _inputs(root: Path) -> list[Path]:
    """The inputs under ``root``: the projects' manifests (they hold the codes) and the
    emulator's seed (it holds the key)."""
    return [*root.glob("*/manifests"), *root.glob("*/seed.yaml")]


VALIDATE_FORMATS = ("text", "github", "json", "junit", "markdown", "sarif")
PLAN_FORMATS = ("text", "json", "markdown", "mermaid", "dot")
GET_FORMATS = ("table", "json", "jsonl", "csv", "yaml")


def _commands(project: Project, rng: random.Random, searched: Searched, root: Path) -> int:
    """Everything a user does that could leak: returns how many commands ran."""
    before = len(project.outputs)
    # Reports go beside the project: in it, apply would read a YAML one as a manifest.
    out = project.root.parent / f"{project.root.name}-outputs"
    out.mkdir(exist_ok=True)
    for form in VALIDATE_FORMATS:
        project.run("validate", "manifests", "-o", str(out / f"validate.{form}"), "--format", form)
    kill_at_random(project, rng, 1.0)  # an interrupted run: journal and lock note left
    # Searched at once: what the killed run left (a -wal, the lock note) is tidied later.
    searched.tree(root, _inputs(root))
    done = project.run("plan", "-out", "first.plan")
    assert done.returncode in (0, 1), done.stderr  # 1: a departure may need a decision
    done = project.run("apply", "first.plan", "--verbose", timeout=300)
    assert done.returncode in (0, 1), done.stderr
    for argv in (
        ("apply", "--auto-approve", "-v", "--format", "json"),
        ("refresh", "--verbose"),
        ("state", "list", "--format", "json"),
        ("state", "show", "DepartureDeclaration/dep-e2e-01"),
        ("status",),
        ("status", "--format", "json"),
        ("plan", "-out", "second.plan", "--format", "json"),
        *(("plan", "--format", form, "-o", str(out / f"plan.{form}")) for form in PLAN_FORMATS),
        ("render", "manifests", "--format", "json"),
        ("render", "manifests"),
        *(
            (
                "get",
                "declarations",
                "--all",
                "--format",
                form,
                "-o",
                str(out / f"declarations.{form}"),
            )
            for form in GET_FORMATS
        ),
        ("get", "transit", "--all", "--format", "json"),
    ):
        project.run(*argv, timeout=300)
    for form in ("text", "json", "csv"):
        shown = project.run("history", "--format", form)
        assert shown.returncode == 0, shown.stderr
        (out / f"history.{form}").write_text(shown.stdout, encoding="utf-8")
    verified = project.run("history", "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
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
            _wait_until_held(project, run)
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


def _wait_until_held(project: Project, run: Running, timeout: float = 120) -> None:
    """Return once a request of ``run`` waits at the emulator's closed gate; fail, with what
    the run printed, if it ends or sends nothing first."""
    deadline = time.monotonic() + timeout
    while project.sandbox.client.get("/_sandbox/gate").json()["waiting"] < 1:
        if run.process.poll() is not None or time.monotonic() > deadline:
            run.reap()
            pytest.fail(
                "the apply sent nothing to the gate:\n"
                + "".join(run.lines)[-3000:]
                + "".join(run.err_lines)[-3000:]
            )
        time.sleep(0.05)


def _search_rows(snapshots: list[dict[str, list[str]]]) -> tuple[dict[str, int], list[str]]:
    """Rows searched per table (the most of any snapshot), and where a secret was found."""
    searched: dict[str, int] = {}
    found = []
    for number, tables in enumerate(snapshots):
        for name, rows in tables.items():
            searched[name] = max(searched.get(name, 0), len(rows))
            found += [
                f"{what} in table {name} (snapshot {number})"
                for row in rows
                for what in SECRETS.found_in(row)
            ]
    return searched, found


def _emulator_rows(db: Path) -> int:
    """The emulator's records, read as rows (the file is searched as bytes too); how many."""
    with sqlite3.connect(db) as connection:
        rows = [
            f"{r[0]} {r[1]} {r[2]}" for r in connection.execute("SELECT tbl, id, body FROM records")
        ]
    for row in rows:
        assert not SECRETS.found_in(row), (SECRETS.found_in(row), row[:300])
    return len(rows)


def test_no_key_no_password_and_no_access_code_in_any_output_file_or_row(
    tmp_path: Path, postgres: PostgresCluster, results: dict[str, Any]
) -> None:
    rng = random.Random(11)
    sandbox = SeededSandbox(tmp_path / "server", MIX.spares)
    database = postgres.new_database().rsplit("/", 1)[1]
    searched = Searched()
    projects: list[Project] = []
    try:
        sandbox.start(faults="slow=0.3:0.2s,5xx-after=0.05", fault_seed=11)
        local = SummedProject(tmp_path / "local", sandbox)
        projects.append(local)
        write_coded_batch(local, MIX, "local")
        commands = _commands(local, rng, searched, tmp_path)
        url = postgres.url(database, user=PASSWORD_ROLE, password=PASSWORD)
        shared = PgProject(tmp_path / "shared", sandbox, url)
        projects.append(shared)
        write_coded_batch(shared, MIX, "pg")
        commands += _commands(shared, rng, searched, tmp_path)
        write_coded_batch(shared, replace(MIX, per_lane=MIX.per_lane + 4), "pg")
        held = _held_run_rows(shared, postgres.url(database))
        commands += 1
        searched.tree(tmp_path, _inputs(tmp_path))
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
        # The local environment: the built-in emulator keeps its data in the state folder.
        builtin = LocalProject(tmp_path / "builtin", sandbox)
        projects.append(builtin)
        write_coded_batch(builtin, MIX, "builtin")
        commands += _commands(builtin, rng, searched, tmp_path)
        # Read while the emulator runs: its -wal is there.
        searched.tree(tmp_path, _inputs(tmp_path))
        emulator_rows = _emulator_rows(sandbox.db) + _emulator_rows(
            builtin.state_dir / "sandbox.sqlite3"
        )
    finally:
        Running.reap_all()
        sandbox.stop()
    searched.tree(tmp_path, _inputs(tmp_path))
    outputs = [text for project in projects for text in project.outputs]
    found = list(searched.found)
    found += [
        f"{what} in output {n}" for n, text in enumerate(outputs) for what in SECRETS.found_in(text)
    ]
    rows, found_in_rows = _search_rows(snapshots)
    found += found_in_rows
    kinds = Counter(what for what, _ in SECRETS.all())
    names = searched.names()
    results["secrets"] = {
        "commands": commands,
        "searched_for": dict(kinds),
        "outputs_searched": len(outputs),
        "files_searched": len(searched.files),
        "bytes_searched": searched.bytes,
        "files_by_kind": _by_kind(searched.files),
        "table_rows_searched": rows,
        "emulator_rows_searched": emulator_rows,
        "found": found,
    }
    # Every kind of file was there to search.
    for name in (
        "state.json",
        "state.json.backup",
        "journal.jsonl",
        "history.jsonl",
        "first.plan",
        "second.plan",
        "sandbox.sqlite3",
        "sandbox.sqlite3-wal",
        SUMMARY,
        "pulled-state.json",
        *(f"validate.{form}" for form in VALIDATE_FORMATS),
        *(f"plan.{form}" for form in PLAN_FORMATS),
        *(f"declarations.{form}" for form in GET_FORMATS),
    ):
        assert name in names, (name, sorted(names))
    assert any(str(builtin.state_dir / "sandbox.sqlite3-wal") == path for path in searched.files), (
        "the local environment's -wal was not there to search"
    )
    # Every kind of row was there to search: records, a held run's journal and lock, rate limits,
    # the history.
    for table in (
        "customs_batch_resources",
        "customs_batch_journal",
        "customs_batch_locks",
        "customs_batch_rate_budgets",
        "customs_batch_rate_requests",
        "customs_batch_history",
    ):
        assert rows.get(table), (table, rows)
    assert any("'authorization': 'Bearer ***'" in text for text in outputs), "nothing logged"
    assert len(SECRETS.codes) >= 3 * MIX.departures
    assert found == [], found


FILE_KINDS = (
    (
        "state, its backup and pulled copies",
        ("state.json", "state.json.backup", "pulled-state.json"),
    ),
    ("journals", ("journal.jsonl",)),
    (
        "history files and history outputs",
        ("history.jsonl", "history.text", "history.json", "history.csv"),
    ),
    ("saved plans", ("first.plan", "second.plan")),
    (
        "emulator databases and their -wal",
        ("sandbox.sqlite3", "sandbox.sqlite3-wal", "sandbox.sqlite3-shm"),
    ),
    ("job summaries", (SUMMARY,)),
)


def _by_kind(files: dict[str, int]) -> dict[str, int]:
    """How many files of each kind were searched (the rest: reports, outputs, logs)."""
    counts: dict[str, int] = {}
    for path in files:
        name = Path(path).name
        kind = next((k for k, members in FILE_KINDS if name in members), None)
        if kind is None and name.endswith(".plan"):
            kind = "saved plans"
        if kind is None and name.startswith(("validate.", "plan.", "declarations.")):
            kind = "reports in every output format"
        if kind is None and "cache" in Path(path).parts:
            kind = "the load cache (.customs-batch/cache)"
        kind = kind or "other: " + ", ".join(sorted(_others(files)))
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def _others(files: dict[str, int]) -> set[str]:
    """The names of the files of no kind above, numbered parts folded (``server-*.log``)."""
    known = {name for _, members in FILE_KINDS for name in members}
    names = set()
    for path in files:
        name = Path(path).name
        if name in known or name.endswith(".plan"):
            continue
        if name.startswith(("validate.", "plan.", "declarations.")):
            continue
        if "cache" in Path(path).parts:
            continue
        names.add(re.sub(r"\d+", "*", name))
    return names
