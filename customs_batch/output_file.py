"""Writing the file a user names (``-o FILE``, ``plan -out FILE``): only what was asked.

A file the run read (a manifest, a template, a spreadsheet, a policy file, the settings), an
input of the project (a policy file, a template, a manifest), read by this run or not, or
one of customs-batch's own records (the state, its backup, the journal, the history, the
lock, the load cache) is never replaced, however it is named: the command is refused and
nothing is written (:mod:`customs_batch.protected_files`). Otherwise a new file, or a
regular file of the user's own, is replaced whole by a private file (mode 0600: it holds
customs data), so a crash leaves the old content or the new. Anything else the path may name
is never replaced and never has its mode changed: a device (``/dev/null``, a terminal) or a
named pipe a process reads is written to as it is (one nobody reads is refused), and a regular file of another owner is refused, since the
customs data would be readable by whoever its mode lets read it.

Light on purpose (validate imports it): it does what ``state/_atomic.py`` does for the state
without loading the state package.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from customs_batch.errors import CustomsBatchError, UsageError
from customs_batch.protected_files import protection, record_protection

PRIVATE = 0o600
"""Read and write for the owner only."""


def check_named_file(path: Path, *, what: str, project_inputs: bool = True) -> None:
    """Refuse now what :func:`write_named_file` would refuse at ``path`` (one of
    customs-batch's records or a file the run read; another user's file): a command that
    writes several files asks of each before it writes any. ``project_inputs``: as for
    :func:`customs_batch.protected_files.protection`."""
    _refuse_protected(path, what, project_inputs=project_inputs)
    info = _looked_up(path, what)
    if info is None:
        return
    if stat.S_ISREG(info.st_mode) and not _own_regular(info):
        raise _not_yours(path, what, info.st_uid)


def refuse_a_special_file(path: Path, *, what: str) -> None:
    """Refuse ``path`` for a file a command writes as a regular one (``init``'s project
    files, ``schema export``'s schemas) when something else is there: a named pipe would
    wait for a reader for ever, a folder or a device is no file to fill."""
    info = _looked_up(path, what)
    if info is None:
        return
    if not stat.S_ISREG(info.st_mode):
        raise CustomsBatchError(
            f"cannot write the {what} {path}: {_kind_of(info.st_mode)} is there, not a file",
            hint="remove it, or choose another folder",
        )


def check_project_file(path: Path, *, what: str) -> None:
    """Refuse now what :func:`write_project_file` would refuse at ``path``, so that a
    command writing several files (and the folders for them) refuses before any."""
    if path.is_symlink():
        return  # replaced by the file: what it points at is never written
    found = record_protection(path)
    if found is not None:
        raise UsageError(f"cannot write the {what} to {path}: {found.what}", hint=found.hint)
    refuse_a_special_file(path, what=what)


def write_project_file(path: Path, text: str, *, what: str) -> None:
    """Write ``text`` as the file ``path`` names (``init``'s project files, ``schema
    export``'s schemas: no customs data, so with the umask's mode): never over one of
    customs-batch's records, whatever name reaches it, nor into a special file; a link at
    ``path`` is replaced by the file, its target left alone (the user named the folder,
    not where a link in it points). OSError when it cannot be written."""
    check_project_file(path, what=what)
    tmp = path.with_name(_temporary_name(path.name))
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        try:
            _write_all(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _looked_up(path: Path, what: str) -> os.stat_result | None:
    """What is at ``path`` (links followed), or None when nothing is."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise cannot_write(path, what, exc) from None


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def write_named_file(
    path: Path, data: bytes | Iterable[bytes], *, what: str, project_inputs: bool = True
) -> None:
    """Write ``data`` (``what`` it is: "report", "plan") to ``path`` as described above, or
    say why it cannot be. ``data`` may come in pieces, written as they come: a report of
    100,000 changes is then never held whole."""
    _refuse_protected(path, what, project_inputs=project_inputs)
    info = _looked_up(path, what)
    if info is None or _own_regular(info):
        try:
            _replace(Path(os.path.realpath(path)), data)
        except OSError as exc:
            raise cannot_write(path, what, exc) from None
        return
    if stat.S_ISREG(info.st_mode):
        raise _not_yours(path, what, info.st_uid)
    _write_in_place(path, data, what, pipe=stat.S_ISFIFO(info.st_mode))


def _refuse_protected(path: Path, what: str, *, project_inputs: bool = True) -> None:
    found = protection(path, project_inputs=project_inputs)
    if found is not None:
        raise UsageError(f"cannot write the {what} to {path}: {found.what}", hint=found.hint)


def _own_regular(info: os.stat_result) -> bool:
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()


def _replace(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Replace ``path`` by a new private file holding ``data``, through a temporary file
    beside it (a link named on the command line stays a link to the new file)."""
    tmp = path.with_name(_temporary_name(path.name))
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()  # left by a crash; O_EXCL then never follows a link planted there
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE)
        try:
            os.fchmod(fd, PRIVATE)  # whatever the umask
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)  # the rename survives a power cut
    finally:
        os.close(folder)


_NAME_MAX = 255
"""Bytes of a file's name on most file systems."""


def _temporary_name(name: str) -> str:
    """``.NAME.PID.tmp``; for a name near the file system's bound, whose temporary name
    would be refused where the name itself is not, a digest of the name in its place."""
    temporary = f".{name}.{os.getpid()}.tmp"
    if len(os.fsencode(temporary)) <= _NAME_MAX:
        return temporary
    digest = hashlib.blake2b(os.fsencode(name), digest_size=8).hexdigest()
    return f".{digest}.{os.getpid()}.tmp"


def _write_in_place(path: Path, data: bytes | Iterable[bytes], what: str, *, pipe: bool) -> None:
    """Write to a device or a named pipe as it is. A named pipe is opened only when a
    process already reads it (``-o >(gzip > plan.gz)``): opening one nobody reads would
    wait for ever, so that is refused."""
    flags = os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags | os.O_NONBLOCK if pipe else flags)
    except OSError as exc:
        if pipe and exc.errno == errno.ENXIO:
            raise CustomsBatchError(
                f"cannot write the {what} to {path}: it is a named pipe that no process reads",
                hint="start the process that reads the pipe first, or name a file",
            ) from None
        raise cannot_write(path, what, exc) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):  # it became a regular file since it was looked at
            raise _not_yours(path, what, info.st_uid)
        if pipe:
            os.set_blocking(fd, True)  # its reader takes the pieces at its own pace
        _write_all(fd, data)
    except OSError as exc:
        raise cannot_write(path, what, exc) from None
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes | Iterable[bytes]) -> None:
    for piece in (data,) if isinstance(data, bytes) else data:
        view = memoryview(piece)
        while view:
            view = view[os.write(fd, view) :]


def _not_yours(path: Path, what: str, owner: int) -> CustomsBatchError:
    return CustomsBatchError(
        f"cannot write the {what} to {path}: the file belongs to another user (uid {owner}), "
        "and customs data is written only to a file of your own",
        hint="name a new file, or remove that one first",
    )


def cannot_write(path: Path, what: str, exc: OSError) -> CustomsBatchError:
    """The error for ``what`` ("report", "spreadsheet") that cannot be written to ``path``:
    the system's reason and its code, and what to do about it."""
    hint = "check that the folder exists and is writable"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = "the disk (or your quota) is full: free space, then run again"
    elif exc.errno == errno.ENAMETOOLONG:
        hint = "the name is too long for the file system: choose a shorter one"
    elif exc.errno == errno.ENXIO:
        hint = "nothing can be written to that path (a socket, or a device not there): name a file"
    reason = exc.strerror or str(exc)
    name = errno.errorcode.get(exc.errno or 0)
    return CustomsBatchError(
        f"cannot write the {what} to {path}: {reason}{f', {name}' if name else ''}", hint=hint
    )
