"""The diff: what the manifests ask for against what the state records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

from customs_batch.kinds import Address, Kind
from customs_batch.manifest.document import JSON, Document
from customs_batch.planning.graph import dependencies, dependency_order
from customs_batch.planning.model import Action, Operation, Plan, PlannedChange
from customs_batch.planning.references import resolve
from customs_batch.state.model import RecordStatus, ResourceRecord, State

IDEMPOTENCY_WINDOW = timedelta(hours=24)
"""How long the service honours an Idempotency-Key (API document, Limits)."""

PARTY_FIELDS = frozenset({"Principal", "Consignor", "Consignee"})
TEMPLATE_GROUP_MUTABLE = frozenset({"name", "code", "isDefault", "DeclarationTemplates"})

CREATE_OPERATION = {
    Kind.TEMPLATE_GROUP: Operation.CREATE_TEMPLATE_GROUP,
    Kind.DEPARTURE_DECLARATION: Operation.SUBMIT_DEPARTURE,
    Kind.TRANSIT_PARTY_UPDATE: Operation.UPDATE_TRANSIT_PARTIES,
    Kind.MOVEMENT: Operation.CREATE_MOVEMENT,
    Kind.HAWB_DEACTIVATION: Operation.DEACTIVATE_HAWB,
    Kind.EXPORT_CANCELLATION: Operation.CANCEL_EXPORT,
}


def plan_changes(
    documents: Sequence[Document],
    state: State,
    *,
    now: datetime | None = None,
    inputs_digest: str = "",
    orphans: bool = True,
) -> Plan:
    """Compare ``documents`` with ``state`` and return the plan, in dependency order, with
    the addresses the state holds but the manifests no longer name at the end (orphaned;
    left out with ``orphans=False``, when only a part of the manifests was selected).
    """
    now = now or datetime.now(UTC)
    deps = dependencies(documents)

    def lookup(address: Address, field: str) -> JSON:
        record = state.resources.get(str(address))
        if record is None or record.status is not RecordStatus.APPLIED:
            raise KeyError(field)
        return record.outputs[field]

    changes: list[PlannedChange] = []
    for doc in dependency_order(documents, deps):
        spec, unknown = resolve(dict(doc.spec), lookup)
        decided = _decide(doc, spec, state.resources.get(str(doc.address)), now)
        changes.append(
            PlannedChange(
                address=doc.address,
                action=decided.action,
                operation=decided.operation,
                reason=decided.reason,
                spec=spec,
                unknown=tuple(unknown),
                changed=decided.changed,
                depends_on=deps[doc.address],
                idempotency_key=decided.idempotency_key,
            )
        )
    named = {str(doc.address) for doc in documents}
    for address in sorted(set(state.resources) - named) if orphans else ():
        parsed = Address.parse(address)
        if parsed is None:
            continue
        changes.append(
            PlannedChange(
                address=parsed,
                action=Action.ORPHANED,
                operation=Operation.NONE,
                reason="recorded in the state but no longer in the manifests; the API cannot "
                f"delete it. `customs-batch state rm {address}` forgets it",
            )
        )
    return Plan(tuple(changes), state.lineage, state.serial, inputs_digest)


class _Decision:
    def __init__(
        self,
        action: Action,
        operation: Operation,
        reason: str = "",
        changed: tuple[str, ...] = (),
        idempotency_key: str | None = None,
    ) -> None:
        self.action = action
        self.operation = operation
        self.reason = reason
        self.changed = changed
        self.idempotency_key = idempotency_key


def _decide(
    doc: Document,
    spec: Mapping[str, JSON],
    record: ResourceRecord | None,
    now: datetime,
) -> _Decision:
    create = CREATE_OPERATION[doc.kind]
    if record is None:
        return _Decision(Action.CREATE, create)
    if record.status is RecordStatus.FAILED and not record.outputs:
        message = record.error.message if record.error else "unknown error"
        return _Decision(Action.CREATE, create, f"the last attempt was refused: {message}")
    if record.status is RecordStatus.PENDING:
        return _decide_pending(doc, spec, record, now)
    changed = _changed_fields(record.spec, spec)
    if not changed:
        return _Decision(Action.NO_CHANGE, Operation.NONE)
    return _decide_change(doc, changed)


def _decide_pending(
    doc: Document, spec: Mapping[str, JSON], record: ResourceRecord, now: datetime
) -> _Decision:
    """An earlier write whose outcome was never recorded."""
    exists = bool(record.outputs)
    edited = _changed_fields(record.spec, spec)
    if doc.kind is Kind.MOVEMENT and edited:
        # The key is bound to the body first sent: with another body the service refuses
        # it (422), and a new key would create a second movement if the first was made.
        return _Decision(
            Action.NEEDS_DECISION,
            Operation.NONE,
            "the outcome of the last attempt is unknown and the document changed since "
            f"(changed: {', '.join(edited)}), so it cannot be re-sent with its "
            "Idempotency-Key: revert the change to re-send it, or check the shipment's "
            f"movements, then `customs-batch state adopt {doc.address} MOVEMENT_ID` or "
            f"`customs-batch state forget {doc.address}`",
            edited,
        )
    if doc.kind is Kind.MOVEMENT:
        started = _parse_time(record.updated_at)
        if record.idempotency_key and started and now - started < IDEMPOTENCY_WINDOW:
            return _Decision(
                Action.CREATE,
                Operation.RESEND_MOVEMENT,
                "the outcome of the last attempt is unknown; it is re-sent with its recorded "
                "Idempotency-Key, so the service replays it instead of creating a second one",
                idempotency_key=record.idempotency_key,
            )
        return _Decision(
            Action.NEEDS_DECISION,
            Operation.NONE,
            "the outcome of the last attempt is unknown and its Idempotency-Key has expired "
            "(24 h): check the shipment's movements, then `customs-batch state adopt "
            f"{doc.address} MOVEMENT_ID` or `customs-batch state forget {doc.address}`",
        )
    if doc.kind is Kind.DEPARTURE_DECLARATION and not exists:
        return _Decision(
            Action.NEEDS_DECISION,
            Operation.NONE,
            "the submission's outcome is unknown and the API offers no idempotency for "
            "departure declarations, so it is never re-sent blindly: look for it with "
            f"`customs-batch get transit`, then `customs-batch state adopt {doc.address} ID`, "
            f"or `customs-batch state forget {doc.address}` to submit it again",
        )
    if doc.kind is Kind.TEMPLATE_GROUP and not exists:
        return _Decision(
            Action.CREATE,
            Operation.FIND_OR_CREATE_TEMPLATE_GROUP,
            "the outcome of the last attempt is unknown; the group is looked up by its "
            "unique code first and created only if it is not there",
        )
    operation = _recorded_operation(record) if exists else CREATE_OPERATION[doc.kind]
    return _Decision(
        Action.UPDATE if exists else Action.CREATE,
        operation,
        "the outcome of the last attempt is unknown; the request is safe to repeat",
    )


def _decide_change(doc: Document, changed: tuple[str, ...]) -> _Decision:
    fields = ", ".join(changed)
    if doc.kind is Kind.TEMPLATE_GROUP:
        fixed = [name for name in changed if name not in TEMPLATE_GROUP_MUTABLE]
        if fixed:
            return _refuse(doc, f"{', '.join(fixed)} of a template group cannot be changed")
        return _Decision(
            Action.UPDATE, Operation.UPDATE_TEMPLATE_GROUP, f"changes {fields}", changed
        )
    if doc.kind is Kind.DEPARTURE_DECLARATION:
        fixed = [name for name in changed if name not in PARTY_FIELDS]
        if fixed:
            return _refuse(
                doc, f"{', '.join(fixed)} of a submitted departure declaration cannot change"
            )
        return _Decision(
            Action.UPDATE, Operation.UPDATE_DEPARTURE_PARTIES, f"changes {fields}", changed
        )
    if doc.kind is Kind.TRANSIT_PARTY_UPDATE:
        return _Decision(
            Action.UPDATE, Operation.UPDATE_TRANSIT_PARTIES, f"re-applies {fields}", changed
        )
    what = {
        Kind.MOVEMENT: "a movement is immutable once created",
        Kind.HAWB_DEACTIVATION: "a HAWB deactivation cannot be changed once done",
        Kind.EXPORT_CANCELLATION: "a cancellation cannot be changed once sent",
    }[doc.kind]
    return _refuse(doc, f"{what} (changed: {fields})")


def _refuse(doc: Document, why: str) -> _Decision:
    return _Decision(
        Action.REFUSED,
        Operation.NONE,
        f"{why}; the API cannot make this change. Revert the change, or give the document a "
        f"new name to send a new request (then `customs-batch state rm {doc.address}` forgets "
        "the old one)",
    )


def _recorded_operation(record: ResourceRecord) -> Operation:
    try:
        return Operation(record.operation)
    except ValueError:
        return Operation.NONE


def _changed_fields(recorded: Mapping[str, JSON], desired: Mapping[str, JSON]) -> tuple[str, ...]:
    """Top-level fields whose value differs. A value known only after apply keeps its
    `${ref:…}` text, so it differs from any recorded value and counts as changed.
    """
    names = sorted(set(recorded) | set(desired))
    return tuple(name for name in names if recorded.get(name) != desired.get(name))


def _parse_time(text: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
