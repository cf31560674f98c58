"""Bringing the state and the service together by hand: adopt, import and refresh."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from customs_batch.client import CustomsClient, NotFoundError
from customs_batch.errors import CustomsBatchError, StateError
from customs_batch.execution.apply import now_iso
from customs_batch.execution.operations import Outputs, outputs_of
from customs_batch.kinds import Address, Kind
from customs_batch.state.backend import StateSession
from customs_batch.state.model import RecordStatus, ResourceRecord

JSON = Any
GROUP_FIELDS = ("name", "code", "isDefault", "companyId")


def remote_outputs(
    client: CustomsClient, address: Address, remote_id: str, spec: Mapping[str, JSON]
) -> Outputs:
    """What the service says of the object ``remote_id`` of ``address``'s kind.

    Raises a CustomsBatchError when it does not exist. Movements cannot be read back one by
    one (the API has no such endpoint), so their ID is taken as given.
    """
    kind = address.kind
    if kind is Kind.DEPARTURE_DECLARATION or kind is Kind.TRANSIT_PARTY_UPDATE:
        detail = client.get_transit(_number(remote_id, address))
        return outputs_of(kind, detail, {"declarationId": _number(remote_id, address)})
    if kind is Kind.TEMPLATE_GROUP:
        wanted = _number(remote_id, address)
        for group in client.iter_template_groups():
            if group.raw.get("id") == wanted:
                return outputs_of(kind, group)
        raise CustomsBatchError(
            f"the service has no template group {wanted}",
            hint="`customs-batch get template-groups` lists them",
        )
    if kind is Kind.MOVEMENT:
        if not remote_id.startswith("mov_"):
            raise CustomsBatchError(f"{remote_id!r} is not a movement ID (mov_…)")
        return {"movementId": remote_id, "shipmentId": spec.get("shipmentId")}
    if kind is Kind.EXPORT_CANCELLATION:
        declaration = client.get_declaration(_number(remote_id, address))
        return {"declarationId": declaration.raw.get("declarationId"), "canceled": None}
    return {"hawbId": remote_id, "shipmentId": spec.get("shipmentId"), "isActive": False}


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
    if address.kind is Kind.TEMPLATE_GROUP:
        # What the service holds, so the next plan shows what the manifests would change.
        recorded.update({k: outputs[k] for k in ("name", "code") if k in outputs})
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
    """Poll what the state knows; record new statuses and remote changes; report them."""
    drifts: list[Drift] = []
    groups: dict[int, Mapping[str, JSON]] | None = None
    for address, record in sorted(session.state.resources.items()):
        if record.status is not RecordStatus.APPLIED:
            continue
        parsed = Address.parse(address)
        if parsed is None:
            continue
        try:
            if parsed.kind in (Kind.DEPARTURE_DECLARATION, Kind.TRANSIT_PARTY_UPDATE):
                drifts.extend(_refresh_transit(session, client, record))
            elif parsed.kind is Kind.TEMPLATE_GROUP:
                groups = _groups_by_id(client) if groups is None else groups
                drifts.extend(_refresh_group(session, record, groups))
            elif parsed.kind is Kind.EXPORT_CANCELLATION:
                drifts.extend(_refresh_export(session, client, record))
        except NotFoundError:
            drifts.append(Drift(address, "no longer found at the service"))
    return drifts


def _refresh_transit(
    session: StateSession, client: CustomsClient, record: ResourceRecord
) -> list[Drift]:
    declaration_id = record.outputs.get("declarationId")
    if not isinstance(declaration_id, int):
        return []
    detail = client.get_transit(declaration_id)
    status = detail.raw.get("status")
    errors = tuple(detail.raw.get("errors") or ())
    if status == record.remote_status and errors == record.remote_errors:
        return []
    session.record(
        record.with_changes(
            remote_status=status,
            remote_errors=errors,
            outputs={**record.outputs, "status": status},
            updated_at=now_iso(),
        )
    )
    before = record.remote_status or record.outputs.get("status") or "unknown"
    return [Drift(record.address, f"status {before} -> {status}")]


def _refresh_export(
    session: StateSession, client: CustomsClient, record: ResourceRecord
) -> list[Drift]:
    declaration_id = record.outputs.get("declarationId")
    if not isinstance(declaration_id, int):
        return []
    status = client.get_declaration(declaration_id).raw.get("status")
    if status == record.remote_status:
        return []
    session.record(record.with_changes(remote_status=status, updated_at=now_iso()))
    return [Drift(record.address, f"status {record.remote_status or 'unknown'} -> {status}")]


def _refresh_group(
    session: StateSession, record: ResourceRecord, groups: Mapping[int, Mapping[str, JSON]]
) -> list[Drift]:
    group_id = record.outputs.get("id")
    remote = groups.get(group_id) if isinstance(group_id, int) else None
    if remote is None:
        return [Drift(record.address, f"template group {group_id} is gone from the service")]
    changed = {
        k: remote[k]
        for k in GROUP_FIELDS
        if k in remote and remote[k] != record.spec.get(k, remote[k])
    }
    if not changed:
        return []
    session.record(record.with_changes(spec={**record.spec, **changed}, updated_at=now_iso()))
    return [
        Drift(record.address, f"{k} is {v!r} at the service, {record.spec.get(k)!r} in the state")
        for k, v in changed.items()
    ]


def _groups_by_id(client: CustomsClient) -> dict[int, Mapping[str, JSON]]:
    groups: dict[int, Mapping[str, JSON]] = {}
    for group in client.iter_template_groups():
        group_id = group.raw.get("id")
        if isinstance(group_id, int):
            groups[group_id] = group.raw
    return groups


def _number(text: str, address: Address) -> int:
    try:
        return int(text)
    except ValueError:
        raise CustomsBatchError(
            f"{text!r} is not a number: the ID of a {address.kind.value} is an integer"
        ) from None
