"""Which files a list of manifest paths means, and which project a manifest belongs to."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from customs_batch.errors import ConfigError, ManifestError
from customs_batch.folders import is_file_system_root
from customs_batch.userfiles import is_link_loop, is_yaml_name

CONFIG_FILE = "customs-batch.yaml"
# Folders of a project that hold no manifests: templates render to partial YAML, policies
# are the team's own rules, and the state folder holds the tool's own files.
_SKIPPED_DIRS = frozenset({"templates", "policies", ".customs-batch"})


def discover(paths: Sequence[Path]) -> list[Path]:
    """The manifest files ``paths`` name: files as given, folders searched recursively for
    ``*.yaml`` and ``*.yml``, in any case (sorted; hidden files and folders, ``templates/``,
    ``policies/``, ``.customs-batch/`` and ``customs-batch.yaml`` skipped; links to folders
    followed). Each file appears once. A folder that could not be listed is in the list
    too, for loading to report it.

    Raises ManifestError for a path that does not exist.
    """
    found: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            files = _search(path)
        elif path.exists() or is_link_loop(path):
            files = [path]  # loading reports a loop of links
        else:
            raise ManifestError(
                f"{path}: no such file or folder",
                hint="Name manifest files or folders that exist (relative to the current folder).",
            )
        for file in files:
            key = _identity(file)
            if key not in seen:
                seen.add(key)
                found.append(file)
    return found


def _identity(file: Path) -> Path:
    """The file's real path, to list a file named twice once; a link loop keeps its own
    path (loading reports it)."""
    try:
        return file.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symbolic-link loop, before 3.13
        return file.absolute()


def _search(folder: Path) -> list[Path]:
    """The manifest files under ``folder``, and the folders under it that could not be
    listed: loading reports each of those (``file.unreadable``), since the manifests it may
    hold would be missing from the batch, and a plan would take their records for ones to
    delete. Links to folders are followed, each folder searched once (a link back up, or
    two links to one folder, end there)."""
    files: list[Path] = []
    searched: set[tuple[int, int]] = set()
    _first_visit(folder, searched)

    def unreadable(error: OSError) -> None:
        files.append(Path(error.filename if error.filename is not None else folder))

    for root, dirs, names in os.walk(folder, onerror=unreadable, followlinks=True):
        # Sorted, so that of two links to one folder the same one is searched every time.
        dirs[:] = [
            d
            for d in sorted(dirs)
            if not d.startswith(".")
            and d not in _SKIPPED_DIRS
            and _first_visit(Path(root, d), searched)
        ]
        for name in names:
            if is_yaml_name(name) and name != CONFIG_FILE and name[0] != ".":
                files.append(Path(root, name))
    return sorted(files)


def _first_visit(folder: Path, searched: set[tuple[int, int]]) -> bool:
    """Whether ``folder`` (after links) is not searched yet; it is noted as searched. A
    folder that cannot even be looked at is searched, so that its error is reported."""
    try:
        info = folder.stat()
    except OSError:
        return True
    identity = (info.st_dev, info.st_ino)
    if identity in searched:
        return False
    searched.add(identity)
    return True


def find_project_root(manifest: Path) -> Path:
    """The folder holding ``customs-batch.yaml``, from the manifest's folder upward. Without
    one, the current folder when the manifest is inside it (a project without a config
    keeps its templates/ beside manifests/), else the manifest's own folder.

    Never the root of the file system: a ConfigError saying what to do instead (templates
    would be looked for in ``/templates``, and every file would be inside the project)."""
    root, at_top = _root_of(str(manifest.parent), os.getcwd())
    return _not_the_root(root, f"{manifest}: its project") if at_top else root


def folder_project_root(folder: Path) -> Path:
    """The project root of ``folder``, for the commands that read a project's own files
    (templates, policies) given a folder: the folder holding ``customs-batch.yaml`` from it
    upward, else the folder itself, as if run from it (the current folder has no say: a
    folder named below it is the project named)."""
    named = os.path.abspath(folder)  # _root_of is kept by the texts it is given
    root, at_top = _root_of(named, named)
    return _not_the_root(root, f"the project of {folder.absolute()}") if at_top else root


def _not_the_root(root: Path, what: str) -> Path:
    if not is_file_system_root(root):
        return root
    if (root / CONFIG_FILE).is_file():
        raise ConfigError(
            f"{what} would be {root}, the root of the file system, where {root / CONFIG_FILE} is",
            hint=ROOT_CONFIG_HINT,
        )
    raise ConfigError(
        f"{what} would be {root}, the root of the file system: no customs-batch.yaml is in "
        "its folder or above it, and the project is then the current folder (when that "
        "holds it) or the folder itself",
        hint=ROOT_HINT,
    )


ROOT_HINT = (
    "run customs-batch from the project's own folder (cd into it), or put a "
    "customs-batch.yaml in that folder (`customs-batch init DIRECTORY` makes one)"
)
ROOT_CONFIG_HINT = (
    "move customs-batch.yaml into the project's own folder, beside its manifests (a project "
    "at the root of the file system would hold every file)"
)


@lru_cache(maxsize=4096)
def _root_of(parent: str, current: str) -> tuple[Path, bool]:
    """The project root of the folder ``parent`` run from ``current``, and whether it is the
    root of the file system (then :func:`_not_the_root` says so, naming the file)."""
    # Keyed by the folders as given, resolved here once: resolving both for each of 1,000
    # files took 0.1 s of a validate that took every file from the load cache (measured),
    # and resolving the root again to see whether it is the file system's took a tenth of
    # validating 200,000 empty files (measured).
    # (Both resolved: the root of the file system is its own parent.)
    folder, cwd = Path(parent).resolve(), _resolved(current)
    for candidate in (folder, *folder.parents):
        if (candidate / CONFIG_FILE).is_file():
            return candidate, candidate.parent == candidate
    root = cwd if folder == cwd or cwd in folder.parents else folder
    return root, root.parent == root


@lru_cache(maxsize=16)
def _resolved(folder: str) -> Path:
    """The current folder resolved: the same for every folder of a run looked up."""
    return Path(folder).resolve()
