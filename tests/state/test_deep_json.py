"""JSON nested deeper than the parser's stack, in a file customs-batch keeps or is given
(the state, a record of it, the journal, the history, a plan, `state push`'s file), is the
error of a damaged file naming it, as any malformed JSON is: never a RecursionError, which
the command line showed as an "internal error" asking for a bug report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from customs_batch.errors import StateError
from customs_batch.jsontypes import TOO_DEEP, loads
from customs_batch.planning.planfile import PlanFileError, read_plan
from customs_batch.state.file import loads as load_state
from customs_batch.state.history import StoredEntry, last_body
from customs_batch.state.journal import JournalEntry, JournalWriter, read_journal
from customs_batch.state.model import RecordStatus, ResourceRecord
from customs_batch.state.records import Records
from customs_batch.state.transfer import read_pushed

DEPTH = 100_000
DEEP_ARRAY = b"[" * DEPTH + b"]" * DEPTH
DEEP_OBJECT = b'{"a":' * DEPTH + b"1" + b"}" * DEPTH


def test_json_too_deep_for_the_parser_is_a_value_error() -> None:
    with pytest.raises(RecursionError):
        json.loads(DEEP_ARRAY)  # what each reader met
    for text in (DEEP_ARRAY, DEEP_OBJECT, DEEP_ARRAY.decode()):
        with pytest.raises(ValueError, match=TOO_DEEP):
            loads(text)
    assert loads(b'{"a": [1]}') == {"a": [1]}


def test_a_state_file_nested_too_deeply_is_a_damaged_state_naming_it() -> None:
    with pytest.raises(StateError, match=r"state\.json: the state file is corrupt .*too deeply"):
        load_state(DEEP_ARRAY, source=Path("state.json"))


def test_a_pushed_file_nested_too_deeply_is_refused_naming_it() -> None:
    with pytest.raises(StateError, match=r"deep\.json: .*nested too deeply"):
        read_pushed(DEEP_ARRAY, source=Path("deep.json"))


def test_a_record_nested_too_deeply_is_a_corrupt_record_naming_it() -> None:
    entry = b'"Movement/a": {"status": "applied", "operation": "c", "spec": ' + DEEP_ARRAY + b"}"
    records = Records.from_entries({"Movement/a": entry}, Path("state.json"))
    with pytest.raises(StateError, match=r"state\.json: the record of Movement/a is corrupt"):
        records.peek("Movement/a")


def test_a_journal_line_nested_too_deeply_is_a_damaged_line(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    record = ResourceRecord("Movement/a", RecordStatus.PENDING, "create", {"a": 1})
    with JournalWriter(path) as journal:
        journal.append(JournalEntry("lin", "Movement/a", record))
    good = path.read_bytes()
    path.write_bytes(good + DEEP_OBJECT + b"\n" + good)
    with pytest.raises(StateError, match=r"journal\.jsonl:2: the journal is damaged"):
        list(read_journal(path))


def test_a_history_entry_nested_too_deeply_is_not_an_entry() -> None:
    assert StoredEntry("history.jsonl line 3", DEEP_ARRAY).body() is None
    with pytest.raises(StateError, match="the last entry of the history is damaged"):
        last_body(DEEP_ARRAY)


def test_a_plan_file_nested_too_deeply_is_not_a_readable_plan(tmp_path: Path) -> None:
    path = tmp_path / "deep.plan"
    path.write_bytes(DEEP_ARRAY)
    with pytest.raises(PlanFileError, match=r"deep\.plan: not a readable plan file"):
        read_plan(path, environment="local")
