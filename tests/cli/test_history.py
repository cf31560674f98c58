"""``history`` and ``history verify`` through the CLI, after an apply on the built-in local
environment (the emulator in-process)."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from customs_batch.sensitive import is_digest
from customs_batch.state.history import entry_hash
from tests.cli.conftest import run

CI = {
    "GITHUB_RUN_ID": "4242",
    "GITHUB_SERVER_URL": "https://github.example",
    "GITHUB_REPOSITORY": "acme/declarations",
    "GITHUB_SHA": "0123abcd",
    "GITHUB_ACTOR": "octo-alice",
}


def _commit(project: Path) -> str:
    git = shutil.which("git")
    # The suite runs from a git clone (`make test`): a missing git is a broken machine, not
    # a reason to leave the commit recording untested.
    assert git is not None, "the history tests need git on PATH"
    for argv in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "manifests"],
    ):
        subprocess.run([git, *argv], cwd=project, check=True, capture_output=True)
    done = subprocess.run([git, "rev-parse", "HEAD"], cwd=project, check=True, capture_output=True)
    return done.stdout.decode().strip()


@pytest.fixture
def applied(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    """The examples applied from a git work tree in a GitHub Actions run; the commit."""
    commit = _commit(project)
    monkeypatch.chdir(project)
    for name, value in CI.items():
        monkeypatch.setenv(name, value)
    code, _, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, err
    return commit


def test_history_shows_each_request_with_its_operator_and_commit(
    applied: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "history")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 9  # one per request of the nine documents
    for line in lines:
        assert f"commit {applied}" in line
        assert "https://github.example/acme/declarations/actions/runs/4242" in line
        assert "octo-alice" in line
    assert any("TemplateGroup/eu-road  create-template-group  201  id=" in line for line in lines)

    code, out, _ = run(capsys, "history", "--format", "json")
    body = json.loads(out)
    assert code == 0 and body["formatVersion"] == 1 and len(body["entries"]) == 9
    movement = next(e for e in body["entries"] if e["operation"] == "create-movement")
    assert movement["idempotencyKey"] and movement["status"] == 201
    assert is_digest(movement["requests"][-1]["bodyDigest"])
    assert movement["operator"]["ci"]["runId"] == "4242"

    code, out, _ = run(capsys, "history", "TemplateGroup/eu-road", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [r["address"] for r in rows] == ["TemplateGroup/eu-road"]
    assert rows[0]["commit"] == applied and rows[0]["ci_run"] == "4242"

    code, out, err = run(capsys, "history", "--since", "2999-01-01")
    assert code == 0 and out == ""
    assert "The history holds no entry since 2999-01-01." in err  # it holds earlier ones

    for typo in ("Movment/x", "foo"):  # as state show: a usage error, not an empty history
        code, out, err = run(capsys, "history", typo)
        assert code == 64 and out == ""
        assert f"{typo!r} is not an address" in err

    history = project / ".customs-batch" / "local" / "history.jsonl"
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert b"sandbox" not in history.read_bytes().replace(b"sandbox.test", b"")


def test_history_verify_passes_then_names_a_tampered_line(
    applied: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "history", "verify")
    assert code == 0 and "unbroken: 18 entries" in out
    # "the last 18 with hash" read as the last eighteen entries: it is the entry of seq 18.
    assert re.search(r"18 entries, the last \(seq 18\) with hash [0-9a-f]{64}\.$", out.strip())
    code, out, _ = run(capsys, "history", "verify", "--format", "json")
    assert code == 0 and json.loads(out)["ok"] is True

    history = project / ".customs-batch" / "local" / "history.jsonl"
    lines = history.read_bytes().splitlines(keepends=True)
    entry = json.loads(lines[6])
    entry["address"] = "TemplateGroup/someone-else"
    lines[6] = json.dumps(entry, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    history.write_bytes(b"".join(lines))
    code, _, err = run(capsys, "history", "verify")
    assert code == 1
    assert "broken at history.jsonl line 7" in err and "6 entries before it" in err
    assert "(the last: seq 6, hash " in err


def test_a_history_written_before_bodies_were_keyed_is_read_and_verified_as_before(
    applied: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Entries of an older version hold `bodySha256`: shown as they are, the chain unbroken.
    history = project / ".customs-batch" / "local" / "history.jsonl"
    prev, lines = "0" * 64, []
    for line in history.read_bytes().splitlines():
        entry = json.loads(line)
        for attempt in entry.get("requests") or ():
            attempt["bodySha256"] = "ab" * 32 if attempt.pop("bodyDigest") else None
        entry["prev"] = prev
        entry["hash"] = prev = entry_hash(entry)
        lines.append(json.dumps(entry, sort_keys=True, separators=(",", ":")).encode() + b"\n")
    history.write_bytes(b"".join(lines))
    code, out, err = run(capsys, "history", "verify")
    assert code == 0 and "unbroken: 18 entries" in out, err
    code, out, _ = run(capsys, "history", "--format", "json")
    entries = json.loads(out)["entries"]
    assert code == 0 and entries[0]["requests"][-1]["bodySha256"] == "ab" * 32
    code, out, _ = run(capsys, "history", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and {row["body_digest"] for row in rows} - {""} == {"ab" * 32}


def test_the_help_says_the_body_is_kept_as_a_keyed_digest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The history keeps `bodyDigest`, an HMAC-SHA256 under a key derived from the API key
    # (docs/state.md, "History"): a plain SHA-256 of a body holding a four-digit access
    # code, which the help used to promise, would give the code away.
    code, out, _ = run(capsys, "history", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "SHA-256 of the exact body" not in text
    assert "a digest of the exact body sent keyed by the API key (an HMAC-SHA256" in text


def test_history_refuses_a_date_it_cannot_read(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    code, _, err = run(capsys, "history", "--since", "yesterday")
    assert code == 64 and "--since 'yesterday' is not a date" in err


@pytest.mark.parametrize(
    ("event", "field", "value"),
    [
        ("request", "operator", "ana"),
        ("request", "operator", 5),
        ("answer", "ids", [1]),
        ("answer", "request", [2]),
        ("answer", "requests", 5),
        ("answer", "requests", [[1]]),
    ],
)
def test_history_shows_an_entry_edited_by_hand_and_verify_names_it(
    applied: str,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    event: str,
    field: str,
    value: object,
) -> None:
    # Each was an "internal error" asking for a bug report: the history is a file anyone
    # with the folder can edit, and `history` is how they look at it.
    history = project / ".customs-batch" / "local" / "history.jsonl"
    lines = history.read_bytes().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if json.loads(line)["event"] == event)
    entry = json.loads(lines[number])
    entry[field] = value
    lines[number] = json.dumps(entry, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    history.write_bytes(b"".join(lines))
    for output in ("text", "json", "csv"):
        code, out, err = run(capsys, "history", "--format", output)
        assert code == 0, err
        assert "internal error" not in err and out
    code, _, err = run(capsys, "history", "verify")
    assert code == 1 and f"broken at history.jsonl line {number + 1}" in err


def test_history_escapes_hand_edited_fields_in_text_and_csv(
    applied: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = project / ".customs-batch" / "local" / "history.jsonl"
    lines = history.read_bytes().splitlines(keepends=True)
    entry = json.loads(lines[0])
    forged = "2099-01-01T00:00:00.000Z  DepartureDeclaration/forged  submit-departure  201"
    entry["address"] = f'=HYPERLINK("http://evil.example","x")\x1b]0;pwned\x07\n{forged}'
    lines[0] = json.dumps(entry, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    history.write_bytes(b"".join(lines))

    code, out, err = run(capsys, "history")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert not any(line.startswith("2099-") for line in out.splitlines())
    assert '=HYPERLINK("http://evil.example","x")\\x1b]0;pwned\\x07\\n2099-01-01' in out

    code, out, err = run(capsys, "history", "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows[0]["address"] == (
        f'\'=HYPERLINK("http://evil.example","x")\\x1b]0;pwned\\x07\n{forged}'
    )
    assert all(not value.startswith(("=", "+", "-", "@")) for row in rows for value in row.values())
    assert rows[0]["seq"].isdigit()


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["history", "--since", ""], "Invalid value for '--since': '' is empty: give a date"),
        (["history", "--since", " "], "Invalid value for '--since': ' ' is empty: give a date"),
        (["force-unlock", ""], "Invalid value for 'LOCK_ID': '' is empty: give the lock id"),
    ],
)
def test_an_empty_value_is_a_usage_error_naming_the_option(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    words: str,
) -> None:
    # Found probing: `history --since "$SINCE"` with the variable unset listed everything,
    # and `force-unlock ''` said the state was not locked, exit 3.
    monkeypatch.chdir(project)
    code, out, err = run(capsys, "apply", "--env", "local", "--auto-approve")
    assert code == 0, out + err
    code, out, err = run(capsys, *argv)
    assert (code, out) == (64, ""), err
    assert words in err
