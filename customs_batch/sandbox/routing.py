"""Routes whose handlers run behind the common gate: counting, auth, rate limit, errors."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import unquote_to_bytes

from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from customs_batch.sandbox import contract
from customs_batch.sandbox.auth import Caller, authenticate
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.ratelimit import RateLimiter
from customs_batch.sandbox.request_schemas import capped
from customs_batch.sandbox.strictjson import clip
from customs_batch.sandbox.web import (
    ApiError,
    error,
    fail,
    header,
    json_response,
    require_single_headers,
)

Handler = Callable[[Request, Sandbox, Caller], Awaitable[Response]]


class IdConvertor(Convertor[int]):
    """``{name:id}``: an integer ID of the service, at most 19 digits (leading zeros aside).

    Starlette's ``int`` convertor matches any run of digits and converts it with ``int()``,
    which raises past 4,300 digits: a GET of ``/v1/declarations/`` and 10,000 nines was a
    500. No ID of the service is past the 64-bit range (``contract.INT_MAX``, 19 digits), so
    a path with a longer one matches no route and is a 404, as an unknown path is.
    """

    regex = "0*[0-9]{1,19}"

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(value)


register_url_convertor("id", IdConvertor())

_CONVERTOR = re.compile(r":[a-z]+}")


def template(path: str) -> str:
    """A route path without Starlette's convertors: ``/v1/declarations/{id}``."""
    return _CONVERTOR.sub("}", path)


def endpoint(
    method: str, path: str, handler: Handler, *, query: Sequence[str] = (), counted: bool = True
) -> Route:
    """A route for ``method path`` whose requests are counted, authenticated and limited.

    ``query`` names the query parameters it takes: a request with any other is 400 naming
    it (a misspelled filter, or the other list family's page size, is never ignored: the
    client would take an unfiltered list for a filtered one).

    With ``counted=False`` (the emulator's controls: its clock, gate and key rotation) the
    requests are authenticated only: a test moving the clock or opening the gate must not
    change the counts it checks, nor wait behind the rate limit it is testing.
    """
    label = f"{method} {template(path)}"
    # A GET route answers HEAD too (HTTP's own): counted as what it is, by its own method.
    head = f"HEAD {template(path)}"
    taken = frozenset(query)
    takes = f"{label} takes {', '.join(query)}" if query else f"{label} takes no query parameters"

    async def gate(request: Request) -> Response:
        sandbox: Sandbox = request.app.state.sandbox
        if counted:
            sandbox.stats.count(head if request.method == "HEAD" else label)
        try:
            require_single_headers(request)
            caller = authenticate(sandbox.store, header(request, b"authorization"), sandbox.clock())
            if counted and sandbox.limiter is not None:
                _admit(sandbox, sandbox.limiter, caller)
            _known_parameters_only(request, taken, takes)
            return await handler(request, sandbox, caller)
        except ApiError as exc:
            if counted and exc.status == contract.INVALID_CREDENTIALS:
                sandbox.stats.count_unauthenticated()
            return json_response(exc.body, exc.status, exc.headers)

    return Route(path, gate, methods=[method], name=label)


def _admit(sandbox: Sandbox, limiter: RateLimiter, caller: Caller) -> None:
    wait = limiter.admit(caller.key, sandbox.rate_clock())
    if wait:
        sandbox.stats.count_rate_limited()
        raise error(
            contract.TOO_MANY_REQUESTS,
            f"rate limit exceeded for this API key; retry in {wait} s",
            retry_after=str(wait),
        )


def _known_parameters_only(request: Request, taken: frozenset[str], takes: str) -> None:
    """400 naming each query parameter of ``request`` not in ``taken``, and each given more
    than once: every parameter takes one value, and keeping one of several silently would
    answer ``?status=new&status=completed`` with the completed records only, as if that were
    what the client asked for."""
    raw = request.scope.get("query_string")
    if not raw:
        return
    try:  # as a body: a value that is not UTF-8 is no text to filter by
        unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError as exc:
        fail(
            contract.BAD_REQUEST,
            [
                f"the query string is not UTF-8 once percent-decoded: byte {exc.start} is not valid there"
            ],
        )
    names = [name for name, _ in request.query_params.multi_items()]
    unknown = [name for name in dict.fromkeys(names) if name not in taken]
    counts = Counter(names)
    repeated = [name for name in counts if counts[name] > 1 and name in taken]
    if unknown or repeated:
        reasons = [f"unknown query parameter '{clip(name)}': {takes}" for name in unknown]
        reasons += [
            f"the query parameter '{clip(name)}' is given {counts[name]} times: it takes one "
            "value; send it once"
            for name in repeated
        ]
        fail(contract.BAD_REQUEST, capped(reasons))
