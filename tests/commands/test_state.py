"""The state commands as functions: ``state show`` gives one record, or a state error."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.commands.state import StateOptions, push_state, show_record
from customs_batch.errors import ExitCode, StateError
from customs_batch.kinds import Address, Kind
from customs_batch.state import RecordStatus, ResourceRecord, State


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_show_gives_the_record_of_an_address(project: Path) -> None:
    options = StateOptions()
    record = ResourceRecord(
        "Movement/mov-1",
        RecordStatus.APPLIED,
        "create_movement",
        {"hawbId": "hawb_a1"},
        {"movementId": "mov_00000001"},
    )
    incoming = State.new()
    incoming.resources[record.address] = record
    push_state(options, incoming, force=False)
    shown = show_record(options, Address(Kind.MOVEMENT, "mov-1"))
    assert (shown.status, dict(shown.outputs)) == (
        RecordStatus.APPLIED,
        {"movementId": "mov_00000001"},
    )


def test_show_of_an_address_not_recorded_is_a_state_error(project: Path) -> None:
    with pytest.raises(StateError, match="Movement/mov-2 is not in the state") as raised:
        show_record(StateOptions(), Address(Kind.MOVEMENT, "mov-2"))
    assert raised.value.exit_code is ExitCode.ERROR
