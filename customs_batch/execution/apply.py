"""Apply a plan: record every intent before it is sent and every outcome after, durably.

The walk of the graph is ``scheduler.walk``; this module decides what one node does, and
asks the kind's model (``customs_batch.kinds.registry``) how. A definite refusal is recorded
as failed with the service's error. An outcome that cannot be known (a timeout, a reset
connection, a server error) is recorded as unknown, so the next plan re-sends a movement
with its recorded key and never re-sends a departure blindly. A request that never left (the
connection was refused) takes the intent back: the next run sends it like anything new.

The intent is on disk before its request leaves; the outcome is written at once but reported
only once on disk. A worker does not wait for the disk after a request: the fsync that makes
its next intent durable makes its last outcome durable too (and other workers' lines with
them), so an operation costs one wait for the disk, not two. A worker that finds nothing
ready flushes, so no outcome waits long to be reported.

With the environment's history (``customs_batch.execution.history``), each request has an
entry written before its intent and one with its answer before its outcome; every wait for
the journal's disk first waits for the history's, so an operation then costs two.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from customs_batch.client import (
    AuthenticationError,
    CustomsClient,
    NotFoundError,
    NotSentError,
    PermissionDeniedError,
    RateLimitedError,
    RequestRefusedError,
    TlsFailedError,
)
from customs_batch.errors import CustomsBatchError, ServiceError, StateError
from customs_batch.execution.elsewhere import HeldElsewhere, ObjectsHeldElsewhere
from customs_batch.execution.history import HistoriedSession, RunHistory
from customs_batch.execution.scheduler import NodeResult, NodeStatus, walk
from customs_batch.execution.time_budget import BudgetWatch, OutOfTime, TimeBudget
from customs_batch.execution.waiting import WaitOptions, follow_pending, poll
from customs_batch.jsontypes import JSON
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.model import (
    KindModel,
    Reading,
    Request,
    Restated,
    WaitFunction,
    derived_idempotency_key,
    key_honoured_until,
    key_made_at,
    not_found_words,
    unverified_words,
)
from customs_batch.kinds.registry import SEND, model_of
from customs_batch.planning.model import Action, Operation, Plan, PlannedChange
from customs_batch.planning.references import resolve
from customs_batch.sensitive import clear_values, without_quoted
from customs_batch.state.backend import StateSession
from customs_batch.state.model import RecordStatus, ResourceRecord, ServiceFailure
from customs_batch.state.records import by_output

if TYPE_CHECKING:
    from customs_batch.client import Exchange

CONFLICT = 409


def now_iso() -> str:
    """The current UTC time as ISO 8601 with milliseconds, as the service writes it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Outcome:
    """What happened to one planned change."""

    address: Address
    status: NodeStatus
    operation: Operation
    detail: str = ""
    outputs: Mapping[str, JSON] = field(default_factory=dict)
    remote_status: str | None = None
    reading: Reading | None = None
    """What ``remote_status`` means, as its kind read it with the record
    (``KindModel.reading``); None where no record was read with it (its kind's state lists
    then tell)."""

    @property
    def rejected(self) -> bool:
        """Whether the service refused it, as its kind reads its state (a cancellation of a
        declaration ``submitted``: refused, unless granted before and undone since)."""
        if self.reading is not None:
            return self.reading is Reading.REJECTED
        return model_of(self.address.kind).rejected(self.remote_status)


class ApplyEvents(Protocol):
    """Where progress goes: a terminal display, plain lines, or a JSON event stream."""

    def started(self, plan: Plan, operations: int, skipped: int) -> None:
        """Before anything is sent: the ``operations`` the run sends, and the changes it
        reports ``skipped`` without sending anything (refused by the plan, rejected at the
        service or needing a decision): every outcome to come is one of these."""
        ...

    def sending(self, address: Address) -> None: ...
    def finished_one(self, outcome: Outcome) -> None: ...


@dataclass
class ApplyReport:
    """The outcomes of a run, in plan order, and whether it stopped early: ``stopped`` by
    Ctrl-C or SIGTERM, ``out_of_time`` when the time budget kept operations from starting."""

    outcomes: list[Outcome]
    stopped: bool
    fatal: CustomsBatchError | None
    seconds: float
    """How long the run took: :func:`apply_plan` counts its operations; ``apply`` makes it
    the whole run's, from the start of the command (the lock, the wait before looking for
    lost submissions, planning and the question included)."""
    out_of_time: OutOfTime | None = None

    def count(self, status: NodeStatus) -> int:
        return sum(1 for outcome in self.outcomes if outcome.status is status)

    @property
    def ok(self) -> bool:
        return (
            not self.stopped
            and self.fatal is None
            and self.out_of_time is None
            and all(outcome.status in _DONE for outcome in self.outcomes)
        )


_DONE = (NodeStatus.SUCCEEDED, NodeStatus.WAITING)
"""Outcomes that let dependents go on and the run end well: a cancellation customs has not
decided yet is as far as a run can take it without --wait, as a departure in processing is."""


@dataclass(frozen=True)
class Checked:
    """A record of the object a write goes to, with its kind's model."""

    model: KindModel
    record: ResourceRecord


class _NotSent(Exception):
    """The request was not sent; nothing to record."""


_KEY_EXPIRED = (
    "not sent: it was planned to be re-sent with its recorded Idempotency-Key, which is no "
    "longer honoured (24 hours from its first request): sent now, the service could create "
    "a second one. Plan again: the outcome of its first request needs a decision"
)


class _Stopped(Exception):
    """The run was stopped while the request waited for its turn under the rate limit:
    nothing of it was recorded or sent."""


_UNREAD_TARGET = "not sent: the object it writes to could not be read first"
"""What a write says when the object it writes to could not be read first (its kind checks it is
still the one recorded)."""


