"""What each planned operation sends, and which outputs of the answer are recorded."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from customs_batch.client import CustomsClient, Record, TemplateGroupFilter
from customs_batch.kinds import OUTPUT_FIELDS, Kind
from customs_batch.planning.diff import PARTY_FIELDS, TEMPLATE_GROUP_MUTABLE
from customs_batch.planning.model import Operation

JSON = Any
Outputs = dict[str, str | int | float | bool | None]


class Request:
    """One operation about to be sent: its resolved body, what is already known of the
    object (``outputs``), and the Idempotency-Key when it is a movement."""

    def __init__(
        self,
        kind: Kind,
        spec: Mapping[str, JSON],
        outputs: Mapping[str, JSON],
        idempotency_key: str | None,
        changed: tuple[str, ...],
    ) -> None:
        self.kind = kind
        self.spec = spec
        self.outputs = outputs
        self.idempotency_key = idempotency_key
        self.changed = changed


def outputs_of(kind: Kind, record: Record, known: Mapping[str, JSON] | None = None) -> Outputs:
    """The fields of the service's answer that others may refer to, over what was known."""
    merged: Outputs = dict(known or {})
    for name in OUTPUT_FIELDS[kind]:
        if name in record.raw:
            merged[name] = record.raw[name]
    return merged


def _create_template_group(client: CustomsClient, request: Request) -> Outputs:
    return outputs_of(request.kind, client.create_template_group(request.spec))


def _find_or_create_template_group(client: CustomsClient, request: Request) -> Outputs:
    company = request.spec.get("companyId")
    filters = TemplateGroupFilter(company_id=company if isinstance(company, int) else None)
    for group in client.iter_template_groups(filters):
        if group.raw.get("code") == request.spec.get("code"):
            return outputs_of(request.kind, group)
    return _create_template_group(client, request)


def _update_template_group(client: CustomsClient, request: Request) -> Outputs:
    body = {k: request.spec[k] for k in request.changed if k in TEMPLATE_GROUP_MUTABLE}
    body = {k: v for k, v in body.items() if k in request.spec}
    group = client.update_template_group(int(request.outputs["id"]), body)
    return outputs_of(request.kind, group, request.outputs)


def _submit_departure(client: CustomsClient, request: Request) -> Outputs:
    return outputs_of(request.kind, client.submit_departure(request.spec))


def _update_departure_parties(client: CustomsClient, request: Request) -> Outputs:
    body = {k: v for k, v in request.spec.items() if k in PARTY_FIELDS}
    answer = client.update_departure_parties(int(request.outputs["declarationId"]), body)
    return outputs_of(request.kind, answer, request.outputs)


def _update_transit_parties(client: CustomsClient, request: Request) -> Outputs:
    body = {k: v for k, v in request.spec.items() if k in PARTY_FIELDS}
    declaration_id = int(request.spec["declarationId"])
    if request.spec.get("variant") == "arrival":
        answer = client.update_arrival_parties(declaration_id, body)
    else:
        answer = client.update_departure_parties(declaration_id, body)
    return outputs_of(request.kind, answer, {"declarationId": declaration_id})


def _create_movement(client: CustomsClient, request: Request) -> Outputs:
    if request.idempotency_key is None:
        raise ValueError("a movement is never sent without its recorded Idempotency-Key")
    body = {k: v for k, v in request.spec.items() if k != "shipmentId"}
    movement = client.create_movement(
        str(request.spec["shipmentId"]), body, idempotency_key=request.idempotency_key
    )
    return outputs_of(request.kind, movement)


def _deactivate_hawb(client: CustomsClient, request: Request) -> Outputs:
    hawb = client.deactivate_hawb(str(request.spec["shipmentId"]), str(request.spec["hawbId"]))
    return outputs_of(request.kind, hawb)


def _cancel_export(client: CustomsClient, request: Request) -> Outputs:
    result = client.cancel_declaration(int(request.spec["declarationId"]))
    return outputs_of(request.kind, result)


SEND: Mapping[Operation, Callable[[CustomsClient, Request], Outputs]] = {
    Operation.CREATE_TEMPLATE_GROUP: _create_template_group,
    Operation.FIND_OR_CREATE_TEMPLATE_GROUP: _find_or_create_template_group,
    Operation.UPDATE_TEMPLATE_GROUP: _update_template_group,
    Operation.SUBMIT_DEPARTURE: _submit_departure,
    Operation.UPDATE_DEPARTURE_PARTIES: _update_departure_parties,
    Operation.UPDATE_TRANSIT_PARTIES: _update_transit_parties,
    Operation.CREATE_MOVEMENT: _create_movement,
    Operation.RESEND_MOVEMENT: _create_movement,
    Operation.DEACTIVATE_HAWB: _deactivate_hawb,
    Operation.CANCEL_EXPORT: _cancel_export,
}
