"""The paths commands take: an empty one (``-o "$OUT"`` with the variable unset) names
nothing, and a named pipe, a device or a loop of links is no folder; each is refused as a
usage error naming the option (exit 64), with nothing written, whatever command takes it."""

from __future__ import annotations

import os
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


FOLDERS = [
    ("policy test", "'[PROJECT]'"),
    ("templates list --project", "'--project'"),
    ("schema export", "'DIRECTORY'"),
    ("init", "'[DIRECTORY]'"),
    ("validate --annotate", "'--annotate'"),
]


@pytest.mark.parametrize(("command", "option"), FOLDERS)
def test_a_pipe_a_device_or_a_loop_of_links_is_not_a_folder(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    option: str,
) -> None:
    # Found probing: `policy test FIFO` found no policies there and passed (exit 0),
    # `schema export /dev/null` was exit 3 after trying to write, `init LOOP` was
    # "internal error: RuntimeError".
    monkeypatch.chdir(project)
    pipe, loop = tmp_path / "pipe", tmp_path / "loop"
    os.mkfifo(pipe)
    loop.symlink_to(tmp_path / "loop-back")
    (tmp_path / "loop-back").symlink_to(loop)
    for path, words in (
        (str(pipe), "is not a folder (it is a named pipe)"),
        ("/dev/null", "is not a folder (it is a character device)"),
        (str(loop), "is a loop of symbolic links"),
    ):
        code, out, err = run(capsys, *command.split(), path)
        assert (code, out) == (64, ""), err
        assert f"Invalid value for {option}: '{path}' {words}" in err


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("plan -out", "'-out' / '--out'"),
        ("validate -o", "'-o' / '--output'"),
        ("sheet template Movement -o", "'-o' / '--output'"),
    ],
)
def test_a_file_written_as_a_folder_is_refused(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    option: str,
) -> None:
    # Found probing: `plan -out saved/` saved the plan as a file named `saved`.
    monkeypatch.chdir(project)
    code, out, err = run(capsys, *command.split(), "saved/")
    assert (code, out) == (64, ""), err
    assert f"Invalid value for {option}: 'saved/' ends in /, naming a folder: name a file" in err
    assert not (project / "saved").exists()