class _Run:
    def __init__(
        self,
        plan: Plan,
        session: StateSession,
        client: CustomsClient,
        stop: threading.Event,
        wait: WaitOptions | None,
        events: ApplyEvents | None,
        history: RunHistory | None = None,
        changes: dict[Address, PlannedChange] | None = None,
        elsewhere: ObjectsHeldElsewhere | None = None,
    ) -> None:
        self.events = events
        self.history = history
        self.elsewhere = elsewhere or ObjectsHeldElsewhere()
        """What the other states of the service hold: an object one of them records is
        that environment's, never taken over here (a 409's group)."""
        self.changes = (
            {change.address: change for change in plan.changes} if changes is None else changes
        )
        """The changes the run walks (by default every change of the plan): those it sends
        or holds back, looked up by address."""
        self.session = session
        self.client = client
        self.stop = stop
        self.wait = wait
        self.outcomes: dict[Address, Outcome] = {}
        self.never_sent: set[Address] = set()
        """Changes whose intent could not be recorded: they never left."""
        self.fatal: CustomsBatchError | None = None
        self._lock = threading.Lock()
        self._restated_index: dict[tuple[Kind, str], dict[str, list[str]]] = {}
        """By kind and output, the records of the state by that output's value: where the
        objects a kind's answer restates are found (``_restate``), made when first needed."""
        state = session.state
        if not state.lineage:
            # What the first record would draw, drawn before any worker sends (a key is
            # derived from it before its intent is recorded), so that every key of a first
            # run has a random part.
            state.lineage = str(uuid.uuid4())
        self.started_from = (state.lineage, state.serial)
        """The lineage and serial of the state the run started from, which the
        Idempotency-Keys it makes are derived from
        (:func:`~customs_batch.kinds.model.derived_idempotency_key`)."""

    def fail(self, exc: CustomsBatchError) -> None:
        """A fatal error: keep the first, and stop every worker."""
        with self._lock:
            self.fatal = self.fatal or exc
        self.stop.set()

    def unread(self, change: PlannedChange, exc: ServiceError, what: str) -> Outcome:
        """``change`` not done: ``what`` it needed read first could not be (``exc``); a key
        the service refuses stops every worker, anything else the next run reads again."""
        if isinstance(exc, AuthenticationError | PermissionDeniedError):
            self.fail(exc)
        detail = f"{what} ({exc.message}); the next run reads it again"
        return Outcome(change.address, NodeStatus.FAILED, change.operation, detail)

    def flush(self) -> None:
        """Make every outcome written so far durable (and so reported)."""
        try:
            self.session.flush()
        except StateError as exc:
            self.fail(exc)

    def lookup(self, address: Address, name: str) -> JSON:
        record = self.session.state.resources.get(str(address))
        if record is None or record.status is not RecordStatus.APPLIED:
            raise KeyError(name)
        return record.outputs[name]

    def run(self, address: Address) -> bool:
        change = self.changes[address]
        if self.events is not None:
            self.events.sending(address)
        try:
            outcome = self._send(change)
        except _NotSent as exc:
            outcome = Outcome(address, NodeStatus.FAILED, change.operation, str(exc))
        except _Stopped:
            # The stop came before the request left: while it waited for its turn under
            # the rate limit, or earlier (a read before the write, with no limit at all).
            why = "stopped before it was sent: nothing was sent"
            outcome = Outcome(address, NodeStatus.NOT_STARTED, change.operation, why)
        except _IntentUnrecorded as lost:  # the disk is full: stop everything, nothing sent
            self.fail(lost.error)
            self.never_sent.add(address)
            outcome = Outcome(address, NodeStatus.FAILED, change.operation, lost.detail)
        except _Unrecorded as lost:  # an answer of success, and the state went away
            self.fail(lost.error)
            outcome = Outcome(address, NodeStatus.FAILED, change.operation, lost.detail)
        except StateError as exc:  # the lock was broken, the disk is full: stop everything
            self.fail(exc)
            outcome = Outcome(address, NodeStatus.FAILED, change.operation, exc.message)
        if outcome.status is NodeStatus.FAILED and change.origin:
            outcome = replace(outcome, detail=f"{outcome.detail} (from {change.origin})")
        with self._lock:
            self.outcomes[address] = outcome
        return outcome.status in _DONE

    def _send(self, change: PlannedChange) -> Outcome:
        if change.operation is Operation.FORGET:
            if self.history is not None:
                self.history.dropped(change)
            self.session.forget(str(change.address))
            return Outcome(change.address, NodeStatus.SUCCEEDED, change.operation, "dropped")
        if change.operation is Operation.MOVE:
            return self._followed_once_moved(change, self._move(change))
        if change.operation is Operation.HAND_OVER:
            return self._hand_over(change)
        if (
            change.moved_from is not None
            and str(change.address) not in self.session.state.resources
        ):
            self._move(change)  # a declared rename with a change: moved, then sent
        if change.operation is Operation.FOLLOW:
            recorded = self.session.state.resources.get(str(change.address))
            if recorded is None:
                raise _NotSent("its record is no longer in the state")
            return self._made_since(change, recorded) or self._follow(change, recorded, read=True)
        spec, unknown = resolve(dict(change.spec), self.lookup)
        if unknown:
            raise _NotSent("a value it refers to is not known: its source was not applied")
        previous = self.session.state.resources.get(str(change.address))
        if previous is not None and change.operation is model_of(change.address.kind).resubmit:
            accepted = self._accepted_since(change, previous)
            if accepted is not None:
                return accepted
        key = change.idempotency_key
        if key is None and model_of(change.address.kind).idempotency_keys:
            # The same for a run again from the same state with the same request (a lost
            # runner's): the service answers with what the lost run made.
            lineage, serial = self.started_from
            key = derived_idempotency_key(lineage, serial, str(change.address), spec)
        intent = intent_of(change, previous, spec, key)
        elsewhere, intent = self._another_there(change, intent)
        if elsewhere is not None:
            return elsewhere
        # The request's turn under the rate limit comes before its intent: a run stopped
        # (Ctrl-C, SIGTERM, a fatal error) while it waits has neither recorded nor sent it,
        # even when a second Ctrl-C ends the process at once.
        limiter = self.client.sender.rate_limiter
        if not limiter.reserve(self.stop):
            raise _Stopped
        try:
            # A planned re-send counts from its first request (its record's time too); a
            # key made now counts from now, whatever an older record of the address says.
            now = datetime.now(UTC)
            honoured_until = key_honoured_until(
                key,
                previous.updated_at
                if previous is not None and change.idempotency_key is not None
                else now.isoformat(),
            )
            if change.idempotency_key is not None and (
                honoured_until is None or now >= honoured_until
            ):
                # A re-send planned while the key was honoured, sent after (a saved plan
                # applied later, a long run): under an expired key it would be new.
                raise _NotSent(_KEY_EXPIRED)
            # The history's entries come before the records they go with (see
            # HistoriedSession), and only from the holder of the lock.
            entry = 0
            if self.history is not None:
                self.session.check_lock()
                entry = self.history.requested(change, key)
            try:
                self.session.record(intent)
            except StateError as exc:
                self._not_sent(entry, change, key, exc)
                raise _IntentUnrecorded(exc) from None
            # An update after an unknown outcome: what the lost request changed is not
            # known (the record holds its body, not what the service held before it), so
            # the kind sends all it writes, and a change lost with it is not left out by a
            # later edit.
            repeated = (
                previous is not None
                and previous.status.outcome_unknown
                and change.operation is model_of(change.address.kind).update
            )
            changed = () if repeated else change.changed
            request = Request(change.address.kind, spec, intent.outputs, key, changed)
            exchanges = self.client.sender.watch() if self.history is not None else []
            # Nor is it attempted again (after a 429's wait, a retried failure) once the
            # service may have forgotten the key.
            with self.client.sender.retried_until(
                (honoured_until - now).total_seconds() if honoured_until else math.inf
            ):
                outputs = SEND[change.operation](self.client, request)
        except ServiceError as exc:
            self._answered(entry, change, key, exchanges, error=exc)
            return self._failed(change, intent, previous, request, exc)
        finally:
            limiter.unreserve()  # when no request took the slot (the record failed)
        self._answered(entry, change, key, exchanges, outputs=outputs)
        answered_instead = self._answered_instead(change, intent, previous, outputs)
        if answered_instead is not None:
            return answered_instead
        applied = intent.with_changes(
            status=RecordStatus.APPLIED,
            maybe_held=(),  # answered: what it holds is known
            outputs=outputs,
            spec=model_of(change.address.kind).as_answered(intent.spec, outputs),
            updated_at=now_iso(),
        )
        if _recovered(previous) or (
            previous is not None and key is not None and key == previous.kept_key
        ):
            # A movement replayed under its key may be one another environment took over.
            kind = change.address.kind
            holder = self.elsewhere.holding(kind, model_of(kind).held(applied))
            if holder is not None:
                return self._found_elsewhere(change, intent, applied, holder)
        try:
            return self._record_answer(change, applied, outputs)
        except StateError as exc:
            raise _Unrecorded(exc, _unrecorded(change, applied, exc)) from None

    def _found_elsewhere(
        self,
        change: PlannedChange,
        intent: ResourceRecord,
        answered: ResourceRecord,
        holder: HeldElsewhere,
    ) -> Outcome:
        """The object a lost creation's recovery found (a group looked up by its code, a
        movement replayed under its key), which another environment of the service records
        (taken over there while the outcome here was unknown): taken here too, both would
        write into it. Not taken; the outcome stays unknown."""
        ids = ", ".join(sorted(model_of(change.address.kind).held(answered)))
        address = change.address
        detail = (
            f"outcome still unknown: the service holds an object identical to this document "
            f"({ids}), which the request whose answer was lost may have made, but that "
            f"object is recorded as {holder}: taken here too, two environments would write "
            f"one object, so it is not. If it is this environment's, {holder.release}, then "
            f"`customs-batch state adopt {address} {ids}` here; if it is that "
            f"environment's, `customs-batch state forget {address}` here, and make this "
            "document declare another object or leave it to that environment"
        )
        return self._record_unknown(change, intent, detail)

    def _accepted_since(self, change: PlannedChange, previous: ResourceRecord) -> Outcome | None:
        """Before a resubmission, the rejected object it replaces, read again (the kind's
        ``refresh``): None when the service still holds it rejected (or no longer holds
        it), so the resubmission goes; otherwise nothing is sent, what the service holds
        now is recorded, and the outcome says why. The plan was made from the state, and
        the object may have been corrected and accepted since (by another client, say):
        a new declaration would then declare the same goods twice."""
        model = model_of(change.address.kind)
        ident = model.identifier(previous)
        if model.refresh is None:
            return None
        try:
            answer = model.refresh(self.client, [previous]).get(previous.address)
        except ServiceError as exc:
            return self.unread(
                change, exc, f"not resubmitted: {ident}, which it replaces, could not be read first"
            )
        if answer is None or model.rejected(answer.service_state, previous):
            return None
        # Not rejected there now: the one rejected, accepted since, or a look-alike made at
        # its number after a reset (its record's write before that one was made: the test
        # refresh makes), whose status is not the rejected one's. Listed only then, so the
        # resubmission the plan counts costs no more.
        try:
            made = model.made_at(self.client, previous)[0] if model.made_at else None
        except ServiceError as exc:
            return self.unread(
                change,
                exc,
                f"not resubmitted: when {ident}, which it replaces, was made could not be read",
            )
        if model.another_than_recorded(previous, answer.remote_spec, made) is not None:
            return None
        was = model.service_words(previous)
        record = previous.with_changes(
            outputs=dict(answer.outputs or previous.outputs),
            remote_status=answer.service_state,
            remote_errors=answer.errors,
            updated_at=now_iso(),
        )
        self.session.record_soon(record)
        detail = (
            f"not resubmitted: {ident} is {answer.service_state} at the service now, no longer "
            f"{was} (corrected there since the state recorded it), and a new declaration would "
            "declare the same goods twice. Its state is recorded: the next plan compares the "
            "document with it"
        )
        return Outcome(
            change.address,
            NodeStatus.FAILED,
            change.operation,
            detail,
            outputs=record.outputs,
            remote_status=record.remote_status,
        )

    def _written_to(self, change: PlannedChange, intent: ResourceRecord) -> list[Checked]:
        """The records of the object a write to an existing object goes to: the address's
        own (an update by its recorded ID), and those of the object of another kind it
        restates (a party update's departure), each with its kind's model; those of the other
        kind first, whose record tells the object best."""
        model = model_of(change.address.kind)
        own = self.session.state.resources.get(str(change.address))
        mine: list[Checked] = []
        if own is not None and _stands_for_an_object(model, own):
            mine.append(Checked(model, own))
        told = model.restates(intent) if model.restates is not None else None
        if told is None:
            return mine
        written: list[Checked] = []
        resources = self.session.state.resources
        for address in self._told_records(change, told):
            other = resources.get(address)
            if (
                other is not None
                and _stands_for_an_object(model_of(told.kind), other)
                and other.outputs.get(told.output) == told.value
            ):
                written.append(Checked(model_of(told.kind), other))
        return [*written, *mine]

    def _another_there(
        self, change: PlannedChange, intent: ResourceRecord
    ) -> tuple[Outcome | None, ResourceRecord]:
        """Before a write to an object the service already holds (the kind's
        ``reads_first``), that object read: None when it may be the recorded one, so the
        write goes. Otherwise nothing is sent, and what ``refresh`` would note is noted: the
        service no longer holds it, or holds another object at its ID (given again after a
        sandbox reset, say) than a record of it says (``another_object``). The plan was
        made from the state, which cannot know. With the intent to record: what the read
        gave of the object that its spec does not describe is kept with it the first time
        (``target_seen``: a declaration made elsewhere that a party update names by its
        number), so that a later read tells another object there."""
        model = model_of(change.address.kind)
        read = model.read_target or model.refresh
        if change.operation not in model.reads_first or read is None:
            return None, intent
        written = self._written_to(change, intent)
        own = [checked.record for checked in written if checked.record.address == intent.address]
        # Read with the time of the record's last write, not the intent's, where that record
        # alone stands for the object: an object the service made since is another one
        # (``KindModel.another_than_recorded``). Where a record of another kind does (a
        # party update's departure), that record tells it, and no time is given.
        alone = bool(own) and len(own) == len(written)
        asked = intent.with_changes(updated_at=own[0].updated_at if alone else "")
        try:
            found = read(self.client, [asked])
        except ServiceError as exc:
            return self.unread(change, exc, _UNREAD_TARGET), intent
        if intent.address not in found:
            return None, intent
        answer = found[intent.address]
        for checked in written:
            created_at = None if answer is None else answer.created_at
            made_at = checked.model.made_at
            if answer is not None and made_at is not None:
                # Its read tells too little (a departure's detail): when the object at the
                # ID was made tells another given it since. Not found within the pages read
                # (a busy account), the read alone decides, as it always did.
                try:
                    created_at, _ = made_at(self.client, checked.record)
                except ServiceError as exc:
                    return self.unread(change, exc, _UNREAD_TARGET), intent
            instead = (
                None
                if answer is None
                else checked.model.another_than_recorded(
                    checked.record, answer.remote_spec, created_at
                )
            )
            if answer is None or instead is not None:
                words = self._note_elsewhere(checked, instead)
                if checked.record.address != str(change.address):
                    words = f"it writes to the object of {checked.record.address}, and {words}"
                return Outcome(
                    change.address, NodeStatus.FAILED, change.operation, f"not sent: {words}"
                ), intent
        if answer is not None and answer.unverified is not None and alone:
            # Not told from another object at its ID within the read's bound: not taken.
            record = own[0]
            if record.unverified != answer.unverified:
                self.session.record(record.with_changes(unverified=answer.unverified))
            words = unverified_words(record.address, model.identifier(record), answer.unverified)
            return Outcome(
                change.address, NodeStatus.FAILED, change.operation, f"not sent: {words}"
            ), intent
        if answer is None:  # a declaration made elsewhere, which no record holds
            # Which object was looked for: the IDs of the identity (a party update's
            # variant and fields are not where it writes).
            named = ", ".join(
                part for part in intent.identity if part.partition("=")[0].endswith("Id")
            )
            detail = (
                f"not sent: the object it writes to{f' ({named})' if named else ''} was not "
                "found at the service; check the ID its document names, and the environment"
            )
            return Outcome(change.address, NodeStatus.FAILED, change.operation, detail), intent
        seen = {k: v for k, v in answer.remote_spec.items() if k not in intent.spec}
        # Not when a record of the object stands for it (a party update's departure).
        if (
            seen
            and not intent.target_seen
            and all(c.record.address == intent.address for c in written)
        ):
            intent = intent.with_changes(target_seen=seen)
        return None, intent

    def _answered_instead(
        self,
        change: PlannedChange,
        intent: ResourceRecord,
        own: ResourceRecord | None,
        outputs: Mapping[str, JSON],
    ) -> Outcome | None:
        """The answer to a write to an existing object, checked as the read before it: an
        answer that gives another object than the one recorded (another group's code: the
        ID was given again between the read and the write) is not recorded as this
        document's, and its record is noted as ``refresh`` notes it."""
        model = model_of(change.address.kind)
        if (
            change.operation not in model.reads_first
            or own is None
            or not _stands_for_an_object(model, own)
        ):
            return None
        given = {name: value for name, value in outputs.items() if name in intent.spec}
        instead = model.another_object(intent.spec, given)
        if instead is None:
            return None
        words = self._note_elsewhere(Checked(model, own), instead)
        detail = (
            f"sent, and the service answered with another object than the one recorded: "
            f"the update went to that object, and nothing of it is recorded; {words}"
        )
        return Outcome(change.address, NodeStatus.FAILED, change.operation, detail)

    def _note_elsewhere(self, checked: Checked, instead: str | None) -> str:
        """Note on ``checked``'s record that the service no longer holds its object
        (``instead``: holds another at its ID, differing so), as ``refresh`` notes it, and
        say so and the ways out."""
        record = checked.record
        since = record.not_found_at
        if since is None or instead != record.found_instead:
            since = since or now_iso()
            # An unknown outcome is noted too (its status kept): the next plan holds it
            # for a decision rather than planning the repeat apply would refuse again.
            self.session.record(record.with_changes(not_found_at=since, found_instead=instead))
        return checked.model.not_found_words(record.address, record, since, instead)

    def _record_answer(
        self, change: PlannedChange, applied: ResourceRecord, outputs: Mapping[str, JSON]
    ) -> Outcome:
        model = model_of(change.address.kind)
        # Done at once (a cancellation granted in its answer): noted, as a read notes it.
        applied = model.noting_done(applied, applied.updated_at or now_iso())
        if model.undecided(model.service_words(applied)):
            # Answered, not decided: pending, never counted as done.
            following = self.wait is not None and change.operation in model.waits_after
            if following:
                self.session.record(applied)  # on disk before a wait that may last minutes
            else:
                self.session.record_soon(applied)
            return self._follow(change, applied, read=following)
        if (
            self.wait is not None
            and model.wait is not None
            and change.operation in model.waits_after
        ):
            self.session.record(applied)  # on disk before a wait that may last minutes
            return self._wait(change, applied, model.wait)
        self.session.record_soon(applied)
        self._restate(change, applied)
        return Outcome(
            change.address,
            NodeStatus.SUCCEEDED,
            change.operation,
            outputs=outputs,
            # The state the service answered (a departure submitted: processing).
            remote_status=model.last_known_state(applied),
            reading=model.reading(model.last_known_state(applied), applied),
        )

    def _restate(self, change: PlannedChange, record: ResourceRecord) -> None:
        """Record on the object of another kind the state this answer tells of it (a party
        update's: its departure, sent back to processing), as ``refresh`` would, so that
        ``status`` and ``results`` tell what the service holds. An object this run still
        sends is left to its own outcome."""
        restates = model_of(change.address.kind).restates
        told = restates(record) if restates is not None else None
        state = record.remote_status or record.outputs.get("status")
        if told is None or state is None:
            return
        errors = record.remote_errors if record.remote_status else ()
        resources = self.session.state.resources
        for address in self._told_records(change, told):
            parsed = Address.parse(address)
            other = resources.get(address)
            if (
                parsed is None
                or other is None
                or other.status is not RecordStatus.APPLIED
                or other.outputs.get(told.output) != told.value
                or (other.remote_status == state and other.remote_errors == errors)
            ):
                continue
            planned = self.changes.get(parsed)
            with self._lock:
                running = parsed not in self.outcomes
            if planned is not None and planned.operation.writes_state and running:
                continue
            self.session.record_soon(
                other.with_changes(
                    outputs={**other.outputs, "status": str(state)},
                    remote_status=str(state),
                    remote_errors=errors,
                    updated_at=now_iso(),
                )
            )

    def _told_records(self, change: PlannedChange, told: Restated) -> list[str]:
        """The addresses that may hold the object ``told`` names: what the change refers
        to, else the records of its kind whose output has that value (the state looked
        through once a run, parsing only the records of that kind)."""
        referred = [str(a) for a in change.depends_on if a.kind is told.kind]
        if referred:
            return referred
        key = (told.kind, told.output)
        with self._lock:
            index = self._restated_index.get(key)
            if index is None:
                index = self._restated_index[key] = by_output(
                    self.session.state.resources, told.kind.value, told.output
                )
        return index.get(str(told.value), [])

    def _answered(
        self,
        entry: int,
        change: PlannedChange,
        key: str | None,
        exchanges: list[Exchange],
        outputs: Mapping[str, JSON] | None = None,
        error: ServiceError | None = None,
    ) -> None:
        """Write the answer to the history. A history that cannot be written stops the run,
        but the outcome is still recorded: the state matters more than its history."""
        if self.history is None:
            return
        try:
            self.history.answered(entry, change, key, exchanges, outputs, error)
        except StateError as exc:
            self.fail(exc)

    def _not_sent(
        self, entry: int, change: PlannedChange, key: str | None, exc: StateError
    ) -> None:
        """The answer entry of a request whose intent could not be recorded (a full disk):
        it never left, and the history says `not-sent`, not `unknown` (which would send the
        user to the service for an object it never got). Written when it can be (the
        history's file has room where the journal has none); the run stops either way."""
        if self.history is None or not entry:
            return
        never_left = NotSentError(
            _IntentUnrecorded(exc).detail,
            operation=change.operation.value,
        )
        # When it cannot be written either, the history stays as it is: `unknown`.
        with contextlib.suppress(StateError):
            self.history.answered(entry, change, key, [], error=never_left)

    def _failed(
        self,
        change: PlannedChange,
        intent: ResourceRecord,
        previous: ResourceRecord | None,
        request: Request,
        exc: ServiceError,
    ) -> Outcome:
        """A request that did not succeed: not sent, refused, or its outcome unknown."""
        if isinstance(exc, NotSentError):
            # The request never left: nothing happened at the service.
            self._restore(change, previous)
            if isinstance(exc, TlsFailedError):
                # Every other request would meet the same certificate: stop here.
                self.fail(exc)
                return Outcome(
                    change.address, NodeStatus.FAILED, change.operation, f"not sent, {exc.message}"
                )
            detail = f"not sent, {exc.message}; the next run sends it"
            return Outcome(change.address, NodeStatus.FAILED, change.operation, detail)
        if isinstance(exc, AuthenticationError | PermissionDeniedError):
            self._restore(change, previous)
            self.fail(exc)
            return Outcome(change.address, NodeStatus.FAILED, change.operation, exc.message)
        if isinstance(exc, RateLimitedError):
            if exc.after_failures:
                # An attempt before the 429s failed otherwise (its answer lost, a 5xx): it
                # may have been processed. Repeating it under a new key could declare twice.
                return self._unknown(change, intent, exc)
            # Every attempt was answered 429: the service processed none, as if never sent.
            self._restore(change, previous)
            detail = (
                f"not sent, rate limited: the service answered 429 Too Many Requests to "
                f"{change.operation.value} ({exc.service_message or exc.message}); nothing "
                "was processed, and the next run sends it (a lower rate_limit for the "
                "environment avoids it)"
            )
            return Outcome(change.address, NodeStatus.FAILED, change.operation, detail)
        if isinstance(exc, RequestRefusedError | NotFoundError):
            if _still_in_flight(change, exc):
                return self._unknown(change, intent, exc)
            if _resent(change, previous):
                return self._resend_refused(change, intent, exc)
            if getattr(exc, "status", None) == CONFLICT and (
                previous is None or previous.never_created
            ):
                # A first creation, or one sent again after the service refused it (nothing
                # of it exists): the kind looks for what is there alike.
                return self._conflict(change, intent, request, exc)
            return self._refused(change, intent, previous, exc)
        return self._unknown(change, intent, exc)

    def _move(self, change: PlannedChange) -> Outcome:
        """A renamed document takes over its record: recorded under the new name first, so
        that a run killed between the two writes leaves the record twice, never not at all."""
        old = str(change.moved_from)
        record = self.session.state.resources.get(old)
        if record is None or change.moved_from is None:
            raise _NotSent(f"{old} is no longer in the state: plan again")
        status = record.status
        kept_from = record.forgotten_from  # an attempt taken back keeps its key when moved
        if status is RecordStatus.FORGOTTEN:
            status = RecordStatus(record.forgotten_from or RecordStatus.APPLIED.value)
            kept_from = None
        moved = record.with_changes(
            address=str(change.address),
            status=status,
            forgotten_from=kept_from,
            identity=change.identity or record.identity,
        )
        if self.history is not None:
            self.history.moved(change, moved.outputs)
        self.session.record(moved)
        self.session.forget(old)
        return Outcome(
            change.address,
            NodeStatus.SUCCEEDED,
            change.operation,
            f"moved from {old}",
            outputs=dict(moved.outputs),
        )

    def _hand_over(self, change: PlannedChange) -> Outcome:
        """Party fields handed to or from another document of the same declaration, at the
        value the service holds: the record takes the document's spec; nothing is sent."""
        previous = self.session.state.resources.get(str(change.address))
        if previous is None or previous.status is not RecordStatus.APPLIED:
            raise _NotSent("its record changed since the plan was made: plan again")
        spec, unknown = resolve(dict(change.spec), self.lookup)
        if unknown:
            raise _NotSent("a value it refers to is not known: its source was not applied")
        record = previous.with_changes(
            spec=dict(spec), identity=change.identity or previous.identity, updated_at=now_iso()
        )
        if self.history is not None:
            self.history.handed_over(change)
        self.session.record(record)
        return Outcome(
            change.address,
            NodeStatus.SUCCEEDED,
            change.operation,
            "party fields handed over; nothing sent",
            outputs=dict(record.outputs),
        )

    def _followed_once_moved(self, change: PlannedChange, moved: Outcome) -> Outcome:
        """``apply --wait``: a renamed document whose object the service is still working on,
        as recorded (a departure left processing), followed once its record has moved, as
        the same document unchanged under its old name is (``following_processing``)."""
        model = model_of(change.address.kind)
        record = self.session.state.resources.get(str(change.address))
        if (
            self.wait is None
            or model.wait is None
            or record is None
            or record.status is not RecordStatus.APPLIED
            or model.last_known_state(record) not in model.processing_states
        ):
            return moved
        waited = self._wait(change, record, model.wait)
        return replace(waited, detail=f"{moved.detail}; {waited.detail}")

    def _unknown(self, change: PlannedChange, intent: ResourceRecord, exc: ServiceError) -> Outcome:
        """Sent, but what the service did is unknown: recorded so for the next run."""
        detail = f"outcome unknown, recorded for the next run: {exc.message}"
        return self._record_unknown(change, intent, detail)

    def _record_unknown(
        self, change: PlannedChange, intent: ResourceRecord, detail: str
    ) -> Outcome:
        """Record the intent's outcome as unknown, for the next run, with the time the 24
        hours of its key count from when the key holds no time (:func:`_key_counts_from`);
        the outcome says ``detail``."""
        self.session.record_soon(
            intent.with_changes(
                status=RecordStatus.UNKNOWN,
                updated_at=_key_counts_from(intent) or now_iso(),
            )
        )
        return Outcome(change.address, NodeStatus.FAILED, change.operation, detail)

    def _resend_refused(
        self, change: PlannedChange, intent: ResourceRecord, exc: ServiceError
    ) -> Outcome:
        """A re-send under the recorded Idempotency-Key, refused: that says nothing of the
        first request, whose answer was lost. It may have made the object (a service that
        takes the key's re-use for another request, or no longer knows the key, refuses
        the re-send), so the outcome stays unknown: recorded as a refusal (nothing made),
        the next run would send it under a new key and the service could hold it twice."""
        message = getattr(exc, "service_message", None) or exc.message
        address = change.address
        detail = (
            f"outcome still unknown: the service refused the re-send under the recorded "
            f"Idempotency-Key ({message}), which says nothing of the first request, whose "
            f"answer was lost and which may have created it. Check what the service holds, "
            f"then `customs-batch state adopt {address} ID` if it was created, or "
            f"`customs-batch state forget {address}` if not (the next apply sends it again)"
        )
        return self._record_unknown(change, intent, detail)

    def _conflict(
        self, change: PlannedChange, intent: ResourceRecord, request: Request, exc: ServiceError
    ) -> Outcome:
        """A 409 on creation: the kind looks for what is there (a group with the code)."""
        explain = model_of(change.address.kind).on_conflict
        if explain is None:
            return self._refused(change, intent, None, exc)
        try:
            conflict = explain(self.client, change.address, request)
        except ServiceError as lookup_failed:
            return self._refused(change, intent, None, lookup_failed)
        if conflict.identical and conflict.outputs is not None:
            adopted = intent.with_changes(
                status=RecordStatus.APPLIED, outputs=conflict.outputs, updated_at=now_iso()
            )
            kind = change.address.kind
            holder = self.elsewhere.holding(kind, model_of(kind).held(adopted))
            if holder is not None:
                ids = ", ".join(sorted(model_of(kind).held(adopted)))
                return self._held_elsewhere(change, intent, exc, ids, holder)
            if self.history is not None:
                try:  # after the 409 of its answer entry: the object the state takes
                    self.history.adopted(change, conflict.outputs)
                except StateError as history_failed:
                    self.fail(history_failed)
            self.session.record_soon(adopted)
            return Outcome(
                change.address,
                NodeStatus.SUCCEEDED,
                change.operation,
                conflict.message,
                outputs=conflict.outputs,
            )
        if conflict.outputs is not None:
            # Not this document's as it stands (its way out is `import`), but when another
            # environment of the service records that object, `import` refuses it: say so.
            kind = change.address.kind
            found = intent.with_changes(outputs=conflict.outputs)
            holder = self.elsewhere.holding(kind, model_of(kind).held(found))
            if holder is not None:
                ids = ", ".join(sorted(model_of(kind).held(found)))
                return self._held_elsewhere(change, intent, exc, ids, holder, identical=False)
        failure = ServiceFailure(CONFLICT, conflict.message, _body(exc))
        self.session.record_soon(
            intent.with_changes(status=RecordStatus.FAILED, error=failure, updated_at=now_iso())
        )
        return Outcome(change.address, NodeStatus.FAILED, change.operation, conflict.message)

    def _held_elsewhere(
        self,
        change: PlannedChange,
        intent: ResourceRecord,
        exc: ServiceError,
        ids: str,
        holder: HeldElsewhere,
        *,
        identical: bool = True,
    ) -> Outcome:
        """A 409 whose object another environment of the service records (identical to the
        document, or one it cannot be adopted as, whose way out would be ``import``): it is
        that environment's, and adopted or imported here too, both would write into it. Not
        adopted; recorded as the refusal it is (nothing made)."""
        what, taken = (
            ("an object identical to this document", "adopted")
            if identical
            else ("an object of this document's unique key (a template group's code)", "imported")
        )
        message = (
            f"the service answered 409: it holds {what} "
            f"({ids}), but that object is recorded as {holder}: {taken} here too, two "
            f"environments would write one object, so it is not. If this environment is to "
            f"manage it instead, {holder.release}, then `customs-batch import "
            f"{change.address} {ids}` here; otherwise make "
            "this document declare another object (a template group: a code of its own), "
            "or leave it to that environment"
        )
        failure = ServiceFailure(CONFLICT, message, _body(exc))
        self.session.record_soon(
            intent.with_changes(status=RecordStatus.FAILED, error=failure, updated_at=now_iso())
        )
        return Outcome(change.address, NodeStatus.FAILED, change.operation, message)

    def _refused(
        self,
        change: PlannedChange,
        intent: ResourceRecord,
        previous: ResourceRecord | None,
        exc: ServiceError,
    ) -> Outcome:
        status = getattr(exc, "status", None)
        message = getattr(exc, "service_message", None) or exc.message
        # An access code the service quotes back is never shown (the record masks it too).
        message = str(without_quoted(message, clear_values(change.address.kind, change.spec)))
        failure = ServiceFailure(status, message, _body(exc))
        if previous is not None and previous.outputs:
            if isinstance(exc, NotFoundError) and previous.status is RecordStatus.APPLIED:
                # Sent to the recorded object, which the service says it does not hold:
                # noted as refresh notes it, so that plan and status say so.
                return self._not_found(change, previous.with_changes(error=failure), message)
            # An update was refused: the object is as it was, with the error noted.
            record = previous.with_changes(error=failure, updated_at=now_iso())
        else:
            record = intent.with_changes(
                status=RecordStatus.FAILED, error=failure, updated_at=now_iso()
            )
        self.session.record_soon(record)
        return Outcome(change.address, NodeStatus.FAILED, change.operation, message)

    def _not_found(self, change: PlannedChange, record: ResourceRecord, detail: str) -> Outcome:
        """The service answered 404 for the recorded object: noted on its record (as
        ``refresh`` notes it), its status and outputs kept as last known."""
        since = record.not_found_at or now_iso()
        self.session.record_soon(record.with_changes(not_found_at=since, updated_at=now_iso()))
        ident = model_of(change.address.kind).identifier(record)
        words = not_found_words(str(change.address), ident, since)
        return Outcome(change.address, NodeStatus.FAILED, change.operation, f"{detail}; {words}")

    def _restore(self, change: PlannedChange, previous: ResourceRecord | None) -> None:
        """The request was refused before the service acted on it (401/403)."""
        if previous is None:
            self.session.forget(str(change.address))
        else:
            self.session.record(previous)

    def _made_since(self, change: PlannedChange, record: ResourceRecord) -> Outcome | None:
        """Before following an object the plan says is still worked on (a departure left
        processing): where its read tells too little to tell another object at its ID
        (``KindModel.made_at``: a departure's detail), whether the service made the one
        there after the record's last write - another, given the ID again after a reset,
        whose status is not the record's. Noted as refresh notes it; None: followed."""
        model = model_of(change.address.kind)
        if model.made_at is None:
            return None
        try:
            made, _ = model.made_at(self.client, record)
        except ServiceError as exc:
            return self.unread(
                change, exc, "not followed: when the object at its ID was made could not be read"
            )
        instead = model.another_than_recorded(record, {}, made)
        if instead is None:
            return None
        words = self._note_elsewhere(Checked(model, record), instead)
        return Outcome(
            change.address, NodeStatus.FAILED, change.operation, f"not followed: {words}"
        )

    def _follow(self, change: PlannedChange, record: ResourceRecord, *, read: bool) -> Outcome:
        """Where an object the service had not decided stands: read once (``read``), and
        with --wait again until it is decided; recorded, and told as waiting, done or
        refused."""
        model = model_of(change.address.kind)
        refresh = model.refresh
        state = model.service_words(record)
        ident = model.identifier(record)
        if (
            read
            and self.wait is not None
            and model.wait is not None
            and model.last_known_state(record) in model.processing_states
        ):
            # Still being worked on (a departure a wait of an earlier run left processing):
            # followed as after a submission, by the kind's wait.
            return self._wait(change, record, model.wait)
        if read and refresh is not None:
            followed = follow_pending(
                lambda: refresh(self.client, [record]).get(record.address),
                model.undecided,
                self.wait,
                self.stop,
            )
            if followed.failure:
                return Outcome(
                    change.address, NodeStatus.FAILED, change.operation, followed.failure
                )
            if followed.answer is None:
                return self._not_found(change, record, f"{ident} is no longer found at the service")
            answer = followed.answer
            instead = model.another_object(record.spec, answer.remote_spec)
            if instead is not None:
                detail = (
                    f"the service holds another object at {ident} than the one recorded "
                    f"({instead}): nothing of it is recorded; `customs-batch refresh` notes "
                    "it and says the ways out"
                )
                return Outcome(change.address, NodeStatus.FAILED, change.operation, detail)
            record = record.with_changes(
                status=RecordStatus.APPLIED,
                outputs=dict(answer.outputs or record.outputs),
                remote_status=answer.service_state,
                remote_errors=answer.errors,
                not_found_at=None,  # read: the service holds it
                found_instead=None,
                updated_at=now_iso(),
            )
            record = model.noting_done(record, record.updated_at)
            self.session.record_soon(record)
            state = model.service_words(record)
            if followed.timed_out:
                assert self.wait is not None
                unknown = model.unknown_words(state)
                detail = (
                    f"{ident} still {state}{unknown} after {self.wait.timeout:g} s: not "
                    "decided yet; the next plan shows it waiting"
                )
                return self._told(change, record, NodeStatus.FAILED, detail)
        if model.undecided(state):
            said = f"{ident} is {state}{model.unknown_words(state)}"
            detail = (
                f"{said}: not decided yet at the service; `customs-batch apply --wait` or "
                "`customs-batch refresh` follows it"
            )
            return self._told(change, record, NodeStatus.WAITING, detail)
        reading = model.reading(state, record)
        if reading is Reading.UNDONE:
            detail = (
                f"{ident} is {state}: what it did is undone at the service (its data reset, "
                "say); the next plan sends it again"
            )
            return self._told(change, record, NodeStatus.FAILED, detail)
        if reading is Reading.REJECTED:
            way_out = model.rejected_way_out.format(address=change.address)
            return self._told(change, record, NodeStatus.FAILED, f"{ident} is {state}: {way_out}")
        return self._told(change, record, NodeStatus.SUCCEEDED, f"{ident} is {state}")

    @staticmethod
    def _told(
        change: PlannedChange, record: ResourceRecord, status: NodeStatus, detail: str
    ) -> Outcome:
        model = model_of(change.address.kind)
        return Outcome(
            change.address,
            status,
            change.operation,
            detail,
            outputs=record.outputs,
            # As its kind reads the record: a cancellation's from the service's answer
            # (`cancellation_requested`), which no read has recorded yet.
            remote_status=model.last_known_state(record),
            reading=model.reading(model.last_known_state(record), record),
        )

    def _wait(self, change: PlannedChange, applied: ResourceRecord, wait: WaitFunction) -> Outcome:
        """``--wait`` on an object just sent, as its kind follows it (``KindModel.wait``)."""
        options = self.wait
        assert options is not None
        waited = wait(self.client, applied, lambda read: poll(read, options, self.stop))
        if waited.not_found:
            return self._not_found(change, applied, waited.detail)
        detail = waited.detail
        if waited.timed_out:
            detail = f"{detail} after {options.timeout:g} s"
        status = NodeStatus.SUCCEEDED if waited.ok else NodeStatus.FAILED
        if waited.outputs is None:  # the answer already said where it stands
            self._restate(change, applied)
            return Outcome(change.address, status, change.operation, detail, applied.outputs)
        record = applied.with_changes(
            outputs=dict(waited.outputs),
            remote_status=waited.status,
            remote_errors=waited.errors,
            not_found_at=None,  # read: the service holds it
            found_instead=None,
            updated_at=now_iso(),
        )
        record = model_of(change.address.kind).noting_done(record, record.updated_at)
        self.session.record_soon(record)
        self._restate(change, record)
        return Outcome(
            change.address,
            status,
            change.operation,
            detail,
            outputs=record.outputs,
            remote_status=waited.status,
            reading=model_of(change.address.kind).reading(waited.status, record),
        )


