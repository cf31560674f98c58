"""What loading a manifest read besides the manifest itself: spreadsheets, templates and
the team's policies.

Loading notes here every spreadsheet a ``forEach`` reads, every project whose
``templates/`` it looks in and every project whose ``policies/`` its documents are checked
against (with or without policy files: one added later is a change), with a digest of that
input taken when it is first read. The
load cache (:mod:`customs_batch.load_cache`) records these with a file's result and reuses
the result only while every digest is unchanged. Nothing is noted unless a caller asked,
with :func:`recording`.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from customs_batch.userfiles import is_yaml_name

SPREADSHEET = "spreadsheet"
TEMPLATES = "templates"
POLICIES = "policies"
MANIFEST = "manifest"

# One digest when a file is missing or unreadable: its coming back is a change too.
ABSENT = b"absent"
# Larger than any file the loaders read (their bound is at most a few gigabytes).
_READ_AT_MOST = 8 << 30

Dependency = tuple[str, str, bytes]
"""(what: SPREADSHEET, TEMPLATES or POLICIES, its absolute path, its digest)."""

_recordings: list[dict[tuple[str, str], bytes]] = []


@contextmanager
def recording() -> Iterator[dict[tuple[str, str], bytes]]:
    """Collect what loading reads until the block ends: {(what, path): digest}."""
    noted: dict[tuple[str, str], bytes] = {}
    _recordings.append(noted)
    try:
        yield noted
    finally:
        _recordings.pop()


def note(what: str, path: Path) -> None:
    """Loading is about to read ``path`` (a spreadsheet, or a project's ``templates/``)."""
    if not _recordings:
        return
    key = (what, str(path.absolute()))
    noted = _recordings[-1]
    if key not in noted:
        noted[key] = digest(what, key[1])


def note_taken(what: str, path: str, taken: bytes) -> None:
    """Loading used what it read from ``path`` (absolute) when its digest was ``taken``:
    for an input read once a process and used for every file (the policies)."""
    if _recordings:
        _recordings[-1].setdefault((what, path), taken)


def note_manifest(file: str, data: bytes) -> None:
    """Loading read ``data`` from the manifest ``file``: the digest of exactly those bytes
    (:func:`file_digest` of the same bytes), under the key (MANIFEST, file)."""
    if _recordings:
        _recordings[-1][(MANIFEST, file)] = hashlib.blake2b(data, digest_size=20).digest()


def digest(what: str, path: str) -> bytes:
    """The digest of a spreadsheet's bytes, of a ``templates/`` folder's every file
    (names and bytes: a template added, removed or changed changes it), or of a
    ``policies/`` folder's policy files (:func:`policy_files`, names and bytes)."""
    if what == TEMPLATES:
        return _folder_digest(path)
    if what == POLICIES:
        return _files_digest(Path(path), policy_files(Path(path)))
    return file_digest(path)


def policy_files(folder: Path) -> list[Path]:
    """The policy files of a ``policies/`` folder and its subfolders (hidden ones but, links
    to folders followed once), sorted: their ``*.yaml`` and ``*.yml`` entries (in any case) that are not
    folders (a named pipe, a link to nothing or a loop of links named so is listed too:
    reading it is an error, not a policy silently left out). So is ``policies`` itself when
    it is there but no folder (a named pipe, a file, a loop of links, a link to nothing):
    every policy was left out, silently, and validate passed."""
    if os.path.lexists(folder) and not folder.is_dir():
        return [folder]
    found: list[Path] = []
    visited: set[str] = set()
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            real = os.path.realpath(current)
            if real in visited:  # a link back to a folder already read
                continue
            visited.add(real)
            entries = list(current.iterdir())
        except OSError:  # no folder (or not one): no policies
            continue
        for entry in entries:
            if entry.is_dir():
                if not entry.name.startswith("."):
                    stack.append(entry)
            elif is_yaml_name(entry.name):
                found.append(entry)
    return sorted(found)


def file_digest(path: str) -> bytes:
    """A digest of the file's bytes; for what is not a regular file (a named pipe,
    /dev/zero), or is bigger than any loader reads, one of its type or size and time
    instead: the loaders refuse those, and reading them could wait forever."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return b"special %o" % stat.S_IFMT(info.st_mode)
        if info.st_size > _READ_AT_MOST:
            return b"large %d %d" % (info.st_size, info.st_mtime_ns)
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return ABSENT
    hasher = hashlib.blake2b(digest_size=20)
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):  # replaced since the stat
            return ABSENT
        try:
            while chunk := file.read(1 << 20):
                hasher.update(chunk)
        except OSError:
            return ABSENT
    return hasher.digest()


def _files_digest(folder: Path, files: list[Path]) -> bytes:
    """The names (within ``folder``) and bytes of ``files``; the absent digest for none."""
    if not files:
        return ABSENT
    hasher = hashlib.blake2b(digest_size=20)
    for path in files:
        hasher.update(os.path.relpath(path, folder).encode("utf-8", "surrogateescape"))
        hasher.update(b"\0" + file_digest(str(path)))
    return hasher.digest()


def _folder_digest(folder: str) -> bytes:
    hasher = hashlib.blake2b(digest_size=20)
    found = False
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            hasher.update(os.path.relpath(path, folder).encode("utf-8", "surrogateescape"))
            hasher.update(b"\0" + file_digest(path))
            found = True
    return hasher.digest() if found else ABSENT
