from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.errors import StateError
from customs_batch.state.journal import JournalEntry, JournalWriter, read_journal
from customs_batch.state.model import RecordStatus, ResourceRecord


def _entry(address: str) -> JournalEntry:
    record = ResourceRecord(address, RecordStatus.PENDING, "create", {"a": 1}, idempotency_key="k")
    return JournalEntry("lin", address, record)


def test_entries_read_back_in_order(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path) as journal:
        journal.append(_entry("Movement/a"))
        journal.append(JournalEntry("lin", "Movement/a", None))
        journal.append(_entry("Movement/b"))
    entries = list(read_journal(path))
    assert [(e.address, e.record is None) for e in entries] == [
        ("Movement/a", False),
        ("Movement/a", True),
        ("Movement/b", False),
    ]
    assert entries[2].record is not None and entries[2].record.idempotency_key == "k"


def test_a_half_written_last_line_is_dropped_and_cut_before_the_next_append(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path) as journal:
        journal.append(_entry("Movement/a"))
    with open(path, "ab") as handle:
        handle.write(b'{"lineage": "lin", "address": "Movem')  # a crash mid-append
    assert [e.address for e in read_journal(path)] == ["Movement/a"]
    with JournalWriter(path) as journal:
        journal.append(_entry("Movement/c"))
    assert [e.address for e in read_journal(path)] == ["Movement/a", "Movement/c"]


def test_a_damaged_line_in_the_middle_is_an_error_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_bytes(
        _entry("Movement/a").to_line() + b"not json\n" + _entry("Movement/b").to_line()
    )
    with pytest.raises(StateError, match=r"journal.jsonl:2: the journal is damaged"):
        list(read_journal(path))


def test_garbage_after_the_last_good_line_is_a_torn_tail_and_dropped(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_bytes(_entry("Movement/a").to_line() + b'\x00\x00\x00\n{"lineage": \n')
    assert [e.address for e in read_journal(path)] == ["Movement/a"]