def apply_plan(
    plan: Plan,
    session: StateSession,
    client: CustomsClient,
    *,
    parallelism: int,
    stop: threading.Event,
    events: ApplyEvents | None = None,
    wait: WaitOptions | None = None,
    budget: TimeBudget | None = None,
    clock: Callable[[], float] = time.monotonic,
    history: RunHistory | None = None,
    elsewhere: ObjectsHeldElsewhere | None = None,
) -> ApplyReport:
    """Apply every change of ``plan`` that sends something, in dependency order.

    With a ``budget``, an operation that would not end inside it is not started (see
    ``customs_batch.execution.time_budget``); the report's ``out_of_time`` then says how many.
    With a ``history``, every request and record-only operation is written to it (see
    ``customs_batch.execution.history``). ``elsewhere``: what the other states of the
    service hold, which this run never takes over (an object a 409 found).
    """
    started = clock()
    if history is not None:
        session = HistoriedSession(session, history.store)
    # One pass over the plan, keeping only what the walk needs: of a plan of 100,000
    # documents with 10 to send, the changes that send nothing (most of them) are neither
    # walked nor looked up again (five passes and two tables of every change had been about
    # 0.1 s of CPU before the first request).
    refused: list[PlannedChange] = []
    order: list[Address] = []
    blocked: dict[Address, str] = {}
    deps: dict[Address, tuple[Address, ...]] = {}
    walked: dict[Address, PlannedChange] = {}
    for change in plan.changes:
        action = change.action
        if action is Action.REFUSED:
            refused.append(change)
        holds = action.holds_dependents
        if change.operation.writes_state or holds:
            address = change.address
            order.append(address)
            deps[address] = change.depends_on
            walked[address] = change
            if holds:
                blocked[address] = change.reason
    run = _Run(
        plan, session, client, stop, wait, events, history, changes=walked, elsewhere=elsewhere
    )
    limiter = client.sender.rate_limiter
    watch = (
        BudgetWatch(budget, spacing=lambda: limiter.interval, clock=clock)
        if budget is not None
        else None
    )
    # A refused change sends nothing, but its object exists as recorded: what depends on it
    # goes on. An unknown outcome blocks its dependents: their values may not exist; so does
    # an object customs rejected: what would amend it waits until it is corrected (then
    # replaced by a new one, which they follow), as within the run that found it rejected.
    if events is not None:
        events.started(plan, len(order) - len(blocked), len(refused) + len(blocked))
    for change in refused:
        run.outcomes[change.address] = Outcome(
            change.address, NodeStatus.SKIPPED, change.operation, change.reason
        )
        if events is not None:
            events.finished_one(run.outcomes[change.address])

    durable: set[Address] = set()

    def report(result: NodeResult[Address]) -> None:
        outcome = run.outcomes.get(result.key) or Outcome(
            result.key, result.status, run.changes[result.key].operation, result.reason
        )
        run.outcomes[result.key] = outcome

        def on_disk() -> None:
            durable.add(outcome.address)
            if events is not None:
                events.finished_one(outcome)

        session.when_durable(on_disk)

    def timed(address: Address) -> bool:
        assert watch is not None
        began = clock()
        try:
            return run.run(address)
        finally:
            watch.observe(clock() - began)

    # The lock is checked right before each request leaves (after any rate-limit wait or a
    # retry's backoff, which can last seconds), and before each journal line (in the
    # session): a second check between the intent and its request would only repeat the
    # one the request makes a moment later.
    with client.checking_before_each_send(session.check_lock):
        results = walk(
            order,
            deps,
            run.run if watch is None else timed,
            parallelism=parallelism,
            stop=stop,
            blocked=blocked,
            on_result=report,
            admit=None if watch is None else watch.admits,
            idle=run.flush,
        )
    run.flush()
    for address, outcome in list(run.outcomes.items()):
        if (
            address not in durable
            and address not in run.never_sent
            and run.fatal is not None
            and address in results
        ):
            # Written, but the journal failed before it reached the disk: not recorded.
            detail = f"its outcome could not be recorded: {run.fatal.message}"
            run.outcomes[address] = replace(outcome, status=NodeStatus.FAILED, detail=detail)
    # What a stop kept from starting has no result reported along the way; it still counts.
    outcomes = [run.outcomes[c.address] for c in refused] + [
        run.outcomes.get(a)
        or Outcome(a, results[a].status, run.changes[a].operation, results[a].reason)
        for a in order
        if a in run.outcomes or a in results
    ]
    out_of_time = None
    if watch is not None and watch.exhausted and run.fatal is None:
        left = sum(1 for o in outcomes if o.status is NodeStatus.NOT_STARTED)
        out_of_time = OutOfTime(watch.budget, left) if left else None
    stopped = stop.is_set() and run.fatal is None
    return ApplyReport(outcomes, stopped, run.fatal, clock() - started, out_of_time)


