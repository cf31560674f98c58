"""Group commit: workers that record at once share an fsync, and none returns before it."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from customs_batch.errors import StateError
from customs_batch.state.journal import JournalEntry, JournalWriter, read_journal
from customs_batch.state.model import RecordStatus, ResourceRecord

WORKERS = 4


def _entry(address: str) -> JournalEntry:
    record = ResourceRecord(address, RecordStatus.PENDING, "create", {"a": 1}, idempotency_key="k")
    return JournalEntry("lin", address, record)


class SlowDisk:
    """An fsync of the journal that records how many bytes it made durable. The first one
    lasts until every worker has written its line, as on a slow disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.durable: list[int] = []

    def fsync(self, fd: int) -> None:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            return  # the folder's fsync when the journal is created
        if not self.durable:
            deadline = time.monotonic() + 10
            while self._lines() < WORKERS and time.monotonic() < deadline:
                time.sleep(0.001)
        self.durable.append(status.st_size)

    def _lines(self) -> int:
        return self.path.read_bytes().count(b"\n")


def test_concurrent_appends_share_fsyncs_and_each_returns_only_once_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "journal.jsonl"
    writer = JournalWriter(path)
    disk = SlowDisk(path)
    monkeypatch.setattr(os, "fsync", disk.fsync)
    durable_at_return: dict[str, int] = {}

    def worker(number: int) -> None:
        address = f"Movement/m{number}"
        writer.append(_entry(address))
        durable_at_return[address] = max(disk.durable)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    writer.close()

    entries = [e.address for e in read_journal(path)]
    assert sorted(entries) == [f"Movement/m{n}" for n in range(WORKERS)]
    # The first fsync covers what was written before it began (at least one line); the
    # lines written while it ran share the second. One fsync per line would make four.
    assert len(disk.durable) <= 2
    assert all(durable_at_return[a] >= _end_of_line(path, a) for a in entries)


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
    with pytest.raises(StateError, match=r"cannot write the journal \(Input/output error, EIO\)"):
        writer.append(_entry("Movement/a"))
    with pytest.raises(StateError):
        writer.append(_entry("Movement/b"))
    with pytest.raises(StateError):
        writer.close()


def _end_of_line(path: Path, address: str) -> int:
    data = path.read_bytes()
    start = data.index(f'"address": "{address}"'.encode())
    return data.index(b"\n", start) + 1
