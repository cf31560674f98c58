from __future__ import annotations

import json
from pathlib import Path

import pytest

from customs_batch.errors import StateError
from customs_batch.state.file import STATE_VERSION, dumps, read_state, write_state
from customs_batch.state.model import RecordStatus, ResourceRecord, ServiceFailure, State


def _record(address: str, **changes: object) -> ResourceRecord:
    base = ResourceRecord(
        address=address,
        status=RecordStatus.APPLIED,
        operation="create",
        spec={"action": "VAH", "quantity": 3},
        outputs={"movementId": "mov_1"},
        idempotency_key="8c7f",
        updated_at="2026-11-21T10:00:00.000Z",
    )
    return base.with_changes(**changes)


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    state = State(lineage="lin-1", serial=4)
    state.apply("Movement/b", _record("Movement/b"))
    state.apply(
        "DepartureDeclaration/a",
        _record(
            "DepartureDeclaration/a",
            status=RecordStatus.FAILED,
            error=ServiceFailure(400, "totalWeight is wrong", {"statusCode": 400}),
            remote_status="invalid",
            remote_errors=({"code": "E1"},),
        ),
    )
    path = tmp_path / "state.json"
    write_state(path, state)
    again = read_state(path)
    assert again == state


def test_output_is_deterministic_and_sorted() -> None:
    one, two = State(lineage="l"), State(lineage="l")
    one.apply("Movement/b", _record("Movement/b"))
    one.apply("Movement/a", _record("Movement/a"))
    two.apply("Movement/a", _record("Movement/a"))
    two.apply("Movement/b", _record("Movement/b"))
    assert dumps(one) == dumps(two)
    text = dumps(one).decode()
    assert text.index("Movement/a") < text.index("Movement/b")
    assert text.endswith("}\n")
    assert json.loads(text)["version"] == STATE_VERSION


def test_previous_state_is_kept_as_backup(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    write_state(path, State(lineage="l", serial=1))
    write_state(path, State(lineage="l", serial=2))
    backup = read_state(tmp_path / "state.json.backup")
    assert backup is not None and backup.serial == 1


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (
            b'{"version": 1, "lineage": "l", "serial": 3, "resources": {"Movem',
            "corrupt or truncated",
        ),
        (b"\xff\xfe\x00garbage", "corrupt or truncated"),
        (b"[]", "not a JSON object"),
        (b'{"version": 99, "lineage": "l", "serial": 1, "resources": {}}', "newer customs-batch"),
        (b'{"version": 1, "serial": 1, "resources": {}}', "lineage and serial"),
        (b'{"lineage": "l", "serial": 1, "resources": {}}', "no valid version"),
        (b'{"version": "1", "lineage": "l", "serial": 1, "resources": {}}', "no valid version"),
        (
            b'{"version": 1, "lineage": "l", "serial": 1, "resources": {"Movement/a": {"status": "odd"}}}',
            "Movement/a is malformed",
        ),
    ],
)
def test_a_damaged_state_is_an_error_never_a_reset(
    tmp_path: Path, content: bytes, words: str
) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(content)
    with pytest.raises(StateError, match=words) as caught:
        read_state(path)
    assert path.read_bytes() == content
    hint = caught.value.hint or ""  # each says what to do, too
    assert "state.json.backup" in hint or "upgrade customs-batch" in hint, hint


def test_no_state_file_reads_as_none(tmp_path: Path) -> None:
    assert read_state(tmp_path / "state.json") is None


def test_an_older_state_is_upgraded_one_version_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from customs_batch.state import file as state_file

    def rename_entries(document: dict[str, object]) -> dict[str, object]:
        document["resources"] = document.pop("entries")
        return document

    monkeypatch.setattr(state_file, "STATE_VERSION", 2)
    monkeypatch.setitem(state_file.UPGRADES, 1, rename_entries)
    path = tmp_path / "state.json"
    path.write_text('{"version": 1, "lineage": "l", "serial": 4, "entries": {}}')
    state = read_state(path)
    assert state is not None and (state.lineage, state.serial) == ("l", 4)
    assert json.loads(dumps(state))["version"] == 2


def test_a_state_file_linked_to_dev_zero_is_a_state_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.symlink_to("/dev/zero")
    with pytest.raises(StateError) as caught:
        read_state(path)
    message = str(caught.value)
    assert str(path) in message and "not a regular file" in message
    assert "state.json.backup" in (caught.value.hint or "")