def _stands_for_an_object(model: KindModel, record: ResourceRecord) -> bool:
    """Whether ``record`` holds the ID of an object the service holds, as far as the state
    knows: applied, or its last request's outcome unknown after its object was created (an
    update whose answer was lost: its outputs hold the ID)."""
    if not (record.status is RecordStatus.APPLIED or record.status.outcome_unknown):
        return False
    return bool(record.outputs) and model.identifier(record) not in (None, "")


def intent_of(
    change: PlannedChange,
    previous: ResourceRecord | None,
    spec: dict[str, JSON],
    key: str | None,
) -> ResourceRecord:
    """The record written before the request leaves.

    A resubmission starts a new object: what was known of the rejected one moves to
    ``superseded``, so an unknown outcome now is never mistaken for the old object.
    """
    known = dict(previous.outputs) if previous else {}
    superseded = previous.superseded if previous else ()
    resubmit = model_of(change.address.kind).resubmit
    if previous is not None and resubmit is not None and change.operation is resubmit:
        superseded = (
            *superseded,
            {
                "outputs": known,
                "remoteStatus": previous.remote_status,
                "remoteErrors": list(previous.remote_errors),
                # What the record was, so a resubmission that never left can be taken back.
                "spec": dict(previous.spec),
                "operation": previous.operation,
                "updatedAt": previous.updated_at,
            },
        )
        known = {}
    return ResourceRecord(
        str(change.address),
        RecordStatus.PENDING,
        change.operation.value,
        spec,
        outputs=known,
        idempotency_key=key,
        updated_at=_kept_time(change, previous) or now_iso(),
        superseded=superseded,
        identity=_identity(change, spec),
        maybe_held=_maybe_held(change, previous, spec),
        # What was seen of the object it writes to, while it writes to the same one.
        target_seen=previous.target_seen
        if previous is not None and _writes_to_the_same(change, previous, spec)
        else {},
    )


