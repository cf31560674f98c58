"""``init`` as a function: the project's files written, each told as it is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.commands.init import InitOptions, InitResult, init_project
from customs_batch.commands.scaffold import files
from customs_batch.errors import CustomsBatchError, ExitCode, UsageError


def test_every_file_is_written_and_told(tmp_path: Path) -> None:
    told: list[Path] = []
    result = init_project(InitOptions(tmp_path / "new"), created=told.append)
    expected = tuple(tmp_path / "new" / relative for relative in files())
    assert result == InitResult(tmp_path / "new", expected)
    assert tuple(told) == expected
    for relative, text in files().items():
        assert (tmp_path / "new" / relative).read_text(encoding="utf-8") == text


def test_a_folder_that_is_not_empty_needs_force(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    with pytest.raises(UsageError, match="is not empty") as raised:
        init_project(InitOptions(tmp_path))
    assert raised.value.exit_code is ExitCode.USAGE
    assert not (tmp_path / "customs-batch.yaml").exists()
    init_project(InitOptions(tmp_path, force=True))
    assert (tmp_path / "customs-batch.yaml").is_file()
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_a_file_that_cannot_be_written_stops_it_before_any_is_written(tmp_path: Path) -> None:
    # A file where a folder of the project goes: found before any file is written.
    (tmp_path / "templates").write_text("not a folder\n", encoding="utf-8")
    told: list[Path] = []
    with pytest.raises(CustomsBatchError, match="cannot write") as raised:
        init_project(InitOptions(tmp_path, force=True), created=told.append)
    assert raised.value.exit_code is ExitCode.ERROR
    assert told == [] and not (tmp_path / "customs-batch.yaml").exists()


def test_the_root_of_the_file_system_is_refused_before_anything_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `cd / && customs-batch init --force` wrote the project into / itself.
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a project file would have been written into /")

    monkeypatch.setattr("customs_batch.commands.init.check_project_file", never)
    monkeypatch.setattr("customs_batch.commands.init.write_project_file", never)
    with pytest.raises(UsageError, match="/ is the root of the file system") as raised:
        init_project(InitOptions(Path("/"), force=True))
    assert raised.value.exit_code is ExitCode.USAGE
