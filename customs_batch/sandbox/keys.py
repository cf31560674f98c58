"""Key rotation for tests of long runs: the caller's key is replaced by a new one.

``POST /_sandbox/keys/rotate`` with ``{"newKey": "..."}``, sent with a valid key: from then on
that key is answered 401, as a revoked key is, and the new one works for the same company.
A test holds an apply's request at the gate, rotates the key, writes the new key where the
environment reads it, and opens the gate: the held request is refused with the old key.

With ``"overlapSeconds": N`` the old key keeps working for N seconds of customs' clock (the
manual clock's, under ``--clock manual``), as the service's rotation does: a new key, the
clients switch over, about 24 hours pass (86400), then the old key is revoked.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller, key_digest
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.web import check_schema, fail, json_body, json_response


async def rotate_key(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """Replace the caller's key by ``newKey``; the old key is revoked."""
    body = check_schema(sandbox.request_validators[ROTATION], await json_body(request))
    new_key: str = body["newKey"]
    if not _printable(new_key):  # the schema's pattern, also for "key\n" ($ matches before it)
        fail(contract.BAD_REQUEST, "newKey must be ASCII letters, digits and punctuation")
    with sandbox.store.batch():
        new = key_digest(new_key)
        if sandbox.store.get(Table.API_KEYS, new) is not None:
            fail(contract.DUPLICATE_CODE, "that key exists already")
        old = sandbox.store.get(Table.API_KEYS, caller.key) or {}
        # The new key is the old one's company and account, never its revocation: a key
        # rotated again within its overlap does not hand its end to the key that replaces it.
        issued = {k: v for k, v in old.items() if k not in _REVOCATION}
        sandbox.store.put(Table.API_KEYS, new, {**issued, "key": new})
        overlap = body.get("overlapSeconds", 0)
        if overlap:
            ends = sandbox.clock() + overlap
            earlier = old.get("revokedAt")
            if isinstance(earlier, (int, float)):  # a revocation already set is never put off
                ends = min(ends, earlier)
            ending = {**old, "revokedAt": ends}
        else:
            ending = {**old, "revoked": True}
        sandbox.store.put(Table.API_KEYS, caller.key, ending)
    return json_response({"rotated": True, "companyId": caller.company_id})


_REVOCATION = ("revoked", "revokedAt")


def _rotation_schema() -> JsonObject:
    return {
        "type": "object",
        "properties": {
            "newKey": {
                "type": "string",
                "pattern": "^[!-~]+$",
                "description": "the key that replaces the one the request is sent with: "
                "ASCII letters, digits and punctuation",
            },
            "overlapSeconds": {
                "type": "number",
                "minimum": 0,
                "maximum": 31_536_000,
                "description": "how long the old key keeps working, in seconds of customs' "
                "clock (default 0: revoked at once; the service's rotation gives about 86400)",
            },
        },
        "required": ["newKey"],
        "additionalProperties": False,
    }


def _printable(key: str) -> bool:
    return bool(key) and all(" " < character < "\x7f" for character in key)


ROTATION = op.Body("KeyRotation", _rotation_schema)
CONTROLS = (
    op.ApiOperation(
        "POST",
        contract.TEST_ROTATE_KEY,
        rotate_key,
        "Emulator only: replace the caller's API key (the old one is revoked, at once or after "
        "overlapSeconds)",
        body=ROTATION,
        errors={str(contract.DUPLICATE_CODE): "the new key exists already"},
        response={
            "type": "object",
            "properties": {
                "rotated": {"type": "boolean", "const": True},
                "companyId": {"type": "integer", "description": "the company of both keys"},
            },
            "required": ["rotated", "companyId"],
            "additionalProperties": False,
        },
    ),
)
"""The emulator's controls of this module (see ``operations.py``)."""