def _writes_to_the_same(
    change: PlannedChange, previous: ResourceRecord, spec: Mapping[str, JSON]
) -> bool:
    """Whether ``spec`` names the object ``previous`` wrote to (by the kind's ID field)."""
    field = model_of(change.address.kind).id_field
    return field is not None and previous.spec.get(field) == spec.get(field)


def _maybe_held(
    change: PlannedChange, previous: ResourceRecord | None, spec: Mapping[str, JSON]
) -> tuple[JSON, ...]:
    """What the intent of an update keeps of the requests whose answers were lost since
    the last answer: each may have been processed, leaving the object known by what it
    sent (a group's code), until an answer settles it. The last of them is the previous
    record's spec; the earlier ones it kept. Without them, a second lost code change
    (A -> B, then B -> C) would leave only A (its outputs) and C (its spec), and a service
    holding the group at B would be taken for another object."""
    model = model_of(change.address.kind)
    if (
        previous is None
        or not previous.status.outcome_unknown
        or not previous.outputs
        or change.operation is not model.update
    ):
        return ()
    kept = [left for left in previous.maybe_held if isinstance(left, dict)]
    lost = model.known_by(spec, previous.spec)
    answered = {k: v for k, v in previous.outputs.items() if k in lost}
    if lost and lost != answered and lost not in kept:
        kept.append(lost)
    return tuple(kept)


