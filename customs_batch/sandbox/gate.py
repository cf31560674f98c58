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
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from customs_batch.sandbox import contract
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.faults import faultable
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.web import check_schema, json_body, json_response


class Gate:
    """Open unless a test closed it; counts the held requests whose clients still wait."""

    def __init__(self) -> None:
        self._opened: anyio.Event | None = None
        self._stopping = False
        self.waiting = 0
        self.writes_only = False
        """Whether the closed gate holds only requests that may change something (every
        method but GET and HEAD): a run's reads pass, its first write waits."""

    @property
    def is_open(self) -> bool:
        """Whether requests pass."""
        return self._opened is None

    def close(self, *, writes_only: bool = False) -> None:
        """Hold every request from now on, or with ``writes_only`` every one but a GET or
        a HEAD (call on the server's event loop)."""
        self.writes_only = writes_only
        if self._opened is None:
            self._opened = anyio.Event()

    def holds(self, scope: Scope) -> bool:
        """Whether the closed gate holds this request."""
        return not (self.writes_only and scope.get("method") in ("GET", "HEAD"))

    def open(self) -> None:
        """Let the waiting requests and every later one through."""
        self.writes_only = False
        if self._opened is not None:
            self._opened.set()
            self._opened = None

    def stop(self) -> None:
        """The emulator is stopping (call on the server's event loop): the requests held now
        are answered 503 with nothing done, as the gate never let them in, and the gate opens
        so that the server's wait for its requests to end ends."""
        self._stopping = True
        self.open()

    async def hold(self, scope: Scope, receive: Receive) -> Receive | None:
        """Hold a request until the gate opens; the ``receive`` to serve it with after, or
        None when it opened because the emulator is stopping (``stop``): not to be served.

        While it is held its body is read, so a client that gives up is seen leaving: it no
        longer counts as waiting. What the emulator then has of the request is served when
        the gate opens, as a service that has a whole request carries it out without knowing
        the client left (a DELETE, which has no body, or a POST whose body had come); a
        request whose body had not all come is ``disconnected`` then, with nothing done. A
        body announced larger than the limit is not read here (its 413 reads none of it).
        """
        opened = self._opened
        if opened is None:
            return receive
        came: list[Message] = []
        counted = True
        self.waiting += 1

        async def watch() -> None:
            nonlocal counted
            size = 0
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    counted = False
                    self.waiting -= 1
                    return
                came.append(message)
                size += len(message.get("body", b""))
                if size > contract.MAX_BODY_BYTES:
                    return  # refused with 413 once served: not kept whole here

        try:
            async with anyio.create_task_group() as group:
                if not _announced_too_large(scope):
                    group.start_soon(watch)
                await opened.wait()
                group.cancel_scope.cancel()
        finally:
            if counted:
                self.waiting -= 1
        if self._stopping:
            return None

        async def replay() -> Message:
            return came.pop(0) if came else await receive()

        return replay

    def snapshot(self) -> dict[str, object]:
        """The ``/_sandbox/gate`` body."""
        return {"open": self.is_open, "writes": self.writes_only, "waiting": self.waiting}


class GateMiddleware:
    """ASGI middleware that holds API requests while the app's gate is closed."""

    def __init__(self, app: ASGIApp, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The open gate is asked first: it is open for every request outside a racing test.
        if (
            not self.gate.is_open
            and scope["type"] == "http"
            and faultable(scope["path"])
            and self.gate.holds(scope)
        ):
            held = await self.gate.hold(scope, receive)
            if held is None:
                await json_response(_STOPPING, contract.SERVICE_UNAVAILABLE)(scope, receive, send)
                return
            receive = held
        await self.app(scope, receive, send)


_STOPPING: JsonObject = {
    "statusCode": contract.SERVICE_UNAVAILABLE,
    "message": "the emulator is stopping: the request was held at the closed test gate "
    "and was not carried out",
    "error": contract.REASONS[contract.SERVICE_UNAVAILABLE],
}


_LIMIT = contract.MAX_BODY_BYTES


def _announced_too_large(scope: Scope) -> bool:
    """Whether ``Content-Length`` says the body is over the limit (or is no length)."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            digits = value.lstrip(b"0")
            return not value.isdigit() or len(digits) > 9 or int(digits or b"0") > _LIMIT
    return False


def _gate(request: Request) -> Gate:
    gate: Gate = request.app.state.gate
    return gate


async def show_gate(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /_sandbox/gate: whether it is open and how many held requests' clients wait."""
    return json_response(_gate(request).snapshot())


async def set_gate(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """POST /_sandbox/gate with ``{"open": false}`` closes it (``"writes": true`` beside:
    for every request but a GET or a HEAD), ``{"open": true}`` opens it."""
    body = check_schema(sandbox.request_validators[SET_GATE], await json_body(request))
    gate = _gate(request)
    if body["open"]:
        gate.open()
    else:
        gate.close(writes_only=bool(body.get("writes", False)))
    return json_response(gate.snapshot())


def _set_gate_schema() -> JsonObject:
    return {
        "type": "object",
        "properties": {
            "open": {"type": "boolean", "description": "false closes the gate, true opens it"},
            "writes": {
                "type": "boolean",
                "description": "with open false: hold only the requests that may change "
                "something (every method but GET and HEAD); default false, every request",
            },
        },
        "required": ["open"],
        "additionalProperties": False,
    }


SET_GATE = op.Body("GateSetting", _set_gate_schema)
_SNAPSHOT: JsonObject = {
    "type": "object",
    "properties": {
        "open": {"type": "boolean", "description": "whether API requests pass"},
        "writes": {
            "type": "boolean",
            "description": "while closed: whether it holds only the requests that may change "
            "something, letting GET and HEAD pass",
        },
        "waiting": {
            "type": "integer",
            "description": "how many held requests have a client still waiting for them",
        },
    },
    "required": ["open", "writes", "waiting"],
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
