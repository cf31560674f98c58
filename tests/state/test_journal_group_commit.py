"""Group commit: workers that record at once share an fsync, and none returns before it."""

from __future__ import annotations

import functools
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from customs_batch.errors import StateError
from customs_batch.state.journal import JournalEntry, JournalWriter, read_journal
from customs_batch.state.model import RecordStatus, ResourceRecord

WORKERS = 4


def _entry(address: str) -> JournalEntry:
    record = ResourceRecord(address, RecordStatus.PENDING, "create", {"a": 1}, idempotency_key="k")
    return JournalEntry("lin", address, record)


class GatedDisk:
    """An fsync of the journal that records how many bytes of the file each one made
    durable, and that a test can hold: each fsync waits for its own gate to open."""

    def __init__(self) -> None:
        self.durable: list[int] = []
        self.started: list[threading.Event] = [threading.Event() for _ in range(WORKERS)]
        self.gates: list[threading.Event] = [threading.Event() for _ in range(WORKERS)]
        self._lock = threading.Lock()
        self._count = 0

    def fsync(self, fd: int) -> None:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            return  # the folder's fsync when the journal is created
        with self._lock:
            number = self._count
            self._count += 1
        self.started[number].set()
        assert self.gates[number].wait(timeout=20)
        with self._lock:
            self.durable.append(status.st_size)

    @property
    def calls(self) -> int:
        with self._lock:
            return self._count


def _started_journal(tmp_path: Path) -> Path:
    """A journal that already holds a line, so the fsyncs a test counts are its own lines'
    (a journal's first line is written when it is created, with a synced rename)."""
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path) as writer:
        writer.append(_entry("Movement/earlier"))
    return path


def _run(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target)
    thread.start()
    return thread


def test_lines_written_before_an_fsync_share_it_and_none_returns_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _started_journal(tmp_path)
    writer = JournalWriter(path)
    disk = GatedDisk()
    monkeypatch.setattr(os, "fsync", disk.fsync)
    all_written = threading.Barrier(WORKERS)
    returned: dict[str, int] = {}

    def worker(number: int) -> None:
        address = f"Movement/m{number}"
        sequence = writer.write(_entry(address))
        all_written.wait(timeout=20)  # every line is written before anyone syncs
        writer.sync(sequence)
        returned[address] = disk.calls

    threads = [_run(functools.partial(worker, n)) for n in range(WORKERS)]
    assert disk.started[0].wait(timeout=20)
    assert returned == {}  # the first fsync is held: nobody has returned
    disk.gates[0].set()
    for thread in threads:
        thread.join(timeout=20)
    writer.close()

    assert sorted(returned) == [f"Movement/m{n}" for n in range(WORKERS)]
    # One fsync made every line durable, and every sync returned after it.
    assert disk.durable == [path.stat().st_size]
    assert set(returned.values()) == {1}


def test_a_line_written_during_an_fsync_gets_its_own_at_once_instead_of_queueing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _started_journal(tmp_path)
    writer = JournalWriter(path)
    disk = GatedDisk()
    monkeypatch.setattr(os, "fsync", disk.fsync)
    done: list[str] = []

    def append(name: str) -> None:
        writer.append(_entry(f"Movement/{name}"))
        done.append(name)

    first = _run(lambda: append("a"))
    assert disk.started[0].wait(timeout=20)  # the first fsync is under way, and held
    second = _run(lambda: append("b"))
    # The second line's fsync starts while the first is still held: it does not queue.
    assert disk.started[1].wait(timeout=20)
    assert done == []
    disk.gates[1].set()
    second.join(timeout=20)
    # The second fsync began after both lines were written: it made both durable.
    assert done == ["b"] and disk.durable == [path.stat().st_size]
    assert first.is_alive()  # the first append still waits for its own fsync
    disk.gates[0].set()
    first.join(timeout=20)
    assert done == ["b", "a"]
    writer.close()
    assert [e.address for e in read_journal(path)] == [
        "Movement/earlier",
        "Movement/a",
        "Movement/b",
    ]


def test_a_callback_runs_only_once_what_was_written_before_it_is_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _started_journal(tmp_path)
    writer = JournalWriter(path)
    disk = GatedDisk()
    monkeypatch.setattr(os, "fsync", disk.fsync)
    reported: list[int] = []

    writer.write(_entry("Movement/a"))  # an outcome, not waited for
    writer.when_durable(lambda: reported.append(os.stat(path).st_size))
    assert reported == []  # its line is not on disk yet
    syncing = _run(lambda: writer.append(_entry("Movement/b")))  # the next intent
    assert disk.started[0].wait(timeout=20)
    assert reported == []
    disk.gates[0].set()
    syncing.join(timeout=20)
    # The next line's fsync covered the first: the callback ran, after that fsync.
    assert len(reported) == 1 and disk.durable == [path.stat().st_size]
    writer.when_durable(lambda: reported.append(-1))  # nothing pending: runs at once
    assert reported[-1] == -1
    writer.close()


def test_close_makes_what_was_written_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "journal.jsonl"
    durable: list[int] = []

    def fsync(fd: int) -> None:
        status = os.fstat(fd)
        if stat.S_ISREG(status.st_mode):
            durable.append(status.st_size)

    monkeypatch.setattr(os, "fsync", fsync)
    writer = JournalWriter(path)
    writer.write(_entry("Movement/a"))
    writer.close()
    assert [e.address for e in read_journal(path)] == ["Movement/a"]
    assert max(durable) == path.stat().st_size
    with writer:  # a closed writer can be used again
        writer.append(_entry("Movement/b"))
    assert [e.address for e in read_journal(path)] == ["Movement/a", "Movement/b"]


def test_a_failing_disk_fails_the_append_instead_of_hanging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(fd: int) -> None:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken)
    writer = JournalWriter(tmp_path / "journal.jsonl")
    with pytest.raises(
        StateError, match=r"journal.jsonl: cannot write( the journal)? \(Input/output error, EIO\)"
    ):
        writer.append(_entry("Movement/a"))
    with pytest.raises(StateError):
        writer.append(_entry("Movement/b"))
    with pytest.raises(StateError):
        writer.close()


@pytest.mark.parametrize("left", [None, b"", b'{"torn'])
def test_a_crash_before_the_first_line_is_whole_never_leaves_an_empty_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, left: bytes | None
) -> None:
    """An empty journal is the sign that a state existed (its file was deleted since): a
    journal created, or cut back to no line, by a run killed before its first line was
    whole must not look like one."""
    path = tmp_path / "journal.jsonl"
    if left is not None:
        path.write_bytes(left)

    def killed(fd: int, data: bytes) -> int:
        raise SystemExit("killed")  # the first byte never reaches the journal

    monkeypatch.setattr("customs_batch.state.journal.write_all", killed)
    with pytest.raises(SystemExit):
        JournalWriter(path).append(_entry("Movement/a"))
    assert path.exists() == (left is not None)
    if left is not None:
        assert path.read_bytes() == left  # as it was: neither emptied nor half-new
    monkeypatch.undo()
    with JournalWriter(path) as writer:
        writer.append(_entry("Movement/b"))
    assert [e.address for e in read_journal(path)] == ["Movement/b"]
