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
    with pytest.raises(StateError, match=words):
        read_state(path)
    assert path.read_bytes() == content


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
