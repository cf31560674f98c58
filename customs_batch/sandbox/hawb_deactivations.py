"""The HawbDeactivation kind's endpoint: DELETE a HAWB of an RTO shipment.

A DELETE of a HAWB already deactivated changes nothing and answers its record as it is
(``updatedAt`` the time it was deactivated), unless a sent movement references the HAWB:
the API document refuses the request then, whatever the HAWB's state ("The request is
refused once a sent-or-later movement references the HAWB").
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.records import timestamp
from customs_batch.sandbox.shipments import rto_shipment
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.strictjson import clip
from customs_batch.sandbox.web import fail, json_response, public

KIND = "HawbDeactivation"
"""The kind whose requests this module serves (``customs_batch.kinds.Kind``)."""


async def deactivate_hawb(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """DELETE /v1/shipments/{id}/hawbs/{hawbId}: refused once a sent movement uses the HAWB;
    else a HAWB already deactivated is answered as it is."""
    public_id = rto_shipment(sandbox, request)["publicId"]
    hawb_id = request.path_params["hawbId"]
    with sandbox.store.lock():
        hawb = sandbox.store.get(Table.HAWBS, hawb_id)
        if hawb is None or hawb["shipmentId"] != public_id:
            fail(contract.NOT_FOUND, f"HAWB {clip(hawb_id)} not found on shipment {public_id}")
        sent = [
            m["movementId"]
            for m in sandbox.store.values(Table.MOVEMENTS)
            if m.get("hawbId") == hawb_id and sandbox.processed(m, "_created")
        ]
        if sent:
            fail(
                contract.HAWB_REFUSED,
                f"HAWB {hawb_id} cannot be deactivated: sent movement {sent[0]} references it",
            )
        if not hawb["isActive"]:
            return json_response(public(hawb))
        updated = {**hawb, "isActive": False, "updatedAt": timestamp(sandbox.clock())}
        sandbox.store.put(Table.HAWBS, hawb_id, updated)
    return json_response(public(updated))


C = contract
OPERATIONS = (
    op.ApiOperation(
        "DELETE",
        C.HAWB,
        deactivate_hawb,
        "Deactivate a HAWB",
        (op.SHIPMENT, op.path("hawbId", {"type": "string", "pattern": "^hawb_[A-Za-z0-9]+$"})),
        errors={str(C.HAWB_REFUSED): "a sent movement references the HAWB"},
    ),
)
"""The endpoints of this module (see ``operations.py``)."""
