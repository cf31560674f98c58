"""The mark of a state folder: the newest state seen in it, kept outside it."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from customs_batch.load_cache import read_cache_file, write_cache_file
from customs_batch.state.marks import StateMarks
from customs_batch.state.model import RecordStatus, ResourceRecord, State


def _marks(tmp_path: Path) -> tuple[StateMarks, dict[str, bytes]]:
    files: dict[str, bytes] = {}
    marks = StateMarks(
        tmp_path / "state",
        read=files.get,
        write=files.__setitem__,
        now=lambda: datetime(2026, 11, 27, 7, 40, tzinfo=UTC),
    )
    return marks, files


def _state(lineage: str, serial: int, records: int) -> State:
    state = State(lineage=lineage, serial=serial)
    for number in range(records):
        address = f"Movement/m{number}"
        state.resources[address] = ResourceRecord(address, RecordStatus.APPLIED, "create", {})
    return state


def test_a_lower_serial_of_the_same_lineage_is_behind(tmp_path: Path) -> None:
    marks, _ = _marks(tmp_path)
    assert marks.behind(_state("L", 1, 1)) is None  # no mark yet
    marks.note(_state("L", 3, 2))
    mark = marks.behind(_state("L", 2, 1))
    assert mark is not None
    assert (mark.serial, mark.records, mark.at) == (3, 2, "2026-11-27 07:40 UTC")
    assert marks.behind(_state("L", 3, 2)) is None
    assert marks.behind(_state("L", 4, 2)) is None
    assert marks.behind(_state("other", 9, 1)) is not None  # another state where records were
    assert marks.behind(_state("", 0, 0)) is not None  # emptied where records were


def test_the_mark_moves_forward_only_unless_told(tmp_path: Path) -> None:
    marks, files = _marks(tmp_path)
    marks.note(_state("L", 3, 2))
    marks.note(_state("L", 2, 1))
    assert marks.behind(_state("L", 2, 1)) is not None
    marks.note(_state("L", 2, 1), exact=True)  # --allow-empty-state: taken as it is
    assert marks.behind(_state("L", 2, 1)) is None
    written = dict(files)
    marks.note(_state("L", 2, 1))
    assert files == written  # the same state: nothing written
    marks.note(_state("", 0, 0))
    assert files == written  # no lineage: no mark


def test_a_mark_without_records_does_not_refuse_an_empty_or_another_state(
    tmp_path: Path,
) -> None:
    marks, _ = _marks(tmp_path)
    marks.note(_state("L", 1, 0))
    assert marks.behind(_state("", 0, 0)) is None
    assert marks.behind(_state("other", 1, 3)) is None


@pytest.mark.parametrize("data", [b"", b"{", b'{"lineage": "L"}', b"[]", b'{"lineage": ""}'])
def test_an_unreadable_mark_is_none(tmp_path: Path, data: bytes) -> None:
    marks, files = _marks(tmp_path)
    files[marks.name] = data
    assert marks.mark() is None
    assert marks.behind(_state("L", 0, 0)) is None


def test_marks_of_two_folders_are_apart(tmp_path: Path) -> None:
    files: dict[str, bytes] = {}
    one = StateMarks(tmp_path / "a", read=files.get, write=files.__setitem__)
    two = StateMarks(tmp_path / "b", read=files.get, write=files.__setitem__)
    one.note(_state("L", 5, 1))
    assert two.behind(_state("M", 1, 1)) is None  # (the same lineage: see below)
    assert one.behind(_state("M", 1, 1)) is not None


def test_the_cache_folder_keeps_a_mark_private_and_never_waits_on_a_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("CUSTOMS_BATCH_CACHE_DIR", str(folder))
    assert read_cache_file(".state-x") is None
    write_cache_file(".state-x", b"mark")
    assert read_cache_file(".state-x") == b"mark"
    assert (folder / ".state-x").stat().st_mode & 0o777 == 0o600
    assert (folder / ".gitignore").is_file()  # the cache's folder, made as the cache makes it
    os.mkfifo(folder / ".state-y")
    assert read_cache_file(".state-y") is None
    (folder / ".state-z").write_bytes(b"x" * (64 * 1024 + 1))
    assert read_cache_file(".state-z") is None


def test_a_state_written_while_behind_stays_behind_until_taken_as_it_is(tmp_path: Path) -> None:
    # A refresh or state rm of an older copy writes it: its serial catches up, its content
    # does not.
    marks, _ = _marks(tmp_path)
    marks.note(_state("L", 3, 2))
    marks.note(_state("L", 3, 1), behind=True)
    assert marks.behind(_state("L", 3, 1)) is not None
    assert marks.behind(_state("L", 4, 1)) is not None
    marks.note(_state("L", 4, 1), exact=True)  # --allow-empty-state
    assert marks.behind(_state("L", 4, 1)) is None


def test_a_state_caught_up_by_import_or_adopt_must_hold_the_records_the_mark_saw(
    tmp_path: Path,
) -> None:
    # An older copy (serial 2, one record) behind the mark (serial 3, two records): one
    # `state adopt` raises its serial to 3 without the record it lacks; the next run would
    # have declared that record's document again.
    marks, _ = _marks(tmp_path)
    marks.note(_state("L", 3, 2))
    marks.note(_state("L", 3, 1), catching_up=True)
    assert marks.behind(_state("L", 3, 1)) is not None
    assert marks.behind(_state("L", 5, 1)) is not None  # another adopt: still short
    marks.note(_state("L", 4, 2), catching_up=True)  # the missing record imported
    assert marks.behind(_state("L", 4, 2)) is None
    mark = marks.mark()
    assert mark is not None and (mark.serial, mark.records, mark.short) == (4, 2, False)


def test_another_state_where_records_were_is_taken_only_as_it_is(tmp_path: Path) -> None:
    # An emptied folder, then one import: a new lineage, which the mark does not follow.
    marks, _ = _marks(tmp_path)
    marks.note(_state("L", 3, 2))
    marks.note(_state("M", 1, 1))
    assert marks.behind(_state("M", 1, 1)) is not None
    marks.note(_state("M", 1, 1), exact=True)
    assert marks.behind(_state("M", 1, 1)) is None


def test_a_folder_of_another_service_has_a_mark_of_its_own(tmp_path: Path) -> None:
    files: dict[str, bytes] = {}
    one = StateMarks(tmp_path, read=files.get, write=files.__setitem__, service="http://a")
    other = StateMarks(tmp_path, read=files.get, write=files.__setitem__, service="http://b")
    one.note(_state("L", 5, 1))
    assert other.behind(_state("", 0, 0)) is None


def test_a_lower_serial_seen_in_another_folder_is_behind(tmp_path: Path) -> None:
    # An older copy put back at another path (a restore into a new folder, a CI workspace of
    # another name): the folder's own mark is not found there, its lineage's newest is.
    files: dict[str, bytes] = {}
    newest = StateMarks(tmp_path / "a", read=files.get, write=files.__setitem__)
    older = StateMarks(tmp_path / "b", read=files.get, write=files.__setitem__)
    newest.note(_state("L", 3, 2))
    assert older.mark() is None
    mark = older.behind(_state("L", 2, 1))
    assert mark is not None
    assert (mark.serial, mark.records, mark.folder) == (3, 2, str(tmp_path / "a"))
    assert older.behind(_state("L", 3, 2)) is None  # the same state, copied: not behind
    assert older.behind(_state("other", 1, 1)) is None  # another state: its own newest
    older.note(_state("L", 4, 2))  # moved forward here: the newest is here now
    assert newest.behind(_state("L", 3, 2)) is not None
    assert newest.behind(_state("L", 4, 2)) is None


def test_an_older_copy_elsewhere_is_taken_only_as_it_is(tmp_path: Path) -> None:
    files: dict[str, bytes] = {}
    newest = StateMarks(tmp_path / "a", read=files.get, write=files.__setitem__)
    older = StateMarks(tmp_path / "b", read=files.get, write=files.__setitem__)
    newest.note(_state("L", 9, 4))
    # Mended while behind (a refresh, a state rm): its serial passes the newest's, and it is
    # still the older copy; the newest is not refused for it.
    older.note(_state("L", 6, 2), behind=True)
    older.note(_state("L", 12, 2), behind=True)
    assert older.behind(_state("L", 12, 2)) is not None
    assert newest.behind(_state("L", 9, 4)) is None
    older.note(_state("L", 12, 2), exact=True)  # --allow-empty-state: taken as it is
    assert older.behind(_state("L", 12, 2)) is None
    assert newest.behind(_state("L", 9, 4)) is not None  # behind the state taken


def test_an_older_copy_elsewhere_caught_up_by_import_must_hold_the_records(
    tmp_path: Path,
) -> None:
    files: dict[str, bytes] = {}
    newest = StateMarks(tmp_path / "a", read=files.get, write=files.__setitem__)
    older = StateMarks(tmp_path / "b", read=files.get, write=files.__setitem__)
    newest.note(_state("L", 3, 3))
    assert older.behind(_state("L", 1, 1)) is not None
    older.note(_state("L", 2, 1), catching_up=True)  # an import into the older copy
    mark = older.behind(_state("L", 3, 1))  # serial caught up, records not
    assert mark is not None and mark.short and mark.folder == str(tmp_path / "a")
    assert older.behind(_state("L", 4, 3)) is None


def test_the_newest_copy_put_back_after_an_older_one_was_written_is_taken(tmp_path: Path) -> None:
    # A refresh of an older copy raised its serial to the newest's: the refusal's hint says
    # to put the newest copy back, and that copy (or a later one of the lineage) is taken
    # again, while the copy written while behind stays refused whatever its serial.
    files: dict[str, bytes] = {}
    on_disk = {"digest": "newest"}
    marks = StateMarks(
        tmp_path / "state",
        read=files.get,
        write=files.__setitem__,
        fingerprint=lambda: on_disk["digest"],
    )
    marks.note(_state("L", 3, 2))
    on_disk["digest"] = "older"
    assert marks.behind(_state("L", 2, 1)) is not None
    on_disk["digest"] = "older, refreshed"
    marks.note(_state("L", 3, 1), behind=True)
    assert marks.behind(_state("L", 3, 1)) is not None
    on_disk["digest"] = "newest"
    assert marks.behind(_state("L", 3, 2)) is None
    on_disk["digest"] = "later, from CI"
    assert marks.behind(_state("L", 5, 4)) is None
    on_disk["digest"] = "newest"
    marks.note(_state("L", 3, 2))
    mark = marks.mark()
    assert mark is not None and not mark.diverged
    on_disk["digest"] = "older, refreshed"
    assert marks.behind(_state("L", 3, 1)) is not None  # put back once more: still refused
