"""Customs' clock, and a manual one for tests: ``GET``/``POST /_sandbox/clock``.

Customs' clock decides when a submission is processed and a cancellation decided
(``--processing-seconds`` after it), stamps ``createdAt``/``updatedAt`` and ages
Idempotency-Keys. It is the real time unless the emulator runs with ``--clock manual``: then
it stands still, and only ``POST /_sandbox/clock`` with ``{"advanceSeconds": N}`` moves it,
so a test sees "processing, then decided" without waiting on a real clock.

The rate limiter keeps the real clock under ``--clock manual``: it paces clients that live
in real time (they wait out its ``Retry-After`` with real sleeps), and a clock standing
still would never let its window slide (every request past the limit would be 429 until a
test moved customs' clock).

A manual clock reads the real time at start plus every advance made on its data: with
``--db`` the advances are kept, so a restart never moves customs' clock backwards (a
declaration once decided stays decided). The real clock opened on data a manual clock moved
keeps those advances too, as an offset (``ahead``): customs' clock is the time of day plus
every advance, so it never goes back whichever clock the emulator restarts with.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.records import JsonObject, timestamp
from customs_batch.sandbox.store import Store, Table
from customs_batch.sandbox.web import check_schema, fail, json_body, json_response

_RECORD = "manual"
_LATEST = datetime(9999, 1, 1, tzinfo=UTC).timestamp()
"""No advance goes past this: the service's timestamps have four-digit years."""


def saved_advance(store: Store) -> float:
    """Seconds a manual clock moved customs' clock forward on this data, in every run."""
    saved = store.get(Table.CLOCK, _RECORD)
    return float(saved["advancedSeconds"]) if saved else 0.0


def ahead(real: Callable[[], float], store: Store) -> Callable[[], float]:
    """Customs' real clock on ``store``'s data: the time of day plus every advance a manual
    clock made on it, so reopening moved data on the real clock never takes customs' time
    back (what was decided stays decided, no record was created in the future)."""
    advanced = saved_advance(store)
    if not advanced:
        return real
    return lambda: real() + advanced


class ManualClock:
    """A clock that stands still until ``advance``; thread-safe, its advances kept in the store."""

    def __init__(self, store: Store, start: float) -> None:
        self._advanced = saved_advance(store)
        self._start = start
        self._store = store
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self._start + self._advanced

    @property
    def advanced(self) -> float:
        """Seconds moved forward on this data, in every run of the emulator."""
        return self._advanced

    def advance(self, seconds: float) -> None:
        """Move forward by ``seconds`` (>= 0, finite, not past the year 9999)."""
        with self._lock:
            if not math.isfinite(seconds) or seconds < 0:
                raise ValueError("advance by a finite number of seconds >= 0")
            if self._start + self._advanced + seconds >= _LATEST:
                raise ValueError("the clock cannot go past the year 9999")
            self._advanced += seconds
            self._store.put(Table.CLOCK, _RECORD, {"advancedSeconds": self._advanced})


def _snapshot(sandbox: Sandbox, manual: ManualClock | None) -> dict[str, object]:
    """The ``/_sandbox/clock`` body."""
    body: dict[str, object] = {"manual": manual is not None, "now": timestamp(sandbox.clock())}
    if manual is not None:
        body["advancedSeconds"] = manual.advanced
    elif advanced := saved_advance(sandbox.store):  # the real clock, ahead by them
        body["advancedSeconds"] = advanced
    return body


def _manual(request: Request) -> ManualClock | None:
    """The app's manual clock, or None on the real one."""
    manual: ManualClock | None = request.app.state.manual_clock
    return manual


async def show_clock(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /_sandbox/clock: customs' time, and whether it is the manual clock."""
    return json_response(_snapshot(sandbox, _manual(request)))


async def advance_clock(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """POST /_sandbox/clock with ``{"advanceSeconds": N}`` moves the manual clock N seconds."""
    manual = _manual(request)
    if manual is None:
        fail(
            contract.DUPLICATE_CODE,  # 409: the request conflicts with how it runs
            "the emulator runs on the real clock, which only time moves: "
            "start it with --clock manual to move its clock with this request",
        )
    body = check_schema(sandbox.request_validators[ADVANCE], await json_body(request))
    seconds = body["advanceSeconds"]
    try:
        manual.advance(float(seconds))
    except (ValueError, OverflowError) as exc:
        fail(contract.BAD_REQUEST, f"advanceSeconds {seconds}: {exc}")
    return json_response(_snapshot(sandbox, manual))


def _advance_schema() -> JsonObject:
    return {
        "type": "object",
        "properties": {
            "advanceSeconds": {
                "type": "number",
                "minimum": 0,
                "description": "seconds to move the manual clock forward",
            }
        },
        "required": ["advanceSeconds"],
        "additionalProperties": False,
    }


ADVANCE = op.Body("ClockAdvance", _advance_schema)
_SNAPSHOT: JsonObject = {
    "type": "object",
    "properties": {
        "manual": {"type": "boolean", "description": "whether the emulator runs --clock manual"},
        "now": {"type": "string", "description": "customs' time, ISO 8601 UTC with milliseconds"},
        "advancedSeconds": {
            "type": "number",
            "description": "seconds a manual clock moved customs' clock, in every run on "
            "this data (on the real clock: how far ahead of the time of day it is)",
        },
    },
    "required": ["manual", "now"],
    "additionalProperties": False,
}
_REAL_CLOCK = {str(contract.DUPLICATE_CODE): "the emulator runs on the real clock"}
CONTROLS = (
    op.ApiOperation(
        "GET",
        contract.TEST_CLOCK,
        show_clock,
        "Emulator only: customs' clock",
        response=_SNAPSHOT,
    ),
    op.ApiOperation(
        "POST",
        contract.TEST_CLOCK,
        advance_clock,
        "Emulator only: move the manual clock forward",
        body=ADVANCE,
        errors=_REAL_CLOCK,
        response=_SNAPSHOT,
    ),
)
"""The emulator's controls of this module (see ``operations.py``)."""