def _kept_time(change: PlannedChange, record: ResourceRecord | None) -> str | None:
    """The time a re-send under a recorded key that holds no time of its own (a version 4
    UUID of an earlier version of this tool) keeps: its record's, which its 24 hours are
    counted from (:func:`~customs_batch.kinds.model.key_honoured_until`). Stamped anew at each
    re-send, the window would start again at each, and a key the service no longer
    honours be re-sent. None for any other write."""
    key = change.idempotency_key
    if key is None or record is None or record.idempotency_key != key:
        return None
    return record.updated_at if key_made_at(key) is None and record.updated_at else None


def _key_counts_from(intent: ResourceRecord) -> str | None:
    """The time the 24 hours of an intent's Idempotency-Key count from, when the key holds
    no time (made by apply from the state and the request, or a version 4 UUID of an
    earlier version of this tool): the intent's own, stamped before its first request
    under the key, or kept from the record of that request by a re-send (:func:`_kept_time`).
    Stamped when its outcome turned out unknown instead (after retries and the waits of
    429s), the window would begin after the service's. None for a request without a key,
    or whose key holds its time."""
    key = intent.idempotency_key
    if not key or key_made_at(key) is not None or not intent.updated_at:
        return None
    return intent.updated_at


def _identity(change: PlannedChange, spec: Mapping[str, JSON]) -> tuple[str, ...]:
    """The identity to record: as planned, or, where the plan could not resolve a reference
    yet, of the request as sent (with the planned place in its lane)."""
    identify = model_of(change.address.kind).identity
    if identify is None or not any("${ref:" in word for word in change.identity):
        return change.identity
    places = tuple(word for word in change.identity if word.startswith("place="))
    return (*identify(spec), *places)


