"""The history's hash chain, and its local files: a changed, removed or reordered entry is
found and named; files rotate by size with the chain running on; a half-written last line
is cut; files are 0600."""

from __future__ import annotations

import contextlib
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from customs_batch.errors import StateError
from customs_batch.state import history as history_module
from customs_batch.state.history import (
    GENESIS,
    LocalHistory,
    StoredEntry,
    entry_hash,
    last_ids,
    verify,
)
from customs_batch.userfiles import open_user_file


def _write(history: LocalHistory, count: int, start: int = 0) -> None:
    for number in range(start, start + count):
        history.append({"event": "request", "address": f"Movement/m{number}"})
    history.sync()


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def _entries(lines: list[bytes]) -> list[StoredEntry]:
    return [StoredEntry(f"line {n}", line) for n, line in enumerate(lines, start=1)]


@pytest.fixture
def history(tmp_path: Path) -> LocalHistory:
    return LocalHistory(tmp_path)


def test_an_unbroken_chain_verifies_and_each_entry_holds_the_hash_of_the_one_before(
    history: LocalHistory,
) -> None:
    _write(history, 4)
    history.close()
    bodies = [json.loads(line) for line in _lines(history.path)]
    assert [b["seq"] for b in bodies] == [1, 2, 3, 4]
    assert bodies[0]["prev"] == GENESIS
    assert [b["prev"] for b in bodies[1:]] == [b["hash"] for b in bodies[:-1]]
    assert all(entry_hash(b) == b["hash"] for b in bodies)
    result = verify(history.entries())
    assert result.ok and result.entries == 4 and result.last_hash == bodies[-1]["hash"]


def test_a_changed_entry_is_named(history: LocalHistory) -> None:
    _write(history, 4)
    lines = _lines(history.path)
    lines[2] = lines[2].replace(b"Movement/m2", b"Movement/mX")
    result = verify(_entries(lines))
    assert not result.ok and result.broken_at == "line 3" and "changed" in result.reason
    assert result.entries == 2


def test_a_changed_and_rehashed_entry_breaks_the_link_to_the_next(history: LocalHistory) -> None:
    _write(history, 4)
    lines = _lines(history.path)
    body = json.loads(lines[1])
    body["address"] = "Movement/forged"
    body["hash"] = entry_hash(body)
    lines[1] = json.dumps(body).encode()
    result = verify(_entries(lines))
    assert result.broken_at == "line 3" and "does not follow" in result.reason


def test_a_removed_entry_is_found_where_the_chain_breaks(history: LocalHistory) -> None:
    _write(history, 4)
    lines = _lines(history.path)
    assert verify(_entries(lines[:1] + lines[2:])).broken_at == "line 2"
    first_gone = verify(_entries(lines[1:]))
    assert first_gone.broken_at == "line 1" and "does not start here" in first_gone.reason


def test_reordered_entries_are_found(history: LocalHistory) -> None:
    _write(history, 4)
    lines = _lines(history.path)
    lines[1], lines[2] = lines[2], lines[1]
    result = verify(_entries(lines))
    assert result.broken_at == "line 2" and "does not follow" in result.reason


def test_a_line_that_is_not_an_entry_is_named(history: LocalHistory) -> None:
    _write(history, 2)
    result = verify(_entries([*_lines(history.path), b"not json"]))
    assert result.broken_at == "line 3" and "not a history entry" in result.reason


def test_files_rotate_by_size_and_the_chain_runs_on_across_them(tmp_path: Path) -> None:
    history = LocalHistory(tmp_path, rotate_bytes=1000)
    _write(history, 20)
    history.close()
    files = history.files()
    assert len(files) > 2
    assert [f.name for f in files[:2]] == ["history.000001.jsonl", "history.000002.jsonl"]
    assert files[-1].name == "history.jsonl"
    assert all(f.stat().st_size <= 1000 for f in files)
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    result = verify(history.entries())
    assert result.ok and result.entries == 20
    # A new writer (the next run) chains on from the last entry of the newest file.
    again = LocalHistory(tmp_path, rotate_bytes=1000)
    _write(again, 3, start=20)
    again.close()
    assert verify(again.entries()).entries == 23
    broken = verify(e for e in again.entries() if not e.where.startswith("history.000002"))
    assert broken.broken_at is not None and broken.broken_at.startswith("history.000003")


def test_after_rotation_leaves_an_empty_current_file_the_next_run_chains_on(
    tmp_path: Path,
) -> None:
    history = LocalHistory(tmp_path, rotate_bytes=1000)
    _write(history, 6)
    history.close()
    (tmp_path / "history.jsonl").rename(tmp_path / "history.000099.jsonl")
    (tmp_path / "history.jsonl").touch()
    again = LocalHistory(tmp_path, rotate_bytes=1000)
    _write(again, 1, start=6)
    again.close()
    assert verify(again.entries()).ok


def test_a_half_written_last_line_is_cut_and_the_chain_goes_on(history: LocalHistory) -> None:
    _write(history, 3)
    history.close()
    with history.path.open("ab") as file:
        file.write(b'{"address":"Movement/cut')  # a crash in the middle of an append
    assert verify(history.entries()).entries == 3  # never acknowledged: not an entry
    again = LocalHistory(history.directory)
    _write(again, 1, start=3)
    again.close()
    result = verify(again.entries())
    assert result.ok and result.entries == 4
    assert b"Movement/cut" not in history.path.read_bytes()


def test_a_damaged_last_entry_is_refused_rather_than_chained_to(history: LocalHistory) -> None:
    _write(history, 2)
    history.close()
    with history.path.open("ab") as file:
        file.write(b"garbage\n")
    with pytest.raises(StateError, match="last entry of the history is damaged"):
        LocalHistory(history.directory).append({"event": "request"})


