"""A gate for tests that race: while it is closed, API requests wait at the door.

A test that needs "the first apply is still running while the second starts" closes the
gate, starts the first run, waits until ``GET /_sandbox/gate`` shows one of its requests
waiting, does what it must, then opens the gate. Nothing depends on one process being slower
than another. The gate holds the same paths faults strike (never ``/_sandbox`` or the OpenAPI
document), before the request is counted or has any effect.
"""

from __future__ import annotations

import anyio
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from customs_batch.sandbox import contract
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.faults import faultable
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.web import check_schema, json_body, json_response


class Gate:
    """Open unless a test closed it; counts the requests waiting behind it."""

    def __init__(self) -> None:
        self._opened: anyio.Event | None = None
        self.waiting = 0

    @property
    def is_open(self) -> bool:
        """Whether requests pass."""
        return self._opened is None

    def close(self) -> None:
        """Hold every request from now on (call on the server's event loop)."""
        if self._opened is None:
            self._opened = anyio.Event()

    def open(self) -> None:
        """Let the waiting requests and every later one through."""
        if self._opened is not None:
            self._opened.set()
            self._opened = None

    async def wait(self) -> None:
        """Return once the gate is open."""
        opened = self._opened
        if opened is None:
            return
        self.waiting += 1
        try:
            await opened.wait()
        finally:
            self.waiting -= 1

    def snapshot(self) -> dict[str, object]:
        """The ``/_sandbox/gate`` body."""
        return {"open": self.is_open, "waiting": self.waiting}


class GateMiddleware:
    """ASGI middleware that holds API requests while the app's gate is closed."""

    def __init__(self, app: ASGIApp, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The open gate is asked first: it is open for every request outside a racing test.
        if not self.gate.is_open and scope["type"] == "http" and faultable(scope["path"]):
            await self.gate.wait()
        await self.app(scope, receive, send)


def _gate(request: Request) -> Gate:
    gate: Gate = request.app.state.gate
    return gate


async def show_gate(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /_sandbox/gate: whether it is open and how many requests wait."""
    return json_response(_gate(request).snapshot())


async def set_gate(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """POST /_sandbox/gate with ``{"open": false}`` closes it, ``{"open": true}`` opens it."""
    body = check_schema(sandbox.request_validators[SET_GATE], await json_body(request))
    gate = _gate(request)
    if body["open"]:
        gate.open()
    else:
        gate.close()
    return json_response(gate.snapshot())


def _set_gate_schema() -> JsonObject:
    return {
        "type": "object",
        "properties": {
            "open": {"type": "boolean", "description": "false closes the gate, true opens it"}
        },
        "required": ["open"],
        "additionalProperties": False,
    }


SET_GATE = op.Body("GateSetting", _set_gate_schema)
_SNAPSHOT: JsonObject = {
    "type": "object",
    "properties": {
        "open": {"type": "boolean", "description": "whether API requests pass"},
        "waiting": {"type": "integer", "description": "how many requests wait at the gate"},
    },
    "required": ["open", "waiting"],
    "additionalProperties": False,
}
CONTROLS = (
    op.ApiOperation(
        "GET", contract.TEST_GATE, show_gate, "Emulator only: the test gate", response=_SNAPSHOT
    ),
    op.ApiOperation(
        "POST",
        contract.TEST_GATE,
        set_gate,
        "Emulator only: close or open the test gate",
        body=SET_GATE,
        response=_SNAPSHOT,
    ),
)
"""The emulator's controls of this module (see ``operations.py``)."""
