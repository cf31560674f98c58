"""Bringing the state and the service together by hand: adopt, import and refresh."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import NoReturn

from customs_batch.client import CustomsClient, NotFoundError
from customs_batch.errors import CustomsBatchError, ServiceError, StateError
from customs_batch.execution.apply import now_iso
from customs_batch.execution.elsewhere import HeldElsewhere, ObjectsHeldElsewhere
from customs_batch.findings import a_or_an
from customs_batch.jsontypes import JSON
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.actions import Action
from customs_batch.kinds.model import (
    MADE_SINCE,
    WRITE_SKEW,
    ImportAt,
    KindModel,
    Refreshed,
    Restated,
    describe_error,
    parse_time,
    unverified_words,
)
from customs_batch.kinds.readback import Comparison, DiffersAtService, Found, compare
from customs_batch.kinds.registry import model_of
from customs_batch.planning.diff import refuse_changes, tombstone_take_overs
from customs_batch.planning.identity import kept_identity
from customs_batch.planning.model import Plan, PlannedChange
from customs_batch.state.backend import StateSession
from customs_batch.state.edits import not_recorded
from customs_batch.state.lock import InFlight, running_request
from customs_batch.state.model import RecordStatus, ResourceRecord, Scalar, State
from customs_batch.state.records import Records, by_output


def read_and_compare(
    client: CustomsClient,
    address: Address,
    remote_id: str,
    spec: Mapping[str, JSON],
    *,
    sent: bool,
) -> Comparison:
    """Read the object ``remote_id`` of ``address``'s kind and compare it with ``spec``.

    Raises a CustomsBatchError when it does not exist, and :class:`DiffersAtService` when it
    is not what the document declares where nothing can change it (or shows that what the
    document asks for never happened): then nothing may be recorded. Each kind reads its own
    back and says which of the document's fields the service gives back.
    """
    model = model_of(address.kind)
    try:
        found = model.read_back(client, address, remote_id, spec)
    except NotFoundError as exc:
        raise CustomsBatchError(
            f"{address}: the service holds nothing at {remote_id}: {exc.message}",
            hint="nothing was recorded; check the ID (`customs-batch get` reads what the "
            "service holds)",
        ) from None
    comparison = compare(found, spec, model.mutable, sent=sent)
    if comparison.found.not_done:
        hint = "nothing was recorded"
        if sent:
            hint += f"; `customs-batch state forget {address}` lets the next apply send it"
        raise DiffersAtService(f"{address}: {comparison.found.not_done}", comparison, hint=hint)
    if comparison.fixed:
        fields = ", ".join(d.field for d in comparison.fixed)
        if sent:
            message = (
                f"{remote_id} is not what the last request of {address} sent: it differs in "
                f"{fields}, which cannot change. Nothing was recorded"
            )
            hint = (
                f"adopt the object that request created, or `customs-batch state forget "
                f"{address}` if it created none (the next apply sends it again)"
            )
        else:
            message = (
                f"{remote_id} is not what {address} declares: it differs in {fields}, "
                "which cannot change. Nothing was recorded"
            )
            hint = (
                f"if {remote_id} is the object, correct the document to what the service "
                "holds and import again; otherwise import the ID of the object it declares"
            )
        raise DiffersAtService(message, comparison, hint=hint)
    return comparison


def adopt(
    session: StateSession,
    client: CustomsClient,
    address: Address,
    remote_id: str,
    *,
    others: ObjectsHeldElsewhere | None = None,
) -> tuple[ResourceRecord, Comparison]:
    """Resolve a needs-decision address: the attempt did create ``remote_id``.

    The object is compared with what the attempt sent first: one that differs where it
    cannot change is refused; where it differs in a changeable field, the service's value is
    recorded, so the next plan changes it back. An object another record already stands
    for is refused: that attempt did not create it; so is one a record of another state of
    the same service stands for (``others``, read only when asked).
    """
    record = session.state.resources.get(str(address))
    if record is None:
        raise not_recorded(
            str(address),
            hint=f"to take over an object created elsewhere, `customs-batch import {address} ID`",
        )
    if record.status is RecordStatus.APPLIED and record.unverified is not None:
        return _adopt_unverified(session, client, address, record, remote_id)
    if record.status is RecordStatus.APPLIED:
        raise StateError(
            f"{address} is already applied (outputs {dict(record.outputs)})",
            hint="adopt is for an attempt whose outcome is unknown, or an object apply "
            "could not verify",
        )
    if record.status is RecordStatus.FORGOTTEN:
        raise StateError(
            f"{address} was forgotten by `customs-batch state rm`",
            hint=f"`customs-batch state restore {address}` tracks it again",
        )
    model = model_of(address.kind)
    # As the service gives it, the form the record's IDs are compared in (``02``: ``2``).
    remote_id = model.canonical_id(remote_id, address)
    if _lost_update(model, record):
        try:
            comparison = read_and_compare(client, address, remote_id, record.spec, sent=True)
        except DiffersAtService as refused:
            _refuse_a_lost_update(address, record, refused.comparison)
        _refuse_a_lost_update(address, record, comparison)
    _refuse_a_replaced_object(address, record, remote_id)
    comparison = read_and_compare(client, address, remote_id, record.spec, sent=True)
    found = comparison.found
    # The ID as the service gives it (``02`` given, ``2`` read).
    ident = None if model.id_field is None else found.outputs.get(model.id_field)
    _refuse_a_replaced_object(address, record, remote_id if ident is None else str(ident))
    adopted = record.with_changes(
        status=RecordStatus.APPLIED,
        spec=comparison.spec,
        outputs=dict(found.outputs),
        error=None,
        maybe_held=(),
        look_since=None,
        updated_at=now_iso(),
        **_service_state(found),
    )
    # Adopted done (a cancellation granted): noted, as a read notes it.
    adopted = model.noting_done(adopted, adopted.updated_at)
    holder = _holder(session.state, address, adopted)
    if holder is not None:
        held = session.state.resources.get(holder.address)
        if held is not None and held.not_found_at is not None and not holder.forgotten:
            # The service gave that record's ID to another object (a sandbox reset): the
            # object there may well be what this attempt created.
            there = held.found_instead or "it was not found there"
            raise StateError(
                f"{remote_id} is recorded as {holder}, but the service no longer holds that "
                f"record's object there (since {held.not_found_at}: {there}): the object at "
                f"{remote_id} now may be what the attempt of {address} created, the ID given "
                "again (a sandbox reset). Adopted while that record stands, the two records "
                "would name one object. Nothing was recorded",
                hint=f"`customs-batch state rm --gone {holder.address}`, then `customs-batch "
                f"state adopt {address} {remote_id}` again",
            )
        raise StateError(
            f"{remote_id} is already recorded as {holder}: adopting it would make two "
            f"records of one object (the next apply would send {address}'s values to it), "
            f"and unless that record is out of date, the attempt of {address} did not "
            "create it. Nothing was recorded",
            hint=f"adopt the object that attempt created, or `customs-batch state forget "
            f"{address}` if it created none (the next apply sends it again); if the service "
            f"may have given {remote_id} again (a sandbox reset), `customs-batch refresh` "
            f"first: it says whether {holder.address}'s object is still there",
        )
    elsewhere = _held_elsewhere(
        others if others is not None else ObjectsHeldElsewhere(), address, adopted
    )
    if elsewhere is not None:
        raise StateError(
            f"{remote_id} is already recorded as {elsewhere}: the attempt of {address} did "
            "not create it, and adopting it would make two environments write one object "
            f"(each apply would send its own document's values to it). Nothing was recorded",
            hint=f"adopt the object that attempt created, or `customs-batch state forget "
            f"{address}` if it created none (the next apply sends it again)",
        )
    # What the attempt sent names the object it made: the record's own IDs alone say more
    # (an object it was replacing is refused above), and no history is asked.
    _check_import(address, remote_id, record.spec, comparison, record, None, frozenset, sent=True)
    session.record(adopted)
    return adopted, comparison


def _refuse_a_replaced_object(address: Address, record: ResourceRecord, ident: str) -> None:
    """Refuse to adopt an object the record already holds, its last request not an update
    of it: the rejected object a lost resubmission was replacing."""
    if ident in model_of(address.kind).held(record):
        # (The intent of a resubmission keeps the rejected object it replaces.)
        raise StateError(
            f"{ident} is the object {address}'s last attempt was replacing (customs "
            "rejected it, and the corrected document was submitted again as a new one): "
            f"that attempt did not create it. Nothing was recorded",
            hint=f"adopt the object the resubmission created (`customs-batch refresh` lists "
            f"those created since that could be it), or `customs-batch state forget "
            f"{address}` if it created none (the next apply submits it again)",
        )


def _lost_update(model: KindModel, record: ResourceRecord) -> bool:
    """Whether the last request of ``record`` was an update of the object it holds (its
    answer lost), not a creation: a kind whose update is a call of its own."""
    update = model.update
    return (
        update is not None
        and update is not model.create
        and record.operation == update.value
        and model.identifier(record) not in (None, "")
    )


def _refuse_a_lost_update(
    address: Address, record: ResourceRecord, comparison: Comparison
) -> NoReturn:
    """``state adopt`` of an update whose answer was lost: it created no object, so none is
    adopted, whatever the ID given (its own, written otherwise, or another object's). Taken,
    an object whose fields that name it differ (a template group of another code and the
    same name: a colleague's, its ID given again after a sandbox reset) would be recorded as
    the document's, and the next apply would write the document into it."""
    ident = model_of(address.kind).identifier(record)
    message = (
        f"the last request of {address} was an update of {ident}, whose answer was lost: an "
        "update changes the object it is sent to and creates none, so there is no object of "
        "it to adopt. Nothing was recorded"
    )
    if record.not_found_at is None:
        hint = (
            f"`customs-batch apply` reads {ident} first and repeats the update when the "
            "service holds the object as its last answer or the update left it "
            "(`customs-batch plan` shows it)"
        )
    else:
        hint = (
            f"`customs-batch plan` says what was found at {ident}. If its object is gone, "
            f"`customs-batch state forget {address}` (the next apply sends its document as "
            f"new); if the object at {ident} is its own, changed there, `customs-batch state "
            f"forget {address}`, then `customs-batch import {address} {ident}`, which takes "
            "it only as import does (a template group under another code than its "
            f"document's only when this environment's history gave {address} that ID and "
            "its name is the document's)"
        )
    raise DiffersAtService(message, comparison, hint=hint)


def _adopt_unverified(
    session: StateSession,
    client: CustomsClient,
    address: Address,
    record: ResourceRecord,
    remote_id: str,
) -> tuple[ResourceRecord, Comparison]:
    """``record``'s object, which apply could not tell from another at its ID
    (``unverified``), taken as its own on the user's word, once the service is read holding
    the recorded ID: what that read gives of it is kept (``target_seen``), as the first
    write of a record that holds it keeps it, so later reads tell another object there."""
    model = model_of(address.kind)
    remote_id = model.canonical_id(remote_id, address)
    ident = model.identifier(record)
    if str(ident) != remote_id:
        raise StateError(
            f"{address} records {ident}, not {remote_id}: adopting confirms the object it "
            "records. Nothing was recorded",
            hint=f"`customs-batch state adopt {address} {ident}` once you checked that "
            f"{ident} is its object",
        )
    comparison = read_and_compare(client, address, remote_id, record.spec, sent=True)
    # What the read gives of the object that its spec does not describe, kept as apply keeps
    # it (``target_seen``): later reads tell another object there without a listing.
    read = model.refresh(client, [record]).get(record.address) if model.refresh else None
    seen = (
        {} if read is None else {k: v for k, v in read.remote_spec.items() if k not in record.spec}
    )
    adopted = record.with_changes(
        unverified=None, not_found_at=None, updated_at=now_iso(), target_seen=seen
    )
    session.record(adopted)
    return adopted, comparison


def import_object(
    session: StateSession,
    client: CustomsClient,
    address: Address,
    remote_id: str,
    spec: Mapping[str, JSON],
    *,
    where: Callable[[str], str],
    last_known: Callable[[], frozenset[str]],
    others: ObjectsHeldElsewhere | None = None,
) -> tuple[ResourceRecord, Comparison]:
    """Record an object that exists at the service as the document ``address``.

    Recorded as the service holds it: where a changeable field differs, or is not given
    back by the service (a group's templates, a declaration's parties), the next plan
    updates it; an object that differs where nothing can change it is refused. So is an
    object another record already stands for, a tombstone's included: one object, one
    record; an object a record of another state of the same service stands for
    (``others``, read only when asked: another environment would write it too); and one
    the kind's ``import_check`` refuses (a template group of another code,
    unless the state says ``address`` stood for it: ``last_known`` gives the IDs the history
    last gave it, read only when asked). ``where``: where the document writes a field. The
    record of a creation the service refused (nothing of it exists there, as after a
    template group's 409) is replaced; any other record of ``address`` is kept.
    """
    # As the service gives it, the form the records' IDs are compared in (``02``: ``2``).
    remote_id = model_of(address.kind).canonical_id(remote_id, address)
    existing = session.state.resources.get(str(address))
    if existing is not None and existing.status is RecordStatus.FORGOTTEN:
        _refuse_a_tombstone(address, existing, remote_id)
    if existing is not None and not existing.never_created:
        raise StateError(
            f"{address} is already in the state",
            hint=f"`customs-batch state rm --gone {address}` first to import another object "
            "(only if the one it records no longer exists at the service), or import under "
            "another name",
        )
    comparison = read_and_compare(client, address, remote_id, spec, sent=False)
    found = comparison.found
    record = ResourceRecord(
        str(address),
        RecordStatus.APPLIED,
        "import",
        comparison.spec,
        outputs=dict(found.outputs),
        updated_at=now_iso(),
        # A refused creation replaced here keeps what it had replaced before (a departure's
        # rejected declarations).
        superseded=existing.superseded if existing is not None else (),
        **_service_state(found),
    )
    # Imported done (a cancellation granted): noted, as a read notes it.
    record = model_of(address.kind).noting_done(record, record.updated_at)
    holder = _holder(session.state, address, record)
    if holder is not None and holder.replaced(remote_id):
        # Kept in that record's history only, as the rejected object its resubmission
        # replaced: neither its current object nor anything to import.
        holds = holder.current
        now = f" as {holds}" if holds is not None else ""
        both = f"{holds} and " if holds is not None else ""
        raise StateError(
            f"{remote_id} is the rejected declaration that the resubmission of {holder} "
            f"replaced (customs rejected it, and the corrected document was submitted again"
            f"{now}): {holder.address}'s record keeps it as the submission it replaced, and "
            f"importing it as {address} would make two records of one object. Nothing was "
            "recorded",
            hint=f"if {address} is {holder.address} renamed, `customs-batch state mv "
            f"{holder.address} {address}` moves its record, {both}the rejected {remote_id} "
            f"with it (nothing is sent); otherwise {remote_id} is not {address}'s to import: "
            f"import the ID of the declaration {address} declares, or let `customs-batch "
            f"apply` submit {address} as a new one",
        )
    if holder is not None:
        raise StateError(
            f"{remote_id} is already recorded as {holder}: importing it as {address} too "
            f"would send {address}'s values to that object. Nothing was recorded",
            hint=f"if {remote_id} is what {address} declares ({holder.address} renamed, or "
            f"its record wrong), `customs-batch state mv {holder.address} {address}` moves "
            f"the record (nothing is sent; {holder.address} may then import its own object); "
            f"otherwise import the ID of the object {address} declares",
        )
    twin = _declared_by(session.state, address, spec)
    if twin is not None:
        words = ", ".join(
            kept_identity(model_of(address.kind), session.state.resources[twin.address])
        )
        if twin.current is None:  # a creation whose outcome is unknown: ID may be it
            raise StateError(
                f"{twin} records what {address} declares ({words}), a request whose outcome "
                f"is unknown: importing {remote_id} as {address} would make a second record "
                "of that declaration. Nothing was recorded",
                hint=f"if {remote_id} is what that request created, `customs-batch state "
                f"adopt {twin.address} {remote_id}` records it (then `customs-batch state mv "
                f"{twin.address} {address}` if {address} is that document renamed); if it is "
                f"really another declaration, make {address} differ from that one in an "
                "identifying field, then import it",
            )
        raise StateError(
            f"{twin} records what {address} declares ({words}) at {twin.current}: importing "
            f"{remote_id} "
            f"as {address} would make a second record of that declaration, and the next "
            f"apply would send {address}'s values to {remote_id}, another object (the "
            "service gives back too little of it to tell them apart). Nothing was recorded",
            hint=f"if {address} is {twin.address} renamed, `customs-batch state mv "
            f"{twin.address} {address}` moves its record (nothing is sent; `customs-batch "
            f"plan` of the whole batch shows it moved when nothing else changed); if that "
            f"record's object no longer exists at the service, `customs-batch state rm --gone "
            f"{twin.address}` first; if it is really another declaration, make it differ from "
            "that one in an identifying field, then import it",
        )
    elsewhere = _held_elsewhere(
        others if others is not None else ObjectsHeldElsewhere(), address, record
    )
    declared = _declared_elsewhere(others, address, spec) if elsewhere is None else None
    if declared is not None:
        there, its = declared
        ident = model_of(address.kind).identifier(its)
        at = f" at {ident}" if ident not in (None, "") else ""
        words = ", ".join(_document_identity(address, spec) or ())
        raise StateError(
            f"{there} records what {address} declares ({words}){at}: importing {remote_id} "
            f"as {address} here would make a second record of that declaration, and the next "
            f"apply here would send {address}'s values to {remote_id}, another object (the "
            "service gives back too little of it to tell them apart). Nothing was recorded",
            hint="that environment manages the declaration already: leave it to that one; "
            f"if {address} is really another declaration, make it differ from that one in an "
            "identifying field, then import it",
        )
    if elsewhere is not None:
        raise StateError(
            f"{remote_id} is already recorded as {elsewhere}: importing it as {address} "
            "here too would make two environments write one object (each apply would send "
            "its own document's values to it). Nothing was recorded",
            hint=f"if {remote_id} is what {address} declares, that environment manages it "
            f"already: leave it to that one, or, if this environment is to manage it instead, "
            f"{elsewhere.release} first, then import it here; otherwise import the ID of the "
            f"object {address} declares here, or let `customs-batch apply` create it",
        )
    _check_import(address, remote_id, spec, comparison, existing, where, last_known)
    session.record(record)
    return record, _unsent_to(record, comparison)


def _check_import(
    address: Address,
    remote_id: str,
    spec: Mapping[str, JSON],
    comparison: Comparison,
    existing: ResourceRecord | None,
    where: Callable[[str], str] | None,
    last_known: Callable[[], frozenset[str]],
    *,
    sent: bool = False,
) -> None:
    """Refuse what the kind's ``import_check`` refuses (nothing recorded). The state says
    ``address`` stood for the object when the IDs its record holds (a refused creation's:
    none) or the history last gave it name the object's ID as the service gives it.
    ``sent``: ``spec`` is what the last request of ``address`` sent (``state adopt``)."""
    model = model_of(address.kind)
    if model.import_check is None:
        return
    outputs = comparison.found.outputs
    found = None if model.id_field is None else outputs.get(model.id_field)
    ident = remote_id if found is None else str(found)

    def its_own() -> bool:
        held = model.held(existing) if existing is not None else frozenset()
        return ident in held or ident in last_known()

    remote = comparison.found.remote_spec
    at = ImportAt(address, remote_id, spec, remote, where, its_own, sent=sent)
    refused = model.import_check(at)
    if refused is not None:
        raise DiffersAtService(refused.message, comparison, hint=refused.hint)


def _unsent_to(record: ResourceRecord, comparison: Comparison) -> Comparison:
    """``comparison``, saying why the fields the service does not give back are not sent
    to the object imported after all: it is in a state its kind sends nothing to (ended: a
    departure customs cancelled; rejected: one customs never accepted, which the next apply
    replaces by a new one, with them, as plan shows it)."""
    parsed = Address.parse(record.address)
    if parsed is None or not comparison.resent:
        return comparison
    model = model_of(parsed.kind)
    state = model.service_words(record)
    ident = model.identifier(record)
    if model.ended(record) is None and model.rejected(state, record) and model.resubmit:
        # The record lacks them, so the next plan resubmits the document: a new object.
        said = (
            f"not sent to {ident}, which is {state} at the service (customs never accepted "
            "it): the next apply submits the document as a new declaration that replaces it, "
            "with them (`customs-batch plan` shows it)"
        )
        return replace(comparison, unsent=said)
    if model.ended(record) is None and not model.rejected(state, record):
        return comparison
    said = (
        f"not sent by the next apply ({ident} is {state} at the service, and nothing is sent "
        "to it: `customs-batch plan` says the ways out)"
    )
    return replace(comparison, unsent=said)


def _refuse_a_tombstone(address: Address, tombstone: ResourceRecord, remote_id: str) -> None:
    """``address`` was forgotten by ``state rm``, and its object still exists: to take
    that object back is ``state restore``; another one only once it is gone."""
    held = sorted(model_of(address.kind).held(tombstone))
    kept = ", ".join(held) or "its object"
    if remote_id in held:
        hint = (
            f"`customs-batch state restore {address}` tracks {remote_id} again (nothing is "
            "read or sent)"
        )
    else:
        hint = (
            f"`customs-batch state rm --gone {address}` first to import another object (only "
            f"if {kept} no longer exists at the service), or import under another name"
        )
    raise StateError(
        f"{address} is in the state as a tombstone of {kept} (`state rm` forgot it)", hint=hint
    )


@dataclass(frozen=True)
class _Holder:
    """Another record that stands for an object: its address, and whether a tombstone."""

    address: str
    forgotten: bool
    current: str | None = None
    """The ID of the object the record stands for now (its kind's ``identifier``)."""

    def replaced(self, remote_id: str) -> bool:
        """Whether the record holds ``remote_id`` only as an object it replaced."""
        return self.current != remote_id

    def __str__(self) -> str:
        if self.forgotten:
            return f"the tombstone of {self.address} (forgotten by `customs-batch state rm`)"
        return self.address


def _holder(state: State, address: Address, record: ResourceRecord) -> _Holder | None:
    """The other record of ``address``'s kind, tombstones included, that already stands for
    an object ``record`` would stand for (each kind says which IDs its records hold)."""
    model = model_of(address.kind)
    wanted = model.held(record)
    if not wanted:
        return None
    prefix = f"{address.kind.value}/"
    for other_address in sorted(state.resources):
        # Only the records of the kind are parsed (a big state parses each when first used).
        if not other_address.startswith(prefix) or other_address == str(address):
            continue
        other = state.resources[other_address]
        if wanted & model.held(other):
            ident = model.identifier(other)
            current = None if ident in (None, "") else str(ident)
            return _Holder(other_address, other.status is RecordStatus.FORGOTTEN, current)
    return None


def _declared_by(state: State, address: Address, spec: Mapping[str, JSON]) -> _Holder | None:
    """The other record of ``address``'s kind, tombstones included, that declares what the
    document ``spec`` declares (the kind's identity), so that another object imported for
    it would be a second one of that declaration; records of nothing created aside. None
    where the identity cannot tell (:func:`_document_identity`)."""
    model = model_of(address.kind)
    mine = _document_identity(address, spec)
    if mine is None:
        return None
    prefix = f"{address.kind.value}/"
    for other_address in sorted(state.resources):
        if not other_address.startswith(prefix) or other_address == str(address):
            continue
        other = state.resources[other_address]
        if other.never_created or kept_identity(model, other) != mine:
            continue
        ident = model.identifier(other)
        current = None if ident in (None, "") else str(ident)
        return _Holder(other_address, other.status is RecordStatus.FORGOTTEN, current)
    return None


def _declared_elsewhere(
    others: ObjectsHeldElsewhere | None, address: Address, spec: Mapping[str, JSON]
) -> tuple[HeldElsewhere, ResourceRecord] | None:
    """The record of another state of the same service, tombstones there aside, that
    declares what the document ``spec`` declares, as :func:`_declared_by` compares them."""
    mine = _document_identity(address, spec)
    if others is None or mine is None:
        return None
    return others.declaring(address.kind, mine)


def _document_identity(address: Address, spec: Mapping[str, JSON]) -> tuple[str, ...] | None:
    """What the document ``spec`` declares (its kind's identity), where it tells: None for a
    kind without one, one that places documents in a lane (a movement's place is known only
    to the plan), and a reference not resolved yet."""
    model = model_of(address.kind)
    if model.identity is None or model.lane is not None:
        return None
    mine = model.identity(spec)
    if not mine or any("${ref:" in word for word in mine):
        return None
    return tuple(mine)


def _held_elsewhere(
    elsewhere: ObjectsHeldElsewhere, address: Address, record: ResourceRecord
) -> HeldElsewhere | None:
    """The record of ``address``'s kind in another state of the same service that stands
    for an object ``record`` would stand for (each kind says which IDs its records hold),
    tombstones there aside, as :class:`ObjectsHeldElsewhere` says."""
    return elsewhere.holding(address.kind, model_of(address.kind).held(record))


def refuse_a_tombstone_held_elsewhere(
    others: ObjectsHeldElsewhere,
    address: Address,
    tombstone: ResourceRecord,
    *,
    moved_to: Address | None = None,
) -> None:
    """``state restore`` of ``tombstone`` (or ``state mv`` of it to ``moved_to``, which
    tracks it again under that name) while a record of another state of the same service
    stands for its object (``others``, read only when asked): that environment took it over
    once this one let it go, and tracking it here again would make both write it."""
    elsewhere = _held_elsewhere(others, address, tombstone)
    if elsewhere is None:
        return
    ident = model_of(address.kind).identifier(tombstone)
    if moved_to is None:
        tracking, done, then = f"{address}", "restored", "restore it here"
    else:
        tracking = f"{address} as {moved_to}"
        done, then = "moved", f"`customs-batch state mv {address} {moved_to}` here"
    raise StateError(
        f"{ident} is recorded as {elsewhere}: tracking {tracking} again here would make two "
        "environments write one object (each apply would send its own document's values to "
        f"it). Nothing was {done}",
        hint=f"that environment manages it now: leave the tombstone of {address} here (it "
        f"sends nothing); if this environment is to write it again instead, "
        f"{elsewhere.release} first, then {then}",
    )


def refuse_tombstones_held_elsewhere(
    plan: Plan, state: State, others: ObjectsHeldElsewhere
) -> Plan:
    """``plan`` with each change that tracks a tombstone of ``state`` again (a document
    renamed from it, or asking the same request under a new name: apply would move its
    record to the new name and send to its object) refused while a record of another state
    of the same service stands for that object: that environment took it over once this one
    let it go, and both would write it. What depends on such a change and sends something is
    refused too. ``others`` is read only when the plan has such a change."""
    taking = tombstone_take_overs(plan, state)
    if not taking:
        return plan
    reasons: dict[Address, str] = {}
    for change, tombstone in taking:
        assert change.moved_from is not None  # a take-over names the record it takes
        earlier = change.moved_from
        elsewhere = _held_elsewhere(others, earlier, tombstone)
        if elsewhere is None:
            continue
        ident = model_of(earlier.kind).identifier(tombstone)
        reasons[change.address] = (
            f"it would take over the tombstone of {earlier} (forgotten by `customs-batch "
            f"state rm`) and track it again as {change.address}, but {ident} is recorded as "
            f"{elsewhere}: two environments would write one object (each apply would send "
            "its own document's values to it). Nothing is sent for it and the tombstone "
            f"stays. That environment manages it now: leave {change.address} out of this "
            "environment's manifests (the tombstone sends nothing); if this environment is to "
            f"write it again instead, {elsewhere.release} first, then plan again"
        )
    return refuse_changes(plan, reasons)


def creations_to_compare(plan: Plan) -> bool:
    """Whether ``plan`` creates something whose identity is known (what the other states of
    the service are compared with: :func:`refuse_creations_held_elsewhere`)."""
    return any(_a_creation(change) for change in plan.changes)


def _a_creation(change: PlannedChange) -> bool:
    return (
        change.action is Action.CREATE
        and change.operation.writes_state
        and change.moved_from is None
        and not change.unknown
        and bool(change.identity)
    )


def refuse_creations_held_elsewhere(plan: Plan, others: ObjectsHeldElsewhere) -> Plan:
    """``plan`` with each creation refused whose identity (what makes it the same thing at
    the service) a live record of another state of the same service recorded: a document
    that environment applied, planned here. Created, the service would hold it twice (a
    second declaration of the same goods, a second movement), and both environments would
    each write their own. What depends on such a change and sends something is refused
    too. ``others`` is read only when the plan has such a creation."""
    reasons: dict[Address, str] = {}
    for change in plan.changes:
        if not _a_creation(change):
            continue
        found = others.declaring(change.address.kind, tuple(change.identity))
        if found is None:
            continue
        holder, record = found
        model = model_of(change.address.kind)
        ident = model.identifier(record)
        what = f"{ident} at the service, recorded as {holder}," if ident is not None else holder
        then = (
            f"then `customs-batch import {change.address} {ident}` here"
            if ident is not None
            else "then plan again"
        )
        reasons[change.address] = (
            f"it declares what {what} declares ({', '.join(change.identity)}): created here "
            f"too, it would {model.sent_again} at the service, and two environments would "
            "write it. Nothing is sent for it. That environment "
            f"manages it: leave {change.address} out of this environment's manifests; if "
            f"this environment is to manage it instead, {holder.release} first, {then}"
        )
    return refuse_changes(plan, reasons)


def _a_write(change: PlannedChange) -> bool:
    return change.action in (Action.UPDATE, Action.RESUBMIT) and change.operation.writes_state


def refuse_writes_held_elsewhere(plan: Plan, state: State, others: ObjectsHeldElsewhere) -> Plan:
    """``plan`` with each change refused that sends something to an object (an update, a
    resubmission) a live record of another state of the same service stands for too: both
    environments would write it, each its own document's values (or, for a resubmission,
    each submit a new declaration in its place). ``import``, ``state adopt``, ``state
    push`` and ``state restore`` refuse to give one object to two states; a state folder
    copied from another environment's (its file ``environment`` then removed, as for an
    environment renamed) is how two come to hold it all the same. What depends on such a
    change and sends something is refused too. ``others`` is read only when the plan has
    such a change."""
    reasons: dict[Address, str] = {}
    for change in plan.changes:
        if not _a_write(change):
            continue
        address = change.moved_from or change.address
        record = state.resources.get(str(address))
        if record is None:
            continue
        elsewhere = _held_elsewhere(others, address, record)
        if elsewhere is None or _noted_gone(elsewhere):
            continue
        ident = model_of(address.kind).identifier(record)
        what = f"{ident}, which {address} records here," if ident is not None else str(address)
        reasons[change.address] = (
            f"{what} is also recorded as {elsewhere} (a state folder copied from that "
            "environment?): two environments would write one object, each apply sending its "
            "own document's values to it. Nothing is sent for it. If that environment "
            f"manages it, leave {change.address} out of this environment's manifests and "
            f"`customs-batch state rm {address}` here (its record becomes a tombstone, which "
            f"sends nothing); if this environment is to write it instead, {elsewhere.release} "
            "first, then plan again"
        )
    return refuse_changes(plan, reasons)


def _noted_gone(elsewhere: HeldElsewhere) -> bool:
    """Whether the other state's record found the service no longer holding its object, or
    holding another at its ID (a reset gave the ID again): it is not that object's writer."""
    try:
        record = elsewhere.other.state.resources.get(elsewhere.address)
    except CustomsBatchError:
        return False
    return record is not None and record.not_found_at is not None


def refuse_a_push_holding_one_object_twice(current: State, incoming: State) -> None:
    """``state push`` of ``incoming`` while one of its records holds an object another of its
    records of the kind stands for too, a tombstone included (a pulled copy edited by hand,
    one record given another's ID): the next apply would send that record's document's
    values to the other's object, which ``import`` and ``state adopt`` refuse the same way.
    Only what the push brings is compared: an ID the record of the same address in
    ``current`` already holds is not the push's doing; nor is an ID whose other holder
    ``refresh`` found gone from the service (the ID given again, after a sandbox reset)."""
    holders: dict[tuple[Kind, str], list[str]] = {}
    brought: list[tuple[str, Kind, frozenset[str]]] = []
    for address in sorted(incoming.resources):
        parsed = Address.parse(address)
        if parsed is None:
            continue
        record = incoming.resources[address]
        model = model_of(parsed.kind)
        ids = model.held(record)
        if not ids:
            continue
        if record.not_found_at is None:
            for ident in ids:
                holders.setdefault((parsed.kind, ident), []).append(address)
        before = current.resources.get(address)
        new = ids - model.held(before) if before is not None else ids
        if new and record.not_found_at is None:
            brought.append((address, parsed.kind, new))
    for address, kind, ids in brought:
        for ident in sorted(ids):
            others = [other for other in holders[(kind, ident)] if other != address]
            if not others:
                continue
            other = others[0]
            tombstone = incoming.resources[other].status is RecordStatus.FORGOTTEN
            what = " (a tombstone of `customs-batch state rm`)" if tombstone else ""
            raise StateError(
                f"{address} of the pushed state holds {ident}, which its record of {other}"
                f"{what} holds too: two records of one object (the next apply would send "
                f"{address}'s values to the object of {other}). Nothing was pushed",
                hint=f"correct the ID of {address} in the file (`customs-batch state pull` "
                f"prints the state as it is), or leave its record out and `customs-batch "
                f"import {address} ID` the object its document declares; if {address} is "
                f"{other} renamed, push the file without it and `customs-batch state mv "
                f"{other} {address}`",
            )


def refuse_a_push_held_elsewhere(
    others: ObjectsHeldElsewhere, current: State, incoming: State
) -> None:
    """``state push`` of ``incoming`` over ``current`` while a live record of ``incoming``
    holds an object a record of another state of the same service stands for (tombstones on
    either side aside, as for :func:`held_elsewhere`): both environments would write it.
    Only what the push brings is compared: an ID the record of the same address in
    ``current`` already holds is not the push's doing. Each record's IDs are looked up in
    ``others``' index, so a big state costs one pass of each."""
    wanted: dict[str, tuple[Kind, frozenset[str]]] = {}
    for address in sorted(incoming.resources):
        record = incoming.resources[address]
        parsed = Address.parse(address)
        if parsed is None or record.status is RecordStatus.FORGOTTEN:
            continue
        model = model_of(parsed.kind)
        ids = model.held(record)
        before = current.resources.get(address)
        if before is not None and before.status is not RecordStatus.FORGOTTEN:
            ids -= model.held(before)
        if ids:
            wanted[address] = (parsed.kind, ids)
    if not wanted:
        return
    found = [
        (address, ident, holder)
        for address, (kind, ids) in wanted.items()
        for ident in sorted(ids)
        if (holder := others.holder(kind, ident)) is not None
    ]
    if not found:
        return
    address, ident, elsewhere = found[0]
    env = elsewhere.other.environment
    there = f" --env {env}" if env is not None else ""
    more = (
        f" ({len(found) - 1} more record(s) of the pushed state the same way)" if found[1:] else ""
    )
    raise StateError(
        f"{address} of the pushed state holds {ident}, which is recorded as {elsewhere}"
        f"{more}: pushing it would make two environments write one object (each apply would "
        "send its own document's values to it). Nothing was pushed",
        hint=f"if this environment is to write it, {elsewhere.release} first, then push; "
        f"if that environment is to keep it, do the same, then `customs-batch state rm "
        f"{address}` here (a tombstone, which sends nothing) and `customs-batch state restore "
        f"{elsewhere.address}{there}` there",
    )


def _service_state(found: Found) -> dict[str, JSON]:
    if found.service_state is None:
        return {}
    return {"remote_status": found.service_state, "remote_errors": found.errors}


@dataclass(frozen=True)
class Drift:
    """One difference refresh found between the state and the service. ``missing``: the
    service no longer holds the object (not a change refresh can record: the record says
    when it was not found, and the user confirms it gone with ``state rm --gone``);
    ``another``, with it: what it holds at the recorded ID is another object (the record
    needs a decision: the service holds something there, not nothing)."""

    address: str
    message: str
    missing: bool = False
    another: bool = False


def refresh(
    session: StateSession, client: CustomsClient, drifts: list[Drift] | None = None
) -> list[Drift]:
    """Poll what the state knows; record new statuses and remote changes; report them.

    Each kind reads all of its recorded objects at once (one listing of the template
    groups, one request per declaration); kinds the API cannot read back are skipped.
    An object several records stand for (a departure and the party updates of it) is read
    once, and each of those records is given that one reading. Each drift is appended to
    ``drifts`` (a new list if none) as it is recorded, so a caller whose refresh a failed
    read stopped can still say what was recorded before.
    """
    if drifts is None:
        drifts = []
    with client.reading_once():
        _refresh(session, client, drifts)
    return drifts


def _refresh(session: StateSession, client: CustomsClient, drifts: list[Drift]) -> None:
    by_kind: dict[Kind, list[ResourceRecord]] = {}
    for address, record in sorted(session.state.resources.items()):
        parsed = Address.parse(address)
        if parsed is not None and (record.status is RecordStatus.APPLIED or _noted(record)):
            by_kind.setdefault(parsed.kind, []).append(record)
    # The kinds whose object a record of another kind stands for (a party update's
    # departure: ``restates``) last, once those records are read.
    told = _ToldRecords(session)
    for kind, records in sorted(by_kind.items(), key=lambda item: bool(model_of(item[0]).restates)):
        model = model_of(kind)
        read = model.refresh
        if read is None:
            continue
        answers = read(client, records)
        for record in records:
            if record.address not in answers:
                continue
            answer = answers[record.address]
            instead = (
                None
                if answer is None
                else model.another_than_recorded(
                    record, answer.remote_spec, _created_at(client, model, record, answer)
                )
                or told.another_there(model, record)
            )
            if answer is None or instead is not None:
                drifts.append(_not_found(session, model, record, instead))
            elif record.status.outcome_unknown:
                # Its object is there again: the note goes, and the next apply repeats the
                # request whose answer was lost (nothing else is known of it).
                session.record(record.with_changes(not_found_at=None, found_instead=None))
                again = "found at the service again: the next apply repeats its last request"
                drifts.append(Drift(record.address, again))
            elif (
                _gone_before(model, record)
                and not (back := _back_again(client, model, record)).same
            ):
                # Its object was gone: what is at its ID now may be another (a departure
                # resubmitted after a reset, given the number again), which never received
                # this record's write: made after it, it is another; where nothing tells,
                # the note stays.
                drifts.append(_not_found(session, model, record, back.instead))
            else:
                drifts.extend(_record_refresh(session, model, record, answer))


def _created_at(
    client: CustomsClient, model: KindModel, record: ResourceRecord, answer: Refreshed
) -> str | None:
    """When the service made the object now at ``record``'s ID, where its read tells too
    little to tell another object there (a departure's detail: ``KindModel.made_at``, the
    transit list) - the same test apply makes before a write to it, so that refresh does not
    take the status of a look-alike given the ID again (a sandbox reset). Not found within
    the pages read (a busy account), the read alone decides, as in apply."""
    if answer.created_at is not None or model.made_at is None:
        return answer.created_at
    made, _ = model.made_at(client, record)
    return made


@dataclass(frozen=True)
class _BackAgain:
    """What the service's creation time tells of the object at the ID of a record
    :func:`_gone_before`: ``same``, made before the record's last write (the object the
    record wrote to, back: a service restored); else ``instead``, made after it (another,
    which never received the write), or None where nothing tells."""

    same: bool
    instead: str | None = None


def _back_again(client: CustomsClient, model: KindModel, record: ResourceRecord) -> _BackAgain:
    """For a record :func:`_gone_before` whose object's ID holds an object again: when
    the service made that object (the restated kind's ``made_at``: a departure's, from the
    transit list), against the record's last write."""
    told = model.restates(record) if model.restates is not None else None
    made_at = model_of(told.kind).made_at if told is not None else None
    if made_at is None:
        return _BackAgain(same=False)
    made, _ = made_at(client, record)
    when = parse_time(made) if made is not None else None
    written = parse_time(record.updated_at) if record.updated_at else None
    if when is None or written is None:
        return _BackAgain(same=False)
    if when <= written + WRITE_SKEW:
        return _BackAgain(same=True)
    return _BackAgain(
        same=False,
        instead=f"{MADE_SINCE}{made!r} there, after its write recorded at {record.updated_at!r}",
    )


def _gone_before(model: KindModel, record: ResourceRecord) -> bool:
    """Whether ``record`` is of a write to another record's object (``restates``: a party
    update of a departure) that refresh found gone before: a declaration at its number
    now is not taken as the one it wrote to. The service gives no parties back, so
    nothing tells it received them; a departure resubmitted after a sandbox reset is given
    the number again. Taken as found, the plan would call the update unchanged although
    that declaration never got it; noted gone, `state rm --gone` and the next apply write
    it there again (a repeat of the same values, where it is the same declaration). Only
    when the service says it made the declaration before the record's last write is it
    the one written to, back (:func:`_back_again`)."""
    return (
        record.not_found_at is not None
        and model.restates is not None
        and model.restates(record) is not None
    )


class _ToldRecords:
    """The records of the object a record of another kind restates (``KindModel.restates``:
    a party update's departure), looked up by that object's output, the state looked
    through once a kind."""

    def __init__(self, session: StateSession) -> None:
        self._session = session
        self._index: dict[tuple[Kind, str], dict[str, list[str]]] = {}

    def another_there(self, model: KindModel, record: ResourceRecord) -> str | None:
        """Where this refresh (or an earlier one, or apply) found the object of a record
        that stands for ``record``'s no longer at its ID, or another object there (a
        departure's, after a sandbox reset gave its number to another client): what it found
        instead, in words. ``record``'s answer came from that same ID, so it is not its
        object's either: its status is not taken from it (a party update of departure 7003
        would have recorded the status of the other client's 7003)."""
        told = model.restates(record) if model.restates is not None else None
        if told is None:
            return None
        key = (told.kind, told.output)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = by_output(
                self._session.state.resources, told.kind.value, told.output
            )
        resources = self._session.state.resources
        for address in index.get(str(told.value), ()):
            current = resources.get(address)  # as this refresh left it
            if current is not None and current.not_found_at is not None:
                there = current.found_instead or "its object was not found there"
                return f"the record of {address}, which stands for it, says: {there}"
        return None


def _noted(record: ResourceRecord) -> bool:
    """A record whose last request's outcome is unknown (an update whose answer was lost)
    that apply noted its object not found, or another object at its ID (the repeat reads
    it first): read again, so that the note goes once the service holds it again."""
    return record.status.outcome_unknown and record.not_found_at is not None


def _not_found(
    session: StateSession, model: KindModel, record: ResourceRecord, instead: str | None = None
) -> Drift:
    """The service no longer holds the object (``instead``: it holds another object at its
    ID, differing so): noted on the record (when first seen), its status and outputs kept
    as last known."""
    since = record.not_found_at
    if since is None or instead != record.found_instead:
        since = since or now_iso()
        session.record(record.with_changes(not_found_at=since, found_instead=instead))
    words = model.not_found_words(record.address, record, since, instead)
    return Drift(record.address, words, missing=True, another=instead is not None)


def _record_refresh(
    session: StateSession, model: KindModel, record: ResourceRecord, answer: Refreshed
) -> list[Drift]:
    found: list[Drift] = []
    changes: dict[str, JSON] = {}
    if record.not_found_at is not None:
        found.append(Drift(record.address, "found at the service again"))
        changes["not_found_at"] = None
        changes["found_instead"] = None
    if answer.service_state is not None and (
        answer.service_state != record.remote_status or answer.errors != record.remote_errors
    ):
        before = model.service_words(record) or record.outputs.get("status") or "unknown"
        if before != answer.service_state or answer.errors != record.remote_errors:
            # (A state known from the answer, read for the first time, is no change.)
            found.append(Drift(record.address, f"status {before} -> {answer.service_state}"))
        changes.update(remote_status=answer.service_state, remote_errors=answer.errors)
    remote = {k: v for k, v in answer.remote_spec.items() if v != record.spec.get(k, v)}
    if remote:
        found += [
            Drift(
                record.address, f"{k} is {v!r} at the service, {record.spec.get(k)!r} in the state"
            )
            for k, v in remote.items()
        ]
        changes["spec"] = {**record.spec, **remote}
    if answer.outputs and dict(answer.outputs) != dict(record.outputs):
        changes["outputs"] = dict(answer.outputs)
    # Done as recorded, or as read now (a cancellation granted): noted, and kept, so that
    # a later state may be read undone (``KindModel.reading``), not refused.
    noted = model.noting_done(record, record.updated_at or now_iso())
    if changes:
        noted = record.with_changes(**changes, done_at=noted.done_at, updated_at=now_iso())
        noted = model.noting_done(noted, noted.updated_at)
    if noted is not record:
        session.record(noted)
    return found


@dataclass(frozen=True)
class StatusEntry:
    """Where one recorded declaration (or cancellation) stands, as last known.

    ``lifecycle`` is the record's own word: ``applied``, ``not-found`` (applied, and
    ``refresh`` found it no longer at the service: ``state rm --gone`` once confirmed),
    ``forgotten`` (a tombstone of ``state rm``), ``needs-decision`` (the outcome of the last request is unknown, or apply
    could not tell its object from another at its ID, ``unverified``, and the next plan
    holds it for a decision), ``unknown`` (the outcome is unknown, and the next
    apply repeats the request safely), ``in-flight`` (sent by a run that still holds the
    state's lock and has not recorded the answer yet) or ``refused`` (the service refused
    it; nothing was created). ``service_state`` is the
    object's state at the service (``ready``, ``invalid``, ``cancellation_requested``…),
    None where the service holds none of it (``not-found``, ``refused``, an unknown outcome);
    ``rejected``: customs never accepted it; ``pending``: customs has not decided yet.
    """

    address: str
    lifecycle: str
    identifier: Scalar = None
    service_state: str | None = None
    rejected: bool = False
    pending: bool = False
    errors: tuple[JSON, ...] = ()
    message: str = ""
    ended: bool = False
    """The object no longer stands at the service (a departure customs cancelled): the
    next plan holds it for a decision, ``message`` says which."""
    undone: bool = False
    """What its request did is undone at the service (a cancellation whose declaration is
    ``ready`` again, a HAWB active again): the next apply sends it again."""

    @property
    def blocks(self) -> bool:
        """Whether it is not done and needs more than waiting: rejected at the service,
        not found there, ended there, undone there (the next apply sends it again), or a
        decision to make."""
        return (
            self.rejected
            or self.ended
            or self.undone
            or self.lifecycle in ("needs-decision", "not-found")
        )

    def to_json(self) -> dict[str, JSON]:
        return {
            "address": self.address,
            "lifecycle": self.lifecycle,
            "id": self.identifier,
            "serviceState": self.service_state,
            "rejected": self.rejected,
            "pending": self.pending,
            "ended": self.ended,
            "undone": self.undone,
            "errors": list(self.errors),
            "message": self.message,
        }


def _unknown_entry(
    model: KindModel, address: Address, record: ResourceRecord, ident: Scalar
) -> StatusEntry:
    """An object whose last request got no answer: ``needs-decision`` when the next plan
    holds it for one (a departure), ``unknown`` when it repeats it safely (a cancellation,
    a movement with its recorded Idempotency-Key)."""
    decision = model.unknown_outcome(address, record, datetime.now(UTC))
    if decision.action is Action.NEEDS_DECISION:
        message = "outcome of the last request unknown"
        if record.not_found_at is not None:  # and its object not found, or another there
            message = decision.reason
        return StatusEntry(str(address), "needs-decision", ident, message=message)
    message = f"outcome of the last request unknown: the next apply repeats it ({decision.reason})"
    return StatusEntry(str(address), "unknown", ident, message=message)


@dataclass(frozen=True)
class RestatedRecords:
    """For a record whose kind's answer tells the state of an object of another kind
    (``KindModel.restates``: a party update's departure), the record ``state`` holds of that
    object: its applied record of that kind whose output names it (an index built once per
    kind and output). That record is what the object's own updates and ``refresh`` change;
    the record of the write keeps what its answer said when it was sent."""

    state: State
    _index: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)

    def of(self, record: ResourceRecord) -> tuple[Restated, ResourceRecord] | None:
        """What ``record``'s answer restates and the record of it; None when its kind
        restates nothing, or the state records no such object (a declaration made
        elsewhere)."""
        parsed = Address.parse(record.address)
        model = model_of(parsed.kind) if parsed is not None else None
        told = model.restates(record) if model is not None and model.restates else None
        if told is None:
            return None
        address = self._by(told.kind.value, told.output).get(str(told.value))
        other = self.state.resources.get(address) if address else None
        return None if other is None else (told, other)

    def _by(self, kind: str, output: str) -> dict[str, str]:
        key = (kind, output)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = {}
            resources = self.state.resources
            for address in [a for a in resources if a.startswith(f"{kind}/")]:
                found = resources.get(address)
                if found is None or found.status is not RecordStatus.APPLIED:
                    continue
                value = found.outputs.get(output)
                if value is not None:
                    index.setdefault(str(value), address)
        return index


def status_entries(state: State, in_flight: InFlight | None = None) -> list[StatusEntry]:
    """Every recorded object whose kind has a state at the service worth following
    (declarations, cancellations), in address order. ``in_flight``: for the time a record
    whose outcome is unknown was written, why it is a request of a run still holding the
    state's lock (:func:`customs_batch.state.lock.in_flight_of`): ``in-flight``, not a
    decision to make. A write whose answer tells the state of an object the state records
    (a party update of a departure of the state) shows that object's state as its record
    holds it (:class:`RestatedRecords`), not the one of the time it was sent."""
    entries: list[StatusEntry] = []
    restated = RestatedRecords(state)
    for address, record in sorted(state.resources.items()):
        parsed = Address.parse(address)
        if parsed is None or not model_of(parsed.kind).has_status:
            continue
        model = model_of(parsed.kind)
        ident = model.identifier(record)
        if record.status is RecordStatus.FORGOTTEN:
            entries.append(StatusEntry(address, "forgotten", ident))
        elif running := running_request(in_flight, record):
            entries.append(StatusEntry(address, "in-flight", ident, pending=True, message=running))
        elif record.status.outcome_unknown:
            entries.append(_unknown_entry(model, parsed, record, ident))
        elif record.never_created:
            message = record.error.message if record.error else ""
            entries.append(StatusEntry(address, "refused", message=message))
        elif record.unverified is not None:
            # apply could not tell its object from another at its ID: held for a decision,
            # as the plan holds it, and no state at the service shown as its object's.
            message = unverified_words(address, ident, record.unverified)
            entries.append(StatusEntry(address, "needs-decision", ident, message=message))
        elif record.not_found_at is not None:
            # The service no longer holds it: no state there to show (the last one read is
            # history, and `ready` beside it would say the service holds it ready).
            entries.append(
                StatusEntry(
                    address,
                    "not-found",
                    ident,
                    message=model.not_found_words(
                        address, record, record.not_found_at, record.found_instead
                    ),
                )
            )
        else:
            record = as_restated(record, restated.of(record))
            words = model.service_words(record) or record.outputs.get("status")
            last = str(words) if words is not None else None
            ended = model.ended(record)
            entries.append(
                StatusEntry(
                    address,
                    "applied",
                    ident,
                    last,
                    message=ended or "",
                    ended=ended is not None,
                    rejected=model.rejected(last, record),
                    # Not decided yet, as results says: a cancellation requested, a
                    # departure customs is still processing.
                    pending=model.undecided(last) or last in model.processing_states,
                    errors=tuple(record.remote_errors),
                    undone=model.undone(last, record),
                )
            )
    return entries


def as_restated(
    record: ResourceRecord, found: tuple[Restated, ResourceRecord] | None
) -> ResourceRecord:
    """``record`` with the object's state at the service (its status word, errors and the
    outputs both records hold) as the record of the object it restates holds them."""
    if found is None:
        return record
    told, other = found
    shared = {
        k: other.outputs[k] for k in record.outputs if k in other.outputs and k != told.output
    }
    return record.with_changes(
        outputs={**record.outputs, **shared},
        remote_status=other.remote_status,
        remote_errors=other.remote_errors,
    )


def status_lines(state: State) -> list[str]:
    """One line per entry of :func:`status_entries`, with the service's errors under it."""
    return [line for entry in status_entries(state) for line in entry_lines(entry)]


def entry_lines(entry: StatusEntry) -> list[str]:
    """How ``status`` shows one entry: a line, and the service's errors under it."""
    ident = "" if entry.identifier is None else str(entry.identifier)
    if entry.lifecycle == "forgotten":
        return [f"{entry.address}  {ident}  forgotten".replace("    ", "  ")]
    if entry.lifecycle in ("needs-decision", "in-flight"):
        return [f"{entry.address}  {entry.lifecycle}  ({entry.message})"]
    if entry.lifecycle == "not-found":
        return [f"{entry.address}  {ident}  not-found  ({entry.message})"]
    if entry.lifecycle == "refused":
        return [f"{entry.address}  refused  {entry.message}".rstrip()]
    last = entry.service_state or "unknown"
    mark = "  rejected" if entry.rejected else ""
    if entry.ended:
        mark = f"  ended ({entry.message})"
    if entry.pending:
        mark = "  pending (not decided yet: `customs-batch refresh` reads it)"
    if entry.undone:
        mark = "  undone (what it did is undone at the service: the next apply sends it again)"
    errors = f"  {len(entry.errors)} error(s)" if entry.errors else ""
    # In words, as apply --wait and plan give them (``E1 totalWeight: weight mismatch``), not
    # as a Python dict.
    return [f"{entry.address}  {ident}  {last}{mark}{errors}"] + [
        f"    {describe_error(error)}" for error in entry.errors
    ]


@dataclass(frozen=True)
class GoneCheck:
    """What the service said when asked whether the object of a record is gone
    (``state rm --gone``): ``words`` for the user, whether it was ``checked`` at all (a
    record without a recorded ID)."""

    words: str
    checked: bool


def check_gone(client: CustomsClient, record: ResourceRecord) -> GoneCheck:
    """Ask the service whether the object ``record`` stands for no longer exists, before
    ``state rm --gone`` removes its record for good (the next apply may then send the same
    declaration again). Refused with a :class:`StateError` while the service still holds it,
    and while the record's last request has an unknown outcome (the service may hold what it
    sent under an ID nobody recorded), and for a kind the API cannot read back (a movement):
    nothing could confirm it gone."""
    address = record.address
    kind = Address.parse(address)
    was = record.status.value if record.forgotten_from is None else record.forgotten_from
    if was in {status.value for status in RecordStatus if status.outcome_unknown}:
        first = (
            f"`customs-batch state restore {address}` tracks it again; then "
            if record.status is RecordStatus.FORGOTTEN
            else ""
        )
        raise StateError(
            f"{address}: the outcome of its last request is unknown, so the service may hold "
            "what it sent under an ID nobody recorded. Nothing was removed",
            hint=f"{first}`customs-batch refresh` (or the next apply) looks for it at the "
            f"service: `customs-batch state adopt {address} ID` if it was created, or "
            f"`customs-batch state forget {address}` if it was not",
        )
    if kind is None:  # not an address: nothing of it can be read
        return GoneCheck("not checked at the service: not an address", checked=False)
    model = model_of(kind.kind)
    ident = model.identifier(record)
    named = f"{model.id_field} {ident}"
    tombstone = (
        ""
        if record.status is RecordStatus.FORGOTTEN
        else f"`customs-batch state rm {address}` stops tracking it and keeps a tombstone; "
    )
    if model.refresh is None:
        # Nothing can confirm it gone: removing the record on the user's word alone would let
        # the next apply send a second object (a second movement) while the first stands.
        correct = (
            "a wrong one is corrected by a new one: once its document is out of the "
            "manifests and its record forgotten (`state rm`), a document with another request "
            "is sent as the correcting one"
            if model.corrected_by_a_new_one
            else "its tombstone keeps it from being sent again"
        )
        raise StateError(
            f"{address}: the API gives no way to read {a_or_an(kind.kind.value)} back, so "
            "customs-batch cannot check that the service no longer holds it, and removing its "
            "record for good would let the next apply send it again. Nothing was removed",
            hint=f"{tombstone}{correct}",
        )
    if ident in (None, ""):
        return GoneCheck("not checked at the service: no ID of it is recorded", checked=False)
    found = model.refresh(client, [record])
    if record.address not in found:
        return GoneCheck("not checked at the service: no ID of it is recorded", checked=False)
    now = found[record.address]
    if now is None:
        return GoneCheck(f"the service no longer holds {named}", checked=True)
    # The test refresh and apply make: a look-alike made at the ID after the record's write
    # (a departure's number given again after a reset) is another object, which refresh
    # noted so, naming this way out.
    instead = model.another_than_recorded(
        record, now.remote_spec, _created_at(client, model, record, now)
    )
    if instead is not None:
        return GoneCheck(f"the service holds another object at {named} ({instead})", checked=True)
    if _gone_before(model, record):
        return GoneCheck(
            f"refresh found {named} gone since {record.not_found_at}: what the service holds "
            "there now is not taken as the object it wrote to",
            checked=True,
        )
    state = now.service_state
    if state is not None and (model.rejected(state, record) or state in model.ended_states):
        return GoneCheck(f"the service holds {named} as {state}", checked=True)
    shown = f" ({state})" if state else ""
    raise StateError(
        f"{address} still exists at the service, which holds {named}{shown}: removing its "
        "record for good would let the next apply send it again. Nothing was removed",
        hint=f"{tombstone}`--gone` is for an object that no longer exists at the service "
        "(cancelled, deleted, or never accepted), once the service shows it so",
    )


SERVICE_CHECKS = 3
"""Recorded objects read back, at most, to tell whether a service the environment names
anew is the one its state was written for."""


def differs_from_the_recorded_service(client: CustomsClient, state: State) -> str | None:
    """Why the service ``client`` reaches is not the one ``state``'s records were written
    for, or None when it holds the first :data:`SERVICE_CHECKS` of them that its API reads
    back (an object made by customs-batch or imported), as they were recorded: the same
    object at the same ID, with every field it gives back as recorded. Records of a kind
    the API cannot read back by ID (a movement) are no evidence either way."""
    checked = 0
    silent: set[str] = set()
    """Kinds whose objects the API gives nothing back of (a movement): their other records
    are passed over unparsed."""
    resources = state.resources
    peek = resources.peek if isinstance(resources, Records) else resources.__getitem__
    for address in resources:
        kind_text = address.partition("/")[0]
        if kind_text in silent:
            continue
        parsed = Address.parse(address)
        if parsed is None:
            continue
        record = peek(address)  # not kept parsed: a state of 100,000 may be looked through
        if record.status is not RecordStatus.APPLIED or record.never_created:
            continue
        model = model_of(parsed.kind)
        ident = model.identifier(record)
        if ident is None:
            continue
        try:
            found = model.read_back(client, parsed, str(ident), record.spec)
        except NotFoundError as exc:
            return f"{address} is recorded as {ident}, and this service says: {exc.message}"
        except ServiceError:
            raise  # no word on the object (no answer, refused, 5xx): the command stops
        except CustomsBatchError as exc:  # the kind's own: not there (a group not listed)
            return f"{address} is recorded as {ident}, and this service says: {exc.message}"
        if not found.remote_spec:
            silent.add(kind_text)  # nothing given back to compare, for any of its kind
            continue
        differing = sorted(
            name
            for name, value in found.remote_spec.items()
            if name in record.spec and record.spec[name] != value
        )
        if differing:
            return (
                f"{address} is recorded as {ident}, and this service's {ident} differs in "
                f"{', '.join(differing)}"
            )
        checked += 1
        if checked >= SERVICE_CHECKS:
            break
    return None
