"""Making the folders customs-batch keeps customs data in: its user's alone (0700).

The state folder (``.customs-batch/<environment>``, or a ``state_dir``), the load cache's
folder, the folders of annotated copies: whoever may write in one may delete or replace what
is in it (the state, its backup, the journal and the lock: the next plan would create
everything again), and whoever may read it may list it. ``mkdir -p`` gives the folders it
makes the umask's mode, ``0777`` under ``umask 000``; these are made ``0700`` whatever the
umask, each missing parent too. A folder that exists is the user's choice and is left as
it is, however open.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_FOLDER = 0o700
"""Read, write and search for the owner only."""


def make_private_folder(folder: Path) -> None:
    """Make ``folder`` and each missing parent, 0700; nothing when it exists (a link to a
    folder counts as one). Raises OSError as ``mkdir -p`` does (FileExistsError for a file
    where the folder would be, NotADirectoryError for one where a parent would be)."""
    missing: list[Path] = []
    current = folder
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, PRIVATE_FOLDER)
        except FileExistsError:
            if path == folder and not path.is_dir():  # a file in the way (a parent's: below)
                raise
            continue  # made meanwhile by another run: as it made it
        _exactly_private(path)


def _exactly_private(path: Path) -> None:
    """0700 also under a umask that takes the owner's own rights away (mkdir only removes
    rights, so usually nothing to do). Only the folder just made is changed, never what a
    link put in its place would lead to."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except PermissionError:  # a umask without the owner's read right
        if stat.S_ISDIR(os.lstat(path).st_mode):
            os.chmod(path, PRIVATE_FOLDER)
        return
    try:
        if stat.S_IMODE(os.fstat(descriptor).st_mode) != PRIVATE_FOLDER:
            os.fchmod(descriptor, PRIVATE_FOLDER)
    finally:
        os.close(descriptor)


def is_file_system_root(folder: Path) -> bool:
    """Whether ``folder`` (resolved) is the root of the file system (``/``, a drive's root):
    never a project's folder nor a state folder, since everything would be inside it."""
    resolved = folder.resolve()
    return resolved.parent == resolved
