"""Which files a list of paths means, and loading them all in batch order."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.errors import ManifestError
from customs_batch.manifest import discover, load_paths
from tests.manifest.helpers import movement, write


def test_folders_are_searched_recursively_with_the_project_files_skipped() -> None:
    for name in (
        "m/b.yaml",
        "m/a.yml",
        "m/sub/c.yaml",
        "m/notes.txt",
        "m/templates/t.yaml",
        "m/.hidden/h.yaml",
        "m/.customs-batch/state.yaml",
        "m/customs-batch.yaml",
        "m/.pre-commit-config.yaml",
    ):
        write(Path(name), "a: 1\n")
    assert discover([Path("m")]) == [Path("m/a.yml"), Path("m/b.yaml"), Path("m/sub/c.yaml")]


def test_files_are_taken_as_given_in_order_and_only_once() -> None:
    write(Path("z.yaml"), "")
    write(Path("a.txt"), "")
    assert discover([Path("z.yaml"), Path("a.txt"), Path("./z.yaml")]) == [
        Path("z.yaml"),
        Path("a.txt"),
    ]


def test_a_path_that_does_not_exist_is_an_error() -> None:
    with pytest.raises(ManifestError, match=r"nope\.yaml: no such file or folder"):
        discover([Path("nope.yaml")])


def test_load_paths_indexes_documents_across_files_and_a_broken_file_stops_nothing() -> None:
    write(
        Path("m/1.yaml"),
        movement("  a: 1\n", name="one") + "---\n" + movement("  a: 2\n", name="two"),
    )
    write(Path("m/2.yaml"), "a: [\n")
    write(Path("m/3.yaml"), movement("  a: 3\n", name="three"))
    result = load_paths([Path("m")])
    assert [(d.name, d.index) for d in result.documents] == [("one", 0), ("two", 1), ("three", 2)]
    assert [f.rule for f in result.findings] == ["yaml.syntax"]
    assert result.files == ["m/1.yaml", "m/2.yaml", "m/3.yaml"]
