"""The append-only journal: one fsynced JSON line per recorded operation.

Each line carries the whole new record of one address (or null when the address is
forgotten), so folding the journal into the state needs no history, and appending costs the
same whatever the size of the state. It also carries the serial of the state it was written
on: a journal written on serial 0 (a first run that never ended) is a whole state by itself,
any other needs the state file of that serial beside it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

import orjson

from customs_batch import jsontypes
from customs_batch.errors import StateError
from customs_batch.state._atomic import fsync_dir, open_private, write_all, write_error
from customs_batch.state._lines import whole_lines
from customs_batch.state.model import ResourceRecord

# Lines are encoded by orjson: keys sorted, UTF-8 as is, no spaces. ``read_journal`` reads
# them to the same values as the standard library's lines (with ", " and ": ") before
# them, and reads those as before. The standard library's encoder took 8 % of a worker's
# time in an apply of 2,000 movements at parallelism 8; orjson takes a fifth of that.
# What orjson refuses (an integer beyond 64 bits, a key that is not a string) or would
# change (it writes NaN and infinity as null) goes through the standard library's encoder,
# as the state file does, so a value reads back from the journal as it was recorded.
_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False)


def _plain(value: Any) -> Any:
    """What orjson cannot encode itself: a read-only mapping (a spec), a tuple subclass."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | list):
        return list(value)
    raise TypeError(f"cannot record a {type(value).__name__} in the journal")


def encode_line(body: Mapping[str, Any]) -> bytes:
    """One journal line: ``body`` as JSON with sorted keys, then a newline."""
    try:
        line = orjson.dumps(body, default=_plain, option=_OPTIONS)
    except orjson.JSONEncodeError:
        line = None
    if line is None or (b"null" in line and _not_finite(body)):
        return (_ENCODER.encode(body) + "\n").encode()
    return line


def _not_finite(value: Any) -> bool:
    """Whether ``value`` holds a float that is NaN or infinite."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, Mapping):
        return any(_not_finite(item) for item in value.values())
    if isinstance(value, tuple | list):
        return any(_not_finite(item) for item in value)
    return False


@dataclass(frozen=True)
class JournalEntry:
    """One recorded change: the new record of ``address``, or None to forget it.

    ``serial`` is the serial of the state the change was made on (0: a state not yet
    written, whose records are all in the journal); None in a line an older version
    wrote. It tells a journal that is the whole state from one that needs its state file.
    """

    lineage: str
    address: str
    record: ResourceRecord | None
    serial: int | None = None

    def to_line(self) -> bytes:
        body: dict[str, Any] = {
            "lineage": self.lineage,
            "address": self.address,
            "record": None if self.record is None else self.record.to_json(),
        }
        if self.serial is not None:
            body["serial"] = self.serial
        return encode_line(body)


def read_journal(path: Path, seen: Callable[[bytes], None] | None = None) -> Iterator[JournalEntry]:
    """The entries of the journal at ``path`` (none when it does not exist); ``seen`` is
    given the line of each entry before it is yielded (a digest of what was read).

    A last line cut short is what a crash in the middle of an append leaves; it was never
    acknowledged, so it is dropped. After a power cut the lines written since the last fsync
    may be garbage (group commit leaves several at the end); none of them was acknowledged
    either, so a damaged run of lines at the very end is dropped too. A bad line followed by
    a good one means the file itself was damaged: that is an error.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StateError(f"{path}: cannot read the journal ({exc.strerror})") from exc
    damaged: StateError | None = None
    # The part after the last newline was never finished; blank lines are passed over.
    for number, line in whole_lines(data):
        if not line.strip():
            continue
        try:
            entry = _parse_line(path, number, line)
        except StateError as exc:
            damaged = damaged or exc
            continue
        if damaged is not None:
            raise damaged
        if seen is not None:
            seen(line + b"\n")
        yield entry


def _parse_line(path: Path, number: int, line: bytes) -> JournalEntry:
    try:
        body: Any = jsontypes.loads(line)
        address = body["address"]
        if not isinstance(address, str) or "/" not in address:
            raise ValueError(f"the address is {json.dumps(address)}, not Kind/name")
        record = body["record"]
        serial = body.get("serial")
        if serial is not None and (not isinstance(serial, int) or isinstance(serial, bool)):
            raise ValueError(f"the serial is {serial!r}, not a whole number")
        return JournalEntry(
            lineage=str(body["lineage"]),
            address=str(address),
            record=None if record is None else ResourceRecord.from_json(str(address), record),
            serial=serial,
        )
    except (ValueError, KeyError, TypeError, StateError) as exc:
        raise StateError(
            f"{path}:{number}: the journal is damaged ({exc})",
            hint="keep the file for inspection; restore the state from its backup or version "
            "control, then use `customs-batch refresh` to compare it with the service",
        ) from exc


KEPT = (
    "every outcome recorded before this one is safe in the journal, and the next run goes "
    "on from there"
)