def test_a_long_last_line_is_read_once_and_one_past_the_bound_is_damage(
    history: LocalHistory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found by an outside probe: a 50 MB line at the end of history.jsonl made every plan
    # take 111 s (the end was read again, and split again, for each 64 KB before it).
    _write(history, 2)
    history.close()
    entry = {"event": "request", "address": "Movement/long", "note": "x" * 300_000}
    with history.path.open("ab") as file:
        file.write(json.dumps(entry).encode() + b"\n")
    assert (history.last_entry() or {}).get("address") == "Movement/long"
    monkeypatch.setattr("customs_batch.state.history.LONGEST_ENTRY", 100_000)
    with pytest.raises(StateError, match=r"longer than .* the file is damaged"):
        history.last_entry()


def test_last_ids_are_those_of_the_newest_answer_that_gave_the_address_its_object(
    history: LocalHistory,
) -> None:
    """What ``import`` asks to tell a template group the address stood for (its record
    removed for good by ``state rm --gone``) from another one at a mistyped ID."""
    group = "TemplateGroup/plain"
    answer = {"event": "answer", "address": group, "lineage": "abcdefgh"}
    history.append({**answer, "status": 201, "ids": {"id": 3}})
    history.append({**answer, "status": 200, "ids": {"id": 4}})
    history.append({**answer, "status": 409, "ids": {"id": 9}})  # refused: no object of it
    history.append({**answer, "status": 200, "ids": {"id": 8}, "address": "TemplateGroup/x"})
    history.append({**answer, "status": 200, "ids": {"id": 7}, "lineage": "another0"})
    history.sync()
    assert last_ids(history, group, "abcdefgh-1234") == frozenset({"4"})
    assert last_ids(history, "TemplateGroup/plai", "abcdefgh-1234") == frozenset()
    # A state begun anew: what an earlier state's runs sent says nothing of this one's.
    assert last_ids(history, group, "another0-5678") == frozenset({"7"})
    # Entries written before they named a lineage count; a rename carries the record.
    history.append(
        {"event": "moved", "address": group, "movedFrom": "TemplateGroup/old", "ids": {"id": 5}}
    )
    history.sync()
    assert last_ids(history, group, "abcdefgh-1234") == frozenset({"5"})
    # Its record moved to another name: the address no longer stood for it.
    history.append(
        {"event": "moved", "address": "TemplateGroup/new", "movedFrom": group, "ids": {"id": 5}}
    )
    history.sync()
    assert last_ids(history, group, "abcdefgh-1234") == frozenset()
    assert last_ids(history, "TemplateGroup/new", "abcdefgh-1234") == frozenset({"5"})


@pytest.mark.parametrize("block", [1, 2, 5, 1 << 20])
@pytest.mark.parametrize("streak", [1, 2, 64])
def test_blank_lines_keep_every_entry_and_its_line_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int, streak: int
) -> None:
    monkeypatch.setattr(history_module, "_BLANK_BLOCK", block)
    monkeypatch.setattr(history_module, "_BLANK_STREAK", streak)
    path = tmp_path / "h.jsonl"
    path.write_bytes(b'\n\r\n  \n{"seq": 1}\r\n\n\n \t\r\n{"seq": 2}\n  \n\n   {"seq": 3}')
    read = [(stored.where, stored.text) for stored in history_module.read_history_file(path)]
    assert read == [
        ("h.jsonl line 4", b'{"seq": 1}'),
        ("h.jsonl line 8", b'{"seq": 2}'),
        ("h.jsonl line 11", b'   {"seq": 3}'),
    ]


def test_blank_lines_are_not_read_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A history file of 100 MB of blank lines took 12 s to read (twice for a push):
    one readline each. The lines read one by one are counted."""
    calls = 0
    opened = open_user_file

    class Counting:
        def __init__(self, file: Any) -> None:
            self._file = file

        def readline(self, size: int = -1) -> bytes:
            nonlocal calls
            calls += 1
            line: bytes = self._file.readline(size)
            return line

        def __getattr__(self, name: str) -> Any:
            return getattr(self._file, name)

    @contextlib.contextmanager
    def counting(*args: Any, **kwargs: Any) -> Iterator[Any]:
        with opened(*args, **kwargs) as file:
            yield Counting(file)

    monkeypatch.setattr(history_module, "open_user_file", counting)
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"\n" * 100_000 + b'{"seq": 1}\n' + b"\r\n" * 100_000)
    read = [(stored.where, stored.text) for stored in history_module.read_history_file(path)]
    assert read == [("h.jsonl line 100001", b'{"seq": 1}')]
    assert calls < 3 * history_module._BLANK_STREAK  # not 200,000


def test_a_run_of_blank_lines_in_the_history_is_one_broken_entry(history: LocalHistory) -> None:
    """``history`` over 100 MB of blank lines took 7 minutes and 1.7 GB: one entry, and a
    list item, per line. A run of blank lines is one entry now, named by its first line,
    which ``history verify`` reports as before; the entries after it keep their lines."""
    _write(history, 2)
    history.close()
    first, second = _lines(history.path)
    history.path.write_bytes(first + b"\n\n \r\n\t\n" + b"\n" * 100_000 + second + b"\n")
    stored = list(history.entries())
    assert [(s.where, s.text) for s in stored] == [
        ("history.jsonl line 1", first),
        ("history.jsonl line 2", b""),
        ("history.jsonl line 100005", second),
    ]
    result = verify(history.entries())
    assert result.broken_at == "history.jsonl line 2" and result.entries == 1
