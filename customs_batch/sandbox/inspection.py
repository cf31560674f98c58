"""What the emulator shows its tests (read-only, not the service's): every movement
created, and the request counts."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.records import JsonObject, timestamp
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.web import json_response, public


def movement_view(sandbox: Sandbox, record: JsonObject) -> JsonObject:
    """A movement as the service shows it now: QUEUED, then sent after processing, and
    updated (``updatedAt``) when it was sent."""
    view = public(record)
    if sandbox.processed(record, "_created"):
        view["status"] = contract.MOVEMENT_SENT
        view["updatedAt"] = timestamp(sandbox.decided_at(record, "_created"))
    return view


async def inspect_movements(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /_sandbox/movements: every movement created, as records."""
    return json_response([movement_view(sandbox, m) for m in sandbox.store.values(Table.MOVEMENTS)])


async def inspect_stats(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /_sandbox/stats: request counts by method and path template, and 429s."""
    return json_response(sandbox.stats.snapshot())


C = contract
OPERATIONS = (
    op.ApiOperation(
        "GET", C.INSPECT_MOVEMENTS, inspect_movements, "Emulator only: every movement created"
    ),
    op.ApiOperation(
        "GET", C.INSPECT_STATS, inspect_stats, "Emulator only: request counts and 429s"
    ),
)
"""The endpoints of this module (see ``operations.py``)."""
