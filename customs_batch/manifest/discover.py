"""Which files a list of manifest paths means, and which project a manifest belongs to."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from customs_batch.errors import ManifestError

CONFIG_FILE = "customs-batch.yaml"
MANIFEST_SUFFIXES = (".yaml", ".yml")
# Folders of a project that hold no manifests: templates render to partial YAML, policies
# are the team's own rules, and the state folder holds the tool's own files.
_SKIPPED_DIRS = frozenset({"templates", "policies", ".customs-batch"})


def discover(paths: Sequence[Path]) -> list[Path]:
    """The manifest files ``paths`` name: files as given, folders searched recursively for
    ``*.yaml`` and ``*.yml`` (sorted; hidden files and folders, ``templates/``,
    ``policies/``, ``.customs-batch/`` and ``customs-batch.yaml`` skipped). Each file appears once.

    Raises ManifestError for a path that does not exist.
    """
    found: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            files = _search(path)
        elif path.exists():
            files = [path]
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
    files: list[Path] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS]
        for name in names:
            if name.endswith(MANIFEST_SUFFIXES) and name != CONFIG_FILE and name[0] != ".":
                files.append(Path(root, name))
    return sorted(files)


def find_project_root(manifest: Path) -> Path:
    """The folder holding ``customs-batch.yaml``, from the manifest's folder upward. Without
    one, the current folder when the manifest is inside it (a project without a config
    keeps its templates/ beside manifests/), else the manifest's own folder."""
    return _root_of(str(manifest.parent), os.getcwd())


@lru_cache(maxsize=256)
def _root_of(parent: str, current: str) -> Path:
    # Keyed by the folders as given, resolved here once: resolving both for each of 1,000
    # files took 0.1 s of a validate that took every file from the load cache (measured).
    folder, cwd = Path(parent).resolve(), Path(current).resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / CONFIG_FILE).is_file():
            return candidate
    if folder == cwd or cwd in folder.parents:
        return cwd
    return folder
