"""An empty path (``-o "$OUT"`` with the variable unset) names nothing: refused as a usage
error naming the option (exit 64), with nothing written, whatever command takes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import run

EMPTY = [
    ("plan -out", "'-out' / '--out'", "file"),
    ("validate -o", "'-o' / '--output'", "file"),
    ("validate --annotate", "'--annotate'", "folder"),
    ("apply --auto-approve --annotate-results", "'--annotate-results'", "folder"),
    ("results --annotate", "'--annotate'", "folder"),
    ("sheet template Movement -o", "'-o' / '--output'", "file"),
    ("schema export", "'DIRECTORY'", "folder"),
    ("init", "'[DIRECTORY]'", "folder"),
    ("state push", "'FILE'", "file"),
    ("templates list --project", "'--project'", "folder"),
    ("policy test", "'[PROJECT]'", "folder"),
    ("validate", "'[PATHS]...'", "path"),
]


@pytest.mark.parametrize(("command", "option", "what"), EMPTY)
def test_an_empty_path_is_a_usage_error_naming_the_option(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    option: str,
    what: str,
) -> None:
    # Found probing: `plan -out ''` and `validate -o ''` were "internal error: IndexError",
    # `schema export ''` wrote nine schemas into the current folder, `init ''` said "." was
    # not empty.
    monkeypatch.chdir(project)
    before = sorted(path.relative_to(project) for path in project.rglob("*"))
    code, out, err = run(capsys, *command.split(), "")
    assert (code, out) == (64, ""), err
    assert f"Invalid value for {option}: '' is empty: name a {what}" in err
    assert sorted(path.relative_to(project) for path in project.rglob("*")) == before
