"""``--wait``: poll a submitted departure declaration until it leaves ``processing``, and
follow an object the service has not decided yet (a requested cancellation) until it is."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from customs_batch.client import CustomsClient
from customs_batch.errors import ServiceError
from customs_batch.kinds.model import Refreshed
from customs_batch.planning.diff import describe_error
from customs_batch.vocabulary import FAILED_TRANSIT_STATUSES, PROCESSING


@dataclass(frozen=True)
class WaitOptions:
    """How long to wait in all, and how often to ask (each ask also waits its turn at the
    rate limiter, so polling never exceeds the environment's limit)."""

    timeout: float = 600.0
    interval: float = 1.0


@dataclass(frozen=True)
class WaitResult:
    status: str | None
    errors: tuple[Any, ...]
    ok: bool
    detail: str


def wait_for_departure(
    client: CustomsClient,
    declaration_id: int,
    options: WaitOptions,
    stop: threading.Event,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> WaitResult:
    """Poll until the declaration is no longer ``processing``, the time is up, or a stop."""
    deadline = clock() + options.timeout
    status: str | None = PROCESSING
    while True:
        try:
            detail = client.get_transit(declaration_id)
        except ServiceError as exc:
            return WaitResult(
                status, (), False, f"could not poll declaration {declaration_id}: {exc.message}"
            )
        status = detail.raw.get("status")
        errors = tuple(detail.raw.get("errors") or ())
        if status != PROCESSING:
            if status in FAILED_TRANSIT_STATUSES:
                shown = "; ".join(describe_error(e) for e in errors) or "no errors given"
                return WaitResult(
                    status, errors, False, f"declaration {declaration_id} is {status}: {shown}"
                )
            return WaitResult(status, errors, True, f"declaration {declaration_id} is {status}")
        if clock() >= deadline:
            return WaitResult(
                status,
                errors,
                False,
                f"declaration {declaration_id} still processing after {options.timeout:g} s",
            )
        if stop.wait(options.interval):
            return WaitResult(status, errors, False, "stopped while waiting")


@dataclass(frozen=True)
class Followed:
    """Where a pending object stood at the last read: ``answer`` None when it was no longer
    found; ``failure`` when it could not be read; ``timed_out``/``stopped`` when the wait
    ended before a decision."""

    answer: Refreshed | None
    read: bool
    failure: str = ""
    timed_out: bool = False
    stopped: bool = False


def follow_pending(
    read: Callable[[], Refreshed | None],
    pending: frozenset[str],
    options: WaitOptions | None,
    stop: threading.Event,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> Followed:
    """Read once; with ``options``, read again every ``interval`` while the state is one of
    ``pending``, until ``timeout`` or a stop."""
    deadline = clock() + (options.timeout if options else 0.0)
    while True:
        try:
            answer = read()
        except ServiceError as exc:
            return Followed(None, False, f"could not read where it stands: {exc.message}")
        if answer is None or answer.service_state not in pending or options is None:
            return Followed(answer, True)
        if clock() >= deadline:
            return Followed(answer, True, timed_out=True)
        if stop.wait(options.interval):
            return Followed(answer, True, stopped=True)
