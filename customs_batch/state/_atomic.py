"""Durable, private file writes: temporary file, fsync, rename, fsync of the folder.

Every file written here is created with mode 0600: the state, its backup, the journal, the
lock note and saved plans hold guarantee access codes and other customs data. A failed write
is a StateError that names the file and the system's reason, never a bare OSError.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from customs_batch.errors import StateError

PRIVATE = 0o600
"""Read and write for the owner only."""

UNCHANGED = "the file is as it was before"


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in ``folder`` survive a power cut."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def open_private(path: Path, flags: int) -> int:
    """Open ``path`` for writing with mode 0600, and make it 0600 if it already existed."""
    fd = os.open(path, flags | os.O_CLOEXEC, PRIVATE)
    try:
        os.fchmod(fd, PRIVATE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` (a write to a regular file may be cut short, e.g. disk full)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_atomic(path: Path, data: bytes | list[bytes], *, safe: str = UNCHANGED) -> None:
    """Replace ``path`` by ``data`` (mode 0600) so that a crash leaves the old or the new file.

    ``data`` may come in pieces, written one after the other. ``safe`` says what the user
    still has when the write fails; it ends the error's hint.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            for piece in [data] if isinstance(data, bytes) else data:
                write_all(fd, piece)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        raise write_error(path, exc, safe=safe) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    try:
        fsync_dir(path.parent)
    except OSError as exc:
        raise write_error(
            path, exc, safe="the new file is in place, but a power cut now could undo it"
        ) from None


def write_error(path: Path, exc: OSError, *, safe: str, doing: str = "cannot write") -> StateError:
    """The error for a failed write of ``path``: which file, what the system said, what to
    do, and (``safe``) what was not lost."""
    return StateError(f"{path}: {doing} ({describe(exc)})", hint=f"{_remedy(path, exc)}; {safe}")


def describe(exc: OSError) -> str:
    """The system's words for ``exc`` and its code, e.g. ``No space left on device, ENOSPC``."""
    text = exc.strerror or str(exc)
    name = errno.errorcode.get(exc.errno or 0)
    return f"{text}, {name}" if name else text


def _remedy(path: Path, exc: OSError) -> str:
    folder = path.parent
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"the disk (or your quota) holding {folder} is full: free space, then run again"
    if exc.errno == errno.EROFS:
        return f"{folder} is on a read-only file system: make it writable, then run again"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"you may not write in {folder}: give your user write access, then run again"
    return f"check the disk holding {folder}, then run again"
