"""Where a state lives. The local backend keeps it in a folder beside the project.

A backend is small on purpose: ``read`` for commands that only look, ``open`` for commands
that write (it takes the lock and folds what a crashed run left in the journal). A team
backend (PostgreSQL) can implement the same protocol.
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from pathlib import Path
from types import TracebackType
from typing import Protocol

from customs_batch.errors import StateError
from customs_batch.state._atomic import fsync_dir
from customs_batch.state.file import read_state, write_state
from customs_batch.state.journal import JournalEntry, JournalWriter, read_journal
from customs_batch.state.lock import LockInfo, StateLock, force_unlock
from customs_batch.state.model import ResourceRecord, State

STATE_FILE = "state.json"
JOURNAL_FILE = "journal.jsonl"
LOCK_FILE = "state.lock"


class StateSession(Protocol):
    """A locked, writable view of the state for one command."""

    state: State
    lock_info: LockInfo

    def record(self, record: ResourceRecord) -> None: ...
    def forget(self, address: str) -> None: ...
    def replace(self, state: State) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> StateSession: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class StateBackend(Protocol):
    """Read, lock and write one environment's state."""

    def read(self) -> State: ...
    def open(self, operation: str, *, lock_timeout: float = 0.0) -> StateSession: ...
    def force_unlock(self, lock_id: str, *, force: bool = False) -> LockInfo: ...


class LocalBackend:
    """The state as files in a folder: ``state.json``, ``journal.jsonl`` and the lock."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.state_path = directory / STATE_FILE
        self.journal_path = directory / JOURNAL_FILE
        self.lock_path = directory / LOCK_FILE

    def read(self) -> State:
        """The state with the journal of an interrupted run applied, without writing anything.

        The serial is the one the state will have once that journal is folded in, so a plan
        made now is still current after the fold.
        """
        state = read_state(self.state_path) or State(lineage="", serial=0)
        if _apply_journal(state, self.journal_path):
            state.serial += 1
        return state

    def open(self, operation: str, *, lock_timeout: float = 0.0) -> LocalSession:
        """Lock the state for ``operation`` and fold any journal a crash left behind."""
        self.directory.mkdir(parents=True, exist_ok=True)
        lock = StateLock(self.lock_path, operation)
        info = lock.acquire(lock_timeout)
        try:
            state = read_state(self.state_path) or State(lineage="", serial=0)
            if _apply_journal(state, self.journal_path):
                state.serial += 1
                write_state(self.state_path, state)
                _clear(self.journal_path)
        except BaseException:
            lock.release()
            raise
        return LocalSession(self, state, lock, info)

    def force_unlock(self, lock_id: str, *, force: bool = False) -> LockInfo:
        """Break the lock ``lock_id`` (``force`` is for backends that can see a live holder)."""
        return force_unlock(self.lock_path, lock_id)


class LocalSession:
    """Records go to the journal at once; the state file is rewritten once, at close."""

    def __init__(self, backend: LocalBackend, state: State, lock: StateLock, info: LockInfo):
        self.backend = backend
        self.state = state
        self.lock_info = info
        self._lock = lock
        self._journal = JournalWriter(backend.journal_path)
        self._mutex = threading.Lock()
        self._changed = False

    def record(self, record: ResourceRecord) -> None:
        """Durably record ``record`` (journal line fsynced) before returning."""
        self._append(record.address, record)

    def forget(self, address: str) -> None:
        """Durably forget ``address``."""
        self._append(address, None)

    def _append(self, address: str, record: ResourceRecord | None) -> None:
        # The line is written and the memory updated in one order under the mutex; the wait
        # for the disk is outside it, so workers that record at the same time share an fsync.
        with self._mutex:
            if not self.state.lineage:
                self.state.lineage = str(uuid.uuid4())
            sequence = self._journal.write(JournalEntry(self.state.lineage, address, record))
            self.state.apply(address, record)
            self._changed = True
        self._journal.sync(sequence)

    def replace(self, state: State) -> None:
        """Replace the whole state file by ``state`` (lineage, serial and every record)."""
        with self._mutex:
            self._journal.close()
            write_state(self.backend.state_path, state)
            _clear(self.backend.journal_path)
            self.state = state
            self._changed = False

    def close(self) -> None:
        """Fold the journal into the state file (serial + 1) and release the lock."""
        try:
            self._journal.close()
            if self._changed:
                self.state.serial += 1
                write_state(self.backend.state_path, self.state)
                _clear(self.backend.journal_path)
                self._changed = False
        finally:
            self._lock.release()

    def __enter__(self) -> LocalSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _apply_journal(state: State, journal_path: Path) -> bool:
    applied = False
    for entry in read_journal(journal_path):
        if not state.lineage:
            state.lineage = entry.lineage
        elif entry.lineage != state.lineage:
            raise StateError(
                f"{journal_path}: the journal belongs to another state (lineage {entry.lineage}, "
                f"the state's is {state.lineage})",
                hint="the state file was replaced while a run's journal was pending; restore "
                "the matching state, or move the journal aside after checking it",
            )
        state.apply(entry.address, entry.record)
        applied = True
    return applied


def _clear(journal_path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(journal_path)
    fsync_dir(journal_path.parent)
