"""The state commands as functions: ``state show`` gives one record, or a state error;
``state push`` of a copy pulled before a command wrote the state says what it would undo."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from customs_batch.commands.state import (
    StateOptions,
    forget_attempt,
    forget_records,
    push_state,
    read_state,
    record_word,
    show_record,
)
from customs_batch.errors import ExitCode, StateError, UsageError
from customs_batch.execution.apply import apply_plan
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.model import new_idempotency_key
from customs_batch.planning import plan_changes
from customs_batch.state import RecordStatus, ResourceRecord, State
from customs_batch.state.backend import StateBackend
from tests.execution.conftest import Emulator
from tests.planning.helpers import movement


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


def test_show_of_an_address_not_recorded_is_a_usage_error(project: Path) -> None:
    # The address is the user's mistake (exit 64, nothing asked of the service), not a state
    # that cannot be used (exit 3).
    with pytest.raises(UsageError, match="Movement/mov-2 is not in the state") as raised:
        show_record(StateOptions(), Address(Kind.MOVEMENT, "mov-2"))
    assert raised.value.exit_code is ExitCode.USAGE


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
    # Its way out, followed literally: this older copy, with --allow-empty-state alone, is
    # refused for its serial ("pass --force"); the hint names both options.
    assert "push it with --force --allow-empty-state, then" in str(refused.value.hint)
    lenient = StateOptions("sandbox", allow_empty_state=True)
    with pytest.raises(StateError, match="pass --force"):
        push_state(lenient, pulled, force=False)
    pushed = push_state(lenient, pulled, force=True)
    assert set(pushed.resources) == {"Movement/mov-1", "Movement/mov-2"}


def _applied_then_lost(backend: StateBackend, emulator: Emulator) -> ResourceRecord:
    """Movement/m applied, then as if its answer had been lost: only the intent is held."""
    with backend.open("apply") as session:
        plan = plan_changes([movement("m", 0)], session.state)
        report = apply_plan(plan, session, emulator.client, parallelism=1, stop=threading.Event())
    assert report.ok
    first = backend.read().resources["Movement/m"]
    with backend.open("test") as session:
        session.record(first.with_changes(status=RecordStatus.PENDING, outputs={}))
    return first


def test_a_movement_forgotten_by_mistake_is_sent_again_under_its_key_not_twice(
    project: Path,
) -> None:
    # Found in review: `state forget` of a movement whose outcome was unknown dropped its
    # Idempotency-Key, and the next apply sent it under a new one: when the lost request
    # had made the movement (the forget was a mistake), the service held it twice.
    emulator = Emulator(processing_seconds=0.0)
    options = StateOptions()
    backend = options.backend()
    address = Address(Kind.MOVEMENT, "m")
    try:
        first = _applied_then_lost(backend, emulator)
        until = forget_attempt(options, address)
        assert until is not None and until > datetime.now(UTC) + timedelta(hours=23)
        kept = backend.read().resources["Movement/m"]
        assert kept.kept_key == first.idempotency_key
        assert record_word("Movement/m", kept) == "forgotten-attempt"
        [planned] = plan_changes([movement("m", 0)], backend.read()).changes
        assert planned.idempotency_key == first.idempotency_key
        assert "taken back by `customs-batch state forget`" in planned.reason
        with backend.open("apply") as session:
            plan = plan_changes([movement("m", 0)], session.state)
            report = apply_plan(
                plan, session, emulator.client, parallelism=1, stop=threading.Event()
            )
        assert report.ok
        assert len(emulator.movements()) == 1  # the service answered with the first
        record = backend.read().resources["Movement/m"]
        assert record.outputs == first.outputs and record.kept_key is None

        # Edited since the attempt: the key is bound to the body first sent, so a new one.
        _applied_then_lost(backend, emulator)
        forget_attempt(options, address)
        [edited] = plan_changes([movement("m", 0, quantity=2)], backend.read()).changes
        assert edited.idempotency_key is None and "under a new key" in edited.reason
    finally:
        emulator.close()


def test_a_forgotten_attempt_whose_key_has_expired_keeps_nothing(project: Path) -> None:
    options = StateOptions()
    long_ago = datetime.now(UTC) - timedelta(days=2)
    lost = ResourceRecord(
        "Movement/m",
        RecordStatus.UNKNOWN,
        "create-movement",
        {"shipmentId": "shp_7Hk2Lm"},
        idempotency_key=new_idempotency_key(long_ago),
        updated_at=long_ago.isoformat().replace("+00:00", "Z"),
    )
    incoming = State.new()
    incoming.resources[lost.address] = lost
    push_state(options, incoming, force=False)
    assert forget_attempt(options, Address(Kind.MOVEMENT, "m")) is None
    assert "Movement/m" not in options.backend().read().resources


def test_a_movement_forgotten_by_mistake_then_renamed_is_sent_under_its_key_not_twice(
    project: Path,
) -> None:
    # Found probing from outside: `apply` killed while a movement's request was in flight
    # (it made the movement), the document renamed, `state forget` of the old name (the
    # plan's way out "if it does not exist"), then `apply`: the plan dropped the old record
    # ("refused by the service, so never created", untrue) and created the renamed one
    # under a new Idempotency-Key, and the service held the movement twice.
    emulator = Emulator(processing_seconds=0.0)
    options = StateOptions()
    backend = options.backend()
    try:
        first = _applied_then_lost(backend, emulator)
        forget_attempt(options, Address(Kind.MOVEMENT, "m"))
        plan = plan_changes([movement("m-renamed", 0)], backend.read())
        [planned] = plan.changes  # the old record is taken over, not dropped
        assert str(planned.address) == "Movement/m-renamed"
        assert planned.action.value == "create"
        assert str(planned.moved_from) == "Movement/m"
        assert planned.idempotency_key == first.idempotency_key
        # A selection cannot tell whether a document left out still names the attempt.
        [selected] = plan_changes([movement("m-renamed", 0)], backend.read(), orphans=False).changes
        assert selected.action.value == "refused" and selected.idempotency_key is None
        with backend.open("apply") as session:
            plan = plan_changes([movement("m-renamed", 0)], session.state)
            report = apply_plan(
                plan, session, emulator.client, parallelism=1, stop=threading.Event()
            )
        assert report.ok
        assert len(emulator.movements()) == 1  # the service answered with the first
        resources = backend.read().resources
        assert "Movement/m" not in resources
        record = resources["Movement/m-renamed"]
        assert record.outputs == first.outputs and record.kept_key is None
    finally:
        emulator.close()


def test_a_forgotten_attempt_whose_document_is_removed_keeps_its_key_for_its_return(
    project: Path,
) -> None:
    # Found probing from outside: the document of a forgotten attempt taken out of the
    # manifests for a run was planned `drop` ("refused by the service, so never created")
    # and its key went with the record: put back, it was sent under a new key, a second
    # movement if the attempt had made one.
    emulator = Emulator(processing_seconds=0.0)
    options = StateOptions()
    backend = options.backend()
    try:
        first = _applied_then_lost(backend, emulator)
        forget_attempt(options, Address(Kind.MOVEMENT, "m"))
        with backend.open("apply") as session:
            plan = plan_changes([], session.state)
            [held] = plan.changes
            assert held.action.value == "orphaned"
            assert "refused by the service" not in held.reason
            assert "keeps the attempt's Idempotency-Key" in held.reason
            report = apply_plan(
                plan, session, emulator.client, parallelism=1, stop=threading.Event()
            )
        assert report.ok
        assert backend.read().resources["Movement/m"].kept_key == first.idempotency_key
        with backend.open("apply") as session:
            plan = plan_changes([movement("m-back", 0)], session.state)
            report = apply_plan(
                plan, session, emulator.client, parallelism=1, stop=threading.Event()
            )
        assert report.ok
        assert len(emulator.movements()) == 1
    finally:
        emulator.close()


def test_an_older_copy_pushed_with_allow_empty_state_warns_what_it_undid(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found by an outside probe: `state push --force --allow-empty-state` of a copy pulled
    # before a run created something said only "Pushed ...", and the next plan showed that
    # document `+ create` (apply sent it again); the refusal that names it was skipped.
    (project / "customs-batch.yaml").write_text(
        "environments:\n  sandbox: {base_url: http://customs.test, api_key_env: CB_KEY}\n"
    )
    monkeypatch.setenv("CB_KEY", "sandbox-key")
    first = State.new()
    first.resources["Movement/mov-1"] = ResourceRecord(
        "Movement/mov-1", RecordStatus.APPLIED, "create-movement", {"hawbId": "a"},
        {"movementId": "mov_1"},
    )  # fmt: skip
    push_state(StateOptions("sandbox"), first, force=False)
    pulled = read_state(StateOptions("sandbox"))
    later = read_state(StateOptions("sandbox"))
    later.resources["Movement/mov-2"] = ResourceRecord(
        "Movement/mov-2", RecordStatus.APPLIED, "create-movement", {"hawbId": "b"},
        {"movementId": "mov_2"},
    )  # fmt: skip
    later.serial += 1  # as a run that created it writes the state
    push_state(StateOptions("sandbox"), later, force=False)

    warned: list[str] = []
    options = StateOptions("sandbox", allow_empty_state=True)
    push_state(options, pulled, force=True, warn=warned.append)

    (said,) = warned
    assert "the push undid the record(s) of Movement/mov-2 " in said
    assert "the next plan would send their documents again" in said
    assert "`customs-batch import ADDR ID`" in said
    assert "Movement/mov-2" not in read_state(StateOptions("sandbox")).resources
    # A push that undoes nothing says nothing.
    again: list[str] = []
    push_state(options, read_state(StateOptions("sandbox")), force=False, warn=again.append)
    assert again == []
