"""The diff: what the manifests ask for against what the state records.

Generic: each kind's model (``customs_batch.kinds.registry``) says which fields change in
place and through which call, what an unknown outcome leads to, and which of its service
states mean that customs never accepted it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

from customs_batch.collector import bulk
from customs_batch.kinds import Address
from customs_batch.kinds._base import Decision, KindModel, UnknownOutcome
from customs_batch.kinds.registry import model_of
from customs_batch.manifest.document import JSON, Document
from customs_batch.planning.graph import dependencies, dependency_order
from customs_batch.planning.model import Action, FieldChange, Operation, Plan, PlannedChange
from customs_batch.planning.references import resolve
from customs_batch.state.model import RecordStatus, ResourceRecord, State
from customs_batch.state.records import Records


def plan_changes(
    documents: Sequence[Document],
    state: State,
    *,
    now: datetime | None = None,
    inputs_digest: str = "",
    orphans: bool = True,
    consume: bool = False,
) -> Plan:
    """Compare ``documents`` with ``state`` and return the plan, in dependency order, with
    the addresses the state holds but the manifests no longer name at the end (orphaned,
    or dropped when nothing of them exists at the service; left out with ``orphans=False``,
    when only a part of the manifests was selected).

    With ``consume`` the caller gives ``documents`` (a list) up: it is emptied, and each
    document is dropped as soon as its change is planned, so that 100,000 documents and
    their plan are not all in memory at once (a change keeps its spec, not its document).
    """
    with bulk():
        return _plan(documents, state, now or datetime.now(UTC), inputs_digest, orphans, consume)


def _plan(
    documents: Sequence[Document],
    state: State,
    now: datetime,
    inputs_digest: str,
    orphans: bool,
    consume: bool,
) -> Plan:
    deps = dependencies(documents)
    recorded = _reader(state.resources)

    def lookup(address: Address, field: str) -> JSON:
        record = recorded(str(address))
        if record is None or record.status is not RecordStatus.APPLIED:
            raise KeyError(field)
        return record.outputs[field]

    changes: list[PlannedChange] = []
    # An empty state (a first plan of a bulk load) has no orphans: no set of every name.
    named = {str(doc.address) for doc in documents} if orphans and state.resources else set()
    pending = dependency_order(documents, deps)
    if consume and isinstance(documents, list):
        documents.clear()
    pending.reverse()
    while pending:
        doc = pending.pop()  # the last reference when consumed: freed at the next one
        spec, unknown = resolve(doc.spec, lookup)
        record = recorded(str(doc.address))
        values = field_changes(record.spec, spec) if record is not None else ()
        decided = _decide(doc.address, spec, record, values, now)
        changes.append(
            PlannedChange(
                address=doc.address,
                action=decided.action,
                operation=decided.operation,
                reason=decided.reason,
                spec=spec,
                unknown=tuple(unknown),
                changed=_top_level(values),
                depends_on=deps[doc.address],
                idempotency_key=decided.idempotency_key,
                values=values if decided.action is not Action.CREATE else (),
                origin=row_origin(doc),
            )
        )
    for address in sorted(set(state.resources) - named) if orphans else ():
        parsed = Address.parse(address)
        if parsed is not None:
            changes.append(_gone(parsed, recorded(address) or state.resources[address]))
    return Plan(tuple(changes), state.lineage, state.serial, inputs_digest)


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
    where = doc.source.location(())
    cell = where.cell()
    return f"{where.file}, {cell}" if cell else ""


def _gone(address: Address, record: ResourceRecord) -> PlannedChange:
    """A recorded address the manifests no longer name."""
    if record.never_created:
        return PlannedChange(
            address=address,
            action=Action.DROP,
            operation=Operation.FORGET,
            reason="refused by the service, so never created, and no longer in the manifests: "
            "apply drops its record",
        )
    return PlannedChange(
        address=address,
        action=Action.ORPHANED,
        operation=Operation.NONE,
        reason="recorded in the state but no longer in the manifests; the API cannot "
        f"delete it. `customs-batch state rm {address}` forgets it",
    )


def _decide(
    address: Address,
    spec: Mapping[str, JSON],
    record: ResourceRecord | None,
    values: tuple[FieldChange, ...],
    now: datetime,
) -> Decision:
    model = model_of(address.kind)
    if record is None:
        return Decision(Action.CREATE, model.create)
    if record.never_created:
        message = record.error.message if record.error else "unknown error"
        return Decision(Action.CREATE, model.create, f"the last attempt was refused: {message}")
    if record.status.outcome_unknown:
        return model.after_unknown(UnknownOutcome(address, record, _top_level(values), now))
    if record.status is RecordStatus.FAILED:
        # An update the service refused: the object is as it was recorded before.
        message = record.error.message if record.error else "unknown error"
        reason = f"the last update was refused: {message}"
        return (
            _decide_change(model, address, values, reason)
            if values
            else Decision(Action.NO_CHANGE, Operation.NONE, reason)
        )
    service_state = model.service_words(record)
    if service_state in model.rejected_states:
        return _rejected(model, address, record, service_state or "", values)
    if service_state in model.pending_states and not values:
        return Decision(
            Action.WAITING,
            Operation.FOLLOW,
            f"{model.identifier(record)} is {service_state} at the service: not decided yet. "
            "apply reads where it stands (`apply --wait` follows it until decided), as does "
            "`customs-batch refresh`",
        )
    if not values:
        return Decision(Action.NO_CHANGE, Operation.NONE)
    return _decide_change(model, address, values)


def _decide_change(
    model: KindModel, address: Address, values: tuple[FieldChange, ...], note: str = ""
) -> Decision:
    changed = _top_level(values)
    fixed = [name for name in changed if name not in model.mutable]
    prefix = f"{note}; " if note else ""
    if fixed or model.update is None:
        why = model.immutable.format(address=address, fields=", ".join(fixed or changed))
        return Decision(Action.REFUSED, Operation.NONE, prefix + why)
    return Decision(Action.UPDATE, model.update, f"{prefix}changes {', '.join(changed)}")


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


def describe_error(error: JSON) -> str:
    """One of the service's validation errors as a short phrase."""
    if isinstance(error, dict):
        parts = [str(error[k]) for k in ("code", "field", "message") if error.get(k)]
        return " ".join(parts) or str(error)
    return str(error)


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
    elif old != new:
        found.append(FieldChange(path, old, new))


def _top_level(values: tuple[FieldChange, ...]) -> tuple[str, ...]:
    names: list[str] = []
    for value in values:
        name = value.path.split(".", 1)[0]
        if name not in names:
            names.append(name)
    return tuple(names)
