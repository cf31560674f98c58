"""The Movement kind's endpoint: POST a movement of an RTO shipment (``shp_`` public IDs),
idempotent by its ``Idempotency-Key``; the rules it enforces are ``movement_rules.py``'s."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract, movement_rules
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import DECIDED_AT, Sandbox
from customs_batch.sandbox.idempotency import Verdict, company_scope, fingerprint
from customs_batch.sandbox.records import JsonObject, timestamp
from customs_batch.sandbox.request_schemas import movement_body_schema
from customs_batch.sandbox.shipments import rto_shipment
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.web import check_schema, fail, header, json_body, json_response, public

KIND = "Movement"
"""The kind whose requests this module serves (``customs_batch.kinds.Kind``)."""

MOVEMENT_BODY = op.Body("MovementBody", movement_body_schema)


async def create_movement(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """POST /v1/shipments/{id}/movements."""
    key = header(request, contract.IDEMPOTENCY_KEY.lower().encode())
    if not key:
        fail(contract.BAD_REQUEST, [f"the {contract.IDEMPOTENCY_KEY} header is required"])
    if len(key) > contract.IDEMPOTENCY_KEY_MAX:
        fail(
            contract.BAD_REQUEST,
            [
                f"the {contract.IDEMPOTENCY_KEY} header is {len(key):,} characters long: at "
                f"most {contract.IDEMPOTENCY_KEY_MAX} (a UUID is recommended)"
            ],
        )
    body = await json_body(request)
    shipment = rto_shipment(sandbox, request)
    now = sandbox.clock()
    digest = fingerprint(request.method, request.scope["path"], body)
    scope = company_scope(caller.company_id)
    lookup = sandbox.idempotency.begin(scope, key, digest, now)
    if lookup.verdict is Verdict.REPLAY and lookup.body is not None:
        return json_response(lookup.body, lookup.status)
    if lookup.verdict is Verdict.OTHER_REQUEST:
        fail(
            contract.IDEMPOTENCY_OTHER_REQUEST,
            f"{contract.IDEMPOTENCY_KEY} {key} was used with another request: a key is "
            "bound to the method, path and body it first came with; send a new key for "
            "a new request",
        )
    if lookup.verdict is Verdict.IN_FLIGHT:
        fail(
            contract.IDEMPOTENCY_IN_FLIGHT,
            f"a request with {contract.IDEMPOTENCY_KEY} {key} is in flight",
        )
    try:
        with sandbox.store.batch():  # the movement and its idempotency record, one commit
            answer = public(_create(sandbox, body, shipment, now))
            sandbox.idempotency.finish(scope, key, contract.CREATED, answer, now)
    except BaseException:
        sandbox.idempotency.release(scope, key)
        raise
    return json_response(answer, contract.CREATED)


def _create(sandbox: Sandbox, body: JsonObject, shipment: JsonObject, now: float) -> JsonObject:
    reasons = movement_rules.server_side_fields(body) + movement_rules.misplaced_declaration(body)
    if reasons:
        fail(contract.BAD_REQUEST, reasons)
    body = check_schema(sandbox.request_validators[MOVEMENT_BODY], body)
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
        DECIDED_AT: sandbox.decision_time(now),
    }
    sandbox.store.put(Table.MOVEMENTS, movement_id, record)
    return record


C = contract
OPERATIONS = (
    op.ApiOperation(
        "POST",
        C.MOVEMENTS,
        create_movement,
        "Create an RTO movement",
        (
            op.SHIPMENT,
            {
                "name": C.IDEMPOTENCY_KEY,
                "in": "header",
                "required": True,
                "schema": {**op.STR, "maxLength": C.IDEMPOTENCY_KEY_MAX},
            },
        ),
        MOVEMENT_BODY,
        C.CREATED,
        {
            str(
                C.IDEMPOTENCY_IN_FLIGHT
            ): "a request with this Idempotency-Key is still being handled",
            str(C.IDEMPOTENCY_OTHER_REQUEST): (
                "this Idempotency-Key was used with another request (another path or body)"
            ),
        },
    ),
)
"""The endpoints of this module (see ``operations.py``)."""
