"""The state lock: one writer per environment, and who holds it when another one waits."""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import socket
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType

import filelock

from customs_batch.errors import StateError


@dataclass(frozen=True)
class LockInfo:
    """Who holds the lock: shown to anyone who has to wait for it."""

    id: str
    holder: str
    host: str
    pid: int
    operation: str
    created: str

    def describe(self) -> str:
        return (
            f"lock {self.id} held by {self.holder}@{self.host} (process {self.pid}) "
            f"for {self.operation} since {self.created}"
        )


class StateLock:
    """An OS-level file lock beside the state, with a JSON note naming its holder.

    The operating system releases the lock when its process dies, even by kill -9, so a
    crashed apply never leaves the environment locked; ``force_unlock`` is for a holder that
    hangs.
    """

    def __init__(self, lock_path: Path, operation: str) -> None:
        self.lock_path = lock_path
        self.info_path = lock_path.with_name(lock_path.name + ".info")
        self.operation = operation
        self.info: LockInfo | None = None
        self._lock = filelock.FileLock(str(lock_path))

    def acquire(self, timeout: float) -> LockInfo:
        """Take the lock, waiting up to ``timeout`` seconds; then name the holder."""
        try:
            self._lock.acquire(timeout=max(timeout, 0.0), poll_interval=0.05)
        except filelock.Timeout:
            holder = read_lock_info(self.info_path)
            who = holder.describe() if holder else "another process"
            raise StateError(
                f"the state is locked: {who}",
                hint="wait for that run to finish, raise --lock-timeout, or if it is hung, "
                f"`customs-batch force-unlock {holder.id if holder else 'ID'}`",
            ) from None
        self.info = LockInfo(
            id=str(uuid.uuid4()),
            holder=_user(),
            host=socket.gethostname(),
            pid=os.getpid(),
            operation=self.operation,
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
        self.info_path.write_text(json.dumps(asdict(self.info), indent=2) + "\n")
        return self.info

    def release(self) -> None:
        if self._lock.is_locked:
            with contextlib.suppress(FileNotFoundError):
                self.info_path.unlink()
            self._lock.release()

    def __enter__(self) -> StateLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def read_lock_info(info_path: Path) -> LockInfo | None:
    """The holder's note, or None when there is none or it cannot be read."""
    try:
        data = json.loads(info_path.read_text())
        return LockInfo(**data)
    except (OSError, ValueError, TypeError):
        return None


def force_unlock(lock_path: Path, lock_id: str) -> LockInfo:
    """Break the lock whose id is ``lock_id``; refuse any other id."""
    info_path = lock_path.with_name(lock_path.name + ".info")
    info = read_lock_info(info_path)
    if info is None:
        raise StateError("the state is not locked", hint="nothing to unlock")
    if info.id != lock_id:
        raise StateError(
            f"the lock id is {info.id}, not {lock_id}",
            hint="copy the id from the message that named the holder",
        )
    with contextlib.suppress(FileNotFoundError):
        info_path.unlink()
    with contextlib.suppress(FileNotFoundError):
        lock_path.unlink()
    return info


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"
