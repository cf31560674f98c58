"""RTO endpoints: movements, HAWBs and allocations of a shipment (``shp_`` public IDs)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract, movement_rules
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.idempotency import Verdict, fingerprint
from customs_batch.sandbox.records import JsonObject, timestamp
from customs_batch.sandbox.request_schemas import movement_body_schema
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.web import (
    Query,
    check_schema,
    fail,
    json_body,
    json_response,
    page_of,
    public,
    total_pages,
)

MOVEMENT_BODY = op.Body("MovementBody", movement_body_schema)


def _shipment(sandbox: Sandbox, request: Request) -> JsonObject:
    public_id = request.path_params["id"]
    shipment = sandbox.store.get(Table.RTO_SHIPMENTS, public_id)
    if shipment is None:
        fail(contract.NOT_FOUND, f"shipment {public_id} not found")
    return shipment


def movement_view(sandbox: Sandbox, record: JsonObject) -> JsonObject:
    """A movement as the service shows it now: QUEUED, then sent after processing."""
    view = public(record)
    if sandbox.processed(record["_created"]):
        view["status"] = contract.MOVEMENT_SENT
    return view


async def create_movement(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """POST /v1/shipments/{id}/movements."""
    key = request.headers.get(contract.IDEMPOTENCY_KEY)
    if not key:
        fail(contract.BAD_REQUEST, [f"the {contract.IDEMPOTENCY_KEY} header is required"])
    body = await json_body(request)
    shipment = _shipment(sandbox, request)
    now = sandbox.clock()
    lookup = sandbox.idempotency.begin(caller.key, key, fingerprint(body), now)
    if lookup.verdict is Verdict.REPLAY and lookup.body is not None:
        return json_response(lookup.body, lookup.status)
    if lookup.verdict is Verdict.OTHER_BODY:
        fail(
            contract.IDEMPOTENCY_OTHER_BODY,
            f"{contract.IDEMPOTENCY_KEY} {key} was used with another body",
        )
    if lookup.verdict is Verdict.IN_FLIGHT:
        fail(
            contract.IDEMPOTENCY_IN_FLIGHT,
            f"a request with {contract.IDEMPOTENCY_KEY} {key} is in flight",
        )
    try:
        with sandbox.store.batch():  # the movement and its idempotency record, one commit
            answer = public(_create(sandbox, body, shipment, now))
            sandbox.idempotency.finish(caller.key, key, contract.CREATED, answer, now)
    except BaseException:
        sandbox.idempotency.release(caller.key, key)
        raise
    return json_response(answer, contract.CREATED)


def _create(sandbox: Sandbox, body: JsonObject, shipment: JsonObject, now: float) -> JsonObject:
    reasons = movement_rules.server_side_fields(body)
    if reasons:
        fail(contract.BAD_REQUEST, reasons)
    check_schema(sandbox.schemas[MOVEMENT_BODY], body)
    reasons = movement_rules.refusals(body, shipment, sandbox.store)
    if reasons:
        fail(contract.BAD_REQUEST, reasons)
    movement_id = f"mov_{sandbox.store.count(Table.MOVEMENTS) + 1:08d}"
    stamp = timestamp(now)
    record: JsonObject = {
        "movementId": movement_id,
        "shipmentId": shipment["publicId"],
        "action": body["action"],
        "status": contract.MOVEMENT_QUEUED,
        "processType": shipment["processType"],
        "trigger": contract.MOVEMENT_TRIGGER,
        "originalMovementId": None,
        **{k: v for k, v in body.items() if k != "action"},
        "createdAt": stamp,
        "updatedAt": stamp,
        "_created": now,
    }
    sandbox.store.put(Table.MOVEMENTS, movement_id, record)
    return record


async def list_hawbs(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/shipments/{id}/hawbs."""
    query = Query(request.query_params)
    page, size = query.page(), query.page_size(contract.LIMIT)
    include_inactive = query.boolean(contract.INCLUDE_INACTIVE)
    public_id = _shipment(sandbox, request)["publicId"]
    records = [
        hawb
        for hawb in sandbox.store.values(Table.HAWBS)
        if hawb["shipmentId"] == public_id and (include_inactive or hawb["isActive"])
    ]
    return _data_page(records, page, size)


