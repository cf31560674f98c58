"""The emulator application: routes, middleware and the shared state."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route

from customs_batch.sandbox import contract
from customs_batch.sandbox.auth import forget_raw_keys
from customs_batch.sandbox.clock import ManualClock, ahead
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.endpoints import bodies, controls, operations
from customs_batch.sandbox.faults import FaultDice, FaultMiddleware, FaultSpec
from customs_batch.sandbox.gate import Gate, GateMiddleware
from customs_batch.sandbox.idempotency import Idempotency
from customs_batch.sandbox.openapi import openapi_document
from customs_batch.sandbox.populate import populate
from customs_batch.sandbox.ratelimit import DEFAULT_RATE_LIMIT, RateLimit, RateLimiter
from customs_batch.sandbox.request_schemas import BodySchemas
from customs_batch.sandbox.requestlog import RequestLog
from customs_batch.sandbox.router import RequestTargets, Router
from customs_batch.sandbox.routing import endpoint
from customs_batch.sandbox.seed import Seed, builtin_seed
from customs_batch.sandbox.store import Store
from customs_batch.sandbox.strictjson import clip
from customs_batch.sandbox.web import error, json_response

ROUTES = [
    endpoint(operation.method, operation.path, operation.handler, query=operation.query_names)
    for operation in operations()
]
"""The routes of every operation the emulator's modules register (``endpoints.py``)."""

CONTROL_ROUTES = [
    endpoint(
        control.method, control.path, control.handler, query=control.query_names, counted=False
    )
    for control in controls()
]
"""The routes of the emulator's controls: authenticated, neither counted nor limited."""


async def _openapi(request: Request) -> Response:
    return json_response(openapi_document())


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    headers = dict(getattr(exc, "headers", None) or {})
    path = clip(request.url.path)
    if status == contract.NOT_FOUND:
        message = f"no endpoint at {path}"
    elif status == contract.METHOD_NOT_ALLOWED:
        message = f"{clip(request.method)} is not allowed on {path}"
        headers["Allow"] = ", ".join(_allowed_methods(request))
    else:
        message = contract.REASONS.get(status, "error")
    answer = error(status, message)
    return json_response(answer.body, status, headers)


def _allowed_methods(request: Request) -> list[str]:
    """Every method of every route at the request's path.

    Starlette's own 405 names only the methods of the first route whose path matches,
    and here several routes share a path (GET and POST of the template groups).
    """
    methods: set[str] = set()
    for route in request.app.routes:
        match, _ = route.matches(request.scope)
        if match is not Match.NONE and isinstance(route, Route):
            methods.update(route.methods or ())
    return sorted(methods)


def create_app(
    *,
    seed: Seed | None = None,
    db_path: Path | None = None,
    rate_limit: RateLimit | None = DEFAULT_RATE_LIMIT,
    processing_seconds: float = 2.0,
    faults: FaultSpec | None = None,
    fault_seed: int | None = None,
    clock: Callable[[], float] | None = None,
    manual_clock: bool = False,
    request_log: TextIO | None = None,
) -> Starlette:
    """The emulator as an ASGI application; ``rate_limit=None`` turns the limit off.

    With ``db_path`` the data lives in that SQLite file and survives restarts (the seed
    fills a new database only); without it, in memory.

    ``clock`` (seconds since the epoch; default the real time) is the time as the
    emulator sees it: the rate limiter's clock, and customs' clock too, so a test that
    injects one moves both. With ``manual_clock`` customs' clock stands still from
    ``clock()`` at start and moves only by ``POST /_sandbox/clock``; the rate limiter keeps
    ``clock`` (see clock.py). On data a manual clock moved (a ``db_path`` of a run with
    ``manual_clock``), customs' real clock is ``clock()`` plus those advances: it never goes
    back.

    With ``request_log`` a line for each request is written to it (``requestlog.py``).
    """
    real = clock or time.time
    store = Store(db_path)
    manual = ManualClock(store, real()) if manual_clock else None
    now: Callable[[], float] = manual or ahead(real, store)
    if store.is_empty:
        populate(store, seed or builtin_seed(), now())
    else:
        forget_raw_keys(store)  # a database an older emulator wrote
    sandbox = Sandbox(
        store=store,
        clock=now,
        rate_clock=real,
        processing_seconds=processing_seconds,
        limiter=RateLimiter(rate_limit) if rate_limit is not None else None,
        request_validators=BodySchemas.load(bodies()),
        idempotency=Idempotency(store),
    )
    gate = Gate()
    middleware = [Middleware(RequestTargets), Middleware(GateMiddleware, gate=gate)]
    if request_log is not None:
        middleware.insert(0, Middleware(RequestLog, lines=request_log))
    if faults is not None and faults.active:
        middleware.append(Middleware(FaultMiddleware, dice=FaultDice(faults, fault_seed)))
    app = Starlette(
        middleware=middleware,
        exception_handlers={HTTPException: _http_error, Exception: _http_error},
    )
    app.router = Router(
        [
            *ROUTES,
            Route(contract.OPENAPI, _openapi, methods=["GET"]),
            *CONTROL_ROUTES,
        ]
    )  # before the first request, which builds the middleware around app.router
    app.state.sandbox = sandbox
    app.state.gate = gate
    app.state.manual_clock = manual
    return app
