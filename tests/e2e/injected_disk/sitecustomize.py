"""Write errors injected into a real ``customs-batch`` process, for the tests only.

``tests/e2e/disk.py`` puts this folder on ``PYTHONPATH``; Python imports ``sitecustomize``
at start-up, and when ``CUSTOMS_TEST_DISK_FOLDER`` names a folder, the file functions of
``os`` (and ``open``) act as if that folder were a file system of its own:

- ``CUSTOMS_TEST_DISK_SIZE`` (bytes): the folder holds at most this much, counted like a
  tmpfs (each file in whole 4 KiB pages, a hard-linked file once). A write that would go
  past it writes what fits, and the next one fails with ENOSPC, as a full disk does.
- ``CUSTOMS_TEST_DISK_READ_ONLY=1``: every change under the folder (an open for writing,
  a write, a rename, a link, an unlink, a truncation, a new folder) fails with EROFS.

Nothing of this is in the product: it stands in for mounting a small tmpfs, which needs root.
"""

from __future__ import annotations

import builtins
import errno
import fcntl
import io
import os
import threading
from typing import Any

PAGE = 4096
_FOLDER = os.environ.get("CUSTOMS_TEST_DISK_FOLDER", "")
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_lock = threading.Lock()


def _inside(path: Any) -> bool:
    try:
        text = os.path.abspath(os.fsdecode(path))
    except TypeError:
        return False  # a descriptor, not a path
    return text == _FOLDER or text.startswith(_FOLDER + os.sep)


def _fd_inside(fd: int) -> bool:
    try:
        return _inside(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return False


def _fail(code: int, path: Any = None) -> OSError:
    return OSError(code, os.strerror(code), *([os.fsdecode(path)] if path is not None else []))


def _pages(size: int) -> int:
    return -(-size // PAGE) * PAGE


def _used() -> int:
    seen: set[int] = set()
    used = 0
    for folder, _, names in os.walk(_FOLDER):
        for name in names:
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if info.st_ino not in seen:
                seen.add(info.st_ino)
                used += _pages(info.st_size)
    return used


def _install(size: int | None, read_only: bool) -> None:
    real_open, real_write, real_open_file = os.open, os.write, io.open

    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if read_only and flags & _WRITING and _inside(path):
            raise _fail(errno.EROFS, path)
        return real_open(path, flags, *args, **kwargs)

    def write(fd: int, data: Any) -> int:
        if not _fd_inside(fd):
            return real_write(fd, data)
        if read_only:
            raise _fail(errno.EROFS)
        if size is None:
            return real_write(fd, data)
        with _lock:
            info = os.fstat(fd)
            appending = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND
            start = info.st_size if appending else os.lseek(fd, 0, os.SEEK_CUR)
            # The furthest this file may reach: the room left, plus its own last page.
            end = size - _used() + _pages(info.st_size)
            if start + len(data) <= max(end, info.st_size):
                return real_write(fd, data)
            if end <= start:
                raise _fail(errno.ENOSPC)
            return real_write(fd, memoryview(data)[: end - start])  # what fits: a short write

    def open_file(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if read_only and set(mode) & set("wax+") and _inside(file):
            raise _fail(errno.EROFS, file)
        return real_open_file(file, mode, *args, **kwargs)

    def refused(name: str, paths: int) -> None:
        real = getattr(os, name)

        def change(*args: Any, **kwargs: Any) -> Any:
            if name == "mkdir" and os.path.lexists(args[0]):
                return real(*args, **kwargs)  # EEXIST comes first, as on a read-only mount
            if any(_inside(path) for path in args[:paths]):
                raise _fail(errno.EROFS, args[0])
            return real(*args, **kwargs)

        setattr(os, name, change)

    os.open, os.write = open_, write
    io.open = builtins.open = open_file
    if read_only:
        for name, paths in (("replace", 2), ("rename", 2), ("link", 2), ("unlink", 1)):
            refused(name, paths)
        for name in ("remove", "mkdir", "rmdir", "truncate"):
            refused(name, 1)
        real_ftruncate = os.ftruncate

        def ftruncate(fd: int, length: int) -> None:
            if _fd_inside(fd):
                raise _fail(errno.EROFS)
            real_ftruncate(fd, length)

        os.ftruncate = ftruncate


if _FOLDER:
    _FOLDER = os.path.abspath(_FOLDER)
    _size = os.environ.get("CUSTOMS_TEST_DISK_SIZE")
    _install(int(_size) if _size else None, os.environ.get("CUSTOMS_TEST_DISK_READ_ONLY") == "1")