def _body(exc: ServiceError) -> dict[str, JSON]:
    body = getattr(exc, "body", None)
    return body if isinstance(body, dict) else {}


class _IntentUnrecorded(Exception):
    """An intent the state could not record (a full disk, a broken lock): its request was
    not sent, and its outcome says so (not "its outcome could not be recorded", which
    reads as sent)."""

    def __init__(self, error: StateError) -> None:
        self.error = error
        self.detail = f"not sent: its intent could not be recorded: {error.message}"
        super().__init__(self.detail)


class _Unrecorded(Exception):
    """An answer of success the state could not record: the error (which stops the run)
    and the outcome's words, which say what the service answered."""

    def __init__(self, error: StateError, detail: str) -> None:
        super().__init__(detail)
        self.error = error
        self.detail = detail


def _unrecorded(change: PlannedChange, applied: ResourceRecord, exc: StateError) -> str:
    """What the outcome of an answer of success the state could not record says (the lock
    was broken, the database or the disk went away): what the service answered, so that
    the IDs it gave are not lost with the record (the next run finds its outcome unknown)."""
    model = model_of(change.address.kind)
    ids = model.ids(applied)
    gave = ", ".join(f"{name}={value}" for name, value in ids.items()) or "no ID"
    ident = model.identifier(applied)
    adopt = (
        f"; if the next run asks, `customs-batch state adopt {change.address} {ident}` records it"
        if ident not in (None, "") and model.look_for is not None
        else ""
    )
    return (
        f"the service answered {change.operation.value} of {change.address} ({gave}), and "
        f"the state could not record it: {exc.message}{adopt}"
    )


def _resent(change: PlannedChange, previous: ResourceRecord | None) -> bool:
    """A creation re-sent under the Idempotency-Key of an earlier request whose outcome is
    unknown (no answer recorded its object)."""
    return change.idempotency_key is not None and _recovered(previous)


def _recovered(previous: ResourceRecord | None) -> bool:
    """A creation sent again after an earlier one whose outcome is unknown (no answer
    recorded its object): what the service answers may be the object the earlier one made,
    found or replayed rather than made now."""
    return previous is not None and previous.status.outcome_unknown and not previous.outputs


def _still_in_flight(change: PlannedChange, exc: ServiceError) -> bool:
    """A 409 to a request with an Idempotency-Key (a movement): the keyed request is still
    being handled (docs/api-choices.md), so the object may yet be created. Recorded as a
    refusal, the next run would send it again under a new key, and the service would hold it
    twice; recorded unknown, the next run re-sends it with the same key and gets the first
    answer."""
    return (
        model_of(change.address.kind).idempotency_keys and getattr(exc, "status", None) == CONFLICT
    )
