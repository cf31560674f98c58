"""The state lock: one writer per environment, and who holds it when another one waits.

The lock is an OS-level lock (``flock``) on ``state.lock``, with a note beside it,
``state.lock.info``, naming the holder. The operating system releases the lock when its
process dies, even by kill -9. ``force_unlock`` never breaks the lock of a process that is
alive on this machine; a holder on another machine needs ``force=True``. A run whose lock
was broken notices it (``StateLock.check``) before its next write and stops.
"""

from __future__ import annotations

import calendar
import contextlib
import getpass
import json
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, NoReturn

import filelock

from customs_batch import jsontypes
from customs_batch.errors import StateError
from customs_batch.state._atomic import PRIVATE, write_atomic, write_error

if TYPE_CHECKING:
    from customs_batch.state.model import ResourceRecord

UNTOUCHED = "nothing was changed"
POLL_SECONDS = 0.05
"""How often a writer that waits for the lock tries it again."""


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

    def in_flight(self, written_at: str) -> str | None:
        """For a record whose outcome is unknown, written at ``written_at``: why it is a
        request of the run that holds this lock, written since it took the lock and not
        answered yet (a command that reads the state without the lock sees that run's
        intents before their answers), or None when the record is older than the lock."""
        since = _epoch(self.created)
        written = _instant(written_at)
        if since is None or written is None or written < since:
            return None
        return (
            f"in flight: sent by the run that holds the state's lock ({self.describe()}), "
            "which has not recorded the answer yet; look again once that run has ended"
        )


InFlight = Callable[[str], str | None]
"""For the time a record was written: why it is a request of the run holding the state's
lock (:meth:`LockInfo.in_flight`), or None."""


def running_request(in_flight: InFlight | None, record: ResourceRecord) -> str | None:
    """Why ``record``, whose outcome is unknown, is a request the run holding the lock has
    not recorded the answer to yet (``in_flight``: :func:`in_flight_of`); None for any other
    record, or when no run that is known to be alive holds the lock."""
    if in_flight is None or not record.status.outcome_unknown:
        return None
    return in_flight(record.updated_at)


def in_flight_of(holder: LockInfo | None) -> InFlight | None:
    """For the time a record whose outcome is unknown was written: why it is a request of
    the run that holds the lock now (:meth:`LockInfo.in_flight`); None when no run that is
    known to be alive holds it."""
    return None if holder is None else holder.in_flight


class LockLostError(StateError):
    """The lock of a running command was broken: it must not write anything more."""


@dataclass(frozen=True)
class Unlocked:
    """What ``force_unlock`` did: the holder it removed, and in what condition it was."""

    info: LockInfo
    how: str


