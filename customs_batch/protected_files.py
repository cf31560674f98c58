"""The files an output a user names (``-o FILE``, ``plan -out FILE``, an annotated copy)
must never replace: customs-batch's own records, and the files this run read.

- The records: anything inside a ``.customs-batch`` folder (the state, its backup, the
  journal, the history, the lock, the emulator's data, the load cache, whatever the folder
  holds), the files of those names in the state folder of each environment of the project
  (an environment's ``state_dir`` may lie anywhere), and the load cache's entries where
  ``CUSTOMS_BATCH_CACHE_DIR`` puts them. Whether or not this run read them: a report written
  over the state of another environment loses what was sent as surely.
- A project's settings, ``customs-batch.yaml``: the next command would read the output as
  them.
- The inputs: every file this run read (:func:`customs_batch.userfiles.files_read`),
  compared by identity, so that a link, a second hard link or ``./x/../x`` names it too.
- The project's inputs, read by this run or not (``status``, ``get`` and ``env list`` read no
  policy; ``get`` no manifest): in the project around the current folder or around the
  file, a policy file (a ``*.yaml`` of ``policies/`` or a folder under it, hidden ones
  aside), a file of ``templates/``, and a manifest of the project (a ``*.yaml`` of its
  ``manifests:`` list, or of the project's folder without one, as ``validate`` with no
  PATHS finds them): the next command would read the output as one. A new file is refused
  where it would become one of them.

The path is compared after following its links, as the file is then written there.

Light at import (validate imports it through :mod:`customs_batch.output_file`): the
project's settings are read only when the name is one a state folder holds, and the load
cache's folder looked up only for the name of a cache file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from customs_batch.errors import CustomsBatchError
from customs_batch.userfiles import InputKind, files_read, is_yaml_name

RECORDS_FOLDER = ".customs-batch"
"""The folder customs-batch keeps its records in, beside ``customs-batch.yaml``."""

SETTINGS_FILE = "customs-batch.yaml"

# The files of an environment's state folder, by name: those of customs_batch.state (the
# backend, the state file's backup, the lock's note, the history) and the emulator's data.
# tests/test_protected_files.py holds this list to the files those modules write.
STATE_FOLDER_FILES = {
    "state.json": "the state",
    "state.json.backup": "the state's backup",
    "journal.jsonl": "the journal",
    "state.lock": "the lock",
    "state.lock.info": "the lock",
    "environment": "the state's environment mark",
    "history.jsonl": "the history",
    "sandbox.sqlite3": "the emulator's data",
    "sandbox.sqlite3-wal": "the emulator's data",
    "sandbox.sqlite3-shm": "the emulator's data",
    "sandbox.sqlite3-journal": "the emulator's data",
}
_ROTATED_HISTORY = re.compile(r"history\.\d{6,}\.jsonl")
# The load cache's entries (a digest), its temporary files and its marks.
_CACHE_FILE = re.compile(r"[0-9a-f]{40}|\.new-.*|\.gitignore|CACHEDIR\.TAG")


_RECORD = (
    "name another file: customs-batch keeps its records itself, and what a file written "
    "over them held would be lost"
)
_INPUT = "name another file: an output never replaces a file the run reads"
_PROJECT_INPUT = "name another file: an output never replaces a file the project's commands read"
_SETTINGS = "name another file: the next command would read it as the project's settings"
_NEW_PROJECT_INPUT = (
    "name a file outside the project's inputs (policies/, templates/, the manifests): the "
    "next command would read the output as one of them"
)


@dataclass(frozen=True)
class Protected:
    """Why a file is never replaced by an output: ``what`` it is ("it is the state of
    environment local", "it is a manifest this run reads"), and what to do (``hint``)."""

    what: str
    hint: str


def protection(path: Path, *, project_inputs: bool = True) -> Protected | None:
    """Why ``path`` must not be replaced by an output, or None when it may be.
    ``project_inputs`` False leaves the project's inputs this run did not read to the
    caller (``sheet template --force`` replaces the manifest it wrote)."""
    real = Path(os.path.realpath(path))
    found = _record(real)
    if found is not None:
        return Protected(found, _RECORD)
    key_of = _key_file_of(real) if real.exists() else None
    if key_of is not None:
        return Protected(
            f"it is the API key file of environment {key_of} (api_key_file)",
            "name another file: written over, the key would be lost and the report would "
            "sit where the key was",
        )
    try:
        info = os.stat(real)
    except OSError:
        info = None  # a new file: nothing read it
    read = None if info is None else files_read().get((info.st_dev, info.st_ino))
    if real.name == SETTINGS_FILE or (read is not None and read[0] is InputKind.SETTINGS):
        if info is None:
            return Protected(f"customs-batch reads a file named {SETTINGS_FILE}", _SETTINGS)
        return Protected(f"it is the project's settings ({SETTINGS_FILE})", _SETTINGS)
    if read is None:
        found = _project_input(real) if project_inputs else None
        if found is None:
            return None
        if info is None:  # a new file there would be read as an input from then on
            return Protected(f"a new file there would be read as {found}", _NEW_PROJECT_INPUT)
        return Protected(f"it is {found}", _PROJECT_INPUT)
    return Protected(
        f"it is {read[0]} this run reads", _RECORD if read[0] is InputKind.STATE else _INPUT
    )


def record_protection(path: Path) -> Protected | None:
    """Why ``path`` must not be replaced because it is one of customs-batch's records (the
    settings and the run's inputs aside: ``init`` writes a project's settings), or None."""
    found = _record(Path(os.path.realpath(path)))
    return None if found is None else Protected(found, _RECORD)


def _record(real: Path) -> str | None:
    name = real.name
    record = STATE_FOLDER_FILES.get(name) or (
        "the history" if _ROTATED_HISTORY.fullmatch(name) else None
    )
    if record is not None:
        environment = _environment_of(real.parent)
        if environment is not None:
            return f"it is {record} of environment {environment}"
    if RECORDS_FOLDER in real.parent.parts:
        return (
            f"it is in {RECORDS_FOLDER}, customs-batch's own folder (the state, its backup, "
            "the journal, the history, the lock, the load cache)"
        )
    if _CACHE_FILE.fullmatch(name) and _in_cache_folder(real):
        return "it is in the load cache's folder"
    return None


def _environment_of(folder: Path) -> str | None:
    """The environment whose state folder ``folder`` is, in the project around the current
    folder or the one around ``folder`` (without settings, the built-in environment's);
    None when it is no environment's (or the settings cannot be read: the command that
    uses them says why)."""
    from customs_batch.environments import StateKind, find_config, load_config, load_project

    seen: set[Path | None] = set()
    for start in (Path(os.path.realpath(Path.cwd())), folder):
        config = find_config(start)
        if config in seen:
            continue
        seen.add(config)
        try:
            project = load_project(start) if config is None else load_config(config)
        except CustomsBatchError:
            continue
        for name, environment in project.environments.items():
            local = environment.state.backend is StateKind.LOCAL
            if local and os.path.realpath(environment.state_dir) == str(folder):
                return name
    return None


def _project_input(real: Path) -> str | None:
    """What the file ``real`` is (or, a new one, would be) to the project around the current
    folder or around it ("a policy file of the project"), when a command reads it unnamed;
    None when it is none (or the settings cannot be read: the command that uses them says
    why)."""
    from customs_batch.environments import find_config, load_config

    seen: set[Path] = set()
    for start in (Path(os.path.realpath(Path.cwd())), real.parent):
        config = find_config(start)
        if config is None or config in seen:
            continue
        seen.add(config)
        try:
            project = load_config(config)
        except CustomsBatchError:
            continue
        root = Path(os.path.realpath(project.root))
        if not real.is_relative_to(root):
            continue
        parts = real.relative_to(root).parts
        if (
            parts[0] == _POLICIES
            and len(parts) > 1
            and is_yaml_name(real.name)
            and not any(part.startswith(".") for part in parts[1:-1])
        ):
            return f"a policy file of the project ({_POLICIES}/)"
        if parts[0] == _TEMPLATES and len(parts) > 1:
            return f"a template of the project ({_TEMPLATES}/)"
        if is_yaml_name(real.name) and _is_manifest(real, project.manifests or (root,)):
            return "a manifest of the project"
    return None


_POLICIES = "policies"
_TEMPLATES = "templates"
# As customs_batch.manifest.discover searches a folder: what it passes over holds no manifest.
_NOT_SEARCHED = frozenset({_TEMPLATES, _POLICIES, RECORDS_FOLDER})


def _is_manifest(real: Path, entries: tuple[Path, ...]) -> bool:
    """Whether a folder search of ``entries`` (a ``manifests:`` list) finds ``real``."""
    for entry in entries:
        folder = Path(os.path.realpath(entry))
        if real == folder:
            return True
        if real.is_relative_to(folder) and folder.is_dir():
            parts = real.relative_to(folder).parts
            hidden = any(part.startswith(".") for part in parts)
            if not hidden and not _NOT_SEARCHED & set(parts[:-1]) and parts[-1] != SETTINGS_FILE:
                return True
    return False


def _key_file_of(real: Path) -> str | None:
    """The environment of the project around the current folder whose API key file is
    ``real``, or None (the settings unreadable: the command that uses them says why)."""
    from customs_batch.environments import CredentialKind, load_project

    try:
        project = load_project(Path.cwd())
    except CustomsBatchError:
        return None
    for name, environment in sorted(project.environments.items()):
        credential = environment.credential
        if credential.kind is CredentialKind.FILE and os.path.realpath(credential.ref) == str(real):
            return name
    return None


def _in_cache_folder(real: Path) -> bool:
    from customs_batch.load_cache import cache_folder

    try:
        folder = cache_folder()
    except (OSError, RuntimeError, KeyError):  # no home folder: no cache either
        return False
    return real.parent == Path(os.path.realpath(folder))
