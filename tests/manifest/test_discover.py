"""Which files a list of paths means, and loading them all in batch order."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from customs_batch.errors import ConfigError, ManifestError
from customs_batch.findings import Severity
from customs_batch.manifest import discover, find_project_root, load_paths
from customs_batch.manifest.discover import folder_project_root
from tests.manifest.helpers import movement, write

# The module, not the function of the same name that customs_batch.manifest exports.
discover_module = importlib.import_module("customs_batch.manifest.discover")


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


def test_a_manifest_named_in_capitals_is_searched_too() -> None:
    # An editor or a Windows export that saves Departures.YAML made a manifest: left out,
    # validate passed with 0 documents and plan never saw it.
    for name in ("m/Departures.YAML", "m/moves.Yml", "m/notes.YAMLX", "m/x.yaml.txt"):
        write(Path(name), "a: 1\n")
    assert discover([Path("m")]) == [Path("m/Departures.YAML"), Path("m/moves.Yml")]


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


def test_a_folder_that_cannot_be_listed_is_a_finding_and_the_rest_still_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As chmod 000 does for anyone but root (the tests run as root): listing it fails.
    write(Path("m/good.yaml"), movement("  a: 1\n"))
    write(Path("m/locked/inner.yaml"), movement("  a: 2\n", name="inner"))
    real = os.scandir

    def scandir(path: str) -> object:
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert discover([Path("m")]) == [Path("m/good.yaml"), Path("m/locked")]
    result = load_paths([Path("m")])
    [finding] = result.findings
    assert (finding.rule, finding.location.file) == ("file.unreadable", "m/locked")
    assert finding.severity is Severity.ERROR
    assert finding.message == (
        "cannot read the folder: Permission denied; the manifests in it are not checked"
    )
    assert "readable" in finding.hint
    assert [d.name for d in result.documents] == ["mov-1"]


def test_a_linked_folder_is_searched_and_a_loop_of_links_ends() -> None:
    write(Path("p/real/x.yaml"), "a: 1\n")
    write(Path("p/manifests/m.yaml"), "a: 1\n")
    Path("p/manifests/linked").symlink_to("../real")
    Path("p/manifests/again").symlink_to("../real")  # the same folder twice: its files once
    Path("p/manifests/loop").symlink_to("..")  # back above: manifests/ again, real/ again
    found = discover([Path("p/manifests")])
    assert sorted(path.resolve() for path in found) == [
        Path("p/manifests/m.yaml").resolve(),
        Path("p/real/x.yaml").resolve(),
    ]
    assert Path("p/manifests/again/x.yaml") in found


def test_a_linked_folder_of_a_skipped_name_is_skipped_too() -> None:
    write(Path("p/shared/t.yaml"), "a: 1\n")
    write(Path("p/manifests/m.yaml"), "a: 1\n")
    Path("p/manifests/templates").symlink_to("../shared")
    assert discover([Path("p/manifests")]) == [Path("p/manifests/m.yaml")]


def test_a_link_loop_named_is_taken_for_loading_to_report_and_a_dangling_link_is_not() -> None:
    Path("loop1.yaml").symlink_to("loop2.yaml")
    Path("loop2.yaml").symlink_to("loop1.yaml")
    assert discover([Path("loop1.yaml")]) == [Path("loop1.yaml")]
    Path("dangling.yaml").symlink_to("nowhere.yaml")
    with pytest.raises(ManifestError, match=r"dangling\.yaml: no such file or folder"):
        discover([Path("dangling.yaml")])


def test_the_root_of_the_file_system_is_no_project_of_a_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run from `/` without a customs-batch.yaml, `/` was the project of every manifest:
    # templates were looked for in /templates, and every file was inside the project.
    manifest = write(tmp_path / "manifests" / "a.yaml", movement("  shipmentId: shp_1\n"))
    monkeypatch.chdir("/")
    with pytest.raises(ConfigError) as caught:
        find_project_root(manifest)
    assert f"{manifest}: its project would be /, the root of the file system" in str(caught.value)
    with pytest.raises(ConfigError, match="the project of / would be /"):
        folder_project_root(Path("/"))
    monkeypatch.chdir(tmp_path)
    assert find_project_root(manifest) == tmp_path.resolve()


def test_a_folder_named_is_its_own_project_wherever_it_is_run_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `customs-batch templates list --project /work/x` run from /work (or from /) searched
    # /work/templates (or was refused as a project at /): the current folder held the folder.
    project = tmp_path / "x"
    (project / "templates").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert folder_project_root(project) == project.resolve()
    monkeypatch.chdir("/")
    assert folder_project_root(project) == project.resolve()
    configured = tmp_path / "configured"
    (configured / "x" / "templates").mkdir(parents=True)
    (configured / "customs-batch.yaml").write_text("{}\n", encoding="utf-8")
    assert folder_project_root(configured / "x") == configured.resolve()


def test_the_project_root_is_found_once_a_folder_not_once_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 200,000 manifests in one folder: each file's root was resolved again to see whether it
    # was the root of the file system, a tenth of the run; and the current folder was
    # resolved again for each folder looked up.
    resolved: list[Path] = []
    real: Callable[[Path], Path] = Path.resolve

    def counted(path: Path, strict: bool = False) -> Path:
        resolved.append(path)
        return real(path)

    discover_module._root_of.cache_clear()
    discover_module._resolved.cache_clear()
    (tmp_path / "customs-batch.yaml").write_text("{}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Path, "resolve", counted)
    for number in range(5_000):
        assert find_project_root(Path("manifests", f"m{number}.yaml")) == real(tmp_path)
    for number in range(3):
        assert find_project_root(Path(f"other{number}", "m.yaml")) == real(tmp_path)
    assert len(resolved) == 1 + 1 + 3  # the current folder once, then each folder once