class JournalWriter:
    """Appends entries durably: each ``append`` returns once its line is on disk.

    Group commit: lines are written in order under one lock, and an fsync makes every line
    written before it began durable. A thread whose line an fsync already under way covers
    waits for that one; a thread whose line came after every fsync under way starts its own
    at once, beside them, rather than queueing behind them: the kernel overlaps concurrent
    fsyncs of one file (the journal of the file system commits them together), so on a busy
    disk the wait is one flush, not the rest of another one and then a flush. A thread that
    owns no line never waits for the disk.

    ``when_durable`` runs a callback once what was written before it is on disk, so a caller
    that writes an outcome may report it later, when some fsync (its own next one, or another
    thread's) has covered it, instead of waiting for a disk flush of its own.

    The file is private (mode 0600). A write that fails (disk full, read-only) is cut back
    to the last whole line, and the writer refuses every later line: one missing line in the
    middle of a journal would make the lines after it lie.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()  # the descriptor, the order of the lines, the counts
        self._synced_changed = threading.Condition(self._lock)
        self._fd: int | None = None
        self._size = 0
        self._written = 0
        self._synced = 0
        self._syncing: list[int] = []  # what each fsync under way covers (its last line)
        self._failed: StateError | None = None
        self._callbacks: deque[tuple[int, Callable[[], None]]] = deque()
        self._callback_lock = threading.Lock()  # callbacks run one at a time

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def append(self, entry: JournalEntry) -> None:
        """Write one entry and return once it is on disk."""
        self.sync(self.write(entry))

    def write(self, entry: JournalEntry) -> int:
        """Hand one entry to the operating system, not yet durable; return its sequence
        number for ``sync``. Entries reach the file in the order of their numbers."""
        line = entry.to_line()
        with self._lock:
            if self._failed is not None:
                raise self._failed
            try:
                if self._fd is None:
                    self._fd, self._size, written = self._open(line)
                else:
                    written = False
                if not written:
                    write_all(self._fd, line)
            except OSError as exc:
                self._fail(exc)
            self._size += len(line)
            self._written += 1
            if written:  # created with a synced rename: already durable
                self._synced = self._written
            return self._written

    def sync(self, sequence: int) -> None:
        """Return once the entry numbered ``sequence`` and every one before it are on disk;
        then run the callbacks that this made due (``when_durable``)."""
        with self._lock:
            while self._synced < sequence:
                if self._failed is not None:
                    raise self._failed
                if any(target >= sequence for target in self._syncing):
                    self._synced_changed.wait()  # an fsync under way covers this line
                    continue
                target, fd = self._written, self._fd
                if fd is None:
                    break
                self._syncing.append(target)
                self._lock.release()
                try:
                    self._fsync(fd)
                finally:
                    self._lock.acquire()
                    self._syncing.remove(target)
                    self._synced_changed.notify_all()
                self._synced = max(self._synced, target)
        self._run_due()

    def flush(self) -> None:
        """Return once every entry written so far is on disk (and its callbacks have run)."""
        with self._lock:
            written = self._written
        self.sync(written)
        self._run_due()

    def when_durable(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once every entry written so far is on disk: at once when it is,
        else on the thread whose fsync covers them. Callbacks run one at a time, in the
        order of the entries they wait for; after a failed fsync they never run."""
        with self._lock:
            if self._synced < self._written or self._callbacks:
                self._callbacks.append((self._written, callback))
                callback = self._nothing
        with self._callback_lock:
            callback()
        self._run_due()

    @staticmethod
    def _nothing() -> None:
        pass

    def _run_due(self) -> None:
        with self._callback_lock:
            while True:
                with self._lock:
                    if not self._callbacks or self._callbacks[0][0] > self._synced:
                        return
                    _, callback = self._callbacks.popleft()
                callback()

    def _open(self, first: bytes) -> tuple[int, int, bool]:
        """Open the journal for appending: its descriptor, its size before ``first``, and
        whether ``first`` is already in it.

        A journal with no whole line (none yet, or only a line a crash cut) is created anew
        with ``first`` in it, by a rename: so a crash never leaves an empty journal, and an
        empty one always means a journal emptied once the state file held it, the sign
        that this environment had a state (``LocalBackend._refuse_a_lost_state``).
        """
        if self.path.exists():
            fd = open_private(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                size = _drop_unterminated_tail(self.path, fd)
            except BaseException:
                os.close(fd)
                raise
            if size:
                return fd, size, False
            os.close(fd)
        _create_with(self.path, first)
        return open_private(self.path, os.O_WRONLY | os.O_APPEND), 0, True

    def close(self) -> None:
        """Make what was written durable and close the file; a later write opens it again."""
        with self._lock:
            while self._syncing:  # an fsync under way still uses the descriptor
                self._synced_changed.wait()
            fd, self._fd = self._fd, None
            if fd is None:
                if self._failed is not None:
                    raise self._failed
                return
            try:
                if self._synced < self._written:
                    self._fsync(fd)
                    self._synced = self._written
            finally:
                os.close(fd)
        self._run_due()

    def _fail(self, exc: OSError) -> NoReturn:
        # Cut a half-written line, so that what a later run reads ends on a whole line.
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._size)
        self._failed = write_error(self.path, exc, safe=KEPT)
        raise self._failed

    def _fsync(self, fd: int) -> None:
        try:
            os.fsync(fd)
        except OSError as exc:
            self._failed = write_error(self.path, exc, safe=KEPT, doing="cannot write the journal")
            raise self._failed from None


def _drop_unterminated_tail(path: Path, fd: int) -> int:
    """Cut a line a crash left half-written, so the next entry starts on a line of its own;
    return the size of what is left (0 when no whole line is: the file is then left as it
    is)."""
    if os.fstat(fd).st_size == 0:
        return 0
    data = path.read_bytes()
    size = len(data)
    if data.endswith(b"\n"):
        return size
    keep = data.rfind(b"\n") + 1
    if keep:  # with no whole line left, the caller replaces the file instead of emptying it
        os.ftruncate(fd, keep)
    return keep


def _create_with(path: Path, first: bytes) -> None:
    """Put a journal holding ``first`` at ``path`` (mode 0600): written and synced under a
    temporary name, then renamed into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            write_all(fd, first)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    fsync_dir(path.parent)
