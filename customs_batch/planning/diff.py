"""The diff: what the manifests ask for against what the state records.

Generic: each kind's model (``customs_batch.kinds.registry``) says which fields change in
place and through which call, what an unknown outcome leads to, and which of its service
states mean that customs never accepted it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from customs_batch.collector import bulk
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.model import (
    Decision,
    KindModel,
    UnknownOutcome,
    describe_error,
    key_honoured,
    key_honoured_until,
    normal_text,
    unverified_words,
)
from customs_batch.kinds.registry import KINDS, model_of
from customs_batch.kinds.retyped import percent_of, retyped_text
from customs_batch.manifest.document import JSON, Document
from customs_batch.planning.graph import Edge, dependencies, dependencies_of, dependency_order
from customs_batch.planning.identity import Identities, kept_identity, moved_words
from customs_batch.planning.model import Action, FieldChange, Operation, Plan, PlannedChange
from customs_batch.planning.owners import declaration_of, refuse_second_writers
from customs_batch.planning.references import resolve
from customs_batch.planning.replaced import ReplacedIds
from customs_batch.planning.unchanged import Unchanged
from customs_batch.state.lock import InFlight, running_request
from customs_batch.state.model import RecordStatus, ResourceRecord, State
from customs_batch.state.records import Records
from customs_batch.validation.ownership import party_fields


def plan_changes(
    documents: Sequence[Document],
    state: State,
    *,
    now: datetime | None = None,
    inputs_digest: str = "",
    orphans: bool = True,
    consume: bool = False,
    edges: Mapping[Address, Sequence[Edge]] | None = None,
    unchanged: Unchanged | None = None,
    in_flight: InFlight | None = None,
) -> Plan:
    """Compare ``documents`` with ``state`` and return the plan, in dependency order, with
    the addresses the state holds but the manifests no longer name at the end (orphaned,
    or dropped when nothing of them exists at the service; left out with ``orphans=False``,
    when only a part of the manifests was selected).

    With ``consume`` the caller gives ``documents`` (a list) up: it is emptied, and each
    document is dropped as soon as its change is planned, so that 100,000 documents and
    their plan are not all in memory at once (a change keeps its spec, not its document).
    ``edges``: the documents' :func:`~customs_batch.planning.graph.dependency_edges` when
    the caller has them (the graph is then not walked a second time). ``unchanged``: what
    earlier plans found unchanged (see :mod:`customs_batch.planning.unchanged`), told what
    this one finds. ``in_flight``: for the time a record whose outcome is unknown was
    written, why it is a request a run still holding the state's lock has not recorded the answer to (None when
    it is not): planned as waiting for that run, not as needing a decision.
    """
    with bulk():
        when = now or datetime.now(UTC)
        return _plan(
            documents, state, when, inputs_digest, orphans, consume, edges, unchanged, in_flight
        )


def _plan(
    documents: Sequence[Document],
    state: State,
    now: datetime,
    inputs_digest: str,
    orphans: bool,
    consume: bool,
    edges: Mapping[Address, Sequence[Edge]] | None,
    unchanged: Unchanged | None = None,
    in_flight: InFlight | None = None,
) -> Plan:
    recorded = _reader(state.resources)
    resources = state.resources
    text_of = (
        resources.text_of if unchanged is not None and isinstance(resources, Records) else None
    )
    replaced: set[str] = set()
    """Addresses whose object this plan replaces or moves to a replacement (a departure
    resubmitted; a party update that follows it to the new declaration): what refers to
    them waits for what apply records."""
    resubmitted: set[str] = set()
    """Of those, the addresses this plan submits again."""
    moved: dict[str, ResourceRecord] = {}
    """By new address, the record a renamed document takes over."""
    declared: set[str] = set()
    """Of those records, the addresses taken over by a ``metadata.previousNames``."""
    astray: dict[str, tuple[str, str]] = {}
    """By address of a document this plan refuses, when what a reference to it gives would
    not lead where the referring document asks: the address the refusal comes from, and why
    (see ``_through_astray``)."""

    def lookup(address: Address, field: str) -> JSON:
        key = str(address)
        if key in replaced:
            raise KeyError(field)
        record = moved.get(key) or recorded(key)
        if record is None or record.status is not RecordStatus.APPLIED:
            raise KeyError(field)
        return record.outputs[field]

    sealer = state.sealer

    def compared(kind: Kind, spec: Mapping[str, JSON], recorded: Mapping[str, JSON]) -> JSON:
        """``spec`` as the record keeps it: its sensitive values as digests."""
        if sealer is None:
            return spec
        return sealer.compared(kind, spec, recorded, state.lineage)

    changes: list[PlannedChange] = []
    left_out: dict[int, tuple[ResourceRecord, tuple[FieldChange, ...], frozenset[str]]] = {}
    """By place in ``changes``, the changes refused for party fields their document no
    longer writes, with their record, values and what they follow: another document of the
    same declaration may take those fields over (``_hand_over``)."""
    # An empty state (a first plan of a bulk load) has no orphans: no set of every name.
    named = {str(doc.address) for doc in documents} if state.resources else set()
    planned: dict[str, Mapping[str, JSON]] = {}
    waiting: dict[str, Document] = {}

    def spec_of(address: str) -> Mapping[str, JSON] | None:
        """What the document at ``address`` asks: from its change once planned, else from
        the documents still to plan (rarely asked: both tables are made when first needed)."""
        for change in changes[len(planned) :]:
            planned[str(change.address)] = change.spec
        if address in planned:
            return planned[address]
        if not waiting:
            waiting.update((str(doc.address), doc) for doc in pending)
        found = waiting.get(address)
        return None if found is None else found.spec

    asked: dict[tuple[Kind, str], str] = {}

    def asked_by(kind: Kind, spec: Mapping[str, JSON]) -> str | None:
        """A document still to plan, of a kind with lanes, that asks exactly for ``spec``
        (asked only when a new movement is refused: the table is made when first needed)."""
        if not asked:
            for doc in pending:
                if model_of(doc.kind).lane is not None:
                    request = json.dumps(doc.spec, sort_keys=True)
                    asked.setdefault((doc.kind, request), str(doc.address))
        return asked.get((kind, json.dumps(spec, sort_keys=True)))

    identities = Identities(
        documents, state, recorded, named, whole=orphans, spec_of=spec_of, asked_by=asked_by
    )
    replaced_ids = ReplacedIds(resources, recorded)
    deps = dependencies(documents) if edges is None else dependencies_of(documents, edges)
    pending = dependency_order(documents, deps)
    # From here on, only what waits for something: an entry for every document, most of
    # them waiting for nothing, was 5 MB of a bulk load's plan for as long as it ran.
    deps = {address: targets for address, targets in deps.items() if targets}
    if consume and isinstance(documents, list):
        documents.clear()
    pending.reverse()
    while pending:
        doc = pending.pop()  # the last reference when consumed: freed at the next one
        identity: tuple[str, ...] = ()
        moved_from: Address | None = None
        shuffled: Decision | None = None
        followed = _NONE_FOLLOWED
        address = str(doc.address)
        key = None
        # A document naming by its value an ID the state records as replaced.
        stale = replaced_ids.refusal(doc, doc.spec) if doc.kind in _TAKING_IDS else None
        if unchanged is not None and text_of is not None:
            key = unchanged.key(doc, address, text_of(address))
        if stale is None and key is not None and unchanged is not None and unchanged.known(key):
            # Found unchanged by an earlier plan, with the same spec and the same record.
            identities.count(doc, unchanged.sent_at(key))  # counted in its lane all the same
            changes.append(_unchanged(doc, deps.get(doc.address, ())))
            continue
        spec, unknown = resolve(doc.spec, lookup)
        record = recorded(address)
        values = (
            field_changes(record.spec, compared(doc.kind, spec, record.spec))
            if record is not None
            else ()
        )
        place, sent_at = identities.placed(doc)
        renamed = (
            _declared_rename(doc, record, named, recorded, moved, declared)
            if doc.previous_names
            else None
        )
        # (A forgotten record's value is never resolved: only then can a reference name one.)
        forgotten = _forgotten_reference(doc, recorded) if unknown else None
        through = (
            _through_astray(doc, record, values, astray) if astray and doc.references else None
        )
        if stale is not None:
            decided = stale
        elif forgotten is not None:
            decided = forgotten
        elif through is not None:
            decided, root = through
            astray[address] = (root, astray[root][1])
        elif isinstance(renamed, Decision):
            decided = renamed
        elif renamed is not None and (
            retyped := identities.decide_declared_rename(doc.address, spec, renamed)
        ):
            decided = retyped
        elif renamed is not None:
            # A declared rename (metadata.previousNames): the earlier record, compared as if
            # it had always had this name; apply moves it before anything is sent.
            moved_from = Address.parse(renamed.address)
            identity = identities.moved_to(doc, spec, place, renamed)
            identities.take(renamed.address, address)
            declared.add(renamed.address)
            moved[str(doc.address)] = earlier = _restored(renamed)
            values = field_changes(earlier.spec, compared(doc.kind, spec, earlier.spec))
            followed = _following_replacements(doc, earlier, unknown, replaced, recorded)
            took = f"renamed from {renamed.address} (metadata.previousNames)"
            if renamed.status is RecordStatus.FORGOTTEN:
                took += ", which `customs-batch state rm` had forgotten: it is tracked again"
            decided = _renamed(
                doc.address,
                spec,
                earlier,
                values,
                now,
                took,
                followed,
                in_flight=in_flight,
                forgotten=renamed.status is RecordStatus.FORGOTTEN,
            ) or Decision(
                Action.MOVED,
                Operation.MOVE,
                f"{took}; its record moves to this name; nothing is sent",
            )
        elif record is None or record.never_created:
            identity = identities.of(doc, spec, place)
            decided, found = identities.decide_creation(doc.address, spec, identity, record)
            if record is not None and found is None:
                decided = _under_kept_key(doc.address, record, decided, values, unknown, now)
            elif record is None and decided.action is Action.CREATE and not unknown:
                kept = identities.kept_attempt(doc.address, spec, identity)
                if isinstance(kept, Decision):
                    decided = kept
                elif kept is not None:
                    # Its record comes with it (apply moves it, then sends under its key).
                    moved_from = Address.parse(kept.address)
                    moved[str(doc.address)] = kept
                    decided = _under_kept_key(doc.address, kept, decided, (), (), now, kept)
            if found is not None:
                moved_from = Address.parse(found.address)
                identity = identities.moved_to(doc, spec, place, found)
                moved[str(doc.address)] = earlier = _restored(found)
                # The same request under a new name: what its record's object is (not found
                # at the service, rejected, canceled) goes with it, as for a declared rename.
                took = moved_words(model_of(doc.kind), found)
                decided = (
                    _renamed(
                        doc.address,
                        spec,
                        earlier,
                        (),
                        now,
                        took,
                        in_flight=in_flight,
                        forgotten=found.status is RecordStatus.FORGOTTEN,
                    )
                    or decided
                )
        elif record.status is RecordStatus.FORGOTTEN:
            decided = _forgotten(doc.address, record, spec)
        else:
            followed = _following_replacements(doc, record, unknown, replaced, recorded)
            shuffled = (
                identities.decide_identity_change(doc.address, spec, record)
                if values and not unknown and not followed and not record.status.outcome_unknown
                else None
            )
            running = running_request(in_flight, record)
            decided = (
                Decision(Action.WAITING, Operation.NONE, running)
                if running is not None
                else shuffled or _decide(doc.address, spec, record, values, now, followed)
            )
            # The ordinary comparison, of the document's own spec (no reference) with its
            # record: the same document and the same record text give the same answer.
            own_spec = spec is doc.spec and not unknown
            if decided is _UNCHANGED and own_spec and unchanged is not None and key is not None:
                unchanged.found(key, sent_at)
            if (
                decided.action is Action.REFUSED
                and record.status is RecordStatus.APPLIED
                and record.not_found_at is None
                and decided is not shuffled
                and running is None
                and _party_fields_left_out(model_of(doc.kind), values)
            ):
                left_out[len(changes)] = (record, values, followed)
        if shuffled is not None and decided is shuffled:
            held = model_of(doc.kind).identifier(record) if record is not None else None
            at = f" ({held} at the service)" if held is not None else ""
            astray[address] = (
                address,
                f"the name {address} now stands for another declaration than the one its "
                f"record holds{at}, so what is sent through it would go to the wrong "
                f"declaration. Nothing is sent for this document until {address} is sorted "
                "out as its refusal says; then plan again (if the names of documents like "
                "this one moved with it, their records move the same way, with "
                "`customs-batch state mv`)",
            )
        elif decided.action is Action.REFUSED and (record is None or record.never_created):
            # Nothing of it will exist after apply: what refers to it has no value to send.
            astray.setdefault(
                address,
                (
                    address,
                    f"this plan does not create {address}, so the value the reference would "
                    f"give is not known. Nothing is sent for this document until {address} "
                    "is sorted out as its refusal says; the next plan then compares it with "
                    "what the reference gives",
                ),
            )
        if decided.action is Action.RESUBMIT:
            replaced.add(address)
            resubmitted.add(address)
        elif followed and decided.operation.writes_state:
            replaced.add(address)  # sent to the new object: its outputs follow it
        if not identity and decided.operation.writes_state:
            # Recorded with what it sends (an unchanged document needs none: nothing is
            # recorded for it).
            identity = identities.of(doc, spec, place)
        changes.append(
            PlannedChange(
                address=doc.address,
                action=decided.action,
                operation=decided.operation,
                reason=decided.reason,
                spec=spec,
                unknown=tuple(unknown),
                changed=_top_level(values),
                depends_on=deps.get(doc.address, ()),
                idempotency_key=decided.idempotency_key,
                values=values if decided.action is not Action.CREATE else (),
                origin=row_origin(doc),
                identity=identity,
                moved_from=moved_from,
                lists_first=model_of(doc.kind).lists_for(
                    decided.operation, record, deps.get(doc.address, ())
                ),
            )
        )
    if resubmitted:
        _refuse_what_names_a_resubmitted_id(changes, resubmitted, recorded)
    _hold_what_waits_for_a_held_object(changes)
    refuse_second_writers(changes, recorded)
    handed = _hand_over(changes, left_out, recorded, now) if left_out else {}
    if handed:
        refuse_second_writers(changes, recorded)
    if handed or identities.takers:
        _hold_broken_handovers(changes, handed, identities.takers)
    if left_out and not orphans:
        _hand_over_in_a_selection(changes, left_out)
    taken_over = {str(change.moved_from) for change in changes if change.moved_from}
    for address in sorted(set(state.resources) - named - taken_over) if orphans else ():
        parsed = Address.parse(address)
        record = recorded(address) or state.resources[address]
        if parsed is not None and record.status is not RecordStatus.FORGOTTEN:
            changes.append(_gone(parsed, record, in_flight, now))
    return Plan(tuple(changes), state.lineage, state.serial, inputs_digest, journal=state.journal)


_WHY_HELD = {
    Action.REJECTED: "which customs rejected (correct it first)",
    Action.NEEDS_DECISION: "which needs a decision first",
}
"""Of each action that holds what depends on it (``Action.holds_dependents``), why."""


def in_flight_ended(plan: Plan, state: State, now: datetime | None = None) -> Plan:
    """A saved ``plan`` as the run holding the state's lock applies it: a request it
    planned as *in flight* (sent by the run that held the lock then, its answer not yet
    recorded) is one whose run has ended without recording it, or this run could not hold
    the lock. Its outcome is unknown: each is held for a decision (the plan was not made
    to send it again), with what its kind does about it in a new plan, and what depends on
    it is refused, as a plan made now would hold it."""
    if not any(_planned_in_flight(change) for change in plan.changes):
        return plan
    when = now or datetime.now(UTC)
    reasons: dict[Address, str] = {}
    for change in plan.changes:
        if not _planned_in_flight(change):
            continue
        address = change.address
        record = state.resources.get(str(address))
        if record is None and change.moved_from is not None:
            # A renamed document: its record stays under its old name until decided.
            address = change.moved_from
            record = state.resources.get(str(address))
        if record is None or not record.status.outcome_unknown:
            continue
        if change.spec:
            model = model_of(change.address.kind)
            unknown = UnknownOutcome(address, record, change.changed, when)
            decided = model.decide_unknown(unknown)
        else:  # a record the manifests no longer name (a document's change has its spec)
            gone = _gone(change.address, record)
            decided = Decision(gone.action, gone.operation, gone.reason)
        ended = (
            "the run that sent its last request ended without recording the answer, so "
            "the outcome is unknown (the plan was made while that request was in flight)"
        )
        if address != change.address:
            ended = (
                f"renamed from {address}, whose record stays under that name until this is "
                f"sorted out; {ended}"
            )
        if decided.action is Action.NEEDS_DECISION:
            reasons[change.address] = f"{ended}: {decided.reason}"
        else:
            reasons[change.address] = (
                f"{ended}; this plan does not send it again: make a new plan "
                f"(`customs-batch plan -out FILE`), in which {decided.reason}"
            )
    return hold_changes(plan, reasons)


def _planned_in_flight(change: PlannedChange) -> bool:
    """Planned as waiting for the run that held the lock (``plan_changes``'s
    ``in_flight``): waiting, with nothing to read."""
    return change.in_flight


def _hold_what_waits_for_a_held_object(changes: list[PlannedChange]) -> None:
    """Refuse, in place, each change that would send something and depends, directly or
    through others held so, on an object apply does not touch in this run (rejected by
    customs, an outcome that needs a decision): apply skips it (what it would amend is not
    there to amend, or what it refers to may not exist), so the plan does not count it as
    a creation or an update it sends. So is one refused for a value it refers to that is
    not known while that object is held: it says it waits, not why the value changed."""
    held: dict[Address, str] = {
        change.address: _WHY_HELD[change.action]
        for change in changes
        if change.action.holds_dependents
    }
    if not held:
        return
    for at, change in enumerate(changes):  # in dependency order: what it waits for comes first
        if change.address in held:
            continue
        # A change refused for a value it cannot know while what it names is held (a party
        # update's declarationId, "known after apply") waits too: its refusal ("cannot
        # change ... state rm") would be about a value that did not change.
        unknowable = change.action is Action.REFUSED and bool(change.unknown)
        if not change.operation.writes_state and not unknowable:
            continue
        waits = next((address for address in change.depends_on if address in held), None)
        if waits is None:
            continue
        held[change.address] = "which waits for it too"
        changes[at] = _refused_change(
            change,
            f"it depends on {waits}, {held[waits]}: apply sends nothing of it until then "
            "(what it would send goes to, or names, that object)",
        )


def _refused_change(change: PlannedChange, reason: str) -> PlannedChange:
    """``change`` refused after it was planned: nothing sent, no key kept."""
    return replace(
        change,
        action=Action.REFUSED,
        operation=Operation.NONE,
        reason=reason,
        idempotency_key=None,
    )


def tombstone_take_overs(plan: Plan, state: State) -> list[tuple[PlannedChange, ResourceRecord]]:
    """The changes of ``plan`` that track a tombstone of ``state`` again under their name
    (a document renamed from it, or asking the same request: apply moves its record), each
    with the tombstone."""
    found = []
    for change in plan.changes:
        if change.moved_from is None or not change.operation.writes_state:
            continue
        record = state.resources.get(str(change.moved_from))
        if record is not None and record.status is RecordStatus.FORGOTTEN:
            found.append((change, record))
    return found


def refuse_changes(plan: Plan, reasons: Mapping[Address, str]) -> Plan:
    """``plan`` with the changes ``reasons`` names refused for those reasons (decided from
    outside the plan: another environment's state), and each change that would send
    something and depends on one of them, directly or through others refused so, refused
    too: what it would send names an object this plan leaves alone."""
    if not reasons:
        return plan
    refused: set[Address] = set()
    changes = list(plan.changes)
    for at, change in enumerate(changes):  # in dependency order: what it waits for comes first
        if change.address in reasons:
            refused.add(change.address)
            changes[at] = _refused_change(change, reasons[change.address])
            continue
        if not change.operation.writes_state:
            continue
        waits = next((address for address in change.depends_on if address in refused), None)
        if waits is not None:
            refused.add(change.address)
            changes[at] = _refused_change(
                change,
                f"it depends on {waits}, which this plan refuses to track: apply sends "
                "nothing of it until that is sorted out as its refusal says (what it would "
                "send names that object)",
            )
    return replace(plan, changes=tuple(changes))


def held_for_a_lost_run(record: ResourceRecord) -> str:
    """Why a creation apply held unsent (``ResourceRecord.look_since``) still waits."""
    return (
        "not sent yet: apply (or refresh) first looks for objects the service made "
        f"since {record.look_since} that no record holds and that could be it, made by a run "
        "whose records were not kept (a CI runner lost before it committed the state); when "
        "none could be, it is submitted; otherwise they are named: `customs-batch state "
        f"adopt {record.address} ID` if one is it, `customs-batch state forget "
        f"{record.address}` if none is"
    )


def hold_changes(plan: Plan, reasons: Mapping[Address, str]) -> Plan:
    """``plan`` with the changes ``reasons`` names held for a decision for those reasons
    (decided from outside the plan: what the service holds), nothing of them sent, and each
    change that would send something and depends on one of them refused, as for an outcome
    that needs a decision in a plan made from the state."""
    if not reasons:
        return plan
    changes = [
        replace(
            change,
            action=Action.NEEDS_DECISION,
            operation=Operation.NONE,
            reason=reasons[change.address],
            idempotency_key=None,
        )
        if change.address in reasons
        else change
        for change in plan.changes
    ]
    _hold_what_waits_for_a_held_object(changes)
    return replace(plan, changes=tuple(changes))


def _refuse_what_names_a_resubmitted_id(
    changes: list[PlannedChange],
    replaced: set[str],
    recorded: Callable[[str], ResourceRecord | None],
) -> None:
    """Refuse, in place, each change that names by its value the ID of an object this plan
    submits again (a departure customs rejected): the request would go to the rejected
    declaration. The next plan refuses it from the state (``ReplacedIds``); this one says so
    in the run that decides it, instead of calling it unchanged."""
    resubmitted: dict[str, tuple[str, str]] = {}
    for address in replaced:
        parsed = Address.parse(address)
        record = recorded(address)
        id_field = model_of(parsed.kind).id_field if parsed is not None else None
        if record is None or id_field is None or record.outputs.get(id_field) is None:
            continue
        resubmitted[str(record.outputs[id_field])] = (address, id_field)
    if not resubmitted:
        return
    for at, change in enumerate(changes):
        takes = model_of(change.address.kind).takes_id
        if takes is None or change.action is Action.REFUSED:
            continue
        value = change.spec.get(takes.field)
        if isinstance(value, bool) or not isinstance(value, int | str):
            continue
        found = resubmitted.get(str(value))
        if found is None:
            continue
        holder, id_field = found
        changes[at] = _refused_change(
            change,
            f"{takes.field} {value} names the object of {holder}, which this plan submits "
            f"again (customs never accepted {value}): sent to {value}, this request would go "
            "to the rejected declaration, not to the one that takes its place. Write "
            f"`${{ref:{holder}.{id_field}}}` (it follows the resubmission), or the new ID once "
            "it is known",
        )


def _unchanged(doc: Document, depends_on: tuple[Address, ...]) -> PlannedChange:
    """The change of a document found unchanged: what the comparison below would give."""
    return PlannedChange(
        address=doc.address,
        action=_UNCHANGED.action,
        operation=_UNCHANGED.operation,
        reason=_UNCHANGED.reason,
        spec=doc.spec,
        depends_on=depends_on,
        idempotency_key=_UNCHANGED.idempotency_key,
        origin=row_origin(doc),
    )


def _declared_rename(
    doc: Document,
    record: ResourceRecord | None,
    named: set[str],
    recorded: Callable[[str], ResourceRecord | None],
    moved: Mapping[str, ResourceRecord],
    declared: set[str],
) -> ResourceRecord | Decision | None:
    """The record of one of ``doc``'s previous names to take over, a refusal when that
    cannot be, or None when there is nothing to move (already moved by an earlier apply).
    ``declared``: the records of ``moved`` taken over by a ``metadata.previousNames``."""
    if record is not None and not record.never_created:
        return None  # the record is under the new name already
    found: list[ResourceRecord] = []
    for name in doc.previous_names:
        old = f"{doc.kind.value}/{name}"
        earlier = recorded(old)
        if earlier is None or earlier.never_created:
            continue
        if old in named:
            return Decision(
                Action.REFUSED,
                Operation.NONE,
                f"metadata.previousNames names {old}, which is still in the manifests: a "
                "document cannot take over the record of another. Remove the other document, "
                "or the name from previousNames",
            )
        taker = next((new for new, r in moved.items() if str(r.address) == old), None)
        if taker is not None and old in declared:
            return Decision(
                Action.REFUSED,
                Operation.NONE,
                f"{old} is taken over by {taker} in this plan, which lists it in its "
                "previousNames too: list it in the previousNames of one document only",
            )
        if taker is not None:
            # Taken by the same request (two movements asking alike, the other first).
            return Decision(
                Action.REFUSED,
                Operation.NONE,
                f"{old} is taken over by {taker} in this plan: it asks for exactly what "
                f"{old} recorded and comes first, so it took that record as {old} renamed. "
                f"One document only can be {old}: if this one is, put it before {taker} in "
                f"the manifests; if this one is another, remove {name} from its previousNames",
            )
        found.append(earlier)
    if len(found) > 1:
        listed = ", ".join(r.address for r in found)
        return Decision(
            Action.REFUSED,
            Operation.NONE,
            f"metadata.previousNames names several recorded documents ({listed}): one "
            "document can be only one of them. Keep the one it was",
        )
    return found[0] if found else None


def _through_astray(
    doc: Document,
    record: ResourceRecord | None,
    values: tuple[FieldChange, ...],
    astray: Mapping[str, tuple[str, str]],
) -> tuple[Decision, str] | None:
    """A refusal, and the address it comes from, when ``doc`` would send something (a
    creation, a change of its record) and a reference of it names a document this plan
    refuses for a reason that leaves the reference astray: that document's name stands for
    another declaration now (names moved from one declaration to another, as a sheet
    reordered, renamed into each other's names), nothing of it will exist after apply (a
    creation refused: a rename with a change, a copy), or it is refused for one of these
    reasons itself. What the reference gives would send this document to the wrong
    declaration, or has no value to send (and the comparison with its record would read a
    reference's text as a change: a party update's declarationId "cannot change"), so it
    waits with the document it reaches its declaration through. None otherwise: a document
    that sends nothing (its record asks what it asks) stays as it is."""
    if record is not None and not record.never_created and not values:
        return None
    for reference in doc.references:
        target = str(reference.target)
        found = astray.get(target)
        if found is None:
            continue
        root, why = found
        where = ".".join(str(step) for step in reference.path)
        via = "" if root == target else f", which reaches its declaration through {root}"
        return (
            Decision(
                Action.REFUSED,
                Operation.NONE,
                f"{where} refers to {target}{via}, refused in this plan: {why}",
            ),
            root,
        )
    return None


def _forgotten_reference(
    doc: Document, recorded: Callable[[str], ResourceRecord | None]
) -> Decision | None:
    """A refusal when a reference of ``doc`` names a record ``state rm`` forgot: its value
    is no longer known, and comparing the reference's text with what was sent would read as
    a change of the value."""
    for reference in doc.references:
        target = str(reference.target)
        record = recorded(target)
        if record is not None and record.status is RecordStatus.FORGOTTEN:
            where = ".".join(str(step) for step in reference.path)
            return Decision(
                Action.REFUSED,
                Operation.NONE,
                f"{where} refers to {target}, which `customs-batch state rm` forgot: "
                f"its value is not known any more, so nothing is sent for this document. "
                f"`customs-batch state restore {target}` tracks it again, if its document "
                "is still meant; otherwise remove the reference, or this document and "
                f"`customs-batch state rm {doc.address}`",
            )
    return None


def _restored(record: ResourceRecord) -> ResourceRecord:
    """The record a moved document takes over, as it will be once moved (a tombstone is
    tracked again with the status it had)."""
    if record.status is RecordStatus.FORGOTTEN:
        return record.with_changes(
            status=RecordStatus(record.forgotten_from or RecordStatus.APPLIED.value),
            forgotten_from=None,
        )
    return record


def _forgotten(
    address: Address, record: ResourceRecord, spec: Mapping[str, JSON] | None = None
) -> Decision:
    """A document still in the manifests whose record ``state rm`` left as a tombstone."""
    model = model_of(address.kind)
    # The document declaring something else under the name (a party update pointed at
    # another declaration): the tombstone keeps the name, so a new name is the way to send
    # it; restored, the record would refuse the change instead.
    other = (
        model.identity is not None
        and spec is not None
        and record.identity
        and tuple(model.identity(spec)) != kept_identity(model, record)
    )
    renamed = (
        f". If this document now declares something else than the object forgotten (another "
        f"declaration), give it a new name: the tombstone keeps {address}, and a document "
        "under a new name is compared with what the service holds as any new one"
        if other
        else ""
    )
    ident = model.identifier(record)
    held = f" (the service holds {ident})" if ident is not None else ""
    # `--gone` asks the service first; a kind it cannot read back is refused there.
    gone = (
        f"; or, only if it no longer exists at the service, `customs-batch state rm --gone "
        f"{address}` (the next apply then sends it again)"
        if model.refresh is not None
        else ""
    )
    return Decision(
        Action.REFUSED,
        Operation.NONE,
        f"forgotten by `customs-batch state rm`, but it still exists at the service{held}: "
        f"it is not sent again, which would {model.sent_again}. Remove the document from the "
        f"manifests; or `customs-batch state restore {address}` to track it again{gone}"
        f"{renamed}",
    )


def _following_replacements(
    doc: Document,
    record: ResourceRecord,
    unknown: Sequence[tuple[str | int, ...]],
    replaced: set[str],
    recorded: Callable[[str], ResourceRecord | None],
) -> frozenset[str]:
    """The top-level fields of ``doc`` whose references point at an object that was
    replaced (a rejected departure resubmitted, now or in an earlier run): they follow the
    new object, so a change of them is no edit of the user's."""
    if not doc.references:
        return _NONE_FOLLOWED
    followed: set[str] = set()
    waiting = {tuple(path) for path in unknown}
    for reference in doc.references:
        # A reference's path runs from the document (``spec``, then the field).
        path = tuple(reference.path[1:]) if reference.path[:1] == ("spec",) else ()
        if not path:
            continue
        target = str(reference.target)
        if target in replaced and path in waiting:
            followed.add(str(path[0]))
            continue
        target_record = recorded(target)
        if target_record is None or not target_record.superseded:
            continue
        earlier = {
            (entry.get("outputs") or {}).get(reference.field)
            for entry in target_record.superseded
            if isinstance(entry, Mapping)
        }
        old: JSON = record.spec
        for step in path:
            old = old.get(step) if isinstance(old, Mapping) else None
        if old is not None and old in earlier:
            followed.add(str(path[0]))
    return frozenset(followed)


_NONE_FOLLOWED: frozenset[str] = frozenset()

_TAKING_IDS: frozenset[Kind] = frozenset(k for k, m in KINDS.items() if m.takes_id is not None)
"""The kinds whose documents name another object by its ID (``KindModel.takes_id``)."""


def _reader(
    records: Mapping[str, ResourceRecord],
) -> Callable[[str], ResourceRecord | None]:
    """A look-up of records that leaves them unparsed in the state: a plan reads each
    record once, and 100,000 parsed records would stay in memory for nothing."""
    if not isinstance(records, Records):
        return records.get
    peek = records.peek

    def recorded(address: str) -> ResourceRecord | None:
        return peek(address) if address in records else None

    return recorded


def row_origin(doc: Document) -> str:
    """``file, sheet 'S', row N`` for a document made from a spreadsheet row, else empty."""
    if doc.source.sheet is None:
        return ""  # not a row: without making the location (once a document of a plan)
    where = doc.source.location(())
    cell = where.cell()
    return f"{where.file}, {cell}" if cell else ""


def _gone(
    address: Address,
    record: ResourceRecord,
    in_flight: InFlight | None = None,
    now: datetime | None = None,
) -> PlannedChange:
    """A recorded address the manifests no longer name."""
    key = record.kept_key
    if key is not None and model_of(address.kind).idempotency_keys:
        until = key_honoured_until(key, record.updated_at)
        if until is not None and (now or datetime.now(UTC)) < until:
            # Dropped, its key would go with it: the document put back (under any name)
            # would be sent under a new one, and the attempt may have made its object.
            return PlannedChange(
                address=address,
                action=Action.ORPHANED,
                operation=Operation.NONE,
                reason="its attempt, whose outcome was unknown, was taken back by "
                "`customs-batch state forget`, and its document is no longer in the "
                "manifests: the attempt may have made it, so its record keeps the "
                f"attempt's Idempotency-Key until {until.strftime('%Y-%m-%dT%H:%M:%SZ')}, "
                "and the document put back (under any name) is sent under it, for the "
                "service to answer with what the attempt made instead of making a second. "
                f"`customs-batch state rm {address}` drops it",
            )
        return PlannedChange(
            address=address,
            action=Action.DROP,
            operation=Operation.FORGET,
            reason="its attempt, whose outcome was unknown, was taken back by "
            "`customs-batch state forget`, and its Idempotency-Key has expired: no longer in "
            "the manifests, apply drops its record",
        )
    if record.never_created:
        return PlannedChange(
            address=address,
            action=Action.DROP,
            operation=Operation.FORGET,
            reason="refused by the service, so never created, and no longer in the manifests: "
            "apply drops its record",
        )
    held = _held_gone(address, record, in_flight)
    if held is not None:
        return PlannedChange(
            address=address, action=held.action, operation=held.operation, reason=held.reason
        )
    return PlannedChange(
        address=address,
        action=Action.ORPHANED,
        operation=Operation.NONE,
        reason="recorded in the state but no longer in the manifests; the API cannot "
        f"delete it. `customs-batch state rm {address}` forgets it",
    )


def _held_gone(
    address: Address, record: ResourceRecord, in_flight: InFlight | None = None
) -> Decision | None:
    """What a plan holds a record the manifests no longer name for, rather than calling it
    orphaned (None): a creation whose outcome is unknown (whether its object exists is the
    user's to find out: nothing sends it again without its document), or an object
    ``refresh`` no longer found at the service; a request a running apply has not recorded
    the answer to yet waits for that run."""
    running = running_request(in_flight, record)
    if running is not None:
        return Decision(Action.WAITING, Operation.NONE, running)
    if record.status.outcome_unknown and not record.outputs:
        return Decision(
            Action.NEEDS_DECISION,
            Operation.NONE,
            "no longer in the manifests, and the outcome of its last request, which "
            "creates it, is unknown: nothing sends it again, and whether the service holds "
            f"it is for you to find out. `customs-batch state adopt {address} ID` if it does "
            f"(it is then orphaned: `customs-batch state rm {address}` stops tracking it), "
            f"`customs-batch state forget {address}` if it does not; or put its document "
            "back in the manifests",
        )
    if record.not_found_at is not None and (
        record.status is RecordStatus.APPLIED or record.status.outcome_unknown
    ):
        # Found gone or another by refresh, or by apply after an update whose answer was lost.
        model = model_of(address.kind)
        words = model.not_found_words(
            str(address), record, record.not_found_at, record.found_instead
        )
        return Decision(
            Action.NEEDS_DECISION, Operation.NONE, f"no longer in the manifests, and {words}"
        )
    return None


def _renamed(
    address: Address,
    spec: Mapping[str, JSON],
    earlier: ResourceRecord,
    values: tuple[FieldChange, ...],
    now: datetime,
    took: str,
    followed: frozenset[str] = frozenset(),
    *,
    in_flight: InFlight | None = None,
    forgotten: bool = False,
) -> Decision | None:
    """What a document renamed from ``earlier``'s address is planned as: what that record
    would be planned as under its own name, plus the rename; None when that is nothing
    (the rename alone: ``moved``). Held (an outcome to decide, an object customs rejected,
    another object at its ID, canceled, no longer found), refused, or waiting for a running
    apply's answer: the same, with the same count, exit code and hold on what depends on
    it; nothing is sent and its record stays under its name until that is sorted out, so
    the ways out name it where it is. Otherwise the record moves to this name, then the
    change is sent to its object. ``took`` says whose record the document takes over;
    ``forgotten``, that ``earlier`` is a tombstone (``state rm`` already done: a way out
    saying to do it again would fail)."""
    running = running_request(in_flight, earlier)
    decided = (
        Decision(Action.WAITING, Operation.NONE, running)
        if running is not None
        else _decide(address, spec, earlier, values, now, followed)
    )
    if decided.action is Action.NO_CHANGE:
        return None
    if decided.operation.writes_state:
        then = decided.reason or "the changes below are sent to its object"
        return replace(decided, reason=f"{took}; its record moves to this name, then: {then}")
    old = Address.parse(earlier.address)
    if old is not None and decided.action.holds_dependents:
        # Its ways out (`state adopt`, `state rm --gone`) name the record where it is.
        decided = _decide(old, spec, earlier, values, now, followed)
        if forgotten and decided.action is Action.REJECTED:
            decided = _rejected_tombstone(old, earlier)
    return replace(
        decided,
        reason=f"{took}; its record stays under {earlier.address} and nothing is sent until "
        f"this is sorted out, as without the rename: {decided.reason}",
    )


def _field_paths(value: FieldChange) -> list[str]:
    """The party fields (``Consignee.city``) a change of a whole party (``Consignee``)
    touches, each; the change's own path otherwise."""
    if "." in value.path or "[" in value.path:
        return [value.path]
    old = value.old if isinstance(value.old, dict) else {}
    new = value.new if isinstance(value.new, dict) else {}
    if not old and not new:
        return [value.path]
    return [
        f"{value.path}.{name}"
        for name in sorted(set(old) | set(new))
        if old.get(name) != new.get(name)
    ]


def _party_fields_left_out(model: KindModel, values: tuple[FieldChange, ...]) -> list[str]:
    """The party fields (``Consignee.city``) a document of a kind writing parties no longer
    writes, which the service keeps (``KindModel.kept_when_left_out``): one by one, or a
    whole party left out."""
    if model.parties is None:
        return []
    left: list[str] = []
    for value in values:
        role = value.path.split(".", 1)[0]
        if value.new is not None or value.old is None or role not in model.kept_when_left_out:
            continue
        left += [path for path in _field_paths(value) if path.count(".") == 1]
    return left


def _party_value(spec: Mapping[str, JSON], path: str) -> tuple[bool, JSON]:
    """Whether ``spec`` writes the party field ``path`` (``Consignee.city``), and its value."""
    role, name = path.split(".", 1)
    party = spec.get(role)
    if isinstance(party, Mapping) and name in party:
        return True, party[name]
    return False, None


_WRITING = frozenset({Action.CREATE, Action.UPDATE})
_HOLDING = frozenset({Action.NO_CHANGE, Action.WAITING})
"""A document that sends nothing, whose record may already hold a field another hands it."""


def _holds(
    recorded: Callable[[str], ResourceRecord | None], change: PlannedChange, path: str
) -> bool:
    """Whether the applied record of ``change`` already writes the party field ``path`` at
    the value its document writes."""
    before = recorded(str(change.address))
    return (
        before is not None
        and before.status is RecordStatus.APPLIED
        and _party_value(before.spec, path) == _party_value(change.spec, path)
    )


def _hand_over(
    changes: list[PlannedChange],
    left_out: Mapping[int, tuple[ResourceRecord, tuple[FieldChange, ...], frozenset[str]]],
    recorded: Callable[[str], ResourceRecord | None],
    now: datetime,
) -> dict[Address, dict[str, Address]]:
    """Party fields handed from one document to another of the same declaration in one
    change, in place: by giver, each field it hands over and to whom (empty when none is).

    A document that no longer writes a party field its record holds is refused (the
    service's party update removes nothing). When another document of the plan aimed at
    the same declaration (by its ID, known from the state) starts writing that field, the
    field changes owner instead: the first document's record stops holding it, and nothing
    is sent for it (the service keeps the value); the new owner sends it only when it writes
    another value (an update by the new owner). A change that does nothing else sends
    nothing: ``hand-over``, which only records it.
    """
    targets: dict[int, tuple[str, str] | None] = {}

    def target(at: int) -> tuple[str, str] | None:
        if at not in targets:
            targets[at] = declaration_of(changes[at], recorded)
        return targets[at]

    by_target: dict[tuple[str, str], list[int]] = {}
    for at, change in enumerate(changes):
        if model_of(change.address.kind).parties is None:
            continue
        if change.action in _WRITING or change.action in _HOLDING or at in left_out:
            aimed = target(at)
            if aimed is not None:
                by_target.setdefault(aimed, []).append(at)
    # By giver, each field it hands over and to whom.
    given: dict[int, dict[str, int]] = {}
    for at, (_record, values, _followed) in left_out.items():
        aimed = target(at)
        if aimed is None:
            continue
        for path in _party_fields_left_out(model_of(changes[at].address.kind), values):
            for other in by_target.get(aimed, ()):
                if other == at:
                    continue
                if not _party_value(changes[other].spec, path)[0]:
                    continue
                if changes[other].action in _HOLDING and not _holds(recorded, changes[other], path):
                    continue
                given.setdefault(at, {})[path] = other
                break
    decided: dict[int, Decision] = {}
    while True:
        decided.clear()
        for at, handed in given.items():
            record, values, followed = left_out[at]
            change = changes[at]
            rest = tuple(
                value for value in values if not all(path in handed for path in _field_paths(value))
            )
            if rest:
                decision = _decide(change.address, change.spec, record, rest, now, followed)
                if decision.action is not Action.UPDATE:
                    continue
            else:
                decision = Decision(Action.UPDATE, Operation.HAND_OVER)
            decided[at] = decision
        # A giver still refused writes nothing: what it was to take over stays with its
        # giver, which is refused in turn.
        stuck = {
            at
            for at, handed in given.items()
            if any(other in left_out and other not in decided for other in handed.values())
        }
        if not stuck:
            break
        for at in stuck:
            del given[at]
    if not decided:
        return {}
    taken: dict[int, dict[str, tuple[int, bool]]] = {}
    for at in decided:
        for path, other in given[at].items():
            if _holds(recorded, changes[other], path):
                continue  # its owner already (an earlier apply recorded it, say)
            _writes, value = _party_value(changes[other].spec, path)
            same = value == _party_value(left_out[at][0].spec, path)[1]
            taken.setdefault(other, {})[path] = (at, same)
    handings: dict[int, str] = {}
    for at, decision in decided.items():
        change = changes[at]
        words = []
        for path, other in given[at].items():
            same = other not in taken or path not in taken[other] or taken[other][path][1]
            sends = "" if same else ", which sends the value it writes"
            words.append(f"hands {path} over to {changes[other].address}{sends}")
        handing = handings[at] = "; ".join(words)
        if decision.operation is Operation.HAND_OVER:
            reason = (
                f"{handing}: the service keeps the value and the state records the new "
                "owner; nothing is sent"
            )
        else:
            reason = f"{decision.reason}; {handing} (the service keeps the value)"
        changes[at] = _handed(change, decision, reason)
    for other, paths in taken.items():
        change = changes[other]
        words = [
            f"takes {path} over from {changes[at].address}"
            + ("" if same else ", writing another value")
            for path, (at, same) in paths.items()
        ]
        own_values = left_out[other][1] if other in decided else change.values
        own_rest = {
            path
            for value in own_values
            for path in _field_paths(value)
            if path not in given.get(other, {})
        }
        kept = {path for path, (_at, same) in paths.items() if same}
        before = recorded(str(change.address))
        quiet = (
            change.action is Action.UPDATE
            and change.operation is model_of(change.address.kind).update
            and own_rest <= kept
            and before is not None
            and before.status is RecordStatus.APPLIED
            and before.not_found_at is None
        )
        if quiet:
            gives = f"{handings[other]}; " if other in handings else ""
            reason = (
                f"{gives}{'; '.join(words)} at the value the service holds: the state records the "
                "new owner; nothing is sent"
            )
            changes[other] = _handed(change, Decision(Action.UPDATE, Operation.HAND_OVER), reason)
        else:
            reason = f"{changes[other].reason}; {'; '.join(words)}".lstrip("; ")
            changes[other] = replace(changes[other], reason=reason)
    gave = {
        changes[at].address: {path: changes[other].address for path, other in given[at].items()}
        for at in decided
    }
    _give_after_taking(changes, {at: set(given[at].values()) & set(taken) for at in decided})
    return gave


def _hold_broken_handovers(
    changes: list[PlannedChange],
    handed: Mapping[Address, Mapping[str, Address]],
    takers: Mapping[Address, tuple[str, Decision]],
) -> None:
    """Refuse, in place, each half of a handover the plan does not carry out whole.

    A giver (``handed``: by giver, each field it hands over and to whom) whose taker this
    plan refuses (``refuse_second_writers``, run again once the givers write: a taker
    writing a field a giver still writes): its record would let the field go while no
    document takes it, and the service would hold a value no document declares. Nothing is
    sent for it; the field stays with it until its taker is sorted out.

    A new document created only as the taker of what another stopped writing
    (``Identities.takers``: it declares what that one's record holds) that is not handed
    every field it writes, or whose giver is refused: it is refused as it would have been
    without the handover (it declares what the other's record holds). Each refusal may
    break another handover (a swap, a chain): until none does."""
    where = {str(change.address): at for at, change in enumerate(changes)}
    refused = {str(change.address) for change in changes if change.action is Action.REFUSED}
    while True:
        late: list[tuple[str, str]] = []
        for giver, given in handed.items():
            if str(giver) in refused:
                continue
            taker = next(
                (t for t in sorted(set(given.values()), key=str) if str(t) in refused), None
            )
            if taker is None:
                continue
            paths = sorted(path for path, to in given.items() if to == taker)
            fields = ", ".join(paths)
            late.append(
                (
                    str(giver),
                    f"no longer writes {fields}, which it would hand over to {taker}, refused "
                    f"in this plan: its record would let {fields} go while no document takes "
                    f"{'it' if len(paths) == 1 else 'them'} over, and the service would keep a "
                    f"value no document declares. Nothing is sent for this document until "
                    f"{taker} is sorted out as its refusal says (then plan again: the "
                    f"handover is planned anew), or write {fields} here again",
                )
            )
        for new, (old, refusal) in takers.items():
            if str(new) in refused or str(new) not in where:
                continue
            writes = {
                f"{role}.{name}" for role, name in party_fields(changes[where[str(new)]].spec)
            }
            taken = {
                path
                for gave, to_whom in handed.items()
                if str(gave) == old
                for path, to in to_whom.items()
                if to == new
            }
            if old in refused or not writes or not writes <= taken:
                late.append((str(new), refusal.reason))
        if not late:
            return
        for held, reason in late:
            at = where[held]
            changes[at] = _refused_change(changes[at], reason)
            refused.add(held)


_HAND_OVER_WAY = (
    ". To move a party field to another document of the same declaration, write it there in "
    "the same change: the plan hands it over"
)
_HAND_OVER_WAY_SELECTED = (
    ". To move a party field to another document of the same declaration, write it there in "
    "the same change and plan both: this plan sees only the documents selected (-l, --target, "
    "--exclude), and one left out of them takes nothing over; select it too, or plan without "
    "a selection"
)


def _hand_over_in_a_selection(changes: list[PlannedChange], left_out: Mapping[int, object]) -> None:
    """In a plan of a selection, in place: the refusal of a document that no longer writes
    a party field says that a document left out of the selection takes nothing over (the
    taker it names may be written already, and only unselected)."""
    for at in left_out:
        change = changes[at]
        if change.action is Action.REFUSED and _HAND_OVER_WAY in change.reason:
            reason = change.reason.replace(_HAND_OVER_WAY, _HAND_OVER_WAY_SELECTED)
            changes[at] = replace(change, reason=reason)


def _give_after_taking(changes: list[PlannedChange], takers: Mapping[int, set[int]]) -> None:
    """Each giver (by place in ``changes``) waits for the documents that take its fields
    over (``takers``: those not already holding them), in place: its record lets the fields
    go only once theirs hold them, so a taker that fails, or a run stopped between the two,
    leaves a field with its giver, never with no document (the next plan hands it over
    again, or refuses the giver if the taker is gone). A taker no longer waits for its
    giver: what it refers to of it (its declaration's ID) is recorded and stays the same. A
    giver that takes from one of its own takers keeps the order it had (a swap)."""
    moved: list[tuple[Address, set[Address]]] = []
    for at, others in takers.items():
        giver = changes[at].address
        waited = {
            changes[other].address
            for other in others
            if other not in takers or at not in takers[other]
        }
        if not waited:
            continue
        for other in others:
            taker = changes[other]
            if taker.address in waited and giver in taker.depends_on:
                changes[other] = replace(
                    taker, depends_on=tuple(a for a in taker.depends_on if a != giver)
                )
        change = changes[at]
        changes[at] = replace(
            change,
            depends_on=(*change.depends_on, *sorted(waited - set(change.depends_on), key=str)),
        )
        moved.append((giver, waited))
    for giver, waited in moved:  # after the last document it waits for, as apply goes
        at = next(i for i, change in enumerate(changes) if change.address == giver)
        last = max(i for i, change in enumerate(changes) if change.address in waited)
        if last > at:
            changes.insert(last, changes.pop(at))


def _handed(change: PlannedChange, decision: Decision, reason: str) -> PlannedChange:
    model = model_of(change.address.kind)
    identity = change.identity
    if not identity and model.identity is not None:
        identity = model.identity(change.spec)
    return replace(
        change,
        action=decision.action,
        operation=decision.operation,
        reason=reason,
        idempotency_key=decision.idempotency_key,
        identity=identity,
    )


def _under_kept_key(
    address: Address,
    record: ResourceRecord,
    decided: Decision,
    values: tuple[FieldChange, ...],
    unknown: Sequence[object],
    now: datetime,
    renamed: ResourceRecord | None = None,
) -> Decision:
    """The creation of a document whose attempt ``state forget`` took back keeping its
    Idempotency-Key (``ResourceRecord.kept_key``): sent under that key while the service
    honours it and the document is as the attempt sent it, so that a forget made by
    mistake makes no second object (the service answers with the one the attempt made).
    Edited since, or the key expired: sent as new, under a new key, as forgotten.
    ``renamed``: that attempt's record, under another name this document takes over."""
    key = record.kept_key
    if key is None or decided.action is not Action.CREATE:
        return decided
    if not model_of(address.kind).idempotency_keys:
        return decided
    if renamed is not None:
        if not key_honoured(key, record.updated_at, now):
            return decided  # a new key, as for any new document: nothing left to hand on
        return Decision(
            decided.action,
            decided.operation,
            f"it asks for exactly what {renamed.address} sent before `customs-batch state "
            f"forget` took that attempt, whose outcome was unknown, back; {renamed.address} "
            "is no longer in the manifests, so this document takes over its record and is "
            "sent under that attempt's Idempotency-Key: if the attempt did make it, the "
            "service answers with that one instead of making a second",
            idempotency_key=key,
        )
    if values or unknown:
        why = "the document changed since, so it is sent as new, under a new key"
    elif not key_honoured(key, record.updated_at, now):
        why = "its Idempotency-Key has expired (24 h), so it is sent as new, under a new key"
    else:
        return Decision(
            decided.action,
            decided.operation,
            "its attempt, whose outcome was unknown, was taken back by `customs-batch state "
            "forget`; it is sent again under that attempt's Idempotency-Key, so that if the "
            "attempt did make it, the service answers with that one instead of making a second",
            idempotency_key=key,
        )
    return Decision(
        decided.action,
        decided.operation,
        f"its attempt, whose outcome was unknown, was taken back by `customs-batch state "
        f"forget`; {why}",
    )


def _decide(
    address: Address,
    spec: Mapping[str, JSON],
    record: ResourceRecord,
    values: tuple[FieldChange, ...],
    now: datetime,
    followed: frozenset[str] = frozenset(),
) -> Decision:
    model = model_of(address.kind)
    if followed and not record.status.outcome_unknown:
        fixed = [name for name in _top_level(values) if name not in model.mutable]
        if fixed and set(fixed) <= followed:
            # What it names was replaced: sent in full to the new object.
            return Decision(
                Action.UPDATE if model.update is not None else Action.CREATE,
                model.create,
                f"it refers to an object that was resubmitted and replaced ({', '.join(fixed)} "
                "follows the new one): sent to the new object",
            )
    if record.unverified is not None:
        # apply could not tell its object from another at the ID: held until the user says.
        words = unverified_words(str(address), model.identifier(record), record.unverified)
        return Decision(Action.NEEDS_DECISION, Operation.NONE, words)
    if record.look_since is not None and record.status.outcome_unknown:
        # Held unsent by apply: the service made objects since that could be it.
        return Decision(Action.NEEDS_DECISION, Operation.NONE, held_for_a_lost_run(record))
    if record.status.outcome_unknown:
        return model.decide_unknown(UnknownOutcome(address, record, _top_level(values), now))
    if record.not_found_at is not None and record.status is RecordStatus.APPLIED:
        # The service no longer holds it, as refresh found: nothing to send it to, and
        # whether it is gone for good is the user's to say.
        words = model.not_found_words(
            str(address), record, record.not_found_at, record.found_instead
        )
        return Decision(Action.NEEDS_DECISION, Operation.NONE, words)
    ended = model.ended(record)
    if ended is not None:
        # Gone at the service though still shown there (a departure customs cancelled):
        # neither unchanged nor anything to send it.
        return Decision(Action.NEEDS_DECISION, Operation.NONE, ended)
    if record.status is RecordStatus.FAILED:
        # An update the service refused: the object is as it was recorded before.
        message = record.error.message if record.error else "unknown error"
        reason = f"the last update was refused: {message}"
        return (
            _decide_change(model, address, record, values, reason)
            if values
            else Decision(Action.NO_CHANGE, Operation.NONE, reason)
        )
    service_state = model.service_words(record)
    if model.rejected(service_state, record):
        return _rejected(model, address, record, service_state or "", values)
    if model.undecided(service_state) and not values:
        said = f"{model.identifier(record)} is {service_state} at the service"
        return Decision(
            Action.WAITING,
            Operation.FOLLOW,
            f"{said}{model.unknown_words(service_state)}: not decided yet. "
            "apply reads where it stands (`apply --wait` follows it until decided), as does "
            "`customs-batch refresh`",
        )
    if model.undone(service_state, record) and not values:
        return Decision(
            Action.CREATE,
            model.create,
            f"{model.identifier(record)} is {service_state} at the service again (as last "
            "read): what was done is undone there, so it is sent again",
        )
    if not values:
        return _UNCHANGED
    return _decide_change(model, address, record, values)


_UNCHANGED = Decision(Action.NO_CHANGE, Operation.NONE)
"""The decision about most documents of a re-plan: one, not one each (frozen)."""


_FOLLOWED_WHILE_PROCESSING: frozenset[Kind] = frozenset(
    kind for kind, model in KINDS.items() if model.wait is not None and model.processing_states
)
"""The kinds whose objects ``apply --wait`` follows while the service still works on them
(``KindModel.processing_states``, through the kind's ``wait``)."""


def following_processing(plan: Plan, state: State) -> Plan:
    """``plan`` as ``apply --wait`` runs it: each unchanged document whose object the
    service is still working on, as recorded (a departure left ``processing`` by an apply
    without --wait, by a --wait that timed out or was stopped), is followed until decided,
    as its kind's ``wait`` follows it after a submission (``waiting``, one read at a time);
    the rest as planned. Nothing is sent for it."""
    if not any(
        change.action is Action.NO_CHANGE and change.address.kind in _FOLLOWED_WHILE_PROCESSING
        for change in plan.changes
    ):
        return plan
    recorded = _reader(state.resources)
    changes: list[PlannedChange] = []
    for change in plan.changes:
        record = (
            recorded(str(change.address))
            if change.action is Action.NO_CHANGE
            and change.address.kind in _FOLLOWED_WHILE_PROCESSING
            else None
        )
        if record is not None and record.status is RecordStatus.APPLIED:
            model = model_of(change.address.kind)
            service_state = model.last_known_state(record)
            if service_state in model.processing_states:
                change = replace(
                    change,
                    action=Action.WAITING,
                    operation=Operation.FOLLOW,
                    reason=f"{model.identifier(record)} is {service_state} at the service: "
                    "customs has not decided yet; --wait follows it until it is decided, sending nothing",
                    # When the object at its ID was made is listed first (``made_at``).
                    lists_first=model.made_at is not None,
                )
        changes.append(change)
    # What depends on an object apply leaves as it is (a departure customs rejected) is not
    # followed either: held, as plan holds what would be sent to it.
    _hold_what_waits_for_a_held_object(changes)
    return replace(plan, changes=tuple(changes))


def _decide_change(
    model: KindModel,
    address: Address,
    record: ResourceRecord,
    values: tuple[FieldChange, ...],
    note: str = "",
) -> Decision:
    defaults = model.left_out_means
    if defaults and all(
        value.new is None and value.path in defaults and defaults[value.path] == value.old
        for value in values
    ):
        # Only fields left out that were written at the value the service holds for a
        # field left out (`isDefault: false` deleted): nothing to ask of it.
        return Decision(Action.NO_CHANGE, Operation.NONE, note)
    changed = _top_level(values)
    fixed = [name for name in changed if name not in model.mutable]
    prefix = f"{note}; " if note else ""
    if fixed or model.update is None:
        why = model.immutable.format(address=address, fields=", ".join(fixed or changed))
        respelled = [
            value.path
            for value in values
            if isinstance(value.old, str)
            and isinstance(value.new, str)
            and normal_text(value.old) == normal_text(value.new)
        ]
        if respelled:
            why += (
                f" ({', '.join(respelled)} only written differently: another Unicode form of "
                "the same letters, spaces around them, or characters that print as nothing "
                "(a zero-width space), which plan takes for the same declaration; write it "
                "as before)"
            )
        retyped = [
            f"{value.path} {value.new!r} for {value.old!r}"
            for value in values
            if isinstance(value.old, str)
            and isinstance(value.new, str)
            and retyped_text(value.new.strip(), value.old.strip())
        ]
        if retyped:
            why += (
                f" ({', '.join(retyped)}: the same number written another way, as a "
                "spreadsheet program re-types a column it read as numbers on the next export "
                "(leading zeros dropped, `.0` added, a long number shown as `1.23457E+17`); "
                "format the column as Text and put the values back as they were)"
            )
        percent = [
            f"{value.path} {value.new!r} for {value.old!r}"
            for value in values
            if isinstance(value.old, str)
            and isinstance(value.new, str)
            and percent_of(value.new.strip(), value.old.strip())
        ]
        if percent:
            why += (
                f" ({', '.join(percent)}: a cell under a percentage format, which earlier "
                "releases read as the number alone and sent so, where the sheet shows the "
                "percentage; to declare it as sent, declare its column `number` in "
                "forEach.columns, which reads the number the cell holds)"
            )
        return Decision(Action.REFUSED, Operation.NONE, prefix + why)
    kept = [
        value.path
        for value in values
        if value.new is None
        and value.old is not None
        and value.path.split(".", 1)[0].split("[", 1)[0] in model.kept_when_left_out
        and not (value.path in defaults and defaults[value.path] == value.old)
    ]
    if kept:
        return Decision(
            Action.REFUSED,
            Operation.NONE,
            f"{prefix}no longer writes {', '.join(kept)}, but the service's update changes the "
            "values it is sent and removes none: the service would keep what was sent before, "
            "and the state would say it is gone. Write the values back (the update then sends "
            "the rest), or write the values the service should hold instead"
            + (
                _HAND_OVER_WAY
                if model.parties is not None and record.status is RecordStatus.APPLIED
                else ""
            ),
        )
    if model.lacks_id(record):
        # The update goes to the recorded ID: without one there is no object to send it to.
        ident = model.identifier(record)
        held = (
            f"no {model.id_field}"
            if ident in (None, "")
            else f"{model.id_field} {json.dumps(ident)}, which is no ID"
        )
        return Decision(
            Action.REFUSED,
            Operation.NONE,
            f"{prefix}changes {', '.join(changed)}, but its record in the state holds {held} "
            "to send the update to: the state was edited or damaged. "
            "Restore the state from its backup or version control (`customs-batch state show "
            f"{address}` shows the record)",
        )
    return Decision(Action.UPDATE, model.update, f"{prefix}changes {', '.join(changed)}")


def _rejected_tombstone(old: Address, record: ResourceRecord) -> Decision:
    """A document asking what the tombstone ``old`` asked, whose object customs rejected (a
    departure found ``invalid``, a cancellation customs refused): held as rejected, as the
    record would be under its own name, but not with the way out ``rejected_way_out`` gives
    (remove the document, then ``state rm OLD``): ``old`` is forgotten already, and ``state
    rm`` of a tombstone is refused. ``state rm --gone`` confirms at the service that customs
    never accepted it and removes the tombstone, so that the document is sent anew."""
    model = model_of(old.kind)
    ident = model.identifier(record)
    service_state = model.service_words(record) or ""
    errors = "; ".join(describe_error(e) for e in record.remote_errors) or "no errors given"
    return Decision(
        Action.REJECTED,
        Operation.NONE,
        f"{ident} is {service_state} at the service: {errors}. {old} is forgotten already "
        f"(`customs-batch state rm` left its tombstone). Remove this document from the "
        f"manifests to leave it so; or, to send this document anew, `customs-batch state rm "
        f"--gone {old}` (it checks at the service that customs never accepted it), and the "
        "next apply sends it as a new request",
    )


def _rejected(
    model: KindModel,
    address: Address,
    record: ResourceRecord,
    service_state: str,
    values: tuple[FieldChange, ...],
) -> Decision:
    """An object the service holds but customs never accepted (a departure ``invalid``)."""
    ident = model.identifier(record)
    errors = "; ".join(describe_error(e) for e in record.remote_errors) or "no errors given"
    if values and model.resubmit is not None:
        return Decision(
            Action.RESUBMIT,
            model.resubmit,
            f"{ident} is {service_state} at the service ({errors}); customs never accepted "
            "it, so the corrected document is submitted as a new declaration that replaces "
            "it (both IDs are recorded)",
        )
    return Decision(
        Action.REJECTED,
        Operation.NONE,
        f"{ident} is {service_state} at the service: {errors}. "
        + model.rejected_way_out.format(address=address),
    )


def field_changes(
    recorded: Mapping[str, JSON], desired: Mapping[str, JSON]
) -> tuple[FieldChange, ...]:
    """Every value that differs, nested objects field by field (``Consignee.name``).

    A value known only after apply keeps its ``${ref:…}`` text, so it differs from any
    recorded value and counts as changed.
    """
    if recorded == desired:  # the unchanged re-plan: one comparison in C, no walk
        return ()
    found: list[FieldChange] = []
    _walk(recorded, desired, "", found)
    return tuple(found)


def _walk(old: JSON, new: JSON, path: str, found: list[FieldChange]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for name in sorted(set(old) | set(new)):
            _walk(old.get(name), new.get(name), f"{path}.{name}" if path else str(name), found)
    elif isinstance(old, list) and isinstance(new, list) and old != new:
        # Item by item (``DeclarationItems[1].netPrice``): a change inside a list shows
        # where it is, not the whole list twice.
        for old_item, new_item, index in _paired(old, new):
            _walk(old_item, new_item, f"{path}[{index}]", found)
    elif old != new and not _same_lines(old, new):
        found.append(FieldChange(path, old, new))


def _same_lines(old: JSON, new: JSON) -> bool:
    """Whether two texts differ only in how their line breaks are written (``\r\n`` or
    ``\r`` against ``\n``): the same text. A spreadsheet cell's line break is read as
    ``\n`` whatever the CSV file writes; a declaration sent from a cell of a file whose line
    ends were CRLF holds ``\r\n``, and would otherwise plan a change customs refuses."""
    if not isinstance(old, str) or not isinstance(new, str) or ("\r" not in old + new):
        return False
    return _one_line_end(old) == _one_line_end(new)


def _one_line_end(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _paired(old: list[JSON], new: list[JSON]) -> list[tuple[JSON, JSON, int]]:
    """The items of two versions of a list, paired, each with the index it is shown at.

    Entries that carry a ``sequenceNumber`` (``TransportMeans``, ``packaging``) are paired
    by it, so an entry added or removed in the middle is that one change, not a shift of
    every entry after it: each at its index in the new list, a removed one at its index in
    the old. Other lists are paired by position."""
    old_keys, new_keys = _sequence_numbers(old), _sequence_numbers(new)
    if old_keys is None or new_keys is None:
        return [
            (old[i] if i < len(old) else None, new[i] if i < len(new) else None, i)
            for i in range(max(len(old), len(new)))
        ]
    where = {key: index for index, key in enumerate(old_keys)}
    pairs = [
        (old[where[key]] if key in where else None, new[index], index)
        for index, key in enumerate(new_keys)
    ]
    kept = set(new_keys)
    pairs += [(old[index], None, index) for index, key in enumerate(old_keys) if key not in kept]
    return pairs


def _sequence_numbers(items: list[JSON]) -> list[int] | None:
    """The ``sequenceNumber`` of each item, or None unless every item has a distinct one."""
    keys: list[int] = []
    for item in items:
        key = item.get("sequenceNumber") if isinstance(item, dict) else None
        if not isinstance(key, int) or isinstance(key, bool):
            return None
        keys.append(key)
    return keys if len(set(keys)) == len(keys) else None


def _top_level(values: tuple[FieldChange, ...]) -> tuple[str, ...]:
    names: list[str] = []
    for value in values:
        name = re.split(r"[.\[]", value.path, maxsplit=1)[0]
        if name not in names:
            names.append(name)
    return tuple(names)
