"""The TransitPartyUpdate kind's endpoints: PATCH the parties of a transit declaration, by
the departure path or the arrival path. The declaration is processed again from now
(``transit.current``); the body it keeps is ``transit.with_parties``. A declaration customs
cancelled no longer changes: its PATCH is refused with 409, as a HAWB deactivation the
HAWB's state forbids is (docs/api-choices.md), and the declaration stays as it was.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import DECIDED_AT, Sandbox
from customs_batch.sandbox.records import Packed
from customs_batch.sandbox.request_schemas import parties_body_schema
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.transit import current, held_body, transit_record, with_parties
from customs_batch.sandbox.web import check_schema, fail, json_body, json_response
from customs_batch.vocabulary import same_status

KIND = "TransitPartyUpdate"
"""The kind whose requests this module serves (``customs_batch.kinds.Kind``)."""

PARTIES_BODY = op.Body("PartiesBody", parties_body_schema)


async def update_parties(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """PATCH the parties (departure or arrival path): processed again from now."""
    # The departure path names its parameter declarationId, the arrival path id.
    params = request.path_params
    declaration_id: int = params["declarationId"] if "declarationId" in params else params["id"]
    body = await json_body(request)
    transit_record(sandbox, declaration_id)
    body = check_schema(sandbox.request_validators[PARTIES_BODY], body)
    now = sandbox.clock()
    with sandbox.store.lock():
        record = transit_record(sandbox, declaration_id)
        status = current(sandbox, record)["status"]
        if same_status(status, contract.CANCELED):
            fail(
                contract.TRANSIT_CANCELED,
                f"transit declaration {declaration_id} is {status}: its parties can no longer "
                "change",
            )
        updated = {
            **record,
            "status": contract.DEPARTURE_PROCESSING,
            "errors": [],
            "_created": now,
            DECIDED_AT: sandbox.decision_time(now),
            "_submitted": True,
            "_invalid": record.get("_invalid", False),
            "_body": Packed.of(with_parties(held_body(record), body)),
        }
        sandbox.store.put(Table.TRANSIT, declaration_id, updated)
    return json_response({"declarationId": declaration_id, "status": contract.DEPARTURE_PROCESSING})


C = contract
_REFUSED = {str(C.TRANSIT_CANCELED): "customs cancelled the declaration"}
OPERATIONS = (
    op.ApiOperation(
        "PATCH",
        C.DEPARTURE_PARTIES,
        update_parties,
        "Update the parties (departure)",
        (op.path("declarationId", op.INT),),
        PARTIES_BODY,
        errors=_REFUSED,
    ),
    op.ApiOperation(
        "PATCH",
        C.ARRIVAL_PARTIES,
        update_parties,
        "Update the parties (arrival)",
        (op.ID,),
        PARTIES_BODY,
        errors=_REFUSED,
    ),
)
"""The endpoints of this module (see ``operations.py``)."""
