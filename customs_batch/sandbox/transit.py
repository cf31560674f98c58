"""Transit declarations, as both kinds that write them see them (read-only here): the list,
the detail, the status decided on read, and the body a party PATCH leaves.

A declaration submitted (``departure_declarations.py``) or whose parties were updated
(``transit_party_updates.py``) is ``processing`` until ``processing_seconds`` have passed,
then ``ready`` - or ``invalid`` with an entry in ``errors`` when its commercialReference
starts with ``INVALID`` (the documented, deterministic reason). The status is computed on
read (``current``), from the time of the decision fixed at the submission (``DECIDED_AT``):
a restart with another ``processing_seconds`` never takes a decision back.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.listing import created_between, order_choice, ordered, result_page
from customs_batch.sandbox.records import JsonObject, unpacked
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.web import Query, fail, json_response

_DETAIL_FIELDS = (
    "declarationId",
    "status",
    "procedureType",
    "declarationType",
    "totalWeight",
    "weightUnit",
    "destinationOffice",
    "departureOffice",
    "errors",
)
_LIST_FIELDS = ("declarationId", "status", "declarationType", "createdAt")
INVALID_ERROR: JsonObject = {
    "code": "SANDBOX_INVALID_REFERENCE",
    "field": "commercialReference",
    "message": "the sandbox refuses declarations whose commercialReference starts with INVALID",
}


def current(sandbox: Sandbox, record: JsonObject) -> JsonObject:
    """The record with the status it has now."""
    if not record.get("_submitted") or record["status"] != contract.DEPARTURE_PROCESSING:
        return record
    if not sandbox.processed(record, "_created"):
        return record
    if record["_invalid"]:
        return {**record, "status": contract.DEPARTURE_INVALID, "errors": [INVALID_ERROR]}
    return {**record, "status": contract.DEPARTURE_READY, "errors": []}


async def list_transit(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/declarations/transit, filtered by the upper-case status words of section 7."""
    query = Query(request.query_params)
    status = query.choice(contract.STATUS, contract.TRANSIT_FILTER_VALUES)
    records = [current(sandbox, r) for r in sandbox.store.values(Table.TRANSIT)]
    if status:
        records = [r for r in records if contract.transit_status_matches(r["status"], status)]
    records = created_between(records, query.day(contract.START_DATE), query.day(contract.END_DATE))
    entries = [{f: r.get(f) for f in _LIST_FIELDS} for r in ordered(records, order_choice(query))]
    return result_page(query, entries)


def transit_record(sandbox: Sandbox, declaration_id: int) -> JsonObject:
    """The stored transit declaration ``declaration_id``; 404 when there is none."""
    record = sandbox.store.get(Table.TRANSIT, declaration_id)
    if record is None:
        fail(contract.NOT_FOUND, f"transit declaration {declaration_id} not found")
    return record


async def get_transit(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/declarations/transit/{id}."""
    record = current(sandbox, transit_record(sandbox, request.path_params["id"]))
    return json_response({f: record.get(f) for f in _DETAIL_FIELDS})


def held_body(record: JsonObject) -> JsonObject:
    """The body ``record`` keeps (``records.Packed``), parsed; ``{}`` for a seeded one."""
    body: JsonObject = unpacked(record.get("_body")) or {}
    return body


def with_parties(held: JsonObject, patch: JsonObject) -> JsonObject:
    """The declaration's body after a party PATCH: each party named changes in the fields
    the PATCH names and keeps its others (docs/api-choices.md)."""
    merged = dict(held)
    for role, fields in patch.items():
        party = merged.get(role)
        if isinstance(party, dict) and isinstance(fields, dict):
            merged[role] = {**party, **fields}
        else:
            merged[role] = fields
    return merged


C = contract
OPERATIONS = (
    op.ApiOperation(
        "GET",
        C.TRANSIT_LIST,
        list_transit,
        "List transit declarations",
        (
            op.PAGE,
            op.size(C.ITEMS_PER_PAGE),
            op.query(C.STATUS, op.enum(*C.TRANSIT_FILTER_VALUES)),
            op.ORDER,
            op.query(C.START_DATE, op.DATE),
            op.query(C.END_DATE, op.DATE),
        ),
    ),
    op.ApiOperation("GET", C.TRANSIT, get_transit, "Poll a transit declaration", (op.ID,)),
)
"""The endpoints of this module (see ``operations.py``)."""
