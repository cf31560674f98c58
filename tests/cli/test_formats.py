"""One output-format registry: every command's --format comes from it, -o is a file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from customs_batch import formats
from customs_batch.cli.main import main
from tests.cli.conftest import run


def _commands(group: click.Group, ctx: click.Context) -> Iterator[tuple[str, click.Command]]:
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            for sub, inner in _commands(command, ctx):
                yield f"{name} {sub}", inner
        else:
            yield name, command


def _option(command: click.Command, flag: str) -> click.Option | None:
    for param in command.params:
        if isinstance(param, click.Option) and flag in param.opts:
            return param
    return None


def test_every_format_option_comes_from_the_registry_and_o_is_always_a_file() -> None:
    ctx = click.Context(main)
    seen = []
    for name, command in _commands(main, ctx):
        output = _option(command, "-o")
        if output is not None:
            assert "--output" in output.opts, name
            assert isinstance(output.type, click.Path), f"{name}: -o must be a file"
        option = _option(command, "--format")
        if option is None:
            continue
        assert isinstance(option.type, click.Choice), name
        choices = list(option.type.choices)
        tables = [t for t in formats.ALL.values() if t.names() == choices]
        assert tables, f"{name} --format {choices} is not a table of the registry"
        assert option.default == tables[0].default, name
        seen.append(name)
    # The commands that print records or results, each with its --format.
    for name in ("validate", "plan", "apply", "render", "state list", "get shipments", "env list"):
        assert name in seen


def test_every_json_output_of_our_own_names_its_version_format_version(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    code, out, _ = run(capsys, "validate", "manifests", "--format", "json")
    assert code == 0 and json.loads(out)[formats.VERSION_KEY] == 2
    code, out, _ = run(capsys, "plan", "manifests", "--format", "json")
    assert code == 0 and json.loads(out)[formats.VERSION_KEY] == 1
    code, out, _ = run(capsys, "apply", "manifests", "--auto-approve", "--format", "json")
    assert code == 0
    assert {json.loads(line)[formats.VERSION_KEY] for line in out.splitlines()} == {2}
    code, out, _ = run(capsys, "state", "list", "--format", "json")
    assert code == 0 and json.loads(out)[formats.VERSION_KEY] == 2
    for body in (json.loads(out),):
        assert "version" not in body and "v" not in body
