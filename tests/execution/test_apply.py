from __future__ import annotations

import json
import os
import stat
import threading
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import httpx
import pytest

from customs_batch import sandbox as sandbox_package
from customs_batch.client import (
    NO_RETRIES,
    CustomsClient,
    RateLimit,
    RetryPolicy,
    Sender,
)
from customs_batch.commands.state import record_word
from customs_batch.errors import StateError
from customs_batch.execution import apply as apply_module
from customs_batch.execution import scheduler
from customs_batch.execution.apply import ApplyReport, Outcome, apply_plan
from customs_batch.execution.elsewhere import ObjectsHeldElsewhere
from customs_batch.execution.reconcile import (
    adopt,
    check_gone,
    import_object,
    refresh,
    status_entries,
)
from customs_batch.execution.results import ResultStatus, recorded_result
from customs_batch.execution.scheduler import NodeStatus
from customs_batch.execution.waiting import WaitOptions
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.model import derived_idempotency_key, new_idempotency_key
from customs_batch.manifest import Document
from customs_batch.planning import Action, plan_changes
from customs_batch.planning.diff import following_processing
from customs_batch.planning.model import Operation, Plan
from customs_batch.reports._words import summary_text
from customs_batch.sandbox.faults import parse_faults
from customs_batch.sandbox.seed import parse_seed
from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord, State, edits
from customs_batch.state.backend import OtherState, StateBackend
from customs_batch.state.postgres import PostgresBackend

from ..client.bodies import departure
from ..client.fakes import FakeClock, sender_on
from ..planning.helpers import doc, movement
from .conftest import Emulator

GROUP = {"name": "EU road", "code": "EU-ROAD", "companyId": 1}
EORI = {"eoriNo": "DE123456789012345"}
"""What a party update of departure() may write: a field the departure leaves out."""


class Recorder:
    def __init__(self) -> None:
        self.outcomes: list[Outcome] = []

    def started(self, plan: Plan, operations: int, skipped: int) -> None:
        self.total = operations
        self.skipped = skipped

    def sending(self, address: object) -> None:
        pass

    def finished_one(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)


def _apply(
    backend: LocalBackend, docs: list[Any], emulator: Emulator, **options: Any
) -> ApplyReport:
    with backend.open("apply") as session:
        plan = plan_changes(docs, session.state)
        return apply_plan(
            plan, session, emulator.client, parallelism=4, stop=threading.Event(), **options
        )


def test_create_then_no_change_then_update(tmp_path: Path, emulator: Emulator) -> None:
    backend = LocalBackend(tmp_path)
    update = doc(
        Kind.TRANSIT_PARTY_UPDATE,
        "u",
        {"declarationId": "${ref:DepartureDeclaration/d.declarationId}", "Consignee": EORI},
        3,
    )
    docs = [
        doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0),
        doc(Kind.DEPARTURE_DECLARATION, "d", departure(), 1),
        movement("m", 2),
        update,
    ]
    events = Recorder()
    report = _apply(backend, docs, emulator, events=events)
    assert report.ok, report.outcomes
    assert events.total == 4 and len(events.outcomes) == 4
    state = backend.read()
    assert {a: r.status for a, r in state.resources.items()} == dict.fromkeys(
        ["TemplateGroup/g", "DepartureDeclaration/d", "Movement/m", "TransitPartyUpdate/u"],
        RecordStatus.APPLIED,
    )
    declaration_id = state.resources["DepartureDeclaration/d"].outputs["declarationId"]
    assert state.resources["TransitPartyUpdate/u"].spec["declarationId"] == declaration_id
    assert (
        state.resources["Movement/m"].outputs["movementId"] == emulator.movements()[0]["movementId"]
    )

    again = plan_changes(docs, backend.read())
    assert {c.action for c in again.changes} == {Action.NO_CHANGE}

    renamed = [doc(Kind.TEMPLATE_GROUP, "g", {**GROUP, "name": "EU road 2"}, 0), *docs[1:]]
    assert _apply(backend, renamed, emulator).ok
    groups = emulator.http.get("/v1/declaration-templates/groups").json()["result"]
    assert [g["name"] for g in groups if g["code"] == "EU-ROAD"] == ["EU road 2"]


