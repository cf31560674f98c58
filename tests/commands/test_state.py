"""The state commands as functions: ``state show`` gives one record, or a state error;
``state push`` of a copy pulled before a command wrote the state says what it would undo."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.commands.state import (
    StateOptions,
    forget_records,
    push_state,
    read_state,
    show_record,
)
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


def test_a_copy_pulled_before_state_rm_pushed_with_force_says_it_would_undo_the_tombstone(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found in review: `state pull`, `state rm X`, `state push --force` of the pulled copy
    # was refused (rightly: it would undo the rm), but in words of another case: "state.json
    # has serial 1 ... the folder was put back to an older copy (its history with it), and
    # holds no trace of what the runs since created", though nothing was put back and no
    # run had created anything.
    (project / "customs-batch.yaml").write_text(
        "environments:\n  sandbox: {base_url: http://customs.test, api_key_env: CB_KEY}\n"
    )
    monkeypatch.setenv("CB_KEY", "sandbox-key")
    options = StateOptions("sandbox")
    first = State.new()
    for name in ("mov-1", "mov-2"):
        address = f"Movement/{name}"
        first.resources[address] = ResourceRecord(
            address, RecordStatus.APPLIED, "create-movement", {"hawbId": name},
            {"movementId": f"mov_{name}"},
        )  # fmt: skip
    push_state(options, first, force=False)
    pulled = read_state(options)
    forget_records(options, [Address(Kind.MOVEMENT, "mov-1")], gone=False)
    current = read_state(options)

    with pytest.raises(StateError) as refused:
        push_state(options, pulled, force=True)

    said = " ".join(refused.value.message.split())
    assert said.startswith("the pushed state is older than this environment's: it is serial")
    assert "pushed, it would undo the tombstone(s) of Movement/mov-1 " in said
    assert "Movement/mov-2" not in said  # unchanged since
    assert "put back" not in said and "runs since created" not in said
    assert "Nothing was pushed" in said
    assert "`customs-batch state restore ADDR`" in str(refused.value.hint)
    assert read_state(options) == current
