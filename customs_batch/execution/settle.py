"""Creations whose outcome is unknown, settled by what the service holds.

A run killed between recording its intent and the request leaving, or a request that got
no answer, leaves a record whose outcome is unknown. Most kinds repeat such a request
safely (a key, a lookup by a unique code). A departure cannot be repeated: the API has no
idempotency for it, so sending it again could declare the same goods twice. What can be
done is to look: once any answer to the lost request would have come (the connect and
read timeouts after its intent, and a margin), the service is searched for the objects
created since then. When none could be it, the request never arrived: its intent is taken
back and the next plan submits it like anything new. When some could be it, a person
decides (``state adopt`` or ``state forget``), told which ones.

``apply`` does this before it plans (with the lock held), and so does ``refresh``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from customs_batch.client import AuthenticationError, CustomsClient, PermissionDeniedError
from customs_batch.errors import ServiceError
from customs_batch.execution.apply import intent_of, now_iso
from customs_batch.execution.elsewhere import ObjectsHeldElsewhere
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.actions import Action
from customs_batch.kinds.model import CLOCK_SKEW, LostCreation, parse_time
from customs_batch.kinds.registry import KINDS, model_of
from customs_batch.planning.diff import hold_changes
from customs_batch.planning.model import Plan, PlannedChange
from customs_batch.state.backend import StateSession
from customs_batch.state.history import HistoryStore
from customs_batch.state.model import RecordStatus, ResourceRecord
from customs_batch.state.records import Records, records_in

MARGIN = timedelta(seconds=5)
"""Added to the timeouts before a lost request is taken to have had its chance to arrive."""

UNKNOWN_STATUSES = (RecordStatus.PENDING, RecordStatus.UNKNOWN)


@dataclass(frozen=True)
class Settled:
    """What the search found for one lost creation.

    ``never_arrived``: nothing at the service could be it, so its intent was taken back
    (the next plan creates it; a creation held unsent is left held where nothing submits
    it in the same run, ``refresh``). Otherwise ``candidates`` are the IDs that could be
    it; with none, the intent could not be taken back (see :meth:`describe`).
    """

    address: str
    never_arrived: bool
    candidates: tuple[str, ...] = ()
    answered: str | None = None
    """The candidate the history records the service's answer to the lost submission
    named (its state record was lost, the history's entry was not: a run whose lock was
    broken, a database lost between the two writes), or None."""
    held_elsewhere: tuple[str, ...] = ()
    """Objects created since with the same values that are not candidates: a record of
    another state of the same service stands for each (another environment's), in words."""
    looked_since: str | None = None
    """For a creation apply held unsent because of what the service had made that could be
    it (``ResourceRecord.look_since``): the time it is looked for from. Nothing of it was
    sent."""
    held: ResourceRecord | None = field(default=None, compare=False, repr=False)
    """For such a creation taken back: its record as it was, so that a run which then
    submits nothing puts it back (:func:`put_back_held`)."""

    def describe(self, *, applying: bool = True) -> str:
        """One line for the user; ``applying``: said by the apply that submits it next
        (refresh only takes the intent back: the next apply submits it)."""
        elsewhere = "; ".join(self.held_elsewhere)
        if self.never_arrived and self.looked_since is not None:
            then = "it is submitted" if applying else "the next apply submits it"
            nothing = f"nothing the service made since {self.looked_since} could be it now"
            if elsewhere:
                nothing += f" but what another environment holds, left out: {elsewhere}"
            return f"{self.address}: held for a decision, {nothing}: {then}"
        if self.never_arrived:
            then = "it is submitted again" if applying else "the next apply submits it again"
            nothing = "nothing created since could be it"
            if elsewhere:
                nothing += f" but what another environment holds, left out: {elsewhere}"
            return (
                f"{self.address}: the last submission never reached the service ({nothing}): {then}"
            )
        if not self.candidates:
            return (
                f"{self.address}: the last submission never reached the service, but the "
                "record of the declaration it replaces is from an older version and cannot "
                f"be restored: `customs-batch state forget {self.address}` submits it again"
            )
        ids = ", ".join(self.candidates)
        if elsewhere:
            ids += f"; left out, as another environment's: {elsewhere}"
        if self.looked_since is not None:
            return f"{self.address}: {lost_run_words(self.address, ids, self.looked_since)}"
        if self.answered is not None:
            return (
                f"{self.address}: the last submission was received: the history records the "
                f"service's answer to it, {self.answered} (`customs-batch history "
                f"{self.address}`), among those created since with the same values ({ids}). "
                f"`customs-batch state adopt {self.address} {self.answered}` records it"
            )
        return (
            f"{self.address}: the last submission may have been received: created since, "
            f"with the same values: {ids}. If one is it, `customs-batch state adopt "
            f"{self.address} ID`; if none is, `customs-batch state forget {self.address}`"
        )


def settle_lost_creations(
    session: StateSession,
    client: CustomsClient,
    *,
    answered_within: timedelta,
    notice: Callable[[str], None],
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    sleep: Callable[[float], None] = time.sleep,
    history: HistoryStore | None = None,
    others: ObjectsHeldElsewhere | None = None,
    take_back_held: bool = True,
) -> list[Settled]:
    """Search the service for what each lost creation made, and take back the intent of
    each that never arrived. With ``history``, a lost creation that some objects could be
    names the one whose answer the history recorded after its intent, if any. An object a
    record of another state of the same service stands for (``others``, read once, only
    when some object could be one, and looked up in its index) is no candidate: another environment's, as an object
    a record of this state stands for is no candidate.

    ``answered_within`` is how long after its intent any answer to a request would have
    come (the client's timeouts); a lost creation more recent than that is waited for,
    saying so through ``notice``, since the service may still be handling it.

    ``take_back_held``: whether a creation held unsent (``look_since``) that nothing could
    be any more is taken back, for the plan that follows to submit it (apply). Without it
    (``refresh``) its record is left as it is: taken back, the next apply would look for
    it from the last day again (:func:`hold_what_a_lost_run_may_have_made`), before the
    time ``state forget`` set, and hold it again for what the user said was not it.
    """
    settled: list[Settled] = []
    answers: dict[str, list[tuple[str, tuple[str, ...]]]] | None = None
    elsewhere = others if others is not None else ObjectsHeldElsewhere()
    for model in KINDS.values():
        if model.look_for is None:
            continue
        lost = _lost(session, f"{model.kind.value}/", answered_within)
        if not lost:
            continue
        # What this state sent may still be handled; a creation held unsent was not sent.
        sent = [c for c in lost if c.record.look_since is None]
        ready = max((parse_time(c.record.updated_at) or now() for c in sent), default=None)
        wait = 0.0 if ready is None else (ready + answered_within + MARGIN - now()).total_seconds()
        if wait > 0:
            notice(
                f"waiting {wait:.0f} s before looking for {len(lost)} submission(s) whose "
                "outcome is unknown: the service may still be handling them"
            )
            sleep(wait)
        # Every record of the kind: the objects they hold (and replaced) are not candidates.
        recorded = list(
            records_in(session.state.resources, f"{model.kind.value}/", tuple(RecordStatus))
        )
        try:
            found = model.look_for(client, lost, recorded)
        except (AuthenticationError, PermissionDeniedError):
            raise  # the run cannot go on either
        except ServiceError as exc:
            notice(
                f"could not look for {len(lost)} submission(s) whose outcome is unknown "
                f"({exc.message}): they still need a decision; the next apply looks again"
            )
            continue
        for creation in lost:
            candidates = found.get(creation.record.address)
            if candidates is None:
                continue
            held = {
                ident: holder
                for ident in candidates
                if (holder := elsewhere.holder(model.kind, ident)) is not None
            }
            taken = tuple(f"{ident} is recorded as {holder}" for ident, holder in held.items())
            candidates = tuple(ident for ident in candidates if ident not in held)
            if candidates:
                if answers is None and history is not None:
                    answers = _answers(history)
                answered = _answered(answers or {}, creation.record, candidates)
                settled.append(
                    Settled(
                        creation.record.address,
                        False,
                        candidates,
                        answered,
                        taken,
                        creation.record.look_since,
                    )
                )
            else:
                unsent = creation.record.look_since is not None
                # Left held where nothing submits it now: the apply that does takes it back.
                taken_back = (unsent and not take_back_held) or _take_back(session, creation.record)
                settled.append(
                    Settled(
                        creation.record.address,
                        taken_back,
                        held_elsewhere=taken,
                        looked_since=creation.record.look_since,
                        held=creation.record if unsent and take_back_held else None,
                    )
                )
    return settled


def put_back_held(session: StateSession, settled: Sequence[Settled]) -> None:
    """Record again each creation held unsent that :func:`settle_lost_creations` took back,
    for a run that then submits nothing (not approved, too large): its ``look_since`` (the
    time ``state forget`` set) is kept for the run that submits it."""
    for found in settled:
        if found.held is not None and found.never_arrived:
            session.record(found.held)


def _answers(history: HistoryStore) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    """By address, the time and the IDs of each answer of success the history holds."""
    found: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for stored in history.entries():
        body = stored.body()
        if body is None or body.get("event") != "answer":
            continue
        status, ids, when = body.get("status"), body.get("ids"), body.get("time")
        if type(status) is not int or not 200 <= status < 300:
            continue
        if not isinstance(ids, dict) or not ids or not isinstance(when, str):
            continue
        values = tuple(str(value) for value in ids.values())
        found.setdefault(str(body.get("address")), []).append((when, values))
    return found


def _answered(
    answers: dict[str, list[tuple[str, tuple[str, ...]]]],
    record: ResourceRecord,
    candidates: tuple[str, ...],
) -> str | None:
    """The candidate the newest answer recorded for ``record``'s address since its intent
    names (the intent's time and the entries' are both UTC, in one ISO 8601 form)."""
    since = parse_time(record.updated_at)
    for when, values in reversed(answers.get(record.address, [])):
        at = parse_time(when)
        if since is None or at is None or at < since:
            continue
        named = [value for value in values if value in candidates]
        if named:
            return named[0]
    return None


def _lost(session: StateSession, prefix: str, answered_within: timedelta) -> list[LostCreation]:
    """The creations of one kind whose outcome is unknown (an update's object exists)."""
    lost = []
    for record in records_in(session.state.resources, prefix, UNKNOWN_STATUSES):
        if record.outputs or Address.parse(record.address) is None:
            continue
        if record.look_since is not None:
            # Held unsent: what a lost run may have made, looked for from the same time.
            looked = parse_time(record.look_since)
            if looked is not None:
                lost.append(LostCreation(record, looked, standing_only=True))
                continue
        stamped = parse_time(record.updated_at)
        if stamped is None:
            continue
        # An unknown outcome is recorded after the wait for the answer: the request left
        # up to the timeouts before.
        since = stamped - CLOCK_SKEW
        if record.status is RecordStatus.UNKNOWN:
            since -= answered_within
        lost.append(LostCreation(record, since))
    return lost


def _take_back(session: StateSession, record: ResourceRecord) -> bool:
    """Undo the intent of a request that never arrived; False when it cannot be undone
    exactly (a resubmission recorded before its earlier record was kept whole)."""
    if not record.superseded:
        session.forget(record.address)
        return True
    earlier = record.superseded[-1]
    if not isinstance(earlier, dict) or "spec" not in earlier:
        return False
    session.record(
        record.with_changes(
            status=RecordStatus.APPLIED,
            operation=str(earlier.get("operation") or record.operation),
            spec=dict(earlier["spec"]),
            outputs=dict(earlier.get("outputs") or {}),
            remote_status=earlier.get("remoteStatus"),
            remote_errors=tuple(earlier.get("remoteErrors") or ()),
            updated_at=str(earlier.get("updatedAt") or record.updated_at),
            superseded=record.superseded[:-1],
            error=None,
        )
    )
    return True


LOST_RUN_LOOKBACK = timedelta(hours=24)
"""How far back apply looks for what a lost run made, at least. From the state's newest
write alone (less :data:`CLOCK_SKEW`), a run between the lost one and this one that wrote
records (one with a selection that left the lost run's departures out, a ``refresh``) would
move the start past what the lost run made; and with no record at all (a first run lost
before anything of its state was kept), there is no write to start from."""

_UPDATED = re.compile(r'"updatedAt"\s*:\s*"([^"]*)"')


def lost_run_words(address: str, ids: str, since: str) -> str:
    """Why the creation of ``address`` is held unsent: the service made ``ids`` since
    ``since`` (where the look for a lost run's objects starts)."""
    return (
        f"not sent: the service holds objects made since {since} that no record "
        f"holds, with this document's values: {ids}. A run whose records "
        "were not kept (a CI runner lost before it committed the state) may have submitted "
        f"it. If one is it, `customs-batch state adopt {address} ID`; if none is, "
        f"`customs-batch state forget {address}` (the next apply submits it)"
    )


def hold_what_a_lost_run_may_have_made(
    plan: Plan,
    session: StateSession,
    client: CustomsClient,
    *,
    others: ObjectsHeldElsewhere,
    settled: Sequence[Settled] = (),
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> tuple[Plan, tuple[ResourceRecord, ...]]:
    """``plan`` with each creation held for a decision that the service may already hold.

    A run whose records were not kept (a CI runner lost outright, the state folder
    committed before it) leaves at the service what it created, and the next plan, made
    from the state kept before, creates it again. A kind that cannot be sent twice safely
    (no Idempotency-Key: a departure declaration) is searched for first, as for a
    submission whose outcome is unknown: among the objects the service made in the last
    :data:`LOST_RUN_LOOKBACK`, or since the state's last write (less :data:`CLOCK_SKEW`)
    when that is earlier, one that no record of this state or of another of the service
    holds, that still stands (customs neither rejected nor cancelled it) and that agrees
    with the document in every field the service gives back could be it. Such a creation
    is not sent: it is held for a decision, with what depends on it, and the records to
    write for it are returned (``look_since`` that time), so that every later run looks for
    it again from the same time until ``state adopt`` or ``state forget`` decides it.
    ``settled``: what :func:`settle_lost_creations` found this run; a held creation it took
    back (nothing could be it now) is sent as planned.
    """
    taken_back = {s.address for s in settled if s.never_arrived and s.looked_since is not None}
    creations: dict[Kind, list[PlannedChange]] = {}
    for change in plan.changes:
        model = model_of(change.address.kind)
        if (
            model.look_for is None
            or model.idempotency_keys
            or change.action not in (Action.CREATE, Action.RESUBMIT)
            or change.operation not in (model.create, model.resubmit)
            or change.in_flight
            or change.moved_from is not None
            or str(change.address) in taken_back
        ):
            continue
        creations.setdefault(change.address.kind, []).append(change)
    if not creations:
        return plan, ()
    resources = session.state.resources
    newest = _newest_write(resources)
    since = now() - LOST_RUN_LOOKBACK
    if newest is not None:
        since = min(since, newest - CLOCK_SKEW)
    since_words = since.isoformat(timespec="seconds").replace("+00:00", "Z")
    reasons: dict[Address, str] = {}
    records: list[ResourceRecord] = []
    for kind, changes in creations.items():
        model = model_of(kind)
        assert model.look_for is not None
        probes = [
            LostCreation(
                intent_of(change, resources.get(str(change.address)), dict(change.spec), None),
                since,
                standing_only=True,
            )
            for change in changes
        ]
        recorded = list(records_in(resources, f"{kind.value}/", tuple(RecordStatus)))
        try:
            found = model.look_for(client, probes, recorded)
        except (AuthenticationError, PermissionDeniedError):
            raise  # the run cannot go on either
        except ServiceError as exc:
            for change in changes:
                reasons[change.address] = (
                    f"not sent: the objects the service made since {since_words} "
                    f"could not be read ({exc.message}), and one of them could be this "
                    "document's, submitted by a run whose records were not kept; nothing "
                    "was recorded: the next apply looks again"
                )
            continue
        for probe in probes:
            candidates = tuple(
                ident
                for ident in found.get(probe.record.address, ())
                if others.holder(kind, ident) is None
            )
            if not candidates:
                continue
            parsed = Address.parse(probe.record.address)
            assert parsed is not None
            reasons[parsed] = lost_run_words(
                probe.record.address, ", ".join(candidates), since_words
            )
            records.append(
                probe.record.with_changes(
                    status=RecordStatus.UNKNOWN, look_since=since_words, updated_at=now_iso()
                )
            )
    return hold_changes(plan, reasons), tuple(records)


def _newest_write(resources: Mapping[str, ResourceRecord]) -> datetime | None:
    """When a record of the state was last written (None: no record). A record still held
    as text is not parsed: its newest ``updatedAt`` is found in the text (its earlier
    submissions' are older), and only the records whose texts name the newest times are
    parsed, to make sure the time is their own (a spec could hold a field of that name)."""
    texts = resources.text_of if isinstance(resources, Records) else None
    stamps: list[tuple[str, str]] = []
    for address in resources:
        text = texts(address) if texts is not None else None
        if text is None:
            stamps.append((resources[address].updated_at[:19], address))
            continue
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        found = [stamp[:19] for stamp in _UPDATED.findall(text)]
        if found:
            stamps.append((max(found), address))
    stamps.sort(reverse=True)
    newest = ""
    for stamp, address in stamps:
        # A record's own time is at most the newest stamp of its text: once the stamps left
        # are no newer than the newest own time found, none of them can be newer.
        if stamp <= newest:
            break
        newest = max(newest, resources[address].updated_at[:19])
    return parse_time(newest + "Z") if newest else None
