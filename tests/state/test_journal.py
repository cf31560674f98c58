from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

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


def _record_with(spec: Mapping[str, object], **changes: object) -> ResourceRecord:
    record = ResourceRecord("Movement/a", RecordStatus.APPLIED, "create", spec)
    return record.with_changes(**changes)


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(
            _record_with(
                {"goods": "Café crème ✓", "weight": 10.5, "lines": [{"n": 1}, {"n": None}]},
                outputs={"declarationId": 7, "mrn": "24NL"},
                remote_errors=({"code": "E1"},),
                superseded=({"outputs": {"declarationId": 6}},),
                idempotency_key="k",
            ),
            id="text beyond ASCII, floats, nulls, nested lists, tuples",
        ),
        pytest.param(_record_with({"quantity": 10**30}), id="an integer beyond 64 bits"),
        pytest.param(_record_with({"quantity": float("inf")}), id="infinity"),
    ],
)
def test_a_record_reads_back_from_its_line_as_it_was_recorded(
    tmp_path: Path, record: ResourceRecord
) -> None:
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path) as journal:
        journal.append(JournalEntry("lin", record.address, record))
    [entry] = read_journal(path)
    assert entry.record == record


def test_a_nan_in_a_spec_reads_back_as_nan_not_as_null(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with JournalWriter(path) as journal:
        journal.append(JournalEntry("lin", "Movement/a", _record_with({"weight": float("nan")})))
    [entry] = read_journal(path)
    assert entry.record is not None
    weight = entry.record.spec["weight"]
    assert isinstance(weight, float) and math.isnan(weight)


def test_a_read_only_spec_is_recorded(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    spec = MappingProxyType({"shipmentId": "shp_1", "nested": MappingProxyType({"a": 1})})
    with JournalWriter(path) as journal:
        journal.append(JournalEntry("lin", "Movement/a", _record_with(spec)))
    [entry] = read_journal(path)
    assert entry.record is not None
    assert entry.record.spec == {"shipmentId": "shp_1", "nested": {"a": 1}}


def test_lines_written_by_earlier_versions_with_spaces_still_read(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_bytes(
        b'{"address": "Movement/a", "lineage": "lin", "record": {"idempotencyKey": "k", '
        b'"operation": "create", "outputs": {}, "spec": {"a": 1}, "status": "pending", '
        b'"updatedAt": ""}}\n' + _entry("Movement/b").to_line()
    )
    assert [(e.address, e.record) for e in read_journal(path)] == [
        ("Movement/a", _entry("Movement/a").record),
        ("Movement/b", _entry("Movement/b").record),
    ]


def test_each_line_carries_the_serial_of_the_state_it_was_written_on(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    record = _entry("Movement/a").record
    with JournalWriter(path) as journal:
        journal.append(JournalEntry("lin", "Movement/a", record, 0))
        journal.append(JournalEntry("lin", "Movement/b", None, 7))
    assert [e.serial for e in read_journal(path)] == [0, 7]
    assert b'"serial":7' in path.read_bytes()


@pytest.mark.parametrize("serial", [b'"7"', b"true", b"1.5"])
def test_a_serial_that_is_no_whole_number_is_damage(tmp_path: Path, serial: bytes) -> None:
    path = tmp_path / "journal.jsonl"
    line = (
        _entry("Movement/a")
        .to_line()
        .replace(b'{"address"', b'{"serial":' + serial + b',"address"')
    )
    path.write_bytes(line + _entry("Movement/b").to_line())
    with pytest.raises(StateError, match=r"journal.jsonl:1: the journal is damaged"):
        list(read_journal(path))


@pytest.mark.parametrize(
    ("address", "shown"), [(b"5", "5"), (b"null", "null"), (b'["x"]', '["x"]'), (b'""', '""')]
)
def test_an_address_that_is_no_text_is_damage(tmp_path: Path, address: bytes, shown: str) -> None:
    # Read as str(5), it became a record "5" of the state, which no document ever names.
    path = tmp_path / "journal.jsonl"
    line = (
        _entry("Movement/a").to_line().replace(b'"address":"Movement/a"', b'"address":' + address)
    )
    path.write_bytes(line + _entry("Movement/b").to_line())
    with pytest.raises(StateError) as caught:
        list(read_journal(path))
    assert caught.value.message.endswith(
        f"journal.jsonl:1: the journal is damaged (the address is {shown}, not Kind/name)"
    )


def test_blank_lines_are_passed_over_and_a_damaged_line_after_them_keeps_its_number(
    tmp_path: Path,
) -> None:
    """A journal of 100 million blank lines was split into a list of them (1.7 GB) before
    each was looked at: a run of them is now passed over at once, and every line keeps its
    number."""
    path = tmp_path / "journal.jsonl"
    path.write_bytes(
        _entry("Movement/a").to_line()
        + b"\n \r\n\t\n" * 50_000
        + _entry("Movement/b").to_line()
        + b"\n" * 10
    )
    assert [e.address for e in read_journal(path)] == ["Movement/a", "Movement/b"]
    path.write_bytes(
        _entry("Movement/a").to_line()
        + b"\n" * 100_000
        + b"not json\n"
        + _entry("Movement/b").to_line()
    )
    with pytest.raises(StateError, match=r"journal.jsonl:100002: the journal is damaged"):
        list(read_journal(path))


def test_the_lines_of_a_file_are_read_without_a_list_of_them() -> None:
    from customs_batch.state._lines import whole_lines

    data = b"a\n\n\n  \n\tb\n\r\n\nc\nunfinished"
    assert list(whole_lines(data)) == [(1, b"a"), (2, b""), (5, b"\tb"), (6, b"\r"), (8, b"c")]