def _canonical(state: State) -> bytes:
    """What the state file held before it was written record by record."""
    document = {
        "version": STATE_VERSION,
        "lineage": state.lineage,
        "serial": state.serial,
        "resources": {a: state.resources[a].to_json() for a in sorted(state.resources)},
    }
    return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _varied_state() -> State:
    state = State(lineage="lin-ü", serial=7)
    state.apply("Movement/b", _record("Movement/b", spec={"a": {}, "b": [], "w": 10.5}))
    state.apply(
        "DepartureDeclaration/ä-1",
        _record(
            "DepartureDeclaration/ä-1",
            status=RecordStatus.FAILED,
            spec={"Consignee": {"name": 'Müller "&" Søn\n', "items": [1, 2.25, None, True]}},
            error=ServiceFailure(400, "totalWeight is wrong", {"errors": [{"f": "x"}]}),
            remote_errors=({"code": "E1"},),
            superseded=({"declarationId": "d-1"},),
        ),
    )
    state.apply("Movement/a", _record("Movement/a", outputs={}))
    return state


def test_the_file_is_the_canonical_json_byte_for_byte() -> None:
    state = _varied_state()
    assert dumps(state) == _canonical(state)
    assert dumps(State(lineage="l", serial=1)) == _canonical(State(lineage="l", serial=1))


def test_records_not_changed_are_written_back_as_they_were_read(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    write_state(path, _varied_state())
    state = read_state(path)
    assert state is not None
    state.apply("Movement/b", _record("Movement/b", operation="update"))
    state.apply("Movement/c", _record("Movement/c"))
    del state.resources["Movement/a"]
    state.serial += 1
    expected = _varied_state()
    expected.apply("Movement/b", _record("Movement/b", operation="update"))
    expected.apply("Movement/c", _record("Movement/c"))
    expected.apply("Movement/a", None)
    expected.serial += 1
    write_state(path, state)
    assert path.read_bytes() == _canonical(expected)
    assert read_state(path) == expected


def test_a_record_is_parsed_when_used_and_a_broken_one_names_itself(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    state = State(lineage="l", serial=2)
    state.apply("Movement/a", _record("Movement/a"))
    state.apply("Movement/b", _record("Movement/b"))
    write_state(path, state)
    path.write_bytes(path.read_bytes().replace(b'"status": "applied"', b'"status": "odd"', 1))
    again = read_state(path)
    assert again is not None and sorted(again.resources) == ["Movement/a", "Movement/b"]
    assert again.resources["Movement/b"].status is RecordStatus.APPLIED
    with pytest.raises(StateError, match="Movement/a is malformed") as caught:
        again.resources["Movement/a"]
    assert str(path) in str(caught.value)
    assert "state.json.backup" in (caught.value.hint or "")


@pytest.mark.parametrize(
    "edit",
    [
        # A record written on one line between two canonical ones.
        lambda text: text.replace(
            '    "Movement/b": {',
            '    "Movement/ab": {"status": "applied", "operation": "x"},\n    "Movement/b": {',
        ),
        # Indented by hand with tabs.
        lambda text: text.replace('      "status"', '\t"status"', 1),
        # An address that needs unescaping.
        lambda text: text.replace('"Movement/b"', '"Movement/\\u0062"'),
    ],
)
def test_a_file_in_another_layout_is_parsed_whole_and_loses_no_record(
    tmp_path: Path, edit: object
) -> None:
    path = tmp_path / "state.json"
    state = State(lineage="l", serial=2)
    state.apply("Movement/a", _record("Movement/a"))
    state.apply("Movement/b", _record("Movement/b"))
    write_state(path, state)
    assert callable(edit)
    path.write_text(edit(path.read_text()))
    again = read_state(path)
    assert again is not None
    assert {"Movement/a", "Movement/b"} <= set(again.resources)
    assert again.resources["Movement/b"] == state.resources["Movement/b"]


def test_the_backup_is_the_previous_file_itself_and_private(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    write_state(path, State(lineage="l", serial=1))
    path.chmod(0o644)  # as an older version left it
    previous = path.read_bytes()
    inode = path.stat().st_ino
    write_state(path, State(lineage="l", serial=2))
    backup = tmp_path / "state.json.backup"
    assert backup.read_bytes() == previous
    assert backup.stat().st_ino == inode  # renamed into place, not read and written again
    assert backup.stat().st_mode & 0o777 == 0o600
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_backup_is_copied_where_hard_links_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    def no_links(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    path = tmp_path / "state.json"
    write_state(path, State(lineage="l", serial=1))
    previous = path.read_bytes()
    monkeypatch.setattr(os, "link", no_links)
    write_state(path, State(lineage="l", serial=2))
    backup = tmp_path / "state.json.backup"
    assert backup.read_bytes() == previous
    assert backup.stat().st_mode & 0o777 == 0o600


def test_a_state_of_thousands_of_records_is_written_and_read_back_exactly(tmp_path: Path) -> None:
    state = State(lineage="l", serial=9)
    for number in range(2_345):
        state.apply(f"Movement/m-{number:05d}", _record(f"Movement/m-{number:05d}"))
    path = tmp_path / "state.json"
    write_state(path, state)
    assert path.read_bytes() == _canonical(state)
    again = read_state(path)
    assert again is not None and again == state
    write_state(path, again)
    assert path.read_bytes() == _canonical(state)
