"""Reading the files a user names: regular files only, and only up to a size.

Every manifest, template, spreadsheet, config, key and state file goes through here, so a
named pipe never hangs a run, a link to ``/dev/zero`` or ``/dev/urandom`` never reads
forever, a symbolic-link loop is a clear refusal, and a huge file is refused before it is
read. The size limit is ``CUSTOMS_BATCH_MAX_FILE_MB`` megabytes (default 256).

It also notes what the run read, by identity (device and inode), with what each file is
(:class:`InputKind`): a file the user names for output (``-o``, ``plan -out``) is refused
when it is one of them (:mod:`customs_batch.output_file`), however it is named (a link, a
second hard link, ``./x/../x``). Loading processes send back what they noted
(:func:`collecting_reads`, :mod:`customs_batch.workers`); a file the load cache answers for
is noted by the cache (:func:`note_read`).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO

from customs_batch.env_numbers import positive_whole_number
from customs_batch.errors import CustomsBatchError

MAX_FILE_MB_VARIABLE = "CUSTOMS_BATCH_MAX_FILE_MB"
DEFAULT_MAX_FILE_MB = 256
MEGABYTE = 1024 * 1024
_CHUNK = 1024 * 1024
YAML_SUFFIXES = (".yaml", ".yml")


def is_yaml_name(name: str) -> bool:
    """Whether ``name`` ends in ``.yaml`` or ``.yml``, in any case: a manifest or a policy
    file an editor or a Windows export saved as ``Departures.YAML`` is read all the same,
    never left out of a green run (the pre-commit hook already runs for it)."""
    return name.lower().endswith(YAML_SUFFIXES)


class InputKind(StrEnum):
    """What a file the run read is, as an error about it says it ("... is a manifest")."""

    FILE = "a file"
    MANIFEST = "a manifest"
    TEMPLATE = "a template"
    SPREADSHEET = "a spreadsheet"
    POLICY = "a policy file"
    SETTINGS = "the project's settings"
    STATE = "the state"
    KEY = "an API key file"
    PLAN = "a saved plan"


FileIdentity = tuple[int, int]
"""(st_dev, st_ino): the file itself, whatever path names it."""

ReadFiles = dict[FileIdentity, tuple[InputKind, str]]
"""What was read: each file's identity -> (what it is, the path it was read by)."""

_read: ReadFiles = {}
_collecting: list[ReadFiles] = []
_noted_paths: set[str] = set()


def note_read(path: Path | str, kind: InputKind, info: os.stat_result | None = None) -> None:
    """The run read (or stands on, as with a cached result) the regular file ``path`` as
    ``kind``; ``info`` is its stat when the caller has it. A file that is not there, or not
    regular, is no input and is not noted. The first kind noted for a file stays; a path
    noted already is not looked at again (a template is found once per document)."""
    if info is None:
        if str(path) in _noted_paths:
            return
        try:
            info = os.stat(path)
        except OSError:
            return
    if not stat.S_ISREG(info.st_mode):
        return
    _noted_paths.add(str(path))
    identity = (info.st_dev, info.st_ino)
    for noted in (_read, *_collecting):
        noted.setdefault(identity, (kind, str(path)))


def files_read() -> Mapping[FileIdentity, tuple[InputKind, str]]:
    """Every file this run read so far (:func:`note_read`)."""
    return _read


def add_files_read(reads: Mapping[FileIdentity, tuple[InputKind, str]]) -> None:
    """Take in what another process of this run read (a loading process's)."""
    for noted in (_read, *_collecting):
        for identity, read in reads.items():
            noted.setdefault(identity, read)


def forget_files_read() -> None:
    """Start a run: nothing read yet (a process that runs several commands, as tests do)."""
    _read.clear()
    _noted_paths.clear()


@contextmanager
def collecting_reads() -> Iterator[ReadFiles]:
    """What is read until the block ends, besides its being noted for the whole run."""
    collected: ReadFiles = {}
    _collecting.append(collected)
    try:
        yield collected
    finally:
        _collecting.remove(collected)


class FileRefused(CustomsBatchError):
    """A file that is not read: not a regular file, too large, or a symbolic-link loop.

    ``rule`` is the finding rule for it: ``file.not-regular``, ``file.too-large`` or
    ``file.symlink-loop``.
    """

    def __init__(self, path: Path, message: str, *, rule: str, hint: str) -> None:
        super().__init__(f"{path}: {message}", hint=hint)
        self.path = path
        self.reason = message
        self.rule = rule


def max_file_bytes(environ: Mapping[str, str] | None = None) -> int:
    """The largest file read, from ``CUSTOMS_BATCH_MAX_FILE_MB`` (default 256 MB)."""
    megabytes = positive_whole_number(
        MAX_FILE_MB_VARIABLE, DEFAULT_MAX_FILE_MB, unit="megabytes", example=1024, environ=environ
    )
    return megabytes * MEGABYTE


