"""The folders customs-batch creates are its user's alone (0700), whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from customs_batch.folders import make_private_folder


@pytest.fixture(params=[0o000, 0o022, 0o277])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The umask of the test (set here for the process, and restored)."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_folder_and_its_missing_parents_are_private(tmp_path: Path, umask: int) -> None:
    make_private_folder(tmp_path / "a" / "b" / "c")
    for path in (tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "c"):
        assert _mode(path) == 0o700, path


def test_a_relative_folder_is_made_in_the_working_folder(tmp_path: Path, umask: int) -> None:
    make_private_folder(Path("out") / "data")
    assert _mode(tmp_path / "out") == _mode(tmp_path / "out" / "data") == 0o700


def test_folders_that_exist_are_left_as_they_are(tmp_path: Path, umask: int) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)  # the user's own choice: not ours to change
    make_private_folder(shared / "records")
    make_private_folder(shared)
    assert _mode(shared) == 0o755
    assert _mode(shared / "records") == 0o700
    (shared / "records").chmod(0o750)
    make_private_folder(shared / "records")
    assert _mode(shared / "records") == 0o750


def test_a_link_to_a_folder_counts_as_the_folder(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    target.chmod(0o755)
    (tmp_path / "link").symlink_to(target)
    make_private_folder(tmp_path / "link" / "records")
    assert _mode(target) == 0o755 and _mode(target / "records") == 0o700


def test_a_file_in_the_way_is_an_error_as_for_mkdir(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder\n")
    with pytest.raises(FileExistsError):
        make_private_folder(tmp_path / "file")
    with pytest.raises(NotADirectoryError):
        make_private_folder(tmp_path / "file" / "below")
    assert (tmp_path / "file").read_text() == "not a folder\n"
