"""The append-only journal: one fsynced JSON line per recorded operation.

Each line carries the whole new record of one address (or null when the address is
forgotten), so folding the journal into the state needs no history, and appending costs the
same whatever the size of the state.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from customs_batch.errors import StateError
from customs_batch.state._atomic import fsync_dir
from customs_batch.state.model import ResourceRecord


@dataclass(frozen=True)
class JournalEntry:
    """One recorded change: the new record of ``address``, or None to forget it."""

    lineage: str
    address: str
    record: ResourceRecord | None

    def to_line(self) -> bytes:
        body = {
            "lineage": self.lineage,
            "address": self.address,
            "record": None if self.record is None else self.record.to_json(),
        }
        return (json.dumps(body, sort_keys=True, ensure_ascii=False) + "\n").encode()


def read_journal(path: Path) -> Iterator[JournalEntry]:
    """The entries of the journal at ``path`` (none when it does not exist).

    A last line cut short is what a crash in the middle of an append leaves; it was never
    acknowledged, so it is dropped. A bad line anywhere else means the file was damaged.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StateError(f"{path}: cannot read the journal ({exc.strerror})") from exc
    lines = data.split(b"\n")
    complete, tail = lines[:-1], lines[-1]
    del tail  # an unterminated last line: an append the crash interrupted
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        yield _parse_line(path, number, line)


def _parse_line(path: Path, number: int, line: bytes) -> JournalEntry:
    try:
        body: Any = json.loads(line)
        address = body["address"]
        record = body["record"]
        return JournalEntry(
            lineage=str(body["lineage"]),
            address=str(address),
            record=None if record is None else ResourceRecord.from_json(str(address), record),
        )
    except (ValueError, KeyError, TypeError, StateError) as exc:
        raise StateError(
            f"{path}:{number}: the journal is damaged ({exc})",
            hint="keep the file for inspection; restore the state from its backup or version "
            "control, then use `customs-batch refresh` to compare it with the service",
        ) from exc


class JournalWriter:
    """Appends entries durably: each ``append`` returns once its line is on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._handle: IO[bytes] | None = None

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
        """Write one entry and fsync it."""
        line = entry.to_line()
        with self._lock:
            if self._handle is None:
                self._handle = self._open()
            self._handle.write(line)
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def _open(self) -> IO[bytes]:
        existed = self.path.exists()
        handle = open(self.path, "ab")  # noqa: SIM115 - kept open for the whole run
        if existed:
            _drop_unterminated_tail(handle)
        else:
            fsync_dir(self.path.parent)
        return handle

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None


def _drop_unterminated_tail(handle: IO[bytes]) -> None:
    """Cut a line a crash left half-written, so the next entry starts on a line of its own."""
    size = handle.seek(0, os.SEEK_END)
    if size == 0:
        return
    with open(handle.name, "rb") as reader:
        data = reader.read()
    if data.endswith(b"\n"):
        return
    handle.truncate(data.rfind(b"\n") + 1)
    handle.seek(0, os.SEEK_END)