def test_a_refusal_is_recorded_with_the_service_message_and_skips_dependents(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    bad = movement("bad", 0)
    bad = doc(Kind.MOVEMENT, "bad", {**bad.spec, "partyId": None}, 0)
    later = movement("later", 1)  # same shipment and HAWB: waits for "bad"
    elsewhere = movement("elsewhere", 2, hawb="hawb_a2")
    report = _apply(backend, [bad, later, elsewhere], emulator)
    statuses = {str(o.address): o.status for o in report.outcomes}
    assert statuses == {
        "Movement/bad": NodeStatus.FAILED,
        "Movement/later": NodeStatus.SKIPPED,
        "Movement/elsewhere": NodeStatus.SUCCEEDED,
    }
    record = backend.read().resources["Movement/bad"]
    assert record.status is RecordStatus.FAILED and record.error is not None
    assert record.error.status == 400 and "partyId" in record.error.message


def test_a_pending_movement_is_resent_with_its_key_and_not_duplicated(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    assert _apply(backend, [movement("m", 0)], emulator).ok
    first = backend.read().resources["Movement/m"]
    # As if the answer had been lost: the state holds only the intent.
    with backend.open("test") as session:
        session.record(first.with_changes(status=RecordStatus.PENDING, outputs={}))
    plan = plan_changes([movement("m", 0)], backend.read())
    assert plan.changes[0].idempotency_key == first.idempotency_key
    assert _apply(backend, [movement("m", 0)], emulator).ok
    assert len(emulator.movements()) == 1
    assert backend.read().resources["Movement/m"].outputs == first.outputs


@pytest.mark.parametrize("kind", ["local", "postgres"])
def test_a_movements_key_is_derived_from_the_state_the_run_started_from(
    kind: str, tmp_path: Path, emulator: Emulator, request: pytest.FixtureRequest
) -> None:
    # A first run draws the state's lineage before it sends: the key is derived from the
    # lineage the state then records, and the next run's from the serial it started from.
    backend: StateBackend = (
        LocalBackend(tmp_path)
        if kind == "local"
        else PostgresBackend(request.getfixturevalue("postgres_url"), "keys")
    )
    first = [movement("m", 0)]
    for serial, documents in enumerate((first, [*first, movement("n", 1, "hawb_a2")])):
        with backend.open("apply") as session:
            assert session.state.serial == serial
            plan = plan_changes(documents, session.state)
            run = apply_plan(plan, session, emulator.client, parallelism=2, stop=threading.Event())
            assert run.ok
        state = backend.read()
        assert state.lineage and state.serial == serial + 1
        sent = documents[-1]
        record = state.resources[str(sent.address)]
        assert record.idempotency_key == derived_idempotency_key(
            state.lineage, serial, str(sent.address), sent.spec
        )
    assert len(emulator.movements()) == 2


def test_a_planned_re_send_is_not_sent_once_its_key_has_expired(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Reported: a saved plan (or a long run) re-sent a lost movement under its recorded
    # key after the key's 24 hours had passed, and the service made a second movement.
    backend = LocalBackend(tmp_path)
    assert _apply(backend, [movement("m", 0)], emulator).ok
    first = backend.read().resources["Movement/m"]
    now = datetime.now(UTC)
    aged = new_idempotency_key(now - timedelta(hours=23, minutes=40))
    with backend.open("test") as session:  # the answer lost, the key made 23 h 40 min ago
        session.record(
            first.with_changes(status=RecordStatus.PENDING, outputs={}, idempotency_key=aged)
        )
    with backend.open("apply") as session:
        # Planned an hour ago (a saved plan): the key was honoured then.
        plan = plan_changes([movement("m", 0)], session.state, now=now - timedelta(hours=1))
        assert plan.changes[0].idempotency_key == aged
        report = apply_plan(plan, session, emulator.client, parallelism=1, stop=threading.Event())
    [outcome] = report.outcomes
    assert outcome.status is NodeStatus.FAILED and "no longer honoured" in outcome.detail
    assert len(emulator.movements()) == 1, "a second movement under an expired key"
    kept = backend.read().resources["Movement/m"]
    assert kept.status is RecordStatus.PENDING and kept.idempotency_key == aged
    assert plan_changes([movement("m", 0)], backend.read()).changes[0].action is (
        Action.NEEDS_DECISION
    )


class _RateLimitedFor:
    """Every request is answered 429, asking to wait ``seconds`` before the next."""

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds
        self.requests = 0

    def __call__(self, _request: httpx.Request) -> httpx.Response:
        self.requests += 1
        said = {"statusCode": 429, "message": "Too Many Requests"}
        return httpx.Response(429, json=said, headers={"Retry-After": str(self.seconds)})


def test_a_re_send_is_not_attempted_again_after_its_key_has_expired(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found in review: a re-send under a key honoured for five more minutes, answered 429
    # with Retry-After: 600, was sent again after the wait, when the service no longer
    # honoured the key and could make a second movement.
    backend = LocalBackend(tmp_path)
    assert _apply(backend, [movement("m", 0)], emulator).ok
    first = backend.read().resources["Movement/m"]
    aged = new_idempotency_key(datetime.now(UTC) - timedelta(hours=23, minutes=25))
    with backend.open("test") as session:  # the answer lost, the key made 23 h 25 min ago
        session.record(
            first.with_changes(status=RecordStatus.PENDING, outputs={}, idempotency_key=aged)
        )
    clock = FakeClock()
    service = _RateLimitedFor(600)
    sender = sender_on(clock, service)
    with CustomsClient(sender) as client, backend.open("apply") as session:
        plan = plan_changes([movement("m", 0)], session.state)
        assert plan.changes[0].idempotency_key == aged
        report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    assert service.requests == 1, "attempted again after the key's 24 hours"
    [outcome] = report.outcomes
    assert outcome.status is NodeStatus.FAILED and "rate limited" in outcome.detail
    kept = backend.read().resources["Movement/m"]
    assert kept.status is RecordStatus.PENDING and kept.idempotency_key == aged


def test_a_re_send_under_a_key_without_time_keeps_the_time_its_24_hours_count_from(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found in review: a version 4 key (written by an earlier version) counts from its
    # record's time, which each re-send stamped anew: a re-send that got no answer made
    # the key look fresh, and a plan 30 h after the first request re-sent it.
    backend = LocalBackend(tmp_path)
    assert _apply(backend, [movement("m", 0)], emulator).ok
    first = backend.read().resources["Movement/m"]
    legacy = str(uuid.uuid4())
    sent = (datetime.now(UTC) - timedelta(hours=20)).isoformat(timespec="milliseconds")
    with backend.open("test") as session:  # its answer lost, 20 hours ago
        session.record(
            first.with_changes(
                status=RecordStatus.PENDING, outputs={}, idempotency_key=legacy, updated_at=sent
            )
        )
    # Re-sent now, and this answer is lost too (every answer dropped after the work).
    dropping = Emulator(processing_seconds=0.0, faults=parse_faults("drop-after=1"))
    try:
        report = _apply(backend, [movement("m", 0)], dropping)
    finally:
        dropping.close()
    assert not report.ok
    kept = backend.read().resources["Movement/m"]
    assert kept.status is RecordStatus.UNKNOWN and kept.idempotency_key == legacy
    assert kept.updated_at == sent, "the re-send moved the time its key counts from"
    later = datetime.now(UTC) + timedelta(hours=10)  # 30 h after the first request
    [change] = plan_changes([movement("m", 0)], backend.read(), now=later).changes
    assert change.action is Action.NEEDS_DECISION


def test_a_first_request_whose_answer_is_lost_keeps_the_time_its_key_began(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found in review: apply's keys hold no time, so their 24 hours count from the record's;
    # a first request whose answers were all lost was recorded when the run gave up on it
    # (after its retries, or the waits of 429s), later than the service began counting.
    stamps = iter(("2026-11-29T08:00:00.000Z", "2026-11-29T10:00:00.000Z"))
    stamp = next(stamps)
    monkeypatch.setattr(apply_module, "now_iso", lambda: stamp)

    def lost(_request: httpx.Request) -> httpx.Response:
        nonlocal stamp
        stamp = next(stamps, stamp)  # the answers take two hours to be given up on
        return httpx.Response(503, json={"statusCode": 503, "message": "Unavailable"})

    backend = LocalBackend(tmp_path)
    with CustomsClient(sender_on(FakeClock(), lost)) as client, backend.open("apply") as session:
        plan = plan_changes([movement("m", 0)], session.state)
        assert plan.changes[0].idempotency_key is None  # made by apply
        report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    assert not report.ok
    kept = backend.read().resources["Movement/m"]
    assert kept.status is RecordStatus.UNKNOWN and kept.idempotency_key is not None
    assert kept.updated_at == "2026-11-29T08:00:00.000Z"


def test_wait_records_ready_and_invalid_declarations(tmp_path: Path, emulator: Emulator) -> None:
    backend = LocalBackend(tmp_path)
    docs = [
        doc(Kind.DEPARTURE_DECLARATION, "ok", departure("C-OK"), 0),
        doc(Kind.DEPARTURE_DECLARATION, "bad", departure("INVALID-1"), 1),
    ]
    report = _apply(backend, docs, emulator, wait=WaitOptions(timeout=5, interval=0.01))
    by_name = {o.address.name: o for o in report.outcomes}
    assert by_name["ok"].status is NodeStatus.SUCCEEDED and by_name["ok"].remote_status == "ready"
    assert by_name["bad"].status is NodeStatus.FAILED and "invalid" in by_name["bad"].detail
    record = backend.read().resources["DepartureDeclaration/bad"]
    assert record.remote_status == "invalid" and record.remote_errors


def test_the_way_out_of_a_rejected_departure_followed_as_written_leaves_nothing_refused(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: plan said of a departure customs found invalid "Correct the
    # document ..., or `customs-batch state rm ADDR` to stop tracking it". Followed as
    # written, the document still in the manifests, every plan then refused it (exit 1) as
    # "forgotten by state rm, but it still exists at the service": the way out names the
    # document's removal too, as an export cancellation customs refused does.
    backend = LocalBackend(tmp_path)
    bad = doc(Kind.DEPARTURE_DECLARATION, "bad", departure("INVALID-1"), 0)
    _apply(backend, [bad], emulator, wait=WaitOptions(timeout=5, interval=0.01))
    (rejected,) = plan_changes([bad], backend.read()).changes
    assert rejected.action is Action.REJECTED
    way_out = (
        "or remove the document from the manifests and "
        "`customs-batch state rm DepartureDeclaration/bad` to stop tracking it"
    )
    assert way_out in rejected.reason
    with backend.open("state rm") as session:
        edits.forget(session, "DepartureDeclaration/bad", gone=False)
    assert not plan_changes([], backend.read()).changes  # the document removed: nothing left


def test_a_stop_before_the_start_sends_nothing(tmp_path: Path, emulator: Emulator) -> None:
    backend = LocalBackend(tmp_path)
    stop = threading.Event()
    stop.set()
    with backend.open("apply") as session:
        plan = plan_changes([movement("m", 0)], State(lineage="", serial=0))
        report = apply_plan(plan, session, emulator.client, parallelism=2, stop=stop)
    assert report.stopped
    assert [o.status for o in report.outcomes] == [NodeStatus.NOT_STARTED]
    assert report.count(NodeStatus.NOT_STARTED) == 1
    assert emulator.movements() == []


class _KeyInFlight(httpx.BaseTransport):
    """Answers every movement POST as the service does while the same Idempotency-Key is
    still being handled: 409, though the first request may yet create the movement."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith("/movements"):
            key = request.headers["Idempotency-Key"]
            message = f"a request with Idempotency-Key {key} is in flight"
            body = {"statusCode": 409, "message": message, "error": "Conflict"}
            return httpx.Response(409, json=body)
        return self.inner.handle_request(request)


def test_a_409_for_a_key_in_flight_keeps_the_intent_and_its_key(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    sender = Sender(
        "http://sandbox.test",
        "sandbox-key",
        transport=_KeyInFlight(emulator.transport),
        retry_policy=NO_RETRIES,
    )
    with CustomsClient(sender) as client, backend.open("apply") as session:
        plan = plan_changes([movement("m", 0)], session.state)
        report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    assert report.outcomes[0].status is NodeStatus.FAILED
    assert "outcome unknown" in report.outcomes[0].detail
    record = backend.read().resources["Movement/m"]
    assert record.status is RecordStatus.UNKNOWN and record.idempotency_key
    plan = plan_changes([movement("m", 0)], backend.read())
    assert plan.changes[0].idempotency_key == record.idempotency_key
    assert _apply(backend, [movement("m", 0)], emulator).ok
    assert len(emulator.movements()) == 1


class _AnswerLostThenKeyRefused(httpx.BaseTransport):
    """The first movement POST reaches the service, which makes the movement, and its
    answer is lost; the re-send under the same key is refused (422), as by a service that
    takes the key's re-use for another request (one that binds the key to the body's bytes,
    say: 1.5 written 1.50)."""

    def __init__(self, service: httpx.BaseTransport) -> None:
        self.service = service
        self.posts = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/movements"):
            return self.service.handle_request(request)
        self.posts += 1
        if self.posts == 1:
            self.service.handle_request(request).read()
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        key = request.headers["Idempotency-Key"]
        message = f"Idempotency-Key {key} was used with another request"
        body = {"statusCode": 422, "message": message, "error": "Unprocessable Entity"}
        return httpx.Response(422, json=body)


def test_a_resend_refused_under_its_key_leaves_the_first_outcome_unknown(
    tmp_path: Path, emulator: Emulator
) -> None:
    # The refusal was recorded as the movement's (failed, nothing made): the next run sent
    # it under a new key, and the service held two movements for one document.
    backend = LocalBackend(tmp_path)
    faulty = Sender(
        "http://sandbox.test",
        "sandbox-key",
        transport=_AnswerLostThenKeyRefused(emulator.transport),
        retry_policy=NO_RETRIES,
    )
    with CustomsClient(faulty) as client:
        for _ in range(2):  # the answer lost, then the re-send under its key refused
            with backend.open("apply") as session:
                plan = plan_changes([movement("m", 0)], session.state)
                report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    [outcome] = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert outcome.detail.startswith("outcome still unknown: the service refused the re-send")
    assert "`customs-batch state adopt Movement/m ID`" in outcome.detail
    assert "`customs-batch state forget Movement/m`" in outcome.detail
    record = backend.read().resources["Movement/m"]
    assert record.status is RecordStatus.UNKNOWN and not record.outputs
    assert len(emulator.movements()) == 1

    [change] = plan_changes([movement("m", 0)], backend.read()).changes
    assert change.idempotency_key == record.idempotency_key  # never a new key
    assert _apply(backend, [movement("m", 0)], emulator).ok  # replayed by the service
    assert len(emulator.movements()) == 1


def test_a_409_group_another_environment_of_the_service_records_is_not_adopted(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Adopted, both environments recorded group N and each apply wrote its own document's
    # values into it.
    nl = LocalBackend(tmp_path / "nl")
    assert _apply(nl, [doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0)], emulator).ok
    group_id = nl.read().resources["TemplateGroup/g"].outputs["id"]
    other = OtherState("the state of environment 'nl'", "http://sandbox.test", nl.read(), "", "nl")
    de = LocalBackend(tmp_path / "de")
    with de.open("apply") as session:
        plan = plan_changes([doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0)], session.state)
        report = apply_plan(
            plan,
            session,
            emulator.client,
            parallelism=1,
            stop=threading.Event(),
            elsewhere=ObjectsHeldElsewhere(lambda: [other]),
        )
    [outcome] = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert f"it holds an object identical to this document ({group_id})" in outcome.detail
    assert "recorded as TemplateGroup/g in the state of environment 'nl'" in outcome.detail
    assert "`customs-batch state rm TemplateGroup/g --env nl`" in outcome.detail
    record = de.read().resources["TemplateGroup/g"]
    assert record.status is RecordStatus.FAILED and not record.outputs
    assert f"`customs-batch import TemplateGroup/g {group_id}` here" in outcome.detail
    # Released there (a tombstone), it is this environment's to adopt (a first apply).
    de = LocalBackend(tmp_path / "de-after")
    released = nl.read()
    released.resources["TemplateGroup/g"] = released.resources["TemplateGroup/g"].with_changes(
        status=RecordStatus.FORGOTTEN
    )
    let_go = OtherState("the state of environment 'nl'", "http://sandbox.test", released)
    with de.open("apply") as session:
        plan = plan_changes([doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0)], session.state)
        report = apply_plan(
            plan,
            session,
            emulator.client,
            parallelism=1,
            stop=threading.Event(),
            elsewhere=ObjectsHeldElsewhere(lambda: [let_go]),
        )
    assert report.ok, report.outcomes
    assert de.read().resources["TemplateGroup/g"].outputs["id"] == group_id


def test_a_409_group_is_looked_up_again_after_a_refused_attempt(
    tmp_path: Path, emulator: Emulator
) -> None:
    # A group made outside customs-batch, differing in name: the first apply's 409 names it
    # and says what to do. Once the document was made to match it, the next apply (the
    # record holding the refused attempt) got the bare 409, "code EU-ROAD is already used",
    # never adopted it and named no way out; a first apply of the same document adopts it.
    made = emulator.http.post("/v1/declaration-templates/groups", json=GROUP)
    made.raise_for_status()
    group_id = made.json()["id"]
    backend = LocalBackend(tmp_path)
    other_name = {**GROUP, "name": "EU road (old)"}
    report = _apply(backend, [doc(Kind.TEMPLATE_GROUP, "g", other_name, 0)], emulator)
    [outcome] = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert f"(id {group_id}) and differs in name" in outcome.detail
    assert backend.read().resources["TemplateGroup/g"].never_created
    report = _apply(backend, [doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0)], emulator)
    assert report.ok, report.outcomes
    record = backend.read().resources["TemplateGroup/g"]
    assert (record.status, record.outputs["id"]) == (RecordStatus.APPLIED, group_id)
    # Still another group: the way out is named again, not the bare 409.
    backend = LocalBackend(tmp_path / "again")
    for _ in range(2):
        report = _apply(backend, [doc(Kind.TEMPLATE_GROUP, "g", other_name, 0)], emulator)
        [outcome] = report.outcomes
        assert outcome.status is NodeStatus.FAILED
        assert f"`customs-batch import TemplateGroup/g {group_id}` records it" in outcome.detail


def test_a_409_group_of_other_templates_another_environment_records_says_so(
    tmp_path: Path, emulator: Emulator
) -> None:
    # A group whose templates the service cannot give back is not adopted on a 409: the
    # way out said `customs-batch import TemplateGroup/g N`, which, followed, refused (exit
    # 3) since nl records N. The refusal now names nl's record and how to release it.
    with_templates = {**GROUP, "DeclarationTemplates": [{"procedureType": "H1"}]}
    nl = LocalBackend(tmp_path / "nl")
    assert _apply(nl, [doc(Kind.TEMPLATE_GROUP, "g", with_templates, 0)], emulator).ok
    group_id = nl.read().resources["TemplateGroup/g"].outputs["id"]
    other = OtherState("the state of environment 'nl'", "http://sandbox.test", nl.read(), "", "nl")
    de = LocalBackend(tmp_path / "de")
    report = _apply(
        de,
        [doc(Kind.TEMPLATE_GROUP, "g", with_templates, 0)],
        emulator,
        elsewhere=ObjectsHeldElsewhere(lambda: [other]),
    )
    [outcome] = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert (
        f"it holds an object of this document's unique key (a template group's code) ({group_id})"
        in outcome.detail
    )
    assert "recorded as TemplateGroup/g in the state of environment 'nl'" in outcome.detail
    assert "`customs-batch state rm TemplateGroup/g --env nl`" in outcome.detail
    assert "records it, and the next plan" not in outcome.detail
    record = de.read().resources["TemplateGroup/g"]
    assert record.status is RecordStatus.FAILED and not record.outputs
    # No other state records it: the way out is still `import`.
    alone = _apply(
        LocalBackend(tmp_path / "alone"),
        [doc(Kind.TEMPLATE_GROUP, "g", with_templates, 0)],
        emulator,
    )
    [outcome] = alone.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert f"`customs-batch import TemplateGroup/g {group_id}` records it" in outcome.detail


def test_a_lost_creation_found_recorded_by_another_environment_stays_unknown(
    tmp_path: Path, emulator: Emulator
) -> None:
    # nl's group creation lost its answer; de, applying the same document, got the 409 and
    # adopted the group (no state recorded it yet). nl's next apply looked the group up by
    # its code, took it too, and both environments wrote into it.
    made = emulator.http.post("/v1/declaration-templates/groups", json=GROUP)  # nl's lost one
    made.raise_for_status()
    group_id = made.json()["id"]
    held = State.new()
    held.resources["TemplateGroup/g"] = ResourceRecord(
        "TemplateGroup/g", RecordStatus.APPLIED, "create", GROUP, outputs={"id": group_id}
    )
    de = OtherState("the state of environment 'de'", "http://sandbox.test", held, "", "de")
    nl = LocalBackend(tmp_path)
    sent = (datetime.now(UTC) - timedelta(minutes=5)).isoformat(timespec="milliseconds")
    with nl.open("test") as session:
        session.record(
            ResourceRecord(
                "TemplateGroup/g", RecordStatus.UNKNOWN, "create", GROUP, updated_at=sent
            )
        )
    with nl.open("apply") as session:
        plan = plan_changes([doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0)], session.state)
        assert plan.changes[0].action is Action.CREATE  # looked up by its code first
        report = apply_plan(
            plan,
            session,
            emulator.client,
            parallelism=1,
            stop=threading.Event(),
            elsewhere=ObjectsHeldElsewhere(lambda: [de]),
        )
    [outcome] = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert outcome.detail.startswith(
        f"outcome still unknown: the service holds an object identical to this document "
        f"({group_id})"
    )
    assert "recorded as TemplateGroup/g in the state of environment 'de'" in outcome.detail
    assert f"`customs-batch state adopt TemplateGroup/g {group_id}` here" in outcome.detail
    assert "`customs-batch state forget TemplateGroup/g` here" in outcome.detail
    record = nl.read().resources["TemplateGroup/g"]
    assert record.status is RecordStatus.UNKNOWN and not record.outputs


class _CountedChanges(tuple[Any, ...]):
    """A plan's changes that count how often they are gone through."""

    passes = 0

    def __iter__(self) -> Any:
        type(self).passes += 1
        return super().__iter__()


def test_apply_goes_through_the_plan_once_and_walks_only_what_it_sends(
    tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A plan of 100,000 documents with 10 to send: every pass over it, and every table of
    # all its changes, is paid before the first request.
    backend = LocalBackend(tmp_path)
    kept = [movement(f"m{n}", n, quantity=n + 1) for n in range(5)]
    assert _apply(backend, kept, emulator).ok
    added = movement("added", 5, quantity=6)  # after m4 on its HAWB
    walked: list[list[Address]] = []

    def walk(order: list[Address], deps: dict[Address, Any], *a: Any, **k: Any) -> Any:
        walked.append(list(order))
        assert set(deps) <= set(order)
        return scheduler.walk(order, deps, *a, **k)

    monkeypatch.setattr("customs_batch.execution.apply.walk", walk)
    with backend.open("apply") as session:
        plan = plan_changes([*kept, added], session.state)
        assert [c.action for c in plan.changes].count(Action.NO_CHANGE) == 5
        counted = replace(plan, changes=_CountedChanges(plan.changes))
        _CountedChanges.passes = 0
        report = apply_plan(
            counted, session, emulator.client, parallelism=2, stop=threading.Event()
        )
    assert report.ok
    assert _CountedChanges.passes == 1
    assert walked == [[Address(Kind.MOVEMENT, "added")]]
    assert [str(o.address) for o in report.outcomes] == ["Movement/added"]


def test_a_refused_change_does_not_hold_back_what_depends_on_it(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    departure_doc = doc(Kind.DEPARTURE_DECLARATION, "d", departure(), 0)
    assert _apply(backend, [departure_doc], emulator).ok
    heavier = doc(Kind.DEPARTURE_DECLARATION, "d", {**departure(), "totalWeight": 130.0}, 0)
    update = doc(
        Kind.TRANSIT_PARTY_UPDATE,
        "u",
        {"declarationId": "${ref:DepartureDeclaration/d.declarationId}", "Consignee": EORI},
        1,
    )
    events = Recorder()
    report = _apply(backend, [heavier, update], emulator, events=events)
    # Announced as they end: one operation sent, one change skipped.
    assert (events.total, events.skipped, len(events.outcomes)) == (1, 1, 2)
    statuses = {str(o.address): o.status for o in report.outcomes}
    assert statuses == {
        "DepartureDeclaration/d": NodeStatus.SKIPPED,
        "TransitPartyUpdate/u": NodeStatus.SUCCEEDED,
    }
    assert not report.ok
    assert "totalWeight" in report.outcomes[0].detail


def test_what_depends_on_an_object_customs_rejected_waits_until_it_is_corrected(
    tmp_path: Path, emulator: Emulator
) -> None:
    # In the run that finds the departure invalid, its party update is skipped; in the next
    # one, with nothing changed, it must not go to the declaration customs rejected either.
    backend = LocalBackend(tmp_path)
    invalid = doc(
        Kind.DEPARTURE_DECLARATION, "d", {**departure(), "commercialReference": "INVALID-1"}, 0
    )
    update = doc(
        Kind.TRANSIT_PARTY_UPDATE,
        "u",
        {"declarationId": "${ref:DepartureDeclaration/d.declarationId}", "Consignee": EORI},
        1,
    )
    for run in range(2):
        events = Recorder()
        report = _apply(
            backend,
            [invalid, update],
            emulator,
            wait=WaitOptions(timeout=5, interval=0.01),
            events=events,
        )
        statuses = {str(o.address): o.status for o in report.outcomes}
        assert statuses["TransitPartyUpdate/u"] is NodeStatus.SKIPPED, report.outcomes
        assert not report.ok
        # The first run sends both (the update is skipped once the departure is invalid);
        # the next sends nothing, and announces both skipped, as it then reports them.
        announced = (2, 0) if run == 0 else (0, 2)
        assert (events.total, events.skipped) == announced
        assert len(events.outcomes) == 2
    counts = emulator.http.get("/_sandbox/stats").json()["requests"]
    assert not [name for name in counts if name.startswith("PATCH")], counts
    skipped = next(o for o in report.outcomes if str(o.address) == "TransitPartyUpdate/u")
    assert "it depends on DepartureDeclaration/d, which customs rejected" in skipped.detail


def test_a_resubmission_reads_the_rejected_declaration_first_and_stops_if_accepted_since(
    tmp_path: Path, emulator: Emulator
) -> None:
    """The state records the departure invalid, while the service holds it ready now
    (corrected there by another client): the corrected document is not submitted as a
    second declaration; what the service holds is recorded, and the next plan compares
    the document with it."""
    backend = LocalBackend(tmp_path)
    spec = departure()
    report = _apply(
        backend,
        [doc(Kind.DEPARTURE_DECLARATION, "d", spec, 0)],
        emulator,
        wait=WaitOptions(timeout=5, interval=0.01),
    )
    assert report.ok, report.outcomes
    address = "DepartureDeclaration/d"
    with backend.open("test") as session:  # as refresh recorded it before the correction
        ready = session.state.resources[address]
        session.record(ready.with_changes(remote_status="invalid", remote_errors=({"code": "X"},)))
    corrected = {**spec, "Consignee": {**spec["Consignee"], "city": "Bremen"}}
    docs = [doc(Kind.DEPARTURE_DECLARATION, "d", corrected, 0)]
    with backend.open("plan") as session:
        assert plan_changes(docs, session.state).changes[0].action is Action.RESUBMIT

    report = _apply(backend, docs, emulator)
    [outcome] = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert "not resubmitted" in outcome.detail and "is ready at the service now" in outcome.detail
    counts = emulator.http.get("/_sandbox/stats").json()["requests"]
    assert counts["POST /v1/declarations/transit"] == 1, counts
    record = backend.read().resources[address]
    assert (record.remote_status, record.remote_errors) == ("ready", ())
    assert record.outputs["declarationId"] == ready.outputs["declarationId"]
    assert not record.superseded
    with backend.open("plan") as session:
        assert plan_changes(docs, session.state).changes[0].action is Action.UPDATE


class _AnswerLostThenRateLimited(httpx.BaseTransport):
    """The first request reaches the service, which processes it, and its answer is lost
    (the connection drops); every later attempt is answered 429."""

    def __init__(self, service: httpx.BaseTransport) -> None:
        self.service = service
        self.requests = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        if self.requests == 1:
            self.service.handle_request(request).read()
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        said = {"statusCode": 429, "message": "Too Many Requests"}
        return httpx.Response(429, json=said, headers={"Retry-After": "0"})


def test_a_429_after_a_lost_answer_leaves_the_outcome_unknown_not_refused(
    tmp_path: Path, emulator: Emulator
) -> None:
    # The lost answer's request was processed: recorded as refused, the next run sent the
    # movement again under a new key, and the service held two.
    backend = LocalBackend(tmp_path)
    policy = RetryPolicy(max_attempts=3, base_delay=0.0, max_rate_limited=2)
    faulty = Sender(
        "http://sandbox.test",
        "sandbox-key",
        transport=_AnswerLostThenRateLimited(emulator.transport),
        retry_policy=policy,
    )
    with CustomsClient(faulty) as client, backend.open("apply") as session:
        plan = plan_changes([movement("m", 0)], session.state)
        report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    [outcome] = report.outcomes
    assert outcome.detail.startswith("outcome unknown"), outcome.detail
    record = backend.read().resources["Movement/m"]
    assert record.status is RecordStatus.UNKNOWN and record.idempotency_key
    assert len(emulator.movements()) == 1

    assert _apply(backend, [movement("m", 0)], emulator).ok  # sent again with its key
    assert len(emulator.movements()) == 1


class _LosesTheAnswers:
    """A session whose database goes away once the service has answered: recording an
    answer fails (the intents before it were recorded)."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self.state = session.state
        self.lock_info = session.lock_info

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def record(self, record: ResourceRecord) -> None:
        if record.status is RecordStatus.APPLIED:
            raise StateError("the state database: cannot record an operation (connection lost)")
        self._session.record(record)

    record_soon = record


def test_an_answer_the_state_could_not_record_keeps_its_ids_in_the_outcome(
    tmp_path: Path, emulator: Emulator
) -> None:
    # The service created the declaration; its record was lost with the database. The ID
    # was shown nowhere, and the next run could only offer every look-alike to adopt.
    backend = LocalBackend(tmp_path)
    with backend.open("apply") as session:
        plan = plan_changes([doc(Kind.DEPARTURE_DECLARATION, "d", departure(), 0)], session.state)
        report = apply_plan(
            plan, _LosesTheAnswers(session), emulator.client, parallelism=1, stop=threading.Event()
        )
    [outcome] = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    created = emulator.http.get("/v1/declarations/transit").json()["result"][0]["declarationId"]
    assert (
        f"the service answered submit-departure of DepartureDeclaration/d (declarationId={created}"
        in (outcome.detail)
    )
    assert "the state could not record it: the state database" in outcome.detail
    assert f"state adopt DepartureDeclaration/d {created}` records it" in outcome.detail


TEMPLATES = [{"procedureType": "H1", "declarationOffice": "NL000396"}]


@pytest.mark.parametrize(
    ("sent", "wanted", "taken"),
    [
        (GROUP, GROUP, True),
        (
            {**GROUP, "DeclarationTemplates": TEMPLATES},
            {**GROUP, "DeclarationTemplates": TEMPLATES},
            True,
        ),
        (GROUP, {**GROUP, "name": "EU road imports"}, False),
        (GROUP, {**GROUP, "DeclarationTemplates": TEMPLATES}, False),
    ],
    ids=["as sent", "templates as sent", "name edited since", "templates edited since"],
)
def test_a_group_whose_creation_was_lost_is_taken_only_as_the_document_describes_it(
    tmp_path: Path, emulator: Emulator, sent: dict[str, Any], wanted: dict[str, Any], taken: bool
) -> None:
    # The lost POST created the group; the document was edited since. Looked up by its
    # code, the group was taken as it is and recorded with the edited values: the plan then
    # said "no changes" while the service kept what the first request sent (its templates
    # are not listed by the API: taken as sent only when the document still has those).
    made = emulator.http.post("/v1/declaration-templates/groups", json=sent)
    made.raise_for_status()
    backend = LocalBackend(tmp_path)
    with backend.open("test") as session:
        session.record(ResourceRecord("TemplateGroup/g", RecordStatus.UNKNOWN, "create", sent))
    report = _apply(backend, [doc(Kind.TEMPLATE_GROUP, "g", wanted, 0)], emulator)
    [outcome] = report.outcomes
    record = backend.read().resources["TemplateGroup/g"]
    listed = emulator.http.get("/v1/declaration-templates/groups").json()["result"]
    assert [g["code"] for g in listed].count("EU-ROAD") == 1  # never created twice
    if taken:
        assert outcome.status is NodeStatus.SUCCEEDED, outcome.detail
        assert record.outputs["id"] == made.json()["id"]
        return
    assert outcome.status is NodeStatus.FAILED
    assert "differs in name" in outcome.detail or "templates cannot be compared" in outcome.detail
    assert f"(id {made.json()['id']}) and " in outcome.detail  # was "(id 2) ;", a probe saw
    assert f"`customs-batch import` of this document with ID {made.json()['id']}" in (
        outcome.detail
    )
    assert record.status is not RecordStatus.APPLIED
    assert [g["name"] for g in listed if g["code"] == "EU-ROAD"] == ["EU road"]


class _DurableWatch(Recorder):
    """Events that note, for each outcome, whether its journal line was on disk (covered
    by an fsync) when it was reported; and the fsyncs of the journal."""

    def __init__(self, journal: Path) -> None:
        super().__init__()
        self.journal = journal
        self.durable_bytes = 0
        self.fsyncs = 0
        self.on_disk_when_reported: dict[str, bool] = {}

    def fsync(self, real: Any, fd: int) -> None:
        size = os.fstat(fd).st_size
        real(fd)
        # The journal's, or its first line's under the name it is created with.
        creating = any(self.journal.parent.glob(f".{self.journal.name}.*.tmp"))
        if stat.S_ISREG(os.fstat(fd).st_mode) and (self.journal.exists() or creating):
            self.fsyncs += 1
            self.durable_bytes = max(self.durable_bytes, size)

    def finished_one(self, outcome: Outcome) -> None:
        super().finished_one(outcome)
        durable = self.journal.read_bytes()[: self.durable_bytes].decode()
        line = next(
            (json.loads(x) for x in reversed(durable.splitlines()) if str(outcome.address) in x),
            None,
        )
        recorded = line is not None and line["record"]["status"] == "applied"
        self.on_disk_when_reported[str(outcome.address)] = recorded


def test_an_outcome_is_reported_only_once_on_disk_and_costs_no_fsync_of_its_own(
    tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = LocalBackend(tmp_path)
    watch = _DurableWatch(backend.journal_path)
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: watch.fsync(real, fd))
    docs = [movement(f"m{n}", n) for n in range(4)]
    with backend.open("apply") as session:
        plan = plan_changes(docs, session.state)
        report = apply_plan(
            plan, session, emulator.client, parallelism=1, stop=threading.Event(), events=watch
        )
        fsyncs = watch.fsyncs
    assert report.ok, report.outcomes
    assert watch.on_disk_when_reported == {f"Movement/m{n}": True for n in range(4)}
    # Four intents, each waited for; each outcome rides on the next intent's fsync, the
    # last on the run's final flush: five fsyncs, where waiting for each record took eight.
    assert fsyncs == 5


class _IntentOnDiskCheck(httpx.BaseTransport):
    """Forwards every request; for each movement POST, notes whether a pending line with
    the request's Idempotency-Key was already covered by a finished fsync of the journal."""

    def __init__(self, inner: httpx.BaseTransport, journal: Path) -> None:
        self.inner = inner
        self.journal = journal
        self.durable_bytes = 0
        self.on_disk_when_sent: dict[str, bool] = {}
        self._guard = threading.Lock()

    def fsync(self, real: Any, fd: int) -> None:
        size = os.fstat(fd).st_size
        real(fd)
        # The journal's, or its first line's under the name it is created with.
        creating = any(self.journal.parent.glob(f".{self.journal.name}.*.tmp"))
        if stat.S_ISREG(os.fstat(fd).st_mode) and (self.journal.exists() or creating):
            with self._guard:
                self.durable_bytes = max(self.durable_bytes, size)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        key = request.headers.get("Idempotency-Key")
        if request.method == "POST" and key is not None:
            with self._guard:
                durable = self.journal.read_bytes()[: self.durable_bytes]
            lines = [json.loads(line) for line in durable.splitlines()]
            self.on_disk_when_sent[key] = any(
                line["record"]["idempotencyKey"] == key and line["record"]["status"] == "pending"
                for line in lines
            )
        return self.inner.handle_request(request)


def test_every_intent_is_on_disk_before_its_request_leaves(
    tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = LocalBackend(tmp_path)
    check = _IntentOnDiskCheck(emulator.transport, backend.journal_path)
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: check.fsync(real, fd))
    sender = Sender("http://sandbox.test", "sandbox-key", transport=check, retry_policy=NO_RETRIES)
    docs = [movement(f"m{n}", n) for n in range(12)]
    with CustomsClient(sender) as client, backend.open("apply") as session:
        plan = plan_changes(docs, session.state)
        report = apply_plan(plan, session, client, parallelism=4, stop=threading.Event())
    assert report.ok, report.outcomes
    assert len(check.on_disk_when_sent) == 12
    assert all(check.on_disk_when_sent.values()), check.on_disk_when_sent


class _Answering(httpx.BaseTransport):
    """The emulator, but every request to a path with the segment ``ident`` is answered
    ``status`` (the service no longer holds that object)."""

    def __init__(self, service: httpx.BaseTransport, ident: str, status: int) -> None:
        self.service, self.ident, self.status = service, ident, status

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.ident not in request.url.path.split("/"):
            return self.service.handle_request(request)
        said = {"statusCode": self.status, "message": "transit declaration not found"}
        return httpx.Response(self.status, json=said, request=request)


def _answering(emulator: Emulator, ident: str, status: int) -> Emulator:
    """``emulator`` as seen through :class:`_Answering` (the caller closes the client)."""
    client = CustomsClient(
        Sender(
            "http://sandbox.test",
            "sandbox-key",
            transport=_Answering(emulator.transport, ident, status),
            retry_policy=NO_RETRIES,
        )
    )
    return cast(Emulator, SimpleNamespace(client=client))


@pytest.mark.parametrize("wait", [True, False])
def test_a_404_for_a_recorded_declaration_is_noted_as_refresh_notes_it(
    tmp_path: Path, emulator: Emulator, wait: bool
) -> None:
    # --wait polls the declaration, an update PATCHes its parties: either told 404, the
    # record says so, and plan asks for a decision instead of "no changes" or the update.
    backend = LocalBackend(tmp_path)
    departure_doc = doc(Kind.DEPARTURE_DECLARATION, "d", departure(), 0)
    assert _apply(backend, [departure_doc], emulator).ok
    before = backend.read().resources["DepartureDeclaration/d"]
    ident = before.outputs["declarationId"]
    gone = _answering(emulator, str(ident), 404)
    if wait:
        docs = [departure_doc]
        options: dict[str, Any] = {"wait": WaitOptions(timeout=5, interval=0.01)}
    else:
        spec = {**departure(), "Consignee": {**departure()["Consignee"], "city": "Antwerp"}}
        docs = [doc(Kind.DEPARTURE_DECLARATION, "d", spec, 0)]
        options = {}
    try:
        with backend.open("apply") as session:
            plan = plan_changes(docs, session.state)
            if wait:  # as apply --wait plans it: the declaration still processing is followed
                plan = following_processing(plan, session.state)
            assert plan.changes[0].action is not Action.NO_CHANGE
            report = apply_plan(
                plan, session, gone.client, parallelism=1, stop=threading.Event(), **options
            )
    finally:
        gone.client.close()
    (outcome,) = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert f"{ident} was not found at the service (since" in outcome.detail
    assert "state rm --gone DepartureDeclaration/d" in outcome.detail
    record = backend.read().resources["DepartureDeclaration/d"]
    assert record.not_found_at is not None and record.status is RecordStatus.APPLIED
    assert (record.outputs, record.remote_status) == (before.outputs, before.remote_status)
    (planned,) = plan_changes(docs, backend.read()).changes
    assert planned.action is Action.NEEDS_DECISION
    assert "was not found at the service" in planned.reason


def test_refresh_takes_a_410_as_gone_for_that_object_and_reads_the_others(
    tmp_path: Path, emulator: Emulator
) -> None:
    # One 410 Gone stopped the whole refresh (exit 3, "fix the request"), recording nothing
    # of the others: it is the service saying it no longer holds that object, as a 404.
    backend = LocalBackend(tmp_path)
    docs = [
        doc(Kind.DEPARTURE_DECLARATION, "one", departure("C-1"), 0),
        doc(Kind.DEPARTURE_DECLARATION, "two", departure("C-2"), 1),
    ]
    assert _apply(backend, docs, emulator).ok
    ident = backend.read().resources["DepartureDeclaration/one"].outputs["declarationId"]
    gone = _answering(emulator, str(ident), 410)
    try:
        with backend.open("refresh") as session:
            drifts = refresh(session, gone.client)
    finally:
        gone.client.close()
    said = {drift.address: drift for drift in drifts}
    assert said["DepartureDeclaration/one"].missing
    assert "status processing -> ready" in said["DepartureDeclaration/two"].message
    records = backend.read().resources
    assert records["DepartureDeclaration/one"].not_found_at is not None
    assert records["DepartureDeclaration/two"].remote_status == "ready"


class _Reactivated(httpx.BaseTransport):
    """The emulator, but its HAWB lists show every HAWB active again (which this API
    cannot do: another system did it)."""

    def __init__(self, service: httpx.BaseTransport) -> None:
        self.service = service

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.service.handle_request(request)
        if request.method != "GET" or not request.url.path.endswith("/hawbs"):
            return response
        body = json.loads(response.read())
        for hawb in body["data"]:
            hawb["isActive"] = True
        return httpx.Response(response.status_code, json=body, request=request)


def test_refresh_reads_hawb_deactivations_back_and_plan_redoes_one_undone(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    docs = [doc(Kind.HAWB_DEACTIVATION, "h3", {"shipmentId": "shp_7Hk2Lm", "hawbId": "hawb_a3"}, 0)]
    assert _apply(backend, docs, emulator).ok
    with backend.open("refresh") as session:
        assert refresh(session, emulator.client) == []  # read back, inactive: no change
    assert backend.read().resources["HawbDeactivation/h3"].remote_status == "inactive"

    client = CustomsClient(
        Sender(
            "http://sandbox.test",
            "sandbox-key",
            transport=_Reactivated(emulator.transport),
            retry_policy=NO_RETRIES,
        )
    )
    try:
        with backend.open("refresh") as session:
            drifts = refresh(session, client)
    finally:
        client.close()
    assert [(d.address, d.message) for d in drifts] == [
        ("HawbDeactivation/h3", "status inactive -> active")
    ]
    (planned,) = plan_changes(docs, backend.read()).changes
    assert (planned.action, planned.operation) == (Action.CREATE, Operation.DEACTIVATE_HAWB)
    assert "hawb_a3 is active at the service again" in planned.reason
    assert _apply(backend, docs, emulator).ok  # deactivated again
    assert backend.read().resources["HawbDeactivation/h3"].outputs["isActive"] is False
    assert plan_changes(docs, backend.read()).changes[0].action is Action.NO_CHANGE

    client = CustomsClient(  # the shipment is gone, and its HAWBs with it
        Sender(
            "http://sandbox.test",
            "sandbox-key",
            transport=_Answering(emulator.transport, "shp_7Hk2Lm", 404),
            retry_policy=NO_RETRIES,
        )
    )
    try:
        with backend.open("refresh") as session:
            (drift,) = refresh(session, client)
    finally:
        client.close()
    assert drift.missing and backend.read().resources["HawbDeactivation/h3"].not_found_at


def test_a_field_the_answer_gives_another_value_is_recorded_as_the_service_holds_it(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: another client renamed the group; an update of isDefault
    # (a PATCH writes only the fields it names) was answered with the other name, yet the
    # record kept the manifests' name and the next plan said "No changes".
    backend = LocalBackend(tmp_path)
    group = doc(Kind.TEMPLATE_GROUP, "g", {**GROUP, "isDefault": False}, 0)
    assert _apply(backend, [group], emulator).ok
    ident = backend.read().resources["TemplateGroup/g"].outputs["id"]
    renamed = emulator.http.patch(
        f"/v1/declaration-templates/groups/{ident}", json={"name": "Renamed by other"}
    )
    assert renamed.status_code == 200, renamed.text
    edited = doc(Kind.TEMPLATE_GROUP, "g", {**GROUP, "isDefault": True}, 0)
    assert _apply(backend, [edited], emulator).ok
    record = backend.read().resources["TemplateGroup/g"]
    assert record.spec["name"] == "Renamed by other" and record.spec["isDefault"] is True
    [change] = plan_changes([edited], backend.read()).changes
    assert change.action is Action.UPDATE
    assert [(v.path, v.old, v.new) for v in change.values] == [
        ("name", "Renamed by other", GROUP["name"])
    ]
    assert _apply(backend, [edited], emulator).ok
    groups = emulator.http.get("/v1/declaration-templates/groups").json()["result"]
    assert [g["name"] for g in groups if g["id"] == ident] == [GROUP["name"]]
    assert plan_changes([edited], backend.read()).changes[0].action is Action.NO_CHANGE


class _Recording(httpx.BaseTransport):
    """The emulator, with the body of each PATCH sent to it kept."""

    def __init__(self, service: httpx.BaseTransport) -> None:
        self.service = service
        self.patched: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "PATCH":
            self.patched.append(json.loads(request.read()))
        return self.service.handle_request(request)


def test_an_update_of_a_departure_sends_only_the_parties_that_changed(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: the plan showed Consignee.city changing, and the PATCH
    # sent every party of the document, putting back a Consignor another client had
    # changed since, without a word.
    backend = LocalBackend(tmp_path)
    sent = departure()
    assert _apply(backend, [doc(Kind.DEPARTURE_DECLARATION, "d", sent, 0)], emulator).ok
    consignee = {**sent["Consignee"], "city": "Bremen"}
    edited = doc(Kind.DEPARTURE_DECLARATION, "d", {**sent, "Consignee": consignee}, 0)
    recording = _Recording(emulator.transport)
    client = CustomsClient(Sender("http://sandbox.test", "sandbox-key", transport=recording))
    with client, backend.open("apply") as session:
        plan = plan_changes([edited], session.state)
        assert [v.path for v in plan.changes[0].values] == ["Consignee.city"]
        report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    assert report.ok, report.outcomes
    assert recording.patched == [{"Consignee": consignee}]


class _RateLimitedOnce:
    """The first request is answered 429 (Retry-After: 1), the next one created."""

    def __init__(self) -> None:
        self.requests = 0

    def __call__(self, _request: httpx.Request) -> httpx.Response:
        self.requests += 1
        if self.requests == 1:
            said = {"statusCode": 429, "message": "Too Many Requests"}
            return httpx.Response(429, json=said, headers={"Retry-After": "1"})
        created = {"movementId": "mov_1", "hawbId": "hawb_a1", "shipmentId": "shp_7Hk2Lm"}
        return httpx.Response(201, json=created)


def test_a_key_made_now_is_retried_whatever_the_time_of_an_older_record(tmp_path: Path) -> None:
    # Found in review: a movement refused three days ago, corrected, is created under a new
    # key; its 24 hours were counted from the old record's time, already past, and a 429
    # asking to wait one second was not waited out.
    backend = LocalBackend(tmp_path)
    old = (datetime.now(UTC) - timedelta(days=3)).isoformat(timespec="milliseconds")
    refused = movement("m", 0)
    with backend.open("test") as session:
        session.record(
            ResourceRecord(
                "Movement/m", RecordStatus.FAILED, "create", dict(refused.spec), updated_at=old
            )
        )
    clock = FakeClock()
    service = _RateLimitedOnce()
    sender = sender_on(clock, service)
    corrected = doc(Kind.MOVEMENT, "m", {**refused.spec, "quantity": 2}, 0)
    with CustomsClient(sender) as client, backend.open("apply") as session:
        plan = plan_changes([corrected], session.state)
        assert plan.changes[0].idempotency_key is None  # a new key, made at apply
        report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    [outcome] = report.outcomes
    assert service.requests == 2 and outcome.status is NodeStatus.SUCCEEDED, outcome.detail


def _departure_and_its_party_update() -> list[Document]:
    """Departure ``d`` and party update ``u`` of it (its declaration by reference)."""
    party = {"declarationId": "${ref:DepartureDeclaration/d.declarationId}", "Consignee": EORI}
    return [
        doc(Kind.DEPARTURE_DECLARATION, "d", departure(), 0),
        doc(Kind.TRANSIT_PARTY_UPDATE, "u", party, 1),
    ]


def _reset_and_taken(emulator: Emulator) -> Emulator:
    """A new emulator, as a reset service, whose first departure and group (the IDs the
    first gave too) were made by another client: another weight, another code."""
    reset = Emulator(processing_seconds=0.0)
    other = reset.http.post(
        "/v1/declarations/transit", json={**departure("OTHER"), "totalWeight": 999}
    )
    assert other.status_code == 201, other.text
    group = reset.http.post(
        "/v1/declaration-templates/groups", json={**GROUP, "name": "Other's", "code": "OTHER"}
    )
    assert group.status_code == 201, group.text
    return reset


def test_an_update_is_not_sent_to_an_id_the_service_gave_to_another_object(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: after the service's data was reset and its IDs given again
    # to another client, with no refresh between, apply PATCHed that client's departure
    # parties and template group and recorded the answer as done.
    backend = LocalBackend(tmp_path)
    party = {"declarationId": "${ref:DepartureDeclaration/d.declarationId}", "Consignee": EORI}
    docs = [
        doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0),
        doc(Kind.DEPARTURE_DECLARATION, "d", departure(), 1),
        doc(Kind.TRANSIT_PARTY_UPDATE, "u", party, 2),
    ]
    assert _apply(backend, docs, emulator).ok
    before = backend.read().resources
    reset = _reset_and_taken(emulator)
    recording = _Recording(reset.transport)
    client = CustomsClient(
        Sender("http://sandbox.test", "sandbox-key", transport=recording, retry_policy=NO_RETRIES)
    )
    other_eori = {"eoriNo": "DE111111111111111"}
    edited = [
        doc(Kind.TEMPLATE_GROUP, "g", {**GROUP, "name": "EU road (EU)"}, 0),
        docs[1],
        doc(Kind.TRANSIT_PARTY_UPDATE, "u", {**party, "Consignee": other_eori}, 2),
    ]
    try:
        with backend.open("apply") as session:
            plan = plan_changes(edited, session.state)
            # Each update reads its object first; the party update lists the declarations
            # made since its departure's last write too.
            assert plan.requests == 5
            report = apply_plan(plan, session, client, parallelism=2, stop=threading.Event())
    finally:
        client.close()
        reset.close()
    assert recording.patched == []
    said = {str(o.address): o for o in report.outcomes}
    group, update = said["TemplateGroup/g"], said["TransitPartyUpdate/u"]
    assert group.status is update.status is NodeStatus.FAILED
    assert group.detail.startswith("not sent: the service holds another object at ")
    assert "code 'OTHER' there, 'EU-ROAD' recorded" in group.detail
    assert update.detail.startswith(
        "not sent: it writes to the object of DepartureDeclaration/d, and the service holds "
        "another object at "
    )
    assert "totalWeight 999 there" in update.detail
    after = backend.read().resources
    assert after["TemplateGroup/g"].found_instead and after["TemplateGroup/g"].not_found_at
    assert after["DepartureDeclaration/d"].found_instead
    assert after["TransitPartyUpdate/u"].spec == before["TransitPartyUpdate/u"].spec
    assert after["TemplateGroup/g"].spec == before["TemplateGroup/g"].spec
    planned = {str(c.address): c.action for c in plan_changes(edited, backend.read()).changes}
    assert planned["TemplateGroup/g"] is Action.NEEDS_DECISION
    assert planned["DepartureDeclaration/d"] is Action.NEEDS_DECISION
    assert planned["TransitPartyUpdate/u"] is not Action.UPDATE


def test_refresh_takes_no_status_for_a_party_update_from_the_object_its_departure_lost(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: after a reset gave departure d's number to another client's
    # declaration, refresh noted d's record "another object at 7003" but recorded its party
    # update's status from that other declaration, as if it were the one it had written to.
    backend = LocalBackend(tmp_path)
    docs = _departure_and_its_party_update()
    assert _apply(backend, docs, emulator).ok
    before = backend.read().resources["TransitPartyUpdate/u"]
    reset = _reset_and_taken(emulator)
    try:
        with backend.open("refresh") as session:
            drifts = refresh(session, reset.client)
    finally:
        reset.close()
    after = backend.read().resources
    update = after["TransitPartyUpdate/u"]
    assert after["DepartureDeclaration/d"].found_instead
    assert update.not_found_at is not None
    assert update.found_instead is not None
    assert "DepartureDeclaration/d" in update.found_instead
    assert update.remote_status == before.remote_status  # nothing taken from the other's
    said = {d.address: d for d in drifts}
    assert said["TransitPartyUpdate/u"].another
    [planned] = [
        c
        for c in plan_changes(docs, backend.read()).changes
        if c.address.kind is Kind.TRANSIT_PARTY_UPDATE
    ]
    assert planned.action is Action.NEEDS_DECISION


class _Moving(httpx.BaseTransport):
    """The emulator, with each GET of a transit declaration's detail counted, and each
    answered one status further on (``processing``, then ``ready``...): a declaration
    customs decides between two reads of it."""

    STATUSES = ("processing", "ready", "released")

    def __init__(self, service: httpx.BaseTransport) -> None:
        self.service = service
        self.details: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = self.service.handle_request(request)
        path = request.url.path
        if request.method != "GET" or not path.startswith("/v1/declarations/transit/"):
            return answer
        self.details.append(path)
        body = json.loads(answer.read())
        body["status"] = self.STATUSES[min(len(self.details) - 1, 2)]
        return httpx.Response(answer.status_code, json=body)


def test_refresh_reads_a_declaration_once_for_its_departure_and_its_party_update(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: refresh read a departure's declaration once for its record
    # and again for its party update's, and recorded two statuses for the one declaration
    # when customs decided between the reads (the next refresh agreed), in two requests.
    backend = LocalBackend(tmp_path)
    docs = _departure_and_its_party_update()
    assert _apply(backend, docs, emulator).ok
    moving = _Moving(emulator.transport)
    client = CustomsClient(
        Sender("http://sandbox.test", "sandbox-key", transport=moving, retry_policy=NO_RETRIES)
    )
    with client, backend.open("refresh") as session:
        refresh(session, client)
    after = backend.read().resources
    ident = after["DepartureDeclaration/d"].outputs["declarationId"]
    assert moving.details == [f"/v1/declarations/transit/{ident}"]
    assert after["DepartureDeclaration/d"].remote_status == "processing"
    assert after["TransitPartyUpdate/u"].remote_status == "processing"


def test_refresh_takes_no_status_from_a_look_alike_given_the_departure_number_again(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: after a reset gave a departure's number to another
    # client's declaration alike in every field the detail gives back, refresh recorded that
    # declaration's status (`invalid`, its errors) as the departure's and its party
    # update's: status and plan said "rejected", while apply, which lists the transit
    # declarations to see when the one at the number was made, sends nothing there.
    backend = LocalBackend(tmp_path)
    docs = _departure_and_its_party_update()
    assert _apply(backend, docs, emulator).ok
    with backend.open("refresh") as session:
        refresh(session, emulator.client)
    before = backend.read().resources
    ident = before["DepartureDeclaration/d"].outputs["declarationId"]
    # The reset, and the other client's submission, a minute later.
    reset = Emulator(processing_seconds=0.0, clock=lambda: time.time() + 60)
    other = reset.http.post("/v1/declarations/transit", json=departure("INVALID-OTHER"))
    assert other.json()["declarationId"] == ident
    try:
        with backend.open("refresh") as session:
            drifts = refresh(session, reset.client)
    finally:
        reset.close()
    after = backend.read().resources
    said = {d.address: d for d in drifts}
    for address in ("DepartureDeclaration/d", "TransitPartyUpdate/u"):
        assert said[address].another, said
        assert after[address].found_instead is not None
        assert after[address].remote_status == before[address].remote_status == "ready"
        assert after[address].remote_errors == ()
    assert "createdAt" in str(after["DepartureDeclaration/d"].found_instead)
    # Made after the departure's write, it is another client's: `import` would take it.
    words = said["DepartureDeclaration/d"].message
    assert "customs-batch import" not in words and "state rm --gone" in words
    planned = {str(c.address): c.action for c in plan_changes(docs, backend.read()).changes}
    assert planned["DepartureDeclaration/d"] is Action.NEEDS_DECISION
    assert planned["TransitPartyUpdate/u"] is Action.NEEDS_DECISION


def test_a_service_clock_a_moment_ahead_does_not_make_a_departure_another_object(
    tmp_path: Path,
) -> None:
    # Found by an outside probe: with the service's clock a second ahead of ours, the
    # declaration a departure's submission made was stamped after the record's write, so
    # the party update applied with it was "not sent: the service holds another object at
    # 7003", and refresh noted the departure itself as another object (exit 1).
    ahead = Emulator(processing_seconds=0.0, clock=lambda: time.time() + 1.0)
    backend = LocalBackend(tmp_path)
    docs = _departure_and_its_party_update()
    try:
        report = _apply(backend, docs, ahead)
        with backend.open("refresh") as session:
            drifts = refresh(session, ahead.client)
    finally:
        ahead.close()
    assert report.ok, report.outcomes
    assert not [d for d in drifts if d.missing], drifts
    assert all(r.found_instead is None for r in backend.read().resources.values())


def test_a_party_update_whose_declaration_came_back_is_found_again_with_it(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: the service lost a departure's declaration for a while (a
    # sandbox restarted without its --db, then with it again). refresh found the departure
    # again, but kept saying of its party update "7003 was not found at the service ...
    # then `customs-batch refresh` reads it again", refresh after refresh, and plan held it
    # as needing a decision: the declaration back, made before the update's write, is the
    # one the update wrote to.
    backend = LocalBackend(tmp_path)
    docs = _departure_and_its_party_update()
    assert _apply(backend, docs, emulator).ok
    ident = backend.read().resources["DepartureDeclaration/d"].outputs["declarationId"]
    gone = _answering(emulator, str(ident), 404)
    try:
        with backend.open("refresh") as session:
            assert {d.address for d in refresh(session, gone.client) if d.missing} == {
                "DepartureDeclaration/d",
                "TransitPartyUpdate/u",
            }
    finally:
        gone.client.close()
    with backend.open("refresh") as session:
        drifts = refresh(session, emulator.client)
    assert not [d for d in drifts if d.missing], drifts
    after = backend.read().resources
    assert after["TransitPartyUpdate/u"].not_found_at is None
    planned = {str(c.address): c.action for c in plan_changes(docs, backend.read()).changes}
    assert planned["TransitPartyUpdate/u"] is Action.NO_CHANGE


def test_gone_is_confirmed_for_a_departure_whose_number_a_look_alike_took(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: refresh noted "the service holds another object at 7003
    # than the one recorded (createdAt ...)" and named `state rm --gone` as the way out,
    # which then refused: "still exists at the service, which holds declarationId 7003
    # (ready)" - the look-alike's status, taken as the departure's.
    backend = LocalBackend(tmp_path)
    assert _apply(backend, [doc(Kind.DEPARTURE_DECLARATION, "d", departure(), 0)], emulator).ok
    record = backend.read().resources["DepartureDeclaration/d"]
    reset = Emulator(processing_seconds=0.0, clock=lambda: time.time() + 60)
    try:
        other = reset.http.post("/v1/declarations/transit", json=departure("OTHER-ENV"))
        assert other.json()["declarationId"] == record.outputs["declarationId"]
        checked = check_gone(reset.client, record)
    finally:
        reset.close()
    assert checked.checked
    assert "the service holds another object at declarationId" in checked.words
    assert "createdAt" in checked.words


def test_apply_wait_does_not_follow_a_look_alike_at_a_processing_departure_s_number(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: a departure left processing, then a reset gave its number
    # to a look-alike (another environment's copy, an `INVALID...` reference); `apply
    # --wait` followed that declaration as the departure's and recorded it `invalid`, with
    # the other's errors: status said rejected, and the next refresh, its record now
    # written after the look-alike was made, took it as its own for good.
    slow = Emulator(processing_seconds=3600.0)
    backend = LocalBackend(tmp_path)
    docs = [doc(Kind.DEPARTURE_DECLARATION, "d", departure(), 0)]
    try:
        assert _apply(backend, docs, slow).ok
    finally:
        slow.close()
    before = backend.read().resources["DepartureDeclaration/d"]
    reset = Emulator(processing_seconds=0.0, clock=lambda: time.time() + 60)
    try:
        other = reset.http.post("/v1/declarations/transit", json=departure("INVALID-OTHER"))
        assert other.json()["declarationId"] == before.outputs["declarationId"]
        with backend.open("apply") as session:
            plan = following_processing(plan_changes(docs, session.state), session.state)
            assert plan.changes[0].action is Action.WAITING
            assert plan.requests == 2 and plan.requests_at_least  # the list, then a poll
            report = apply_plan(
                plan,
                session,
                reset.client,
                parallelism=1,
                stop=threading.Event(),
                wait=WaitOptions(timeout=5, interval=0.01),
            )
    finally:
        reset.close()
    (outcome,) = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert outcome.detail.startswith("not followed: the service holds another object at ")
    after = backend.read().resources["DepartureDeclaration/d"]
    assert after.remote_status == before.remote_status and after.remote_errors == ()
    assert after.found_instead is not None and "createdAt" in after.found_instead
    planned = plan_changes(docs, backend.read()).changes[0]
    assert planned.action is Action.NEEDS_DECISION


def test_a_rejected_departure_is_resubmitted_though_a_look_alike_took_its_number(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: a departure customs rejected (invalid), its document
    # corrected, planned `resubmit`; meanwhile a reset gave its number to a look-alike that
    # customs accepted. apply read that one as the rejected declaration "corrected there
    # since", recorded its status as the departure's and resubmitted nothing, so the goods
    # were never declared again.
    backend = LocalBackend(tmp_path)
    rejected = [doc(Kind.DEPARTURE_DECLARATION, "d", departure("INVALID-1"), 0)]
    assert _apply(backend, rejected, emulator).ok
    with backend.open("refresh") as session:
        refresh(session, emulator.client)
    before = backend.read().resources["DepartureDeclaration/d"]
    assert before.remote_status == "invalid"
    reset = Emulator(processing_seconds=0.0, clock=lambda: time.time() + 60)
    corrected = [doc(Kind.DEPARTURE_DECLARATION, "d", departure("CR-FIXED"), 0)]
    try:
        other = reset.http.post("/v1/declarations/transit", json=departure("OTHER-ENV"))
        assert other.json()["declarationId"] == before.outputs["declarationId"]
        with backend.open("apply") as session:
            plan = plan_changes(corrected, session.state)
            assert plan.changes[0].operation is Operation.RESUBMIT_DEPARTURE
            report = apply_plan(plan, session, reset.client, parallelism=1, stop=threading.Event())
    finally:
        reset.close()
    (outcome,) = report.outcomes
    assert outcome.status is NodeStatus.SUCCEEDED, outcome.detail
    after = backend.read().resources["DepartureDeclaration/d"]
    assert after.outputs["declarationId"] != before.outputs["declarationId"]
    assert after.spec["commercialReference"] == "CR-FIXED"


def test_a_party_update_by_number_is_not_sent_to_a_declaration_given_its_id_again(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: a party update naming a declaration made elsewhere by its
    # number, after the service's data was reset and that number given to another client's
    # declaration, was planned as an update, PATCHed into the other declaration and
    # recorded as done; refresh said only that its status changed.
    backend = LocalBackend(tmp_path)
    made = emulator.http.post("/v1/declarations/transit", json=departure("MADE-ELSEWHERE"))
    assert made.status_code == 201, made.text
    number = made.json()["declarationId"]
    party = {"declarationId": number, "Consignee": EORI}
    assert _apply(backend, [doc(Kind.TRANSIT_PARTY_UPDATE, "u", party, 0)], emulator).ok
    reset = _reset_and_taken(emulator)
    assert reset.http.get(f"/v1/declarations/transit/{number}").json()["totalWeight"] == 999
    recording = _Recording(reset.transport)
    client = CustomsClient(
        Sender("http://sandbox.test", "sandbox-key", transport=recording, retry_policy=NO_RETRIES)
    )
    edited = [doc(Kind.TRANSIT_PARTY_UPDATE, "u", {**party, "Consignee": {"eoriNo": "DE1"}}, 0)]
    try:
        with backend.open("apply") as session:
            plan = plan_changes(edited, session.state)
            report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
        with backend.open("refresh") as session:
            drifts = refresh(session, client)
        # `state rm --gone` takes it as gone: the declaration it wrote to is not there.
        gone = check_gone(client, backend.read().resources["TransitPartyUpdate/u"])
    finally:
        client.close()
        reset.close()
    assert recording.patched == []
    assert gone.checked and "another object at declarationId" in gone.words
    [outcome] = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert outcome.detail.startswith("not sent: the service holds another object at ")
    assert "totalWeight 999 there" in outcome.detail
    record = backend.read().resources["TransitPartyUpdate/u"]
    assert record.found_instead and record.not_found_at
    assert [d.address for d in drifts] == ["TransitPartyUpdate/u"]
    [planned] = plan_changes(edited, backend.read()).changes
    assert planned.action is Action.NEEDS_DECISION


def _as_written_before_target_seen(backend: LocalBackend, address: str, at: str) -> None:
    """The record at ``address`` as an older version wrote it: nothing kept of the object
    it wrote to (``targetSeen``), its last write at ``at``."""
    with backend.open("older") as session:
        record = session.state.resources[address]
        session.record(record.with_changes(target_seen={}, updated_at=at))
    assert not backend.read().resources[address].target_seen


def test_a_deactivation_recorded_before_target_seen_is_not_sent_to_a_hawb_made_since(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: a deactivation recorded before `targetSeen` was kept holds
    # nothing of its HAWB; after a reset gave its ID to another HAWB, the first read after
    # upgrading would take that one for its own (active again: undone) and deactivate it.
    # A HAWB made after the record's last write is another one: nothing is sent. One made
    # before it is the record's, as before.
    backend = LocalBackend(tmp_path)
    docs = [doc(Kind.HAWB_DEACTIVATION, "h", {"shipmentId": "shp_7Hk2Lm", "hawbId": "hawb_a2"}, 0)]
    assert _apply(backend, docs, emulator).ok

    # Written long after the HAWB was made: the same one (nothing found instead).
    _as_written_before_target_seen(backend, "HawbDeactivation/h", "2999-01-01T00:00:00.000Z")
    with backend.open("refresh") as session:
        assert refresh(session, emulator.client) == []
    assert backend.read().resources["HawbDeactivation/h"].found_instead is None

    # Written before the HAWB now at its ID was made (a reset, another HAWB): another one.
    _as_written_before_target_seen(backend, "HawbDeactivation/h", "2000-01-01T00:00:00.000Z")
    reset = Emulator(processing_seconds=0.0)
    try:
        with backend.open("refresh") as session:
            refresh(session, reset.client)
        record = backend.read().resources["HawbDeactivation/h"]
        assert record.found_instead is not None and "createdAt" in record.found_instead
        [planned] = plan_changes(docs, backend.read()).changes
        assert planned.action is Action.NEEDS_DECISION
        with backend.open("apply") as session:
            apply_plan(
                plan_changes(docs, session.state),
                session,
                reset.client,
                parallelism=1,
                stop=threading.Event(),
            )
        listed = reset.http.get("/v1/shipments/shp_7Hk2Lm/hawbs").json()["data"]
        assert "hawb_a2" in [hawb["hawbId"] for hawb in listed]  # still active
    finally:
        reset.close()


def test_a_party_update_recorded_before_target_seen_is_not_sent_to_a_declaration_made_since(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found in review: a party update of a declaration made elsewhere, recorded before
    # `targetSeen` was kept, holds nothing of its declaration; after a reset gave its number
    # to another client's declaration, its first PATCH after upgrading went to that one and
    # kept what it read as its own. The transit list gives each declaration's createdAt:
    # one made after the record's last write is another, and nothing is sent to it. One
    # made before it is the record's, as before.
    backend = LocalBackend(tmp_path)
    made = emulator.http.post("/v1/declarations/transit", json=departure("MADE-ELSEWHERE"))
    assert made.status_code == 201, made.text
    number = made.json()["declarationId"]
    party = {"declarationId": number, "Consignee": EORI}
    assert _apply(backend, [doc(Kind.TRANSIT_PARTY_UPDATE, "u", party, 0)], emulator).ok
    edited = [doc(Kind.TRANSIT_PARTY_UPDATE, "u", {**party, "Consignee": {"eoriNo": "DE1"}}, 0)]

    # Written long after its declaration was made: the same one, updated; targetSeen kept.
    _as_written_before_target_seen(backend, "TransitPartyUpdate/u", "2999-01-01T00:00:00.000Z")
    assert _apply(backend, edited, emulator).ok
    record = backend.read().resources["TransitPartyUpdate/u"]
    assert record.target_seen and record.found_instead is None

    # Written before the declaration now at its number was made (a reset, another client's).
    _as_written_before_target_seen(backend, "TransitPartyUpdate/u", "2000-01-01T00:00:00.000Z")
    reset = _reset_and_taken(emulator)
    recording = _Recording(reset.transport)
    client = CustomsClient(
        Sender("http://sandbox.test", "sandbox-key", transport=recording, retry_policy=NO_RETRIES)
    )
    try:
        with backend.open("apply") as session:
            again = {**party, "Consignee": {"eoriNo": "DE2"}}
            plan = plan_changes([doc(Kind.TRANSIT_PARTY_UPDATE, "u", again, 0)], session.state)
            report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    finally:
        client.close()
        reset.close()
    assert recording.patched == []
    assert plan.changes[0].requests_at_least  # the list of declarations made since is read
    [outcome] = report.outcomes
    assert outcome.detail.startswith("not sent: the service holds another object at "), outcome
    record = backend.read().resources["TransitPartyUpdate/u"]
    assert record.found_instead is not None and "createdAt" in record.found_instead
    assert not record.target_seen
    [planned] = plan_changes(edited, backend.read()).changes
    assert planned.action is Action.NEEDS_DECISION


def _transit_lists(emulator: Emulator) -> int:
    """How many pages of the transit list the emulator has given."""
    counts = emulator.http.get("/_sandbox/stats").json()["requests"]
    return int(counts.get("GET /v1/declarations/transit", 0))


def test_a_party_update_recorded_before_target_seen_lists_once_and_then_nothing(
    tmp_path: Path, emulator: Emulator
) -> None:
    # The listing of declarations made since is for a record without targetSeen alone, and
    # once: the PATCH keeps targetSeen, and a plan of records holding it says no "at least".
    backend = LocalBackend(tmp_path)
    made = emulator.http.post("/v1/declarations/transit", json=departure("MADE-ELSEWHERE"))
    party = {"declarationId": made.json()["declarationId"], "Consignee": EORI}
    assert _apply(backend, [doc(Kind.TRANSIT_PARTY_UPDATE, "u", party, 0)], emulator).ok
    _as_written_before_target_seen(backend, "TransitPartyUpdate/u", "2999-01-01T00:00:00.000Z")
    edited = [doc(Kind.TRANSIT_PARTY_UPDATE, "u", {**party, "Consignee": {"eoriNo": "DE1"}}, 0)]
    first = plan_changes(edited, backend.read())
    # The declaration read, a page of the list, the PATCH.
    assert (first.requests, first.requests_at_least) == (3, True)
    listed = _transit_lists(emulator)
    assert _apply(backend, edited, emulator).ok
    assert _transit_lists(emulator) == listed + 1
    assert backend.read().resources["TransitPartyUpdate/u"].target_seen

    again = [doc(Kind.TRANSIT_PARTY_UPDATE, "u", {**party, "Consignee": {"eoriNo": "DE2"}}, 0)]
    plan = plan_changes(again, backend.read())
    assert plan.changes[0].action is Action.UPDATE
    assert not plan.requests_at_least and not plan.changes[0].requests_at_least
    assert plan.requests == plan.changes[0].requests == 2
    assert "at least" not in summary_text(plan, RateLimit.parse("1/second"))
    assert _apply(backend, again, emulator).ok
    assert _transit_lists(emulator) == listed + 1  # nothing listed again


def test_a_party_update_recorded_before_target_seen_is_held_when_the_bounded_list_misses_it(
    tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The list of declarations made since the record's last write may be thousands of pages
    # on a busy account: at most LISTED_PAGES are read, and a declaration not among them is
    # not taken for the record's (nothing PATCHed), held for a decision the user makes.
    from customs_batch.kinds import transit_party_update

    monkeypatch.setattr(transit_party_update, "PAGE_SIZE", 2)
    monkeypatch.setattr(transit_party_update, "LISTED_PAGES", 2)
    backend = LocalBackend(tmp_path)
    made = emulator.http.post("/v1/declarations/transit", json=departure("MADE-ELSEWHERE"))
    number = made.json()["declarationId"]
    party = {"declarationId": number, "Consignee": EORI}
    assert _apply(backend, [doc(Kind.TRANSIT_PARTY_UPDATE, "u", party, 0)], emulator).ok
    for n in range(5):  # newer ones, listed first
        other = emulator.http.post("/v1/declarations/transit", json=departure(f"NEWER-{n}"))
        assert other.status_code == 201, other.text
    _as_written_before_target_seen(backend, "TransitPartyUpdate/u", "2000-01-01T00:00:00.000Z")
    edited = [doc(Kind.TRANSIT_PARTY_UPDATE, "u", {**party, "Consignee": {"eoriNo": "DE1"}}, 0)]
    listed = _transit_lists(emulator)
    recording = _Recording(emulator.transport)
    client = CustomsClient(
        Sender("http://sandbox.test", "sandbox-key", transport=recording, retry_policy=NO_RETRIES)
    )
    try:
        with backend.open("apply") as session:
            plan = plan_changes(edited, session.state)
            report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    finally:
        client.close()
    assert recording.patched == []
    assert _transit_lists(emulator) == listed + 2  # exactly the bound
    [outcome] = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert outcome.detail.startswith(f"not sent: not verified that {number} is the object"), outcome
    assert "state adopt TransitPartyUpdate/u" in outcome.detail
    record = backend.read().resources["TransitPartyUpdate/u"]
    assert record.unverified is not None and not record.target_seen
    [planned] = plan_changes(edited, backend.read()).changes
    assert planned.action is Action.NEEDS_DECISION
    assert "not verified" in planned.reason
    # `status` and `state list` say so too, not "applied" as if nothing were to decide.
    [entry] = status_entries(backend.read())
    assert (entry.lifecycle, entry.blocks, entry.service_state) == ("needs-decision", True, None)
    assert entry.message == planned.reason
    assert record_word("TransitPartyUpdate/u", record) == "needs-decision"

    # The way out said: checked, the declaration is its own (the number it records only).
    with backend.open("adopt") as session, pytest.raises(StateError, match="not 1"):
        adopt(session, emulator.client, Address(Kind.TRANSIT_PARTY_UPDATE, "u"), "1")
    with backend.open("adopt") as session:
        adopt(session, emulator.client, Address(Kind.TRANSIT_PARTY_UPDATE, "u"), str(number))
    assert backend.read().resources["TransitPartyUpdate/u"].unverified is None
    [planned] = plan_changes(edited, backend.read()).changes
    assert planned.action is Action.UPDATE
    assert _apply(backend, edited, emulator).ok  # nothing made since the adoption
    assert backend.read().resources["TransitPartyUpdate/u"].target_seen


def test_a_party_update_of_a_departure_of_the_state_lists_once_before_its_patch(
    tmp_path: Path, emulator: Emulator
) -> None:
    # The departure's record tells its declaration (never kept as targetSeen), with its
    # creation time from one page of the declarations made since its last write: the plan
    # counts that page ("at least"), and the declaration made before that write is its own.
    backend = LocalBackend(tmp_path)
    update = {"declarationId": "${ref:DepartureDeclaration/d.declarationId}", "Consignee": EORI}
    docs = [
        doc(Kind.DEPARTURE_DECLARATION, "d", departure(), 0),
        doc(Kind.TRANSIT_PARTY_UPDATE, "u", update, 1),
    ]
    assert _apply(backend, docs, emulator).ok
    assert not backend.read().resources["TransitPartyUpdate/u"].target_seen
    edited = [
        docs[0],
        doc(Kind.TRANSIT_PARTY_UPDATE, "u", {**update, "Consignee": {"eoriNo": "DE1"}}, 1),
    ]
    planned = plan_changes(edited, backend.read())
    assert planned.requests_at_least and planned.requests == 3  # the page, the read, the PATCH
    assert _apply(backend, edited, emulator).ok
    counts = emulator.http.get("/_sandbox/stats").json()["requests"]
    assert counts["PATCH /declarations/transit/{declarationId}/parties"] == 2, counts
    assert counts["GET /v1/declarations/transit"] == 2, counts  # one page before each PATCH


def test_an_update_is_not_sent_to_a_declaration_given_its_id_again_that_reads_alike(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: after a sandbox reset, another environment applied a copy
    # of the same manifests (another commercial reference: the same offices, weight and
    # procedure, all the detail of a transit declaration gives back), and its departure got
    # the number this state records. apply PATCHed that declaration's parties, both the
    # departure's own and a party update's: the other environment's declaration. The
    # transit list gives when the declaration at the number was made: after the record's
    # last write, it is another one, and nothing is sent to it.
    backend = LocalBackend(tmp_path)
    party = {"declarationId": "${ref:DepartureDeclaration/d.declarationId}", "Consignee": EORI}
    docs = [
        doc(Kind.DEPARTURE_DECLARATION, "d", departure(), 0),
        doc(Kind.TRANSIT_PARTY_UPDATE, "u", party, 1),
    ]
    assert _apply(backend, docs, emulator).ok
    for address in ("DepartureDeclaration/d", "TransitPartyUpdate/u"):
        _as_written_before_target_seen(backend, address, "2000-01-01T00:00:00.000Z")
    reset = Emulator(processing_seconds=0.0)
    other = reset.http.post("/v1/declarations/transit", json=departure("OTHER-ENV-COPY"))
    assert other.status_code == 201, other.text
    number = backend.read().resources["DepartureDeclaration/d"].outputs["declarationId"]
    assert other.json()["declarationId"] == number
    recording = _Recording(reset.transport)
    client = CustomsClient(
        Sender("http://sandbox.test", "sandbox-key", transport=recording, retry_policy=NO_RETRIES)
    )
    moved = departure()
    moved["Consignee"] = {**moved["Consignee"], "street": "Elsewhere 1"}
    edited = [
        doc(Kind.DEPARTURE_DECLARATION, "d", moved, 0),
        doc(Kind.TRANSIT_PARTY_UPDATE, "u", {**party, "Consignee": {"eoriNo": "DE1"}}, 1),
    ]
    try:
        with backend.open("apply") as session:
            plan = plan_changes(edited, session.state)
            assert [c.action for c in plan.changes] == [Action.UPDATE, Action.UPDATE]
            assert all(c.requests_at_least for c in plan.changes)
            report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    finally:
        client.close()
        reset.close()
    assert recording.patched == []
    said = {str(o.address): o for o in report.outcomes}
    assert said["DepartureDeclaration/d"].status is NodeStatus.FAILED
    assert said["DepartureDeclaration/d"].detail.startswith(
        "not sent: the service holds another object at "
    )
    assert "createdAt" in said["DepartureDeclaration/d"].detail
    assert said["TransitPartyUpdate/u"].status is not NodeStatus.SUCCEEDED
    after = backend.read().resources["DepartureDeclaration/d"]
    assert after.found_instead is not None and "createdAt" in after.found_instead


def test_another_declaration_at_a_party_updates_number_says_to_correct_the_document(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: the refusal gave a template group's way out (`import`
    # takes it back, "an apply after `--gone` alone would create a second one"), which
    # for a party update of a declaration made elsewhere would adopt the other client's
    # declaration; its way out is to correct the document's declarationId.
    backend = LocalBackend(tmp_path)
    made = emulator.http.post("/v1/declarations/transit", json=departure("MADE-ELSEWHERE"))
    number = made.json()["declarationId"]
    party = {"declarationId": number, "Consignee": EORI}
    assert _apply(backend, [doc(Kind.TRANSIT_PARTY_UPDATE, "u", party, 0)], emulator).ok
    reset = _reset_and_taken(emulator)
    edited = [doc(Kind.TRANSIT_PARTY_UPDATE, "u", {**party, "Consignee": {"eoriNo": "DE1"}}, 0)]
    try:
        with backend.open("apply") as session:
            plan = plan_changes(edited, session.state)
            report = apply_plan(plan, session, reset.client, parallelism=1, stop=threading.Event())
        with backend.open("refresh") as session:
            drifts = refresh(session, reset.client)
    finally:
        reset.close()
    [outcome] = report.outcomes
    [planned] = plan_changes(edited, backend.read()).changes
    [drift] = drifts
    for words in (outcome.detail, drift.message, planned.reason):
        assert "another object at" in words
        assert "correct the document's `declarationId`" in words
        assert "state rm --gone TransitPartyUpdate/u" in words
        assert "import" not in words and "template group" not in words


def test_a_cancellation_undone_by_a_reset_is_not_sent_to_another_declaration_of_its_number(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: an export cancellation of 501 was applied; the service's
    # data was reset and 501 was then another client's export declaration (another
    # reference). refresh said the cancellation was undone and the next apply cancelled
    # that other declaration.
    backend = LocalBackend(tmp_path)
    cancel = [doc(Kind.EXPORT_CANCELLATION, "c", {"declarationId": 501}, 0)]
    assert _apply(backend, cancel, emulator).ok
    assert backend.read().resources["ExportCancellation/c"].target_seen["referenceNumber"]
    text = (Path(sandbox_package.__file__).parent / "builtin-seed.yaml").read_text(encoding="utf-8")
    reset = Emulator(
        processing_seconds=0.0,
        seed=parse_seed(text.replace("REF-1001", "OTHER-CLIENT-77"), "seed"),
    )
    try:
        with backend.open("refresh") as session:
            refresh(session, reset.client)
        record = backend.read().resources["ExportCancellation/c"]
        assert record.found_instead is not None and "OTHER-CLIENT-77" in record.found_instead
        [planned] = plan_changes(cancel, backend.read()).changes
        assert planned.action is Action.NEEDS_DECISION
        with backend.open("apply") as session:
            apply_plan(
                plan_changes(cancel, session.state),
                session,
                reset.client,
                parallelism=1,
                stop=threading.Event(),
            )
        assert reset.http.get("/v1/declarations/501").json()["status"] != "canceled"
    finally:
        reset.close()


def test_a_granted_cancellation_whose_declaration_reads_submitted_again_is_undone_and_resent(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: a cancellation of 502 (submitted) was requested, then read
    # granted (canceled); the service's data was reset, 502 `submitted` again. refresh,
    # status and plan said customs refused the cancellation (exit 1, "remove the document,
    # then state rm"), which left 502 uncancelled. Customs never takes a cancellation back:
    # it is undone at the service, and the next apply sends it again, once.
    backend = LocalBackend(tmp_path)
    cancel = [doc(Kind.EXPORT_CANCELLATION, "c", {"declarationId": 502}, 0)]
    assert _apply(backend, cancel, emulator).ok  # requested: customs decides on the next read
    with backend.open("refresh") as session:
        refresh(session, emulator.client)
    granted = backend.read().resources["ExportCancellation/c"]
    assert granted.remote_status == "canceled" and granted.done_at is not None
    reset = Emulator(processing_seconds=0.0)  # the service's data reset: 502 submitted
    try:
        with backend.open("refresh") as session:
            refresh(session, reset.client)
        record = backend.read().resources["ExportCancellation/c"]
        assert record.remote_status == "submitted" and record.done_at is not None
        (entry,) = status_entries(backend.read())
        assert entry.undone and not entry.rejected
        result = recorded_result(Address.parse("ExportCancellation/c"), record)  # type: ignore[arg-type]
        assert result.status is ResultStatus.NOT_APPLIED
        assert "refused" not in result.errors[0]
        (planned,) = plan_changes(cancel, backend.read()).changes
        assert (planned.action, planned.operation) == (Action.CREATE, Operation.CANCEL_EXPORT)
        assert "refused" not in planned.reason
        report = _apply(backend, cancel, reset)
        (outcome,) = report.outcomes
        assert outcome.status is NodeStatus.WAITING and not outcome.rejected, outcome.detail
        asked = reset.http.get("/_sandbox/stats").json()["requests"]
        assert asked.get("DELETE /v1/declarations/{id}") == 1
        # Sent again: a new request, no longer known granted until read so.
        assert backend.read().resources["ExportCancellation/c"].done_at is None
        (again,) = plan_changes(cancel, backend.read()).changes
        assert again.operation is Operation.FOLLOW
        assert reset.http.get("/v1/declarations/502").json()["status"] == "canceled"
    finally:
        reset.close()


def test_a_cancellation_imported_or_adopted_granted_reads_undone_after_a_reset(
    tmp_path: Path, emulator: Emulator
) -> None:
    # As applied, so imported (or adopted): a cancellation recorded by `import` while its
    # declaration is canceled keeps that it was granted, and after a reset (502 `submitted` again) it
    # is undone, not refused by customs.
    assert emulator.http.delete("/v1/declarations/502").status_code < 300
    assert emulator.http.get("/v1/declarations/502").json()["status"] == "canceled"
    backend = LocalBackend(tmp_path)
    address = Address(Kind.EXPORT_CANCELLATION, "c")
    with backend.open("import") as session:
        record, _ = import_object(
            session,
            emulator.client,
            address,
            "502",
            {"declarationId": 502},
            where=lambda name: name,
            last_known=frozenset,
        )
    assert record.done_at is not None
    # So adopted: the outcome of its DELETE unknown, then adopted while canceled.
    unknown = ResourceRecord(
        "ExportCancellation/a",
        RecordStatus.UNKNOWN,
        "cancel-export",
        {"declarationId": 502},
    )
    other = LocalBackend(tmp_path / "other")
    with other.open("adopt") as session:
        session.record(unknown)
    with other.open("adopt") as session:
        adopted, _ = adopt(session, emulator.client, Address(Kind.EXPORT_CANCELLATION, "a"), "502")
    assert adopted.done_at is not None
    reset = Emulator(processing_seconds=0.0)
    try:
        with backend.open("refresh") as session:
            refresh(session, reset.client)
        (entry,) = status_entries(backend.read())
        assert entry.service_state == "submitted" and entry.undone and not entry.rejected
    finally:
        reset.close()


def test_a_deactivation_undone_by_a_reset_is_not_sent_to_another_hawb_of_its_id(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: a deactivation of hawb_a2 was applied; the service's data
    # was reset and hawb_a2 was then another HAWB (another number), active. refresh said
    # "inactive -> active", plan sent it again and apply deactivated that other HAWB.
    backend = LocalBackend(tmp_path)
    spec = {"shipmentId": "shp_7Hk2Lm", "hawbId": "hawb_a2"}
    docs = [doc(Kind.HAWB_DEACTIVATION, "h", spec, 0)]
    assert _apply(backend, docs, emulator).ok
    seen = backend.read().resources["HawbDeactivation/h"].target_seen
    assert seen["houseAirWaybillNumber"] == "176-12345686"
    text = (Path(sandbox_package.__file__).parent / "builtin-seed.yaml").read_text(encoding="utf-8")
    reset = Emulator(
        processing_seconds=0.0,
        seed=parse_seed(text.replace("176-12345686", "999-00000001"), "seed"),
    )
    try:
        with backend.open("refresh") as session:
            refresh(session, reset.client)
        record = backend.read().resources["HawbDeactivation/h"]
        assert record.found_instead is not None and "999-00000001" in record.found_instead
        [planned] = plan_changes(docs, backend.read()).changes
        assert planned.action is Action.NEEDS_DECISION
        with backend.open("apply") as session:
            apply_plan(
                plan_changes(docs, session.state),
                session,
                reset.client,
                parallelism=1,
                stop=threading.Event(),
            )
        listed = reset.http.get("/v1/shipments/shp_7Hk2Lm/hawbs").json()["data"]
        assert "hawb_a2" in [hawb["hawbId"] for hawb in listed]  # still active
    finally:
        reset.close()


def test_a_deactivation_on_a_shipment_of_many_hawbs_is_counted_as_at_least_its_requests(
    tmp_path: Path,
) -> None:
    # Found by an outside probe: the API reads no single HAWB, so the read before the
    # DELETE lists the shipment's HAWBs, 100 a request; on a shipment of 150 the plan said
    # "Requests: 2" and apply sent 3. The plan now says what it cannot know: at least 2.
    text = (Path(sandbox_package.__file__).parent / "builtin-seed.yaml").read_text(encoding="utf-8")
    last = '      - {hawbId: hawb_a3, houseAirWaybillNumber: "176-12345690", packageCount: 2, grossWeightKg: 8.0}\n'
    many = "".join(
        f'      - {{hawbId: hawb_m{n}, houseAirWaybillNumber: "176-9{n:07d}", packageCount: 1, '
        "grossWeightKg: 1.0}\n"
        for n in range(147)
    )
    assert last in text
    emulator = Emulator(
        processing_seconds=0.0, seed=parse_seed(text.replace(last, last + many), "seed")
    )
    backend = LocalBackend(tmp_path)
    docs = [
        doc(Kind.HAWB_DEACTIVATION, "h", {"shipmentId": "shp_7Hk2Lm", "hawbId": "hawb_m146"}, 0)
    ]
    try:
        plan = plan_changes(docs, backend.read())
        assert _apply(backend, docs, emulator).ok
        counts = emulator.http.get("/_sandbox/stats").json()["requests"]
    finally:
        emulator.close()
    sent = sum(n for name, n in counts.items() if "/v1/" in name)
    assert sent == 3, counts  # two pages of HAWBs, then the DELETE
    assert (plan.requests, plan.requests_at_least) == (2, True)
    assert plan.changes[0].requests_at_least and plan.requests <= sent
    said = summary_text(plan, RateLimit.parse("1/second"))
    assert said.endswith("\nRequests: at least 2, at least 1.0 s at 1/second."), said
    one_create = plan_changes([movement("m", 0)], State(lineage="", serial=0))
    assert not one_create.requests_at_least
    assert "Requests: 1, about" in summary_text(one_create, RateLimit.parse("1/second"))


class _AnsweredByAnother(httpx.BaseTransport):
    """The emulator, but a group's PATCH is answered by another group at the ID (given
    again between the read and the write)."""

    def __init__(self, service: httpx.BaseTransport) -> None:
        self.service = service

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.service.handle_request(request)
        if request.method != "PATCH":
            return response
        body = json.loads(response.read())
        return httpx.Response(200, json={**body, "code": "OTHER"}, request=request)


def test_an_update_answered_by_another_object_is_not_recorded_as_done(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    assert _apply(backend, [doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0)], emulator).ok
    before = backend.read().resources["TemplateGroup/g"]
    client = CustomsClient(
        Sender(
            "http://sandbox.test",
            "sandbox-key",
            transport=_AnsweredByAnother(emulator.transport),
            retry_policy=NO_RETRIES,
        )
    )
    edited = [doc(Kind.TEMPLATE_GROUP, "g", {**GROUP, "name": "EU road (EU)"}, 0)]
    try:
        with backend.open("apply") as session:
            report = apply_plan(
                plan_changes(edited, session.state),
                session,
                client,
                parallelism=1,
                stop=threading.Event(),
            )
    finally:
        client.close()
    (outcome,) = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert outcome.detail.startswith("sent, and the service answered with another object")
    assert "code 'OTHER' there, 'EU-ROAD' recorded" in outcome.detail
    record = backend.read().resources["TemplateGroup/g"]
    assert record.spec == before.spec and record.found_instead is not None
    (planned,) = plan_changes(edited, backend.read()).changes
    assert planned.action is Action.NEEDS_DECISION


class _AnswerLost(httpx.BaseTransport):
    """The emulator, but the answer to a PATCH is lost (the service applied it)."""

    def __init__(self, service: httpx.BaseTransport) -> None:
        self.service = service

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.service.handle_request(request)
        if request.method == "PATCH":
            raise httpx.ReadError("connection reset", request=request)
        return response


def _apply_through(
    backend: LocalBackend, docs: list[Any], transport: httpx.BaseTransport
) -> ApplyReport:
    client = CustomsClient(
        Sender("http://sandbox.test", "sandbox-key", transport=transport, retry_policy=NO_RETRIES)
    )
    try:
        with backend.open("apply") as session:
            plan = plan_changes(docs, session.state)
            return apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    finally:
        client.close()


def _updated_with_the_answer_lost(
    tmp_path: Path, emulator: Emulator, address: str
) -> tuple[LocalBackend, list[Any]]:
    """A group and a departure applied, then the document at ``address`` edited (the
    group's name, the departure's consignee) and applied with the answer lost: the backend,
    and the edited document."""
    backend = LocalBackend(tmp_path)
    sent = departure()
    docs = [doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0), doc(Kind.DEPARTURE_DECLARATION, "d", sent, 1)]
    assert _apply(backend, docs, emulator).ok
    edited = [
        d
        for d in [
            doc(Kind.TEMPLATE_GROUP, "g", {**GROUP, "name": "EU road (EU)"}, 0),
            doc(
                Kind.DEPARTURE_DECLARATION,
                "d",
                {**sent, "Consignee": {**sent["Consignee"], "city": "Bremen"}},
                1,
            ),
        ]
        if str(d.address) == address
    ]
    _apply_through(backend, edited, _AnswerLost(emulator.transport))
    return backend, edited


@pytest.mark.parametrize("address", ["TemplateGroup/g", "DepartureDeclaration/d"])
def test_an_update_repeated_after_an_unknown_outcome_reads_its_object_first(
    tmp_path: Path, emulator: Emulator, address: str
) -> None:
    # Found in review: an update whose answer was lost, repeated after the service's data
    # was reset and its IDs given to another client, was sent without the read first
    # (only applied records were checked): it PATCHed that client's group or departure
    # parties, and recorded the answer as done.
    backend, edited = _updated_with_the_answer_lost(tmp_path, emulator, address)
    lost = backend.read().resources[address]
    assert lost.status is RecordStatus.UNKNOWN
    reset = _reset_and_taken(emulator)
    recording = _Recording(reset.transport)
    try:
        report = _apply_through(backend, edited, recording)
    finally:
        reset.close()
    assert recording.patched == []
    (outcome,) = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert outcome.detail.startswith("not sent: the service holds another object at ")
    assert "the outcome of the last request to " + address + " is unknown" in outcome.detail
    assert f"`customs-batch state forget {address}`" in outcome.detail
    noted = backend.read().resources[address]
    # Nothing of the other object is recorded; that it is there is noted, as refresh notes
    # it, and the outcome stays unknown.
    assert noted.found_instead is not None and noted.not_found_at is not None
    assert noted == lost.with_changes(
        not_found_at=noted.not_found_at, found_instead=noted.found_instead
    )


@pytest.mark.parametrize("address", ["TemplateGroup/g", "DepartureDeclaration/d"])
def test_a_repeat_refused_for_another_object_is_held_by_the_next_plan_with_its_ways_out(
    tmp_path: Path, emulator: Emulator, address: str
) -> None:
    # Found in review: the repeat of an update whose answer was lost, refused because the
    # service holds another object at its ID, noted nothing: every plan planned the update
    # again, and every apply read and refused it again, saying the same thing.
    backend, edited = _updated_with_the_answer_lost(tmp_path, emulator, address)
    reset = _reset_and_taken(emulator)
    try:
        assert not _apply_through(backend, edited, reset.transport).ok
        held = _planned(edited, backend.read())[address]
        assert (held.action, held.operation) == (Action.NEEDS_DECISION, Operation.NONE)
        assert held.reason.startswith("the service holds another object at ")
        assert f"`customs-batch state forget {address}`, then `customs-batch import" in (
            held.reason
        )
        recording = _Recording(reset.transport)
        report = _apply_through(backend, edited, recording)
        outcome = {str(o.address): o for o in report.outcomes}[address]
        assert outcome.status is NodeStatus.SKIPPED and recording.patched == []
        # refresh reads it again, and keeps the note while the other object is there...
        client = CustomsClient(
            Sender(
                "http://sandbox.test",
                "sandbox-key",
                transport=reset.transport,
                retry_policy=NO_RETRIES,
            )
        )
        with client, backend.open("refresh") as session:
            drift = {d.address: d for d in refresh(session, client)}[address]
        assert drift.missing and "another object" in drift.message
        assert "state forget" in drift.message and "rm --gone" not in drift.message
    finally:
        reset.close()
    # ... and takes it away once the service holds the object again: the repeat goes.
    client = CustomsClient(
        Sender(
            "http://sandbox.test",
            "sandbox-key",
            transport=emulator.transport,
            retry_policy=NO_RETRIES,
        )
    )
    with client, backend.open("refresh") as session:
        drift = {d.address: d for d in refresh(session, client)}[address]
    assert not drift.missing and drift.message.startswith("found at the service again")
    record = backend.read().resources[address]
    assert record.status is RecordStatus.UNKNOWN and record.not_found_at is None
    assert _planned(edited, backend.read())[address].action is Action.UPDATE
    report = _apply_through(backend, edited, emulator.transport)
    assert {str(o.address): o.status for o in report.outcomes}[address] is NodeStatus.SUCCEEDED


def _planned(docs: list[Any], state: State) -> dict[str, Any]:
    return {str(c.address): c for c in plan_changes(docs, state).changes}


def test_a_repeated_code_change_goes_to_the_group_under_either_code(
    tmp_path: Path, emulator: Emulator
) -> None:
    # A group update whose answer was lost may have changed its code: the group read under
    # the new code, as under the recorded one, is the same group, and the repeat goes.
    backend = LocalBackend(tmp_path)
    assert _apply(backend, [doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0)], emulator).ok
    edited = [doc(Kind.TEMPLATE_GROUP, "g", {**GROUP, "code": "EU-ROAD-2"}, 0)]
    _apply_through(backend, edited, _AnswerLost(emulator.transport))
    assert backend.read().resources["TemplateGroup/g"].status is RecordStatus.UNKNOWN
    groups = emulator.http.get("/v1/declaration-templates/groups").json()["result"]
    assert "EU-ROAD-2" in [g["code"] for g in groups]  # the lost request landed
    report = _apply_through(backend, edited, emulator.transport)
    (outcome,) = report.outcomes
    assert outcome.status is NodeStatus.SUCCEEDED, outcome.detail
    record = backend.read().resources["TemplateGroup/g"]
    assert record.status is RecordStatus.APPLIED and record.outputs["code"] == "EU-ROAD-2"


def test_a_group_two_lost_code_changes_left_at_the_first_is_taken_as_its_own(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found in review: a group's code changed A -> B, the answer lost (B landed), then
    # B -> C, the answer lost again (C never arrived). The record remembered A (its last
    # answer) and C (its spec) only: the group at B was taken for another object, and the
    # repeat was never sent.
    backend = LocalBackend(tmp_path)
    assert _apply(backend, [doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0)], emulator).ok
    first = [doc(Kind.TEMPLATE_GROUP, "g", {**GROUP, "code": "EU-ROAD-B"}, 0)]
    _apply_through(backend, first, _AnswerLost(emulator.transport))
    second = [doc(Kind.TEMPLATE_GROUP, "g", {**GROUP, "code": "EU-ROAD-C"}, 0)]
    _apply_through(backend, second, _NeverArrives(emulator.transport))
    record = backend.read().resources["TemplateGroup/g"]
    assert record.status is RecordStatus.UNKNOWN and record.spec["code"] == "EU-ROAD-C"
    assert record.maybe_held == ({"code": "EU-ROAD-B"},)
    ident = record.outputs["id"]
    groups = emulator.http.get("/v1/declaration-templates/groups").json()["result"]
    assert [g["code"] for g in groups if g["id"] == ident] == ["EU-ROAD-B"]

    recording = _Recording(emulator.transport)
    (outcome,) = _apply_through(backend, second, recording).outcomes
    assert outcome.status is NodeStatus.SUCCEEDED, outcome.detail
    assert [body.get("code") for body in recording.patched] == ["EU-ROAD-C"]
    record = backend.read().resources["TemplateGroup/g"]
    assert record.status is RecordStatus.APPLIED and record.outputs["code"] == "EU-ROAD-C"
    assert record.maybe_held == () and "maybeHeld" not in record.to_json()


class _NeverArrives(httpx.BaseTransport):
    """The emulator, but a PATCH times out before it reaches the service."""

    def __init__(self, service: httpx.BaseTransport) -> None:
        self.service = service

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "PATCH":
            raise httpx.ReadTimeout("timed out", request=request)
        return self.service.handle_request(request)


def test_a_group_update_repeated_after_an_unknown_outcome_sends_the_document(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found in review: the repeat sent `PATCH {}` (the record already held the document,
    # so nothing differed), was reported done, and recorded the service's old name.
    backend = LocalBackend(tmp_path)
    assert _apply(backend, [doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0)], emulator).ok
    renamed = {**GROUP, "name": "EU road (EU)"}
    edited = [doc(Kind.TEMPLATE_GROUP, "g", renamed, 0)]
    _apply_through(backend, edited, _NeverArrives(emulator.transport))
    assert backend.read().resources["TemplateGroup/g"].status is RecordStatus.UNKNOWN
    recording = _Recording(emulator.transport)
    (outcome,) = _apply_through(backend, edited, recording).outcomes
    assert outcome.status is NodeStatus.SUCCEEDED, outcome.detail
    assert recording.patched == [{"name": "EU road (EU)", "code": "EU-ROAD"}]
    groups = emulator.http.get("/v1/declaration-templates/groups").json()["result"]
    assert [g["name"] for g in groups if g["code"] == "EU-ROAD"] == ["EU road (EU)"]
    assert backend.read().resources["TemplateGroup/g"].spec["name"] == "EU road (EU)"


def test_a_pending_cancellation_read_not_yet_submitted_is_undone_not_done(
    tmp_path: Path, emulator: Emulator
) -> None:
    # The emulator's 501 is `ready` (not yet submitted): a cancellation recorded as asked
    # of it, read again, was undone there (a reset). It is neither done nor refused by
    # customs; the next plan sends it again, which cancels it at once.
    backend = LocalBackend(tmp_path)
    cancel = doc(Kind.EXPORT_CANCELLATION, "c", {"declarationId": 501}, 0)
    asked = ResourceRecord(
        "ExportCancellation/c",
        RecordStatus.APPLIED,
        "cancel-export",
        {"declarationId": 501},
        outputs={"declarationId": 501, "canceled": False},
    )
    with backend.open("seed") as session:
        session.record(asked)
    with backend.open("apply") as session:
        plan = plan_changes([cancel], session.state)
        assert plan.changes[0].operation is Operation.FOLLOW
        report = apply_plan(plan, session, emulator.client, parallelism=1, stop=threading.Event())
    (outcome,) = report.outcomes
    assert outcome.status is NodeStatus.FAILED
    assert "501 is ready: what it did is undone at the service" in outcome.detail
    (again,) = plan_changes([cancel], backend.read()).changes
    assert (again.action, again.operation) == (Action.CREATE, Operation.CANCEL_EXPORT)
    assert _apply(backend, [cancel], emulator).ok
    assert emulator.http.get("/v1/declarations/501").json()["status"] == "canceled"


def test_apply_wait_does_not_follow_what_depends_on_a_departure_customs_rejected(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: a departure and its party update left processing, then the
    # departure found invalid. Every apply --wait planned the party update "waiting ... is
    # processing" (its record was never read again), and the skip said the departure "was
    # not applied" although the service holds it.
    backend = LocalBackend(tmp_path)
    invalid = doc(
        Kind.DEPARTURE_DECLARATION, "d", {**departure(), "commercialReference": "INVALID-1"}, 0
    )
    update = doc(
        Kind.TRANSIT_PARTY_UPDATE,
        "u",
        {"declarationId": "${ref:DepartureDeclaration/d.declarationId}", "Consignee": EORI},
        1,
    )
    assert _apply(backend, [invalid, update], emulator).ok  # both left processing
    with backend.open("test") as session:  # as refresh records the departure found invalid
        found = session.state.resources["DepartureDeclaration/d"]
        session.record(found.with_changes(remote_status="invalid"))
    state = backend.read()
    assert state.resources["TransitPartyUpdate/u"].outputs["status"] == "processing"
    plan = following_processing(plan_changes([invalid, update], state), state)
    said = {str(c.address): c for c in plan.changes}
    assert said["DepartureDeclaration/d"].action is Action.REJECTED
    held = said["TransitPartyUpdate/u"]
    assert (held.action, held.operation) == (Action.REFUSED, Operation.NONE)
    assert "it depends on DepartureDeclaration/d, which customs rejected" in held.reason


def test_apply_wait_follows_a_renamed_departure_still_processing_once_its_record_moved(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found by an outside probe: a departure left processing, then renamed: apply --wait
    # moved its record and left it processing, where the same document under its old name
    # is followed until customs decides (README: a later apply --wait follows every
    # departure the state records processing, whatever left it so).
    backend = LocalBackend(tmp_path)
    spec = departure()
    assert _apply(backend, [doc(Kind.DEPARTURE_DECLARATION, "d", spec, 0)], emulator).ok
    assert backend.read().resources["DepartureDeclaration/d"].outputs["status"] == "processing"
    renamed = doc(Kind.DEPARTURE_DECLARATION, "d2", spec, 0)
    with backend.open("apply") as session:
        plan = following_processing(plan_changes([renamed], session.state), session.state)
        assert plan.changes[0].operation is Operation.MOVE
        report = apply_plan(
            plan,
            session,
            emulator.client,
            parallelism=1,
            stop=threading.Event(),
            wait=WaitOptions(timeout=5, interval=0.01),
        )
    (outcome,) = report.outcomes
    assert outcome.status is NodeStatus.SUCCEEDED, outcome.detail
    assert outcome.detail.startswith("moved from DepartureDeclaration/d; ")
    record = backend.read().resources["DepartureDeclaration/d2"]
    assert record.remote_status == "ready"
    assert "DepartureDeclaration/d" not in backend.read().resources


def test_an_update_repeated_after_a_lost_answer_with_one_more_edit_sends_the_lost_change(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found in review: a group renamed, the PATCH never arrived (unknown), then its code
    # edited too: the repeat sent only the code, reported succeeded, and the service kept
    # the old name.
    backend = LocalBackend(tmp_path)
    assert _apply(backend, [doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0)], emulator).ok
    renamed = {**GROUP, "name": "EU road (EU)"}
    lost = _NeverArrives(emulator.transport)
    _apply_through(backend, [doc(Kind.TEMPLATE_GROUP, "g", renamed, 0)], lost)
    assert backend.read().resources["TemplateGroup/g"].status is RecordStatus.UNKNOWN
    recoded = {**renamed, "code": "EU-ROAD-2"}
    recording = _Recording(emulator.transport)
    report = _apply_through(backend, [doc(Kind.TEMPLATE_GROUP, "g", recoded, 0)], recording)
    (outcome,) = report.outcomes
    assert outcome.status is NodeStatus.SUCCEEDED, outcome.detail
    ident = backend.read().resources["TemplateGroup/g"].outputs["id"]
    groups = emulator.http.get("/v1/declaration-templates/groups").json()["result"]
    assert [(g["name"], g["code"]) for g in groups if g["id"] == ident] == [
        ("EU road (EU)", "EU-ROAD-2")
    ]


def test_a_noted_unknown_outcome_is_told_with_its_ways_out_everywhere() -> None:
    # status, results and a plan without its document say what the plan says of a repeat
    # apply found another object for (an update whose answer was lost): a decision, with
    # the ways out of an unknown outcome (`state rm --gone` refuses one), never "repeated".
    address = "DepartureDeclaration/d"
    record = ResourceRecord(
        address,
        RecordStatus.UNKNOWN,
        Operation.UPDATE_DEPARTURE_PARTIES.value,
        departure(),
        outputs={"declarationId": 7003, "status": "ready"},
        updated_at="2026-01-01T00:00:00.000Z",
        not_found_at="2026-01-02T00:00:00.000Z",
        found_instead="totalWeight 999 there, 60.0 recorded",
    )
    state = State(lineage="", serial=0, resources={address: record})
    (entry,) = status_entries(state)
    assert entry.lifecycle == "needs-decision"
    assert f"`customs-batch state forget {address}`, then `customs-batch import" in entry.message
    result = recorded_result(Address.parse(address) or _no_address(), record)
    assert result.status is ResultStatus.NEEDS_DECISION
    assert "another object at 7003" in result.errors[0] and "rm --gone" not in result.errors[0]
    (orphan,) = plan_changes([], state).changes
    assert orphan.action is Action.NEEDS_DECISION
    assert orphan.reason.startswith("no longer in the manifests, and the service holds another")


def _no_address() -> Any:
    raise AssertionError("not an address")


def test_a_stop_while_a_change_reads_first_says_it_was_not_sent_not_a_rate_limit_wait(
    tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while an export cancellation's read of its declaration (the read before its
    write) was out, with no rate limit at all: the write is not started, and its outcome
    said it was 'stopped before its turn under the rate limit', which there is none of."""
    from customs_batch.execution import apply as apply_module

    backend = LocalBackend(tmp_path)
    stop = threading.Event()
    real = apply_module._Run._another_there

    def stopped_meanwhile(self: Any, change: Any, intent: Any) -> Any:
        found = real(self, change, intent)
        stop.set()  # Ctrl-C comes while the read is out
        return found

    monkeypatch.setattr(apply_module._Run, "_another_there", stopped_meanwhile)
    with backend.open("apply") as session:
        plan = plan_changes([movement("m", 0)], State(lineage="", serial=0))
        report = apply_plan(plan, session, emulator.client, parallelism=1, stop=stop)
    [outcome] = report.outcomes
    assert outcome.status is NodeStatus.NOT_STARTED
    assert "rate limit" not in outcome.detail
    assert "nothing was sent" in outcome.detail
    assert emulator.movements() == []