@contextmanager
def open_user_file(
    path: Path,
    *,
    limit: int | None = None,
    raise_hint: str | None = None,
    kind: InputKind = InputKind.FILE,
) -> Iterator[BinaryIO]:
    """``path`` opened for binary reading after checking that it is a regular file of at
    most ``limit`` bytes (default: :func:`max_file_bytes`). ``raise_hint`` says how to raise
    a ``limit`` given here (default: the environment variable). The file is noted as read,
    as ``kind`` (:func:`note_read`).

    Raises FileRefused; other OSErrors (no such file, permission denied) pass through.
    """
    if limit is None:
        limit, raise_hint = max_file_bytes(), None
    with os.fdopen(_open_checked(path, limit, raise_hint, kind), "rb") as handle:
        yield handle


def read_user_file(
    path: Path,
    *,
    limit: int | None = None,
    raise_hint: str | None = None,
    kind: InputKind = InputKind.FILE,
) -> bytes:
    """The bytes of ``path``, checked and noted as :func:`open_user_file` does; a file that
    grows past the limit while it is read is refused too."""
    if limit is None:
        limit, raise_hint = max_file_bytes(), None
    fd = _open_checked(path, limit, raise_hint, kind)
    with os.fdopen(fd, "rb", buffering=0) as raw:
        # Asking for the file's size, not the limit: a read allocates what it asks for.
        data = raw.read(os.fstat(fd).st_size + 1) or b""
        while len(data) <= limit and (more := raw.read(min(limit + 1 - len(data), _CHUNK))):
            data += more  # the file grew while it was read
    if len(data) > limit:
        raise _too_large(path, len(data), limit, raise_hint)
    return data


def _open_checked(path: Path, limit: int, raise_hint: str | None, kind: InputKind) -> int:
    """A descriptor of ``path`` opened for reading, once it is known to be a regular file
    within ``limit`` (noted as read, as ``kind``). Opened without blocking: a named pipe
    opens at once instead of waiting for a writer; what is checked (fstat of the
    descriptor) is what is read, and what is noted."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise FileRefused(
                path,
                "the path is a loop of symbolic links",
                rule="file.symlink-loop",
                hint="point the link at a real file, or remove it",
            ) from None
        raise
    try:
        info = os.fstat(fd)
        _check(path, info, limit, raise_hint)
    except BaseException:
        os.close(fd)
        raise
    note_read(path, kind, info)
    os.set_blocking(fd, True)
    return fd


def is_link_loop(path: Path) -> bool:
    """Whether ``path`` is a symbolic link that leads round in a loop of links (reading it
    is refused as ``file.symlink-loop``, where a check that the path exists says no)."""
    try:
        path.stat()
    except OSError as error:
        return error.errno == errno.ELOOP
    except RuntimeError:  # a symbolic-link loop, before Python 3.13
        return True
    return False


def _check(path: Path, info: os.stat_result, limit: int, raise_hint: str | None) -> None:
    if stat.S_ISDIR(info.st_mode):  # as open() says it, for callers that report OSErrors
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(
            path,
            f"not a regular file (it is {_kind_of(info.st_mode)}); only regular files are read",
            rule="file.not-regular",
            hint="name a regular file, or move the special file out of the folder",
        )
    if info.st_size > limit:
        raise _too_large(path, info.st_size, limit, raise_hint)


def _too_large(path: Path, size: int, limit: int, raise_hint: str | None) -> FileRefused:
    if raise_hint is None:
        raise_hint = (
            f"raise the limit with {MAX_FILE_MB_VARIABLE}={max(2 * limit // MEGABYTE, 1)} "
            "(megabytes), or make the file smaller"
        )
    return FileRefused(
        path,
        f"the file is larger than {megabytes(limit)} ({megabytes(size)} or more)",
        rule="file.too-large",
        hint=raise_hint,
    )


def not_utf8(path: Path | str, data: bytes, error: UnicodeDecodeError) -> str:
    """Where in ``data`` (the bytes of ``path``) the byte that is not UTF-8 is, and which:
    ``PATH:LINE:COLUMN: byte 0xFF is not UTF-8 text`` (line and column from 1)."""
    line = data.count(b"\n", 0, error.start) + 1
    column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
    return f"{path}:{line}:{column}: byte 0x{data[error.start]:02x} is not UTF-8 text"


def megabytes(size: int) -> str:
    """``size`` bytes for people: ``3.5 MB``, ``512 MB``."""
    return f"{size / MEGABYTE:,.1f} MB" if size < 10 * MEGABYTE else f"{size // MEGABYTE:,} MB"


def _kind_of(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")
