"""Lost departure submissions settled by what the service holds (a fake service here; the
end-to-end cases are in tests/cli/test_lost_submissions.py and tests/e2e/test_kill_kinds.py)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from customs_batch.client import (
    CustomsClient,
    TransitDeclaration,
    TransitDeclarationDetail,
    TransitFilter,
)
from customs_batch.errors import ServiceError
from customs_batch.execution.elsewhere import ObjectsHeldElsewhere
from customs_batch.execution.settle import (
    Settled,
    hold_what_a_lost_run_may_have_made,
    settle_lost_creations,
)
from customs_batch.kinds import Address
from customs_batch.kinds.actions import Action, Operation
from customs_batch.planning.model import Plan, PlannedChange
from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord, State
from customs_batch.state.backend import OtherState
from customs_batch.state.history import LocalHistory

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
ADDRESS = "DepartureDeclaration/dep-1"
SPEC = {
    "type": "DEPARTURE",
    "procedureType": "D1",
    "declarationType": "externalTransit",
    "totalWeight": 125.5,
    "departureOffice": "NL000510",
    "destinationOffice": "DE004058",
    "commercialReference": "REF-1",
}


def stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Service:
    """The transit list and detail of a fake service, and what was asked of it."""

    def __init__(self, declarations: dict[int, dict[str, Any]]) -> None:
        self.declarations = declarations
        self.listed: list[TransitFilter | None] = []
        self.read: list[int] = []

    def iter_transit(self, filters: TransitFilter | None = None) -> Iterator[TransitDeclaration]:
        self.listed.append(filters)
        for ident, detail in self.declarations.items():
            entry = {k: detail[k] for k in LISTED if k in detail}
            yield TransitDeclaration.from_json({"declarationId": ident, **entry})

    def get_transit(self, declaration_id: int) -> TransitDeclarationDetail:
        self.read.append(declaration_id)
        return TransitDeclarationDetail.from_json(self.declarations[declaration_id])


LISTED = ("status", "declarationType", "createdAt")
"""What the list gives of each declaration, besides its ID."""


def declaration(created: datetime, **changes: Any) -> dict[str, Any]:
    detail = {k: SPEC[k] for k in SPEC if k not in ("type", "commercialReference")}
    return {**detail, "status": "processing", "createdAt": stamp(created), **changes}


def settle(
    tmp_path: Path,
    service: Service,
    *records: ResourceRecord,
    history: LocalHistory | None = None,
    others: tuple[OtherState, ...] = (),
) -> tuple[list[Settled], list[str], list[float], dict[str, ResourceRecord]]:
    backend = LocalBackend(tmp_path / "state")
    with backend.open("test") as session:
        for record in records:
            session.record(record)
    notices: list[str] = []
    slept: list[float] = []
    with backend.open("apply") as session:
        settled = settle_lost_creations(
            session,
            cast(CustomsClient, service),
            answered_within=timedelta(seconds=40),
            notice=notices.append,
            now=lambda: NOW,
            sleep=slept.append,
            history=history,
            others=ObjectsHeldElsewhere(lambda: others),
        )
    state = backend.read()
    return settled, notices, slept, {a: state.resources[a] for a in state.resources}


def lost(
    when: datetime, status: RecordStatus = RecordStatus.PENDING, **changes: Any
) -> ResourceRecord:
    record = ResourceRecord(ADDRESS, status, "submit-departure", SPEC, updated_at=stamp(when))
    return record.with_changes(**changes)


def test_nothing_created_since_means_it_never_arrived_and_its_intent_is_taken_back(
    tmp_path: Path,
) -> None:
    earlier = declaration(NOW - timedelta(hours=3))  # the same values, but from before
    other = declaration(NOW - timedelta(minutes=1), totalWeight=99.0)
    service = Service({7001: earlier, 7002: other})
    settled, notices, slept, records = settle(tmp_path, service, lost(NOW - timedelta(minutes=2)))
    assert settled == [Settled(ADDRESS, True)]
    assert "never reached the service" in settled[0].describe()
    assert ADDRESS not in records  # the next plan creates it
    assert (notices, slept) == ([], [])
    assert service.read == [7002]  # only what was created since the intent is read


def test_a_declaration_created_since_with_the_same_values_is_left_to_a_person(
    tmp_path: Path,
) -> None:
    mine = declaration(NOW - timedelta(minutes=1))
    theirs = declaration(NOW - timedelta(minutes=1))  # another document's record holds it
    recorded = ResourceRecord(
        "DepartureDeclaration/dep-2",
        RecordStatus.APPLIED,
        "submit-departure",
        SPEC,
        outputs={"declarationId": 7002},
        updated_at=stamp(NOW),
    )
    service = Service({7001: mine, 7002: theirs})
    settled, _, _, records = settle(tmp_path, service, lost(NOW - timedelta(minutes=2)), recorded)
    assert settled == [Settled(ADDRESS, False, ("7001",))]
    assert f"state adopt {ADDRESS} ID" in settled[0].describe() and "7001" in settled[0].describe()
    assert records[ADDRESS].status is RecordStatus.PENDING  # untouched


def test_a_declaration_made_at_a_recorded_id_after_that_record_was_written_is_a_candidate(
    tmp_path: Path,
) -> None:
    # Found probing from outside: a sandbox reset, then an apply killed while a new
    # departure's submission was in flight. The service gave it 7003 again, the ID the
    # record of an older departure still held, so the search passed 7003 over as that
    # record's, took the submission as never arrived and submitted it a second time (7004).
    before_the_reset = ResourceRecord(
        "DepartureDeclaration/dep-old",
        RecordStatus.APPLIED,
        "submit-departure",
        {**SPEC, "totalWeight": 137.5, "commercialReference": "OLD-1"},
        outputs={"declarationId": 7003},
        updated_at=stamp(NOW - timedelta(hours=2)),
    )
    service = Service({7003: declaration(NOW - timedelta(minutes=1))})
    settled, _, _, records = settle(
        tmp_path, service, lost(NOW - timedelta(minutes=2)), before_the_reset
    )
    assert settled == [Settled(ADDRESS, False, ("7003",))]
    assert records[ADDRESS].status is RecordStatus.PENDING  # for a person to decide

    # One that refresh no longer found at its ID holds that ID no more, whenever written.
    not_found = before_the_reset.with_changes(
        updated_at=stamp(NOW), not_found_at=stamp(NOW - timedelta(minutes=30))
    )
    settled, _, _, _ = settle(
        tmp_path / "again", service, lost(NOW - timedelta(minutes=2)), not_found
    )
    assert settled == [Settled(ADDRESS, False, ("7003",))]

    # Made before that record's write (its own declaration): no candidate, as before.
    its_own = before_the_reset.with_changes(updated_at=stamp(NOW))
    settled, _, _, _ = settle(
        tmp_path / "third", service, lost(NOW - timedelta(minutes=2)), its_own
    )
    assert settled == [Settled(ADDRESS, True)]


def _other_environment(*held: tuple[int, RecordStatus]) -> OtherState:
    """The state of environment de of the same service, holding declarations ``held``."""
    state = State.new()
    for n, (ident, status) in enumerate(held):
        address = f"DepartureDeclaration/de-{n}"
        state.resources[address] = ResourceRecord(
            address, status, "submit-departure", SPEC, outputs={"declarationId": ident}
        )
    where = "the state of environment 'de' (/p/.customs-batch/de)"
    return OtherState(where, "https://api.example", state, environment="de")


def test_a_declaration_another_environment_of_the_service_holds_is_no_candidate(
    tmp_path: Path,
) -> None:
    # de submitted the same declaration meanwhile (its own record holds 7002): adopting it
    # here would make two environments write one declaration.
    service = Service({n: declaration(NOW - timedelta(minutes=1)) for n in (7001, 7002)})
    de = _other_environment((7002, RecordStatus.APPLIED))
    settled, _, _, records = settle(
        tmp_path, service, lost(NOW - timedelta(minutes=2)), others=(de,)
    )
    assert [(s.candidates, s.never_arrived) for s in settled] == [(("7001",), False)]
    said = settled[0].describe()
    assert (
        "with the same values: 7001; left out, as another environment's: 7002 is recorded as"
        in said
    )
    assert "the state of environment 'de'" in said
    assert records[ADDRESS].status is RecordStatus.PENDING


def test_a_lost_submission_whose_only_lookalike_another_environment_holds_never_arrived(
    tmp_path: Path,
) -> None:
    service = Service({7002: declaration(NOW - timedelta(minutes=1))})
    # A tombstone there sends nothing: its object may still be this one's (import takes it).
    released = _other_environment((7003, RecordStatus.FORGOTTEN))
    de = _other_environment((7002, RecordStatus.APPLIED))
    settled, _, _, records = settle(
        tmp_path, service, lost(NOW - timedelta(minutes=2)), others=(released, de)
    )
    assert [(s.candidates, s.never_arrived) for s in settled] == [((), True)]
    said = settled[0].describe()
    assert "never reached the service" in said
    assert "could be it but what another environment holds, left out: 7002 is recorded as " in said
    assert ADDRESS not in records  # the next plan submits it

    service = Service({7003: declaration(NOW - timedelta(minutes=1))})
    settled, _, _, _ = settle(
        tmp_path / "again", service, lost(NOW - timedelta(minutes=2)), others=(released,)
    )
    assert [s.candidates for s in settled] == [("7003",)]


def test_the_candidate_whose_answer_the_history_holds_is_named(tmp_path: Path) -> None:
    # The answer reached the history but not the state (a run whose lock was broken, a
    # database lost between the two writes): of the identical declarations created since,
    # the history says which one the submission made.
    service = Service({n: declaration(NOW - timedelta(minutes=1)) for n in (7001, 7002, 7003)})
    history = LocalHistory(tmp_path / "history")
    answer = {"time": stamp(NOW - timedelta(seconds=50)), "run": "r", "address": ADDRESS}
    history.append({**answer, "event": "answer", "status": 201, "ids": {"declarationId": 7002}})
    other = {**answer, "address": "DepartureDeclaration/dep-2"}
    history.append({**other, "event": "answer", "status": 201, "ids": {"declarationId": 7003}})
    earlier = {**answer, "time": stamp(NOW - timedelta(hours=1))}  # before the intent
    history.append({**earlier, "event": "answer", "status": 201, "ids": {"declarationId": 7001}})
    history.sync()
    settled, _, _, records = settle(
        tmp_path, service, lost(NOW - timedelta(minutes=2)), history=history
    )
    assert settled == [Settled(ADDRESS, False, ("7001", "7002", "7003"), "7002")]
    said = settled[0].describe()
    assert "the history records the service's answer to it, 7002" in said
    assert f"state adopt {ADDRESS} 7002" in said
    assert records[ADDRESS].status is RecordStatus.PENDING  # still for a person to adopt
    history.close()


def test_a_recent_intent_is_waited_for_before_the_service_is_searched(tmp_path: Path) -> None:
    service = Service({})
    settled, notices, slept, _ = settle(tmp_path, service, lost(NOW - timedelta(seconds=10)))
    assert slept == [35.0]  # 40 s of timeouts and 5 s of margin, from the intent
    assert len(notices) == 1 and "waiting 35 s" in notices[0]
    assert settled == [Settled(ADDRESS, True)]


def test_an_unknown_outcome_searches_back_to_before_the_request_left(tmp_path: Path) -> None:
    # Recorded unknown after waiting for its answer: the request left up to 40 s before.
    sent = declaration(NOW - timedelta(minutes=10, seconds=30))
    service = Service({7001: sent})
    settled, _, _, _ = settle(
        tmp_path, service, lost(NOW - timedelta(minutes=1), RecordStatus.UNKNOWN)
    )
    assert settled == [Settled(ADDRESS, False, ("7001",))]


def test_a_lost_resubmission_goes_back_to_the_rejected_declaration_it_replaces(
    tmp_path: Path,
) -> None:
    old_spec = {**SPEC, "commercialReference": "INVALID-1"}
    rejected = {
        "outputs": {"declarationId": 7000, "status": "invalid"},
        "remoteStatus": "invalid",
        "remoteErrors": [{"code": "X"}],
        "spec": old_spec,
        "operation": "submit-departure",
        "updatedAt": "2026-11-23T09:00:00.000Z",
    }
    record = lost(
        NOW - timedelta(minutes=2), operation="resubmit-departure", superseded=(rejected,)
    )
    settled, _, _, records = settle(
        tmp_path, Service({7000: declaration(NOW - timedelta(minutes=1))}), record
    )
    assert settled == [Settled(ADDRESS, True)]  # 7000 is the rejected one, recorded
    back = records[ADDRESS]
    assert back.status is RecordStatus.APPLIED and back.remote_status == "invalid"
    assert back.spec == old_spec and back.outputs == rejected["outputs"]
    assert back.superseded == () and back.operation == "submit-departure"


def test_a_resubmission_recorded_without_its_earlier_record_is_not_guessed(
    tmp_path: Path,
) -> None:
    older = {"outputs": {"declarationId": 7000}, "remoteStatus": "invalid", "remoteErrors": []}
    record = lost(NOW - timedelta(minutes=2), operation="resubmit-departure", superseded=(older,))
    settled, _, _, records = settle(tmp_path, Service({}), record)
    assert settled == [Settled(ADDRESS, False)]
    assert "state forget" in settled[0].describe()
    assert records[ADDRESS].status is RecordStatus.PENDING


def test_a_search_the_service_fails_leaves_the_decision_and_says_why(tmp_path: Path) -> None:
    class Down(Service):
        def iter_transit(
            self, filters: TransitFilter | None = None
        ) -> Iterator[TransitDeclaration]:
            raise ServiceError("the service answered 503 three times")

    settled, notices, _, records = settle(tmp_path, Down({}), lost(NOW - timedelta(minutes=2)))
    assert settled == []
    assert len(notices) == 1 and "answered 503" in notices[0] and "need a decision" in notices[0]
    assert records[ADDRESS].status is RecordStatus.PENDING


class _CountedReads(dict[str, ResourceRecord]):
    """Records that count how often each is read."""

    def __init__(self, records: Mapping[str, ResourceRecord]) -> None:
        super().__init__(records)
        self.reads: list[str] = []

    def __getitem__(self, address: str) -> ResourceRecord:
        self.reads.append(address)
        return super().__getitem__(address)


def test_the_other_states_are_read_once_and_each_record_once_whatever_the_candidates(
    tmp_path: Path,
) -> None:
    # Three lookalikes: each is looked up in one index of what de holds, not in a pass over
    # every record of de (a big state of another environment, asked about each candidate).
    service = Service({n: declaration(NOW - timedelta(minutes=1)) for n in (7001, 7002, 7003)})
    de = _other_environment(*((8000 + n, RecordStatus.APPLIED) for n in range(20)))
    counted = _CountedReads(de.state.resources)
    de = replace(de, state=replace(de.state, resources=counted))
    read: list[OtherState] = []

    def others() -> tuple[OtherState, ...]:
        read.append(de)
        return (de,)

    backend = LocalBackend(tmp_path / "state")
    with backend.open("test") as session:
        session.record(lost(NOW - timedelta(minutes=2)))
    with backend.open("apply") as session:
        settled = settle_lost_creations(
            session,
            cast(CustomsClient, service),
            answered_within=timedelta(seconds=40),
            notice=lambda text: None,
            now=lambda: NOW,
            sleep=lambda seconds: None,
            others=ObjectsHeldElsewhere(others),
        )
    assert [s.candidates for s in settled] == [("7001", "7002", "7003")]
    assert len(read) == 1
    assert sorted(counted.reads) == sorted(counted)


# What a run whose records were not kept (a lost CI runner) may have submitted.


class Failing(Service):
    def iter_transit(self, filters: TransitFilter | None = None) -> Iterator[TransitDeclaration]:
        raise ServiceError("the service failed (503)")


def _applied(address: str, ident: int, written: datetime, **spec: Any) -> ResourceRecord:
    return ResourceRecord(
        address,
        RecordStatus.APPLIED,
        "submit-departure",
        {**SPEC, **spec},
        outputs={"declarationId": ident},
        updated_at=stamp(written),
    )


def hold(
    tmp_path: Path,
    service: Service,
    *records: ResourceRecord,
    others: tuple[OtherState, ...] = (),
) -> tuple[Plan, tuple[ResourceRecord, ...]]:
    """A plan creating ``ADDRESS`` (and a movement), as apply holds it, the state holding
    ``records`` (read back from its file, as apply reads it)."""
    backend = LocalBackend(tmp_path / "state")
    with backend.open("test") as session:
        for record in records:
            session.record(record)
    departure = PlannedChange(
        cast(Address, Address.parse(ADDRESS)),
        Action.CREATE,
        Operation.SUBMIT_DEPARTURE,
        spec=SPEC,
        identity=("commercialReference=REF-1",),
    )
    party = PlannedChange(
        cast(Address, Address.parse("TransitPartyUpdate/dep-1-consignee")),
        Action.CREATE,
        Operation.UPDATE_DEPARTURE_PARTIES,
        spec={"declarationId": "${ref:DepartureDeclaration/dep-1.declarationId}"},
        depends_on=(departure.address,),
    )
    with backend.open("apply") as session:
        plan = Plan((departure, party), session.state.lineage, session.state.serial)
        return hold_what_a_lost_run_may_have_made(
            plan,
            session,
            cast(CustomsClient, service),
            others=ObjectsHeldElsewhere(lambda: others),
            now=lambda: NOW,
        )


def test_a_lookalike_made_since_the_states_last_write_holds_the_creation(
    tmp_path: Path,
) -> None:
    # The state last written more than a day ago: the look starts at that write.
    written = NOW - timedelta(hours=30)
    other = _applied("DepartureDeclaration/dep-0", 7001, written, totalWeight=1.0)
    service = Service(
        {
            7001: declaration(written, totalWeight=1.0),
            7002: declaration(written + timedelta(minutes=30)),  # the lost run's
        }
    )
    plan, records = hold(tmp_path, service, other)
    departure, party = plan.changes
    assert (departure.action, departure.operation) == (Action.NEEDS_DECISION, Operation.NONE)
    assert "made since 2026-11-22T05:50:00Z" in departure.reason  # the write, less the skew
    assert "values: 7002" in departure.reason
    assert "state adopt DepartureDeclaration/dep-1 ID" in departure.reason
    assert party.action is Action.REFUSED  # it would name a declaration not known yet
    [record] = records
    assert (record.address, record.status, record.outputs) == (ADDRESS, RecordStatus.UNKNOWN, {})
    assert record.look_since == "2026-11-22T05:50:00Z"
    assert service.read == [7002]


def test_a_lookalike_made_before_a_later_write_of_the_last_day_holds_the_creation(
    tmp_path: Path,
) -> None:
    # The lost run made 7002 three hours ago; since then a run that left it out (apply
    # with -l, a refresh) wrote a record of the state committed before the lost run. The
    # state's newest write is after 7002: the look goes back a day all the same.
    other = _applied("DepartureDeclaration/dep-0", 7001, NOW - timedelta(minutes=5))
    service = Service({7002: declaration(NOW - timedelta(hours=3))})
    plan, records = hold(tmp_path, service, other)
    departure = plan.changes[0]
    assert departure.action is Action.NEEDS_DECISION
    assert "made since 2026-11-22T12:00:00Z" in departure.reason
    assert "values: 7002" in departure.reason
    assert [r.look_since for r in records] == ["2026-11-22T12:00:00Z"]


def test_a_lookalike_made_before_the_states_last_write_is_not_the_lost_runs(
    tmp_path: Path,
) -> None:
    written = NOW - timedelta(hours=30)
    other = _applied("DepartureDeclaration/dep-0", 7001, written, totalWeight=1.0)
    # The same values, made by another client before this state was last written (more
    # than a day ago).
    service = Service({7005: declaration(written - timedelta(minutes=11))})
    plan, records = hold(tmp_path, service, other)
    assert [c.action for c in plan.changes] == [Action.CREATE, Action.CREATE]
    assert records == ()


def test_the_states_last_write_is_a_records_own_not_a_field_of_its_spec(tmp_path: Path) -> None:
    written = NOW - timedelta(hours=30)
    # A spec holding a field of that name (a hand edit, another kind's body) later than now.
    odd = _applied("DepartureDeclaration/dep-0", 7001, written, updatedAt="2099-01-01T00:00:00Z")
    older = _applied("DepartureDeclaration/dep-9", 7009, written - timedelta(hours=1))
    service = Service({7002: declaration(written + timedelta(minutes=30))})
    plan, records = hold(tmp_path, service, odd, older)
    assert plan.changes[0].action is Action.NEEDS_DECISION
    assert [r.look_since for r in records] == ["2026-11-22T05:50:00Z"]


def test_with_no_record_the_last_day_is_looked_at(tmp_path: Path) -> None:
    service = Service(
        {
            7002: declaration(NOW - timedelta(hours=25)),
            7003: declaration(NOW - timedelta(hours=23)),
        }
    )
    plan, records = hold(tmp_path, service)
    assert plan.changes[0].action is Action.NEEDS_DECISION
    assert "values: 7003" in plan.changes[0].reason
    assert [r.look_since for r in records] == ["2026-11-22T12:00:00Z"]


def test_a_lookalike_another_environment_holds_does_not_hold_the_creation(
    tmp_path: Path,
) -> None:
    service = Service({7002: declaration(NOW - timedelta(hours=1))})
    de = _other_environment((7002, RecordStatus.APPLIED))
    plan, records = hold(tmp_path, service, others=(de,))
    assert plan.changes[0].action is Action.CREATE
    assert records == ()


def test_a_list_the_service_fails_holds_the_creation_and_records_nothing(
    tmp_path: Path,
) -> None:
    plan, records = hold(tmp_path, Failing({}))
    departure = plan.changes[0]
    assert departure.action is Action.NEEDS_DECISION
    assert "could not be read (the service failed (503))" in departure.reason
    assert "the next apply looks again" in departure.reason
    assert records == ()


def test_a_held_creation_is_looked_for_from_its_own_time_and_taken_back_when_none_is_it(
    tmp_path: Path,
) -> None:
    # Recorded held since 09:50; `state forget` then moved its time to 11:00: what the
    # service made before is, the user said, not it.
    held = lost(NOW - timedelta(hours=1), RecordStatus.UNKNOWN, look_since="2026-11-23T11:00:00Z")
    service = Service({7002: declaration(NOW - timedelta(hours=2))})
    settled, notices, slept, records = settle(tmp_path, service, held)
    assert settled == [Settled(ADDRESS, True, looked_since="2026-11-23T11:00:00Z")]
    assert "nothing the service made since 2026-11-23T11:00:00Z" in settled[0].describe()
    assert ADDRESS not in records
    assert (notices, slept) == ([], [])  # nothing of it was sent: nothing to wait for


def test_a_lookalike_customs_rejected_or_cancelled_does_not_hold_the_creation(
    tmp_path: Path,
) -> None:
    service = Service(
        {
            7002: declaration(NOW - timedelta(hours=1), status="invalid"),
            7003: declaration(NOW - timedelta(hours=1), status="canceled"),
            7004: declaration(NOW - timedelta(hours=1), status="ready"),
        }
    )
    plan, records = hold(tmp_path, service)
    assert "values: 7004." in plan.changes[0].reason  # the one that still declares goods
    service.declarations[7004]["status"] = "error"
    plan, records = hold(tmp_path / "again", service)
    assert plan.changes[0].action is Action.CREATE
    assert records == ()


def test_a_declaration_of_another_type_is_left_out_without_reading_it(tmp_path: Path) -> None:
    other_type = "internalTransit"  # SPEC declares externalTransit
    service = Service(
        {
            7002: declaration(NOW - timedelta(hours=1), declarationType=other_type),
            7003: declaration(NOW - timedelta(hours=1)),
        }
    )
    plan, _ = hold(tmp_path, service)
    assert "values: 7003" in plan.changes[0].reason
    assert service.read == [7003]  # the list says 7002 is of another type
