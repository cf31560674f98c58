"""The ExportCancellation kind's endpoint: DELETE an export declaration.

Before submission it is cancelled at once; after, customs is asked, and decides once
``processing_seconds`` have passed (``declarations.current``).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.declarations import CANCELLATION_DECIDED_AT, declaration
from customs_batch.sandbox.records import timestamp
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.web import fail, json_response

KIND = "ExportCancellation"
"""The kind whose requests this module serves (``customs_batch.kinds.Kind``)."""


async def cancel_declaration(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """DELETE /v1/declarations/{id}: cancelled at once before submission, else requested."""
    with sandbox.store.lock():
        record = declaration(sandbox, request)
        if record["type"] != "EXPORT":
            fail(
                contract.BAD_REQUEST,
                f"declaration {record['declarationId']} is an import declaration; only export declarations can be cancelled",
            )
        before = record["status"]
        if before in contract.NOT_YET_SUBMITTED:
            status = contract.CANCELED
        elif before in (contract.CANCELED, contract.CANCELLATION_REQUESTED):
            status = before  # decided, or still before customs: asking again changes nothing
        else:
            status = contract.CANCELLATION_REQUESTED
        if status != before:
            now = sandbox.clock()
            updated = {**record, "status": status, "updatedAt": timestamp(now)}
            if status == contract.CANCELLATION_REQUESTED:
                updated.update(
                    {
                        "_cancellationRequested": now,
                        CANCELLATION_DECIDED_AT: sandbox.decision_time(now),
                        "_statusBeforeCancellation": before,
                    }
                )
            sandbox.store.put(Table.DECLARATIONS, record["declarationId"], updated)
    return json_response(
        {"declarationId": record["declarationId"], "canceled": status == contract.CANCELED}
    )


C = contract
OPERATIONS = (
    op.ApiOperation(
        "DELETE", C.DECLARATION, cancel_declaration, "Cancel an export declaration", (op.ID,)
    ),
)
"""The endpoints of this module (see ``operations.py``)."""
