"""A request of a run that still holds the state's lock, read without the lock: the words
``status``, ``state list`` and ``results`` give it (plan's are in tests/e2e/test_lock.py)."""

from __future__ import annotations

from customs_batch.commands.state import record_word
from customs_batch.execution.reconcile import status_entries
from customs_batch.execution.results import ResultStatus, recorded_result
from customs_batch.kinds import Address, Kind
from customs_batch.state import RecordStatus, ResourceRecord, State
from customs_batch.state.lock import LockInfo, in_flight_of

ADDRESS = Address(Kind.DEPARTURE_DECLARATION, "dep-1")


def _holder(since: str) -> LockInfo:
    return LockInfo("lock-1", "ci", "runner", 4242, "apply", since)


def _intent(written: str) -> ResourceRecord:
    return ResourceRecord(
        str(ADDRESS), RecordStatus.PENDING, "create", {}, outputs={}, updated_at=written
    )


def test_an_intent_written_since_the_lock_was_taken_is_in_flight() -> None:
    running = _holder("2026-11-27T12:00:00Z")
    why = running.in_flight("2026-11-27T12:00:00.250Z")
    assert why is not None and "(process 4242) for apply" in why
    assert running.in_flight("2026-11-27T11:59:59.999Z") is None  # a run before this one
    assert running.in_flight("2026-11-27T12:00:03") is not None  # no zone: UTC
    assert running.in_flight("yesterday") is None
    assert _holder("not a time").in_flight("2026-11-27T12:00:03Z") is None
    assert in_flight_of(None) is None


def test_status_state_list_and_results_say_in_flight_not_needs_decision() -> None:
    record = _intent("2026-11-27T12:00:01.000Z")
    in_flight = in_flight_of(_holder("2026-11-27T12:00:00Z"))
    state = State("lineage-1", resources={str(ADDRESS): record})

    [entry] = status_entries(state, in_flight)
    assert (entry.lifecycle, entry.pending, entry.blocks) == ("in-flight", True, False)
    assert record_word(str(ADDRESS), record, in_flight) == "in-flight"
    result = recorded_result(ADDRESS, record, in_flight)
    assert result.status is ResultStatus.PENDING
    assert "in flight: sent by the run that holds the state's lock" in result.errors[0]

    # With no run holding the lock (or one that took it after the intent was written),
    # the outcome is unknown and needs a decision, as before.
    for none_running in (None, in_flight_of(_holder("2026-11-27T12:00:02Z"))):
        [entry] = status_entries(state, none_running)
        assert (entry.lifecycle, entry.blocks) == ("needs-decision", True)
        assert record_word(str(ADDRESS), record, none_running) == "needs-decision"
        assert recorded_result(ADDRESS, record, none_running).status is ResultStatus.NEEDS_DECISION


def test_an_object_refresh_found_gone_is_not_found_everywhere_the_state_is_read() -> None:
    """refresh notes when it found the object no longer at the service: status, state list
    and results name it not-found with the way out, never done or ready."""
    record = ResourceRecord(
        str(ADDRESS),
        RecordStatus.APPLIED,
        "create",
        {},
        outputs={"declarationId": 7003, "status": "ready"},
        remote_status="ready",
        not_found_at="2026-11-27T12:00:00Z",
    )
    state = State("lineage-1", resources={str(ADDRESS): record})
    [entry] = status_entries(state)
    assert (entry.lifecycle, entry.blocks, entry.identifier) == ("not-found", True, 7003)
    # Nothing at the service: status --format json/html show no state there (not `ready`).
    assert entry.service_state is None and entry.to_json()["serviceState"] is None
    assert f"`customs-batch state rm --gone {ADDRESS}`" in entry.message
    assert record_word(str(ADDRESS), record) == "not-found"
    result = recorded_result(ADDRESS, record)
    assert result.status is ResultStatus.NEEDS_DECISION
    assert "not found at the service" in result.errors[0]
    assert ResourceRecord.from_json(str(ADDRESS), record.to_json()) == record


def test_a_departure_customs_cancelled_is_ended_not_done() -> None:
    """refresh recorded it canceled: status marks it ended (it needs the user), results
    needs-decision with the way out, never done."""
    record = ResourceRecord(
        str(ADDRESS),
        RecordStatus.APPLIED,
        "create",
        {},
        outputs={"declarationId": 7003, "status": "canceled"},
        remote_status="canceled",
    )
    state = State("lineage-1", resources={str(ADDRESS): record})
    [entry] = status_entries(state)
    assert (entry.service_state, entry.ended, entry.blocks) == ("canceled", True, True)
    assert "customs cancelled it" in entry.message
    result = recorded_result(ADDRESS, record)
    assert result.status is ResultStatus.NEEDS_DECISION
    assert f"`customs-batch state rm --gone {ADDRESS}`" in result.errors[0]
