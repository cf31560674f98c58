"""Bringing the state and the service together by hand: adopt, import and refresh."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from customs_batch.client import CustomsClient
from customs_batch.errors import StateError
from customs_batch.execution.apply import now_iso
from customs_batch.kinds import Address, Kind
from customs_batch.kinds._base import KindModel, Outputs, Refreshed
from customs_batch.kinds.registry import model_of
from customs_batch.state.backend import StateSession
from customs_batch.state.model import RecordStatus, ResourceRecord, State

JSON = Any


def remote_outputs(
    client: CustomsClient, address: Address, remote_id: str, spec: Mapping[str, JSON]
) -> Outputs:
    """What the service says of the object ``remote_id`` of ``address``'s kind.

    Raises a CustomsBatchError when it does not exist. Each kind reads its own back (a
    movement cannot be: the API has no such endpoint, so its ID is taken as given).
    """
    return model_of(address.kind).read_back(client, address, remote_id, spec)


def adopt(
    session: StateSession, client: CustomsClient, address: Address, remote_id: str
) -> ResourceRecord:
    """Resolve a needs-decision address: the attempt did create ``remote_id``."""
    record = session.state.resources.get(str(address))
    if record is None:
        raise StateError(
            f"{address} is not in the state",
            hint=f"to take over an object created elsewhere, `customs-batch import {address} ID`",
        )
    if record.status is RecordStatus.APPLIED:
        raise StateError(
            f"{address} is already applied (outputs {dict(record.outputs)})",
            hint="adopt is for an attempt whose outcome is unknown",
        )
    outputs = remote_outputs(client, address, remote_id, record.spec)
    adopted = record.with_changes(
        status=RecordStatus.APPLIED, outputs=outputs, error=None, updated_at=now_iso()
    )
    session.record(adopted)
    return adopted


def import_object(
    session: StateSession,
    client: CustomsClient,
    address: Address,
    remote_id: str,
    spec: Mapping[str, JSON],
) -> ResourceRecord:
    """Record an object that exists at the service as the document ``address``."""
    if str(address) in session.state.resources:
        raise StateError(
            f"{address} is already in the state",
            hint=f"`customs-batch state rm {address}` first to import another object",
        )
    outputs = remote_outputs(client, address, remote_id, spec)
    recorded = dict(spec)
    # What the service holds, so the next plan shows what the manifests would change.
    fields = model_of(address.kind).imported_fields
    recorded.update({k: outputs[k] for k in fields if k in outputs})
    record = ResourceRecord(
        str(address),
        RecordStatus.APPLIED,
        "import",
        recorded,
        outputs=outputs,
        updated_at=now_iso(),
    )
    session.record(record)
    return record


@dataclass(frozen=True)
class Drift:
    """One difference refresh found between the state and the service."""

    address: str
    message: str


def refresh(session: StateSession, client: CustomsClient) -> list[Drift]:
    """Poll what the state knows; record new statuses and remote changes; report them.

    Each kind reads all of its recorded objects at once (one listing of the template
    groups, one request per declaration); kinds the API cannot read back are skipped.
    """
    drifts: list[Drift] = []
    by_kind: dict[Kind, list[ResourceRecord]] = {}
    for address, record in sorted(session.state.resources.items()):
        parsed = Address.parse(address)
        if parsed is not None and record.status is RecordStatus.APPLIED:
            by_kind.setdefault(parsed.kind, []).append(record)
    for kind, records in by_kind.items():
        read = model_of(kind).refresh
        if read is None:
            continue
        answers = read(client, records)
        for record in records:
            if record.address not in answers:
                continue
            answer = answers[record.address]
            if answer is None:
                drifts.append(Drift(record.address, "no longer found at the service"))
            else:
                drifts.extend(_record_refresh(session, model_of(kind), record, answer))
    return drifts


def _record_refresh(
    session: StateSession, model: KindModel, record: ResourceRecord, answer: Refreshed
) -> list[Drift]:
    found: list[Drift] = []
    changes: dict[str, JSON] = {}
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
    if changes:
        session.record(record.with_changes(**changes, updated_at=now_iso()))
    return found


def status_lines(state: State) -> list[str]:
    """One line per recorded object whose kind has a state at the service worth following
    (declarations, cancellations): its lifecycle state and the service's errors."""
    lines: list[str] = []
    for address, record in sorted(state.resources.items()):
        parsed = Address.parse(address)
        if parsed is None or not model_of(parsed.kind).has_status:
            continue
        model = model_of(parsed.kind)
        if record.status.outcome_unknown:
            lines.append(f"{address}  needs-decision  (outcome of the last request unknown)")
            continue
        if record.never_created:
            message = record.error.message if record.error else ""
            lines.append(f"{address}  refused  {message}".rstrip())
            continue
        ident = model.identifier(record) or ""
        last = model.service_words(record) or record.outputs.get("status") or "unknown"
        rejected = "  rejected" if last in model.rejected_states else ""
        if last in model.pending_states:
            rejected = "  pending (not decided yet: `customs-batch refresh` reads it)"
        errors = f"  {len(record.remote_errors)} error(s)" if record.remote_errors else ""
        lines.append(f"{address}  {ident}  {last}{rejected}{errors}")
        lines += [f"    {error}" for error in record.remote_errors]
    return lines
