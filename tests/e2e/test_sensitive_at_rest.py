"""A guarantee's access code is sent to the service and kept nowhere in clear: not in the
state, its backup, the journal, a saved plan, PostgreSQL's rows, the emulator's database or
anything a command prints; nor is the API key. A saved plan holds the code's digest only,
and its apply sends the real code, read again from the manifests."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.e2e.conftest import KEY_ENV, SECRET, Project, Sandbox
from tests.e2e.test_postgres_state import PgProject

pytestmark = pytest.mark.e2e

CODE = "Acc-e2e-7Q41-NeverAtRest"
CHANGED = "Acc-e2e-8R52-NeverAtRest"
SECRETS = (CODE, CHANGED, SECRET)


def _with_codes(project: Project) -> None:
    project.copy_examples()
    project.edit("manifests/departures.yaml", 'accessCode: "1234"', f'accessCode: "{CODE}"')
    project.edit(
        "templates/rotterdam-export.yaml.j2", 'accessCode: "1234"', f'accessCode: "{CODE}"'
    )


def _emulator_rows(sandbox: Sandbox) -> list[str]:
    with sqlite3.connect(sandbox.db) as db:
        return [f"{r[0]} {r[1]} {r[2]}" for r in db.execute("SELECT tbl, id, body FROM records")]


def _sent_codes(sandbox: Sandbox) -> list[str]:
    """The access codes of the departures the emulator received (it keeps their digests)."""
    found = []
    with sqlite3.connect(sandbox.db) as db:
        for (body,) in db.execute("SELECT body FROM records WHERE tbl = 'transitDeclarations'"):
            sent = json.loads(body).get("_body") or {}
            found += [g.get("accessCode") for g in sent.get("DeclarationGuarantees", [])]
    return found


def _digest(code: str) -> str:
    return "sha256:" + hashlib.sha256(json.dumps(code).encode()).hexdigest()


def _run_everything(project: Project) -> None:
    """Plan, save, apply the saved plan; every command that shows the state or a plan."""
    done = project.run("plan", "-out", "first.plan")
    assert done.returncode == 0, done.stderr
    assert CODE not in (project.root / "first.plan").read_text()
    done = project.run("apply", "first.plan")
    assert done.returncode == 0, done.stdout + done.stderr
    # Two departures, each with its guarantee: the real code went to the service.
    assert _sent_codes(project.sandbox) == [_digest(CODE)] * 2
    # The history keeps each body as a digest keyed by the API key: a plain hash of a body
    # holding a four-digit code is undone by trying the 10,000 codes.
    done = project.run("history", "--format", "json")
    attempts = [a for e in json.loads(done.stdout)["entries"] for a in e["requests"]]
    assert attempts and all("bodySha256" not in a for a in attempts)
    assert all(a["bodyDigest"].startswith("hmac-sha256:") for a in attempts if a["bodyDigest"])

    for argv in (
        ("state", "list"),
        ("state", "list", "--format", "json"),
        ("state", "show", "DepartureDeclaration/dep-rtm-ant-0002"),
        ("state", "pull"),
        ("plan", "--format", "json"),
        ("plan", "-out", "second.plan"),
    ):
        done = project.run(*argv)
        assert done.returncode == 0, (argv, done.stderr)
    shown = json.loads(project.run("state", "show", "DepartureDeclaration/dep-rtm-ant-0002").stdout)
    record = shown["resources"]["DepartureDeclaration/dep-rtm-ant-0002"]
    assert record["spec"]["DeclarationGuarantees"][0]["accessCode"].startswith("hmac-sha256:")

    # Where the key is not set (a pull request's plan), a recorded code cannot be compared:
    # taken as unchanged, and said so.
    env = {k: v for k, v in project.env().items() if k != KEY_ENV}
    done = subprocess.run(
        project.command("plan", "--detailed-exitcode"),
        capture_output=True,
        text=True,
        cwd=project.root,
        env=env,
        timeout=60,
        check=False,
    )
    project.outputs += [done.stdout, done.stderr]
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 recorded access code(s) were taken as unchanged" in done.stderr
    assert f"${KEY_ENV} (not set) cannot be read here" in done.stderr

    # A changed code is seen (a submitted departure cannot change it: refused), never shown.
    project.edit("manifests/departures.yaml", f'accessCode: "{CODE}"', f'accessCode: "{CHANGED}"')
    done = project.run("plan", "--format", "json")
    assert done.returncode == 1, done.stderr
    changes = {c["address"]: c for c in json.loads(done.stdout)["changes"]}
    refused = changes["DepartureDeclaration/dep-rtm-ant-0002"]
    assert refused["action"] == "refused"
    assert [v["path"] for v in refused["values"]] == ["DeclarationGuarantees[0].accessCode"]
    done = project.run("plan")
    assert "DeclarationGuarantees[0].accessCode: (sensitive) -> (sensitive)" in done.stdout

    # The same code again is no change; another apply leaves a backup of the state.
    project.edit("manifests/departures.yaml", f'accessCode: "{CHANGED}"', f'accessCode: "{CODE}"')
    project.edit("manifests/template-groups.yaml", "name: EU road imports", "name: EU road v2")
    done = project.run("apply", "--auto-approve", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    done = project.run("plan", "--detailed-exitcode")
    assert done.returncode == 0, done.stdout + done.stderr


def _search_files(project: Project) -> int:
    """Every file under the test's folder but the inputs (the manifests and templates hold
    the code, the emulator's seed the key), the emulator's database read as rows too; how
    many were searched."""
    inputs = (project.root / "manifests", project.root / "templates")
    written = [
        path
        for path in project.root.parent.rglob("*")
        if path.is_file()
        and path != project.sandbox.seed
        and not any(folder in path.parents for folder in inputs)
    ]
    for path in written:
        data = path.read_bytes()
        for secret in SECRETS:
            assert secret.encode() not in data, (secret, path)
    for row in _emulator_rows(project.sandbox):
        for secret in SECRETS:
            assert secret not in row, (secret, row[:200])
    for output in project.outputs:
        for secret in SECRETS:
            assert secret not in output, (secret, output[:2000])
    names = {path.name for path in written}
    assert {"first.plan", "second.plan", "sandbox.sqlite3"} <= names, names
    return len(written)


def test_no_code_and_no_key_at_rest_with_a_local_state(project: Project) -> None:
    _with_codes(project)
    _run_everything(project)
    names = {path.name for path in project.state_dir.iterdir()}
    assert {"state.json", "state.json.backup", "journal.jsonl"} <= names
    assert _search_files(project) > 5


def test_no_code_and_no_key_at_rest_with_a_postgres_state(
    tmp_path: Path, sandbox: Sandbox, postgres_url: str
) -> None:
    sandbox.start()
    project = PgProject(tmp_path / "project", sandbox, postgres_url)
    _with_codes(project)
    _run_everything(project)
    _search_files(project)
    rows = 0
    with psycopg.connect(postgres_url) as connection:
        tables = connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
        for (table,) in tables:
            for (row,) in connection.execute(f'SELECT t::text FROM "{table}" t'):
                rows += 1
                for secret in SECRETS:
                    assert secret not in row, (table, secret)
    assert rows > 10
