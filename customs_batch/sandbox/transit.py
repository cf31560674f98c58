"""Transit declarations: departure submission, list, detail and both party PATCH variants.

A submitted declaration is ``processing`` until ``processing_seconds`` have passed, then
``ready`` - or ``invalid`` with an entry in ``errors`` when its commercialReference starts
with ``INVALID`` (the documented, deterministic reason). The status is computed on read.
"""

from __future__ import annotations

import hashlib
import json

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.kinds import Kind
from customs_batch.sandbox import contract
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.listing import created_between, order_choice, ordered, result_page
from customs_batch.sandbox.records import JsonObject, timestamp
from customs_batch.sandbox.request_schemas import departure_body_schema, parties_body_schema
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.web import Query, check_schema, fail, json_body, json_response
from customs_batch.sensitive import replaced, sensitive_paths, values_at

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


DEPARTURE_BODY = op.Body("DepartureDeclaration", departure_body_schema)
PARTIES_BODY = op.Body("PartiesBody", parties_body_schema)


def current(sandbox: Sandbox, record: JsonObject) -> JsonObject:
    """The record with the status it has now."""
    if not record.get("_submitted") or record["status"] != contract.DEPARTURE_PROCESSING:
        return record
    if not sandbox.processed(record["_created"]):
        return record
    if record["_invalid"]:
        return {**record, "status": contract.DEPARTURE_INVALID, "errors": [INVALID_ERROR]}
    return {**record, "status": contract.DEPARTURE_READY, "errors": []}


def _kept(body: JsonObject) -> JsonObject:
    """The body as the emulator keeps it: each value the schema marks sensitive (a
    guarantee's access code) as ``sha256:`` and the digest of its JSON, so its database
    holds no code in clear (and a test can still tell which code was sent)."""
    changes = {
        where: "sha256:"
        + hashlib.sha256(
            json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
        ).hexdigest()
        for path in sensitive_paths(Kind.DEPARTURE_DECLARATION)
        for where, value in values_at(body, path)
        if value is not None
    }
    return replaced(body, changes) if changes else body


async def submit_departure(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """POST /v1/declarations/transit: 201 ``{declarationId, status: processing}``."""
    body = await json_body(request)
    check_schema(sandbox.schemas[DEPARTURE_BODY], body)
    now = sandbox.clock()
    with sandbox.store.lock():
        declaration_id = max(sandbox.store.next_id(Table.TRANSIT), 7001)
        record = {
            "declarationId": declaration_id,
            "status": contract.DEPARTURE_PROCESSING,
            "procedureType": body["procedureType"],
            "declarationType": body["declarationType"],
            "totalWeight": body["totalWeight"],
            "weightUnit": "KGM",
            "destinationOffice": body["destinationOffice"],
            "departureOffice": body["departureOffice"],
            "errors": [],
            "createdAt": timestamp(now),
            "_created": now,
            "_submitted": True,
            "_invalid": str(body["commercialReference"]).startswith(
                contract.INVALID_REFERENCE_PREFIX
            ),
            "_body": _kept(body),
        }
        sandbox.store.put(Table.TRANSIT, declaration_id, record)
    answer = {"declarationId": declaration_id, "status": contract.DEPARTURE_PROCESSING}
    return json_response(answer, contract.CREATED)


async def list_transit(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/declarations/transit, filtered by the upper-case status words of section 7."""
    query = Query(request.query_params)
    status = query.choice(contract.STATUS, contract.TRANSIT_FILTER_VALUES)
    records = [current(sandbox, r) for r in sandbox.store.values(Table.TRANSIT)]
    if status:
        records = [r for r in records if r["status"] == contract.transit_body_status(status)]
    records = created_between(records, query.day(contract.START_DATE), query.day(contract.END_DATE))
    entries = [{f: r.get(f) for f in _LIST_FIELDS} for r in ordered(records, order_choice(query))]
    return result_page(query, entries)


def _transit(sandbox: Sandbox, declaration_id: int) -> JsonObject:
    record = sandbox.store.get(Table.TRANSIT, declaration_id)
    if record is None:
        fail(contract.NOT_FOUND, f"transit declaration {declaration_id} not found")
    return record


async def get_transit(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/declarations/transit/{id}."""
    record = current(sandbox, _transit(sandbox, request.path_params["id"]))
    return json_response({f: record.get(f) for f in _DETAIL_FIELDS})


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


async def update_parties(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """PATCH the parties (departure or arrival path): processed again from now."""
    # The departure path names its parameter declarationId, the arrival path id.
    params = request.path_params
    declaration_id: int = params["declarationId"] if "declarationId" in params else params["id"]
    body = await json_body(request)
    _transit(sandbox, declaration_id)
    check_schema(sandbox.schemas[PARTIES_BODY], body)
    now = sandbox.clock()
    with sandbox.store.lock():
        record = _transit(sandbox, declaration_id)
        updated = {
            **record,
            "status": contract.DEPARTURE_PROCESSING,
            "errors": [],
            "_created": now,
            "_submitted": True,
            "_invalid": record.get("_invalid", False),
            "_body": with_parties(record.get("_body", {}), body),
        }
        sandbox.store.put(Table.TRANSIT, declaration_id, updated)
    return json_response({"declarationId": declaration_id, "status": contract.DEPARTURE_PROCESSING})


C = contract
OPERATIONS = (
    op.ApiOperation(
        "POST",
        C.SUBMIT_DEPARTURE,
        submit_departure,
        "Submit a departure declaration",
        body=DEPARTURE_BODY,
        status=C.CREATED,
    ),
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
    op.ApiOperation(
        "PATCH",
        C.DEPARTURE_PARTIES,
        update_parties,
        "Update the parties (departure)",
        (op.path("declarationId", op.INT),),
        PARTIES_BODY,
    ),
    op.ApiOperation(
        "PATCH",
        C.ARRIVAL_PARTIES,
        update_parties,
        "Update the parties (arrival)",
        (op.ID,),
        PARTIES_BODY,
    ),
)
"""The endpoints of this module (see ``operations.py``)."""
