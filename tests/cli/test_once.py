"""A single-valued option given twice with different values is refused, naming each (exit
64), whichever command takes it: click kept the last silently, so ``plan -out A -out B``
wrote B only, and a wrapper's option and the user's decided unseen between them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from customs_batch.cli._once import OnceOption
from customs_batch.cli.main import main
from tests.cli.conftest import run

TWICE = [
    ("plan", "-out", "file"),
    ("plan", "-o", "file"),
    ("validate", "-o", "file"),
    ("validate", "--annotate", "folder"),
    ("apply", "--annotate-results", "folder"),
    ("results", "--annotate", "folder"),
    ("results", "-o", "file"),
    ("status", "-o", "file"),
    ("env list", "-o", "file"),
    ("get shipments", "-o", "file"),
    ("sheet template Movement", "-o", "file"),
    ("templates list", "--project", "folder"),
    ("templates show t1-road", "--project", "folder"),
    ("sandbox serve", "--db", "file"),
    ("sandbox serve", "--seed", "file"),
]


@pytest.mark.parametrize(("command", "option", "noun"), TWICE)
def test_a_file_option_given_twice_is_refused_naming_both(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    option: str,
    noun: str,
) -> None:
    # Found probing: `plan -out A -out B` saved the plan to B only, A silently dropped.
    monkeypatch.chdir(project)
    for name in ("A", "B"):
        (project / name).mkdir() if noun == "folder" else (project / name).write_bytes(b"")
    before = sorted(path.name for path in project.iterdir())
    # A port no server takes after: without the refusal, the sandbox reports it, not serving.
    after = ["--port", "70000"] if command.startswith("sandbox") else []
    code, out, err = run(capsys, *command.split(), option, "A", option, "B", *after)
    assert (code, out) == (64, ""), err
    assert f"given 2 times, naming 'A', 'B': name one {noun}, once" in err
    assert sorted(path.name for path in project.iterdir()) == before
    assert (project / "A").is_dir() or (project / "A").read_bytes() == b""


def test_the_same_file_twice_is_one_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    code, out, err = run(capsys, "validate", "-o", "report.txt", "-o", "report.txt")
    assert code == 0, out + err
    assert (project / "report.txt").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("command", ["plan", "apply", "validate", "status", "history", "env list"])
def test_two_formats_are_refused_naming_both(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    # Found probing: `plan --format json --format text` printed text to a reader of JSON.
    monkeypatch.chdir(project)
    code, out, err = run(capsys, *command.split(), "--format", "json", "--format", "text")
    assert (code, out) == (64, ""), err
    assert "Invalid value for '--format': given 2 times, naming 'json', 'text'" in err


@pytest.mark.parametrize(
    ("command", "option", "values", "noun"),
    [
        ("apply --auto-approve", "--parallelism", ("2", "3"), "number"),
        ("apply --auto-approve", "--wait-timeout", ("1", "2"), "number"),
        ("apply --auto-approve", "--time-budget", ("1h", "2h"), "duration"),
        ("get shipments", "--status", ("new", "ready"), "status"),
        ("get declarations", "--status", ("accepted", "submitted"), "status"),
        ("get transit", "--status", ("NEW", "READY_TO_DECLARE"), "status"),
        # Found probing the README's exit codes: these kept the last value unseen, so a
        # wrapper's `--mrn-check-digit error` and the user's `off` checked at `off`.
        ("validate", "--mrn-check-digit", ("error", "off"), "value"),
        ("plan", "--mrn-check-digit", ("off", "error"), "value"),
        ("validate", "--rows", ("3-4", "3-9"), "value"),
        ("validate", "--hs-codes", ("warning", "off"), "value"),
        ("validate", "--jobs", ("1", "2"), "number"),
        ("apply --auto-approve", "--lock-timeout", ("1", "2"), "number"),
        ("history", "--since", ("2026-01-01", "2026-02-01"), "value"),
        ("get shipments", "--page", ("1", "2"), "number"),
        ("get declarations", "--type", ("IMPORT", "EXPORT"), "value"),
        ("state rm Movement/x", "--lock-timeout", ("1", "2"), "number"),
    ],
)
def test_a_setting_given_twice_is_refused_naming_both(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    option: str,
    values: tuple[str, str],
    noun: str,
) -> None:
    # Found probing: `apply --parallelism 2 --parallelism 3` ran with 3 and `get shipments
    # --status new --status ready` listed the ready ones only, the first value dropped unseen.
    monkeypatch.chdir(project)
    first, second = values
    code, out, err = run(capsys, *command.split(), option, first, option, second)
    assert (code, out) == (64, ""), err
    assert f"given 2 times, naming '{first}', '{second}': name one {noun}, once" in err
    code, out, err = run(capsys, "state", "list")
    assert "The state is empty." in out + err  # nothing was sent


def _commands(
    group: click.Group, ctx: click.Context, path: str
) -> Iterator[tuple[str, click.Command]]:
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        yield f"{path} {name}".strip(), command
        if isinstance(command, click.Group):
            yield from _commands(command, click.Context(command, parent=ctx), f"{path} {name}")


def test_every_option_taking_one_value_refuses_two() -> None:
    # The README's exit codes say so of an option taking one value; only the options
    # declared OnceOption did, the others (--rows, --since, --port, …) kept the last.
    ctx = click.Context(main)
    single = [
        f"{path} {param.opts[0]}"
        for path, command in _commands(main, ctx, "")
        for param in command.params
        if isinstance(param, click.Option)
        and not (param.is_flag or param.multiple or param.count or param.nargs != 1)
        and not isinstance(param, OnceOption)
    ]
    assert single == []