async def list_allocations(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/shipments/{id}/allocations."""
    query = Query(request.query_params)
    page, size = query.page(), query.page_size(contract.LIMIT)
    public_id = _shipment(sandbox, request)["publicId"]
    records = [a for a in sandbox.store.values(Table.ALLOCATIONS) if a["shipmentId"] == public_id]
    return _data_page(records, page, size)


def _data_page(records: list[JsonObject], page: int, size: int) -> Response:
    total = len(records)
    pagination = {
        "page": page,
        "limit": size,
        "total": total,
        "totalPages": total_pages(total, size),
    }
    return json_response({"data": page_of(records, page, size), "pagination": pagination})


async def deactivate_hawb(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """DELETE /v1/shipments/{id}/hawbs/{hawbId}: refused once a sent movement uses the HAWB."""
    public_id = _shipment(sandbox, request)["publicId"]
    hawb_id = request.path_params["hawbId"]
    with sandbox.store.lock():
        hawb = sandbox.store.get(Table.HAWBS, hawb_id)
        if hawb is None or hawb["shipmentId"] != public_id:
            fail(contract.NOT_FOUND, f"HAWB {hawb_id} not found on shipment {public_id}")
        sent = [
            m["movementId"]
            for m in sandbox.store.values(Table.MOVEMENTS)
            if m.get("hawbId") == hawb_id and sandbox.processed(m["_created"])
        ]
        if sent:
            fail(
                contract.HAWB_REFUSED,
                f"HAWB {hawb_id} cannot be deactivated: sent movement {sent[0]} references it",
            )
        updated = {**hawb, "isActive": False, "updatedAt": timestamp(sandbox.clock())}
        sandbox.store.put(Table.HAWBS, hawb_id, updated)
    return json_response(public(updated))


async def inspect_movements(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /_sandbox/movements: every movement created, as records."""
    return json_response([movement_view(sandbox, m) for m in sandbox.store.values(Table.MOVEMENTS)])


async def inspect_stats(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /_sandbox/stats: request counts by method and path template, and 429s."""
    return json_response(sandbox.stats.snapshot())


C = contract
OPERATIONS = (
    op.ApiOperation(
        "POST",
        C.MOVEMENTS,
        create_movement,
        "Create an RTO movement",
        (
            op.SHIPMENT,
            {"name": C.IDEMPOTENCY_KEY, "in": "header", "required": True, "schema": op.STR},
        ),
        MOVEMENT_BODY,
        C.CREATED,
        {
            str(
                C.IDEMPOTENCY_IN_FLIGHT
            ): "a request with this Idempotency-Key is still being handled",
            str(C.IDEMPOTENCY_OTHER_BODY): "this Idempotency-Key was used with another body",
        },
    ),
    op.ApiOperation(
        "GET",
        C.ALLOCATIONS,
        list_allocations,
        "List allocations of a shipment",
        (op.SHIPMENT, op.PAGE, op.size(C.LIMIT)),
    ),
    op.ApiOperation(
        "GET",
        C.HAWBS,
        list_hawbs,
        "List HAWBs of a shipment",
        (op.SHIPMENT, op.PAGE, op.size(C.LIMIT), op.query(C.INCLUDE_INACTIVE, {"type": "boolean"})),
    ),
    op.ApiOperation(
        "DELETE",
        C.HAWB,
        deactivate_hawb,
        "Deactivate a HAWB",
        (op.SHIPMENT, op.path("hawbId", {"type": "string", "pattern": "^hawb_[A-Za-z0-9]+$"})),
        errors={str(C.HAWB_REFUSED): "a sent movement references the HAWB"},
    ),
    op.ApiOperation(
        "GET", C.INSPECT_MOVEMENTS, inspect_movements, "Emulator only: every movement created"
    ),
    op.ApiOperation(
        "GET", C.INSPECT_STATS, inspect_stats, "Emulator only: request counts and 429s"
    ),
)
"""The endpoints of this module (see ``operations.py``)."""
