"""Key rotation for tests of long runs: the caller's key is replaced by a new one.

``POST /_sandbox/keys/rotate`` with ``{"newKey": "..."}``, sent with a valid key: from then on
that key is answered 401, as a revoked key is, and the new one works for the same company.
A test holds an apply's request at the gate, rotates the key, writes the new key where the
environment reads it, and opens the gate: the held request is refused with the old key.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract
from customs_batch.sandbox.auth import authenticate, key_digest
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.web import ApiError, error, json_body, json_response


async def rotate_key(request: Request) -> Response:
    """Replace the caller's key by ``newKey``; the old key is revoked."""
    sandbox: Sandbox = request.app.state.sandbox
    try:
        caller = authenticate(sandbox.store, request.headers.get("authorization"))
        body = await json_body(request)
        new_key = body.get("newKey")
        if not isinstance(new_key, str) or not _printable(new_key):
            raise error(
                contract.BAD_REQUEST,
                'the body must be {"newKey": "<key>"}: ASCII letters, digits and punctuation',
            )
        with sandbox.store.batch():
            new = key_digest(new_key)
            if sandbox.store.get(Table.API_KEYS, new) is not None:
                raise error(contract.DUPLICATE_CODE, "that key exists already")
            old = sandbox.store.get(Table.API_KEYS, caller.key) or {}
            sandbox.store.put(Table.API_KEYS, new, {**old, "key": new})
            sandbox.store.put(Table.API_KEYS, caller.key, {**old, "revoked": True})
    except ApiError as exc:
        return json_response(exc.body, exc.status, exc.headers)
    return json_response({"rotated": True, "companyId": caller.company_id})


def _printable(key: str) -> bool:
    return bool(key) and all(" " < character < "\x7f" for character in key)