class StateLock:
    """An OS-level file lock beside the state, with a JSON note naming its holder."""

    def __init__(
        self,
        lock_path: Path,
        operation: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """``clock`` and ``sleep`` time the wait for a lock another process holds."""
        self.lock_path = lock_path
        self.info_path = info_path_of(lock_path)
        self.operation = operation
        self.info: LockInfo | None = None
        self._lock = filelock.FileLock(str(lock_path), mode=PRIVATE)
        self._lock_name, self._note_name = str(lock_path), str(self.info_path)
        self._identity: tuple[int, ...] | None = None
        self._clock, self._sleep = clock, sleep

    def acquire(self, timeout: float) -> LockInfo:
        """Take the lock, waiting up to ``timeout`` seconds; then name the holder."""
        try:
            self._wait_for_lock(max(timeout, 0.0))
        except filelock.Timeout:
            holder = read_lock_info(self.info_path)
            who = holder.describe() if holder else "another process"
            raise StateError(f"the state is locked: {who}", hint=_waiting_hint(holder)) from None
        except OSError as exc:
            raise write_error(
                self.lock_path, exc, safe=UNTOUCHED, doing="cannot take the state lock"
            ) from None
        try:
            with contextlib.suppress(OSError):
                os.chmod(self.lock_path, PRIVATE)  # a lock file from an older version
            self.info = LockInfo(
                id=str(uuid.uuid4()),
                holder=_user(),
                host=socket.gethostname(),
                pid=os.getpid(),
                operation=self.operation,
                created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            )
            note = json.dumps(asdict(self.info), indent=2) + "\n"
            write_atomic(self.info_path, note.encode(), safe=UNTOUCHED)
            self._identity = _identity(os.stat(self._lock_name), os.stat(self._note_name))
        except BaseException:
            self._lock.release()
            raise
        return self.info

    def _wait_for_lock(self, timeout: float) -> None:
        """Try the lock every ``POLL_SECONDS`` until it is taken, or raise filelock.Timeout
        once ``timeout`` seconds have passed on the clock."""
        deadline = self._clock() + timeout
        while True:
            try:
                self._lock.acquire(blocking=False)
                return
            except filelock.Timeout:
                left = deadline - self._clock()
                if left <= 0:
                    raise
                self._sleep(min(POLL_SECONDS, left))

    def check(self) -> None:
        """Raise LockLostError when the lock was broken since it was taken.

        Two ``stat`` calls: the lock file and the note must be the very files this process
        made (a broken lock's files are removed; a new holder makes new ones).
        """
        if self._identity is None or self._current_identity() == self._identity:
            return
        self._lost()

    def _lost(self) -> NoReturn:
        now = read_lock_info(self.info_path)
        taken = self.info.describe() if self.info else "its lock"
        since = f"; it is now {now.describe()}" if now else ""
        raise LockLostError(
            f"the state lock was broken while this {self.operation} ran ({taken}){since}",
            hint="this run stopped without writing anything more to the state or the "
            "service: what it sent before is recorded in the journal. Make sure no other run "
            "is going on, then `customs-batch plan` shows what is left to do",
        )

    def _current_identity(self) -> tuple[int, ...] | None:
        # By str paths: this runs before every journal line and every request, and Path
        # objects cost a tenth of it.
        try:
            lock, note = os.stat(self._lock_name), os.stat(self._note_name)
        except OSError:
            return None
        return _identity(lock, note)

    def release(self) -> None:
        """Remove the note (if it is still this process's) and release the lock."""
        if self._lock.is_locked:
            if self._identity is not None and self._current_identity() == self._identity:
                with contextlib.suppress(OSError):
                    self.info_path.unlink()
            self._identity = None
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


def _waiting_hint(holder: LockInfo | None) -> str:
    wait = "wait for that run to finish, or raise --lock-timeout"
    if holder is None or holder.host == socket.gethostname():
        pid = f"`kill {holder.pid}`" if holder else "Ctrl-C or kill"
        return f"{wait}; if it hangs, stop it ({pid}): its lock is released when it ends"
    return (
        f"{wait}; if it hangs, stop it on {holder.host}; if that machine is gone, "
        f"`customs-batch force-unlock {holder.id} --force` (see docs/state.md first)"
    )


def info_path_of(lock_path: Path) -> Path:
    """Where the holder's note of ``lock_path`` lives."""
    return lock_path.with_name(lock_path.name + ".info")


def read_lock_info(info_path: Path) -> LockInfo | None:
    """The holder's note, or None when there is none or it cannot be read."""
    try:
        data = jsontypes.loads(info_path.read_text())
        return LockInfo(**data)
    except (OSError, ValueError, TypeError):
        return None


def holder_alive_here(lock_path: Path) -> LockInfo | None:
    """The note of ``lock_path``'s holder when it names a process of this machine that is
    running (None: no note, another machine's, or a process that ended)."""
    holder = read_lock_info(info_path_of(lock_path))
    if holder is None or holder.host != socket.gethostname() or not _alive(holder.pid):
        return None
    started = _started(holder.pid)
    taken = _epoch(holder.created)
    if started is not None and taken is not None and started > taken + 1:
        return None  # a process that began after the note: the pid of an ended holder, reused
    return holder


def _started(pid: int) -> float | None:
    """When process ``pid`` began (seconds since the epoch), where /proc says (Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            fields = file.read().rsplit(b")", 1)[1].split()
        with open("/proc/stat", "rb") as file:
            boot = next(int(line.split()[1]) for line in file if line.startswith(b"btime "))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _instant(stamp: str) -> float | None:
    """Seconds since the epoch of an ISO 8601 time as records keep it (UTC when it names
    no zone), or None."""
    try:
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def _epoch(stamp: str) -> float | None:
    try:
        return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return None


def force_unlock(lock_path: Path, lock_id: str, *, force: bool = False) -> Unlocked:
    """Break the lock whose id is ``lock_id``, when that is safe (or ``force`` says so).

    - The lock is free (its holder ended; the system released it): the note is removed.
    - The holder runs on this machine: refused, whatever ``force`` says; stop it instead.
    - The holder was on another machine, which this one cannot look into: only with
      ``force``, which removes the lock file and the note.
    """
    info_path = info_path_of(lock_path)
    info = read_lock_info(info_path)
    if info is None:
        free = _take_if_free(lock_path)
        if free is None:
            raise StateError("the state is locked, but its holder left no note", hint=_WAIT)
        free.release()
        raise StateError("the state is not locked", hint="nothing to unlock")
    if info.id != lock_id:
        raise StateError(
            f"the lock id is {info.id}, not {lock_id}",
            hint="copy the id from the message that named the holder",
        )
    here = info.host == socket.gethostname()
    if here:
        free = _take_if_free(lock_path)
        if free is not None:
            # Held while the note goes, so that no new holder's note is removed.
            with free, contextlib.suppress(FileNotFoundError):
                info_path.unlink()
            state = "is no longer running" if not _alive(info.pid) else "no longer holds it"
            return Unlocked(
                info,
                f"Process {info.pid} {state}: the system had released its lock; its "
                "note is removed.",
            )
        if _alive(info.pid):
            raise StateError(
                f"the state lock is held by a running process: {info.describe()}",
                hint=f"that run is still going on: wait for it, or stop it (Ctrl-C in its "
                f"terminal, or `kill {info.pid}`); the lock is released when it ends. Breaking "
                "the lock of a live run lets two runs send the same changes",
            )
        if not force:
            raise StateError(
                f"process {info.pid} that took the lock has ended, but another process still "
                f"holds the lock file {lock_path}",
                hint=f"find it with `fuser -v {lock_path}` and stop it; if you are sure no "
                f"customs-batch runs, `customs-batch force-unlock {info.id} --force`",
            )
    elif not force:
        raise StateError(
            f"the state lock is held by a process on another machine: {info.describe()}",
            hint=f"this machine cannot tell whether it still runs. If it does, breaking its "
            "lock lets two runs write at once: they would send the same documents twice, "
            "declaring goods twice and creating movements twice. Check on "
            f"{info.host} that process {info.pid} has ended, then "
            f"`customs-batch force-unlock {info.id} --force`",
        )
    with contextlib.suppress(FileNotFoundError):
        info_path.unlink()
    with contextlib.suppress(FileNotFoundError):
        lock_path.unlink()
    return Unlocked(
        info, "The lock is broken. If its run still goes on, it stops before its next write."
    )


_WAIT = "wait for the run that holds it to finish, then try again"


def _take_if_free(lock_path: Path) -> filelock.BaseFileLock | None:
    """The lock, taken at once when no one holds it (the caller releases it), else None."""
    probe = filelock.FileLock(str(lock_path), mode=PRIVATE)
    try:
        probe.acquire(timeout=0)
    except filelock.Timeout:
        return None
    except OSError as exc:
        raise write_error(lock_path, exc, safe=UNTOUCHED, doing="cannot look at the lock") from None
    return probe


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine: one that ended, even one whose parent
    has not collected its exit status yet (a zombie, which ``kill(pid, 0)`` still finds:
    a run killed by a supervisor that never waits for it), is not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: alive, unless it has ended
    return not _ended(pid)


def _ended(pid: int) -> bool:
    """Whether process ``pid`` has ended and waits only to be collected by its parent
    (state ``Z`` or ``X`` where /proc says, on Linux); False where it cannot be told."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            fields = file.read().rsplit(b")", 1)[1].split()
    except OSError:
        return False
    return bool(fields) and fields[0] in (b"Z", b"X")


def _identity(lock: os.stat_result, note: os.stat_result) -> tuple[int, ...]:
    """The lock file (device, inode) and the note (device, inode, mtime, size)."""
    return (lock.st_dev, lock.st_ino, note.st_dev, note.st_ino, note.st_mtime_ns, note.st_size)


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"
