"""The DepartureDeclaration kind's endpoint: POST a departure declaration.

It is kept with each sensitive value digested (``_kept``), packed (``records.Packed``: a
body is read again only by a party PATCH), and decided on read
(``transit.current``); the list and the detail are ``transit.py``'s.
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
from customs_batch.sandbox.context import DECIDED_AT, Sandbox
from customs_batch.sandbox.records import JsonObject, Packed, timestamp
from customs_batch.sandbox.request_schemas import departure_body_schema
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.web import check_schema, json_body, json_response
from customs_batch.sensitive import replaced, sensitive_paths, values_at

KIND = "DepartureDeclaration"
"""The kind whose requests this module serves (``customs_batch.kinds.Kind``)."""

DEPARTURE_BODY = op.Body("DepartureDeclaration", departure_body_schema)


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
    body = check_schema(sandbox.request_validators[DEPARTURE_BODY], body)
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
            DECIDED_AT: sandbox.decision_time(now),
            "_submitted": True,
            "_invalid": str(body["commercialReference"]).startswith(
                contract.INVALID_REFERENCE_PREFIX
            ),
            "_body": Packed.of(_kept(body)),
        }
        sandbox.store.put(Table.TRANSIT, declaration_id, record)
    answer = {"declarationId": declaration_id, "status": contract.DEPARTURE_PROCESSING}
    return json_response(answer, contract.CREATED)


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
)
"""The endpoints of this module (see ``operations.py``)."""
