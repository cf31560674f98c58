"""What every handler works with: the store, the clocks, the limits and the counters."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from customs_batch.sandbox.idempotency import Idempotency
from customs_batch.sandbox.ratelimit import RateLimiter
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.request_schemas import BodySchemas
from customs_batch.sandbox.store import Store

DECIDED_AT = "_decidedAt"
"""The field of a record submitted for processing that holds when customs decides it (customs'
clock, seconds since the epoch): a transit declaration, a movement."""


class Stats:
    """Request counts by method and path template, and how many were answered 429 or 401."""

    def __init__(self) -> None:
        self._requests: Counter[str] = Counter()
        self._rate_limited = 0
        self._unauthenticated = 0
        self._lock = threading.Lock()

    def count(self, label: str) -> None:
        """Count one request of ``label`` (``POST /v1/shipments/{id}/movements``)."""
        with self._lock:
            self._requests[label] += 1

    def count_rate_limited(self) -> None:
        """Count one 429 answer."""
        with self._lock:
            self._rate_limited += 1

    def count_unauthenticated(self) -> None:
        """Count one 401 answer (a missing, unknown or revoked key)."""
        with self._lock:
            self._unauthenticated += 1

    def snapshot(self) -> dict[str, object]:
        """The ``/_sandbox/stats`` body."""
        with self._lock:
            return {
                "requests": dict(sorted(self._requests.items())),
                "rateLimited": self._rate_limited,
                "unauthenticated": self._unauthenticated,
            }


@dataclass
class Sandbox:
    """The emulator's state, shared by every request."""

    store: Store
    clock: Callable[[], float]
    """Customs' clock: decisions, timestamps, Idempotency-Key ages (clock.py)."""
    rate_clock: Callable[[], float]
    """The rate limiter's clock: the real one, unless a test injected its own."""
    processing_seconds: float
    limiter: RateLimiter | None
    request_validators: BodySchemas
    """The compiled schema of each request body, by the body (``request_schemas.py``)."""
    idempotency: Idempotency
    stats: Stats = field(default_factory=Stats)

    def decision_time(self, now: float) -> float:
        """When customs decides what is submitted or requested at ``now``: fixed then, by
        the processing seconds in force then, and kept with the record (``DECIDED_AT``), so
        that no later start with another ``processing_seconds`` takes a decision back or
        brings one forward."""
        return now + self.processing_seconds

    def decided_at(self, record: JsonObject, started: str, decided_at: str = "") -> float:
        """When customs decides (or decided) what ``record`` holds: its ``decided_at`` field
        (``DECIDED_AT`` by default); for a record an older emulator wrote without one,
        ``processing_seconds`` after its ``started`` field. The time its new status is
        stamped with (``updatedAt``)."""
        due = record.get(decided_at or DECIDED_AT)
        if due is None:
            due = record[started] + self.processing_seconds
        return float(due)

    def processed(self, record: JsonObject, started: str, decided_at: str = "") -> bool:
        """Whether customs has decided, by now, what ``record`` holds (see
        :meth:`decided_at`)."""
        return bool(self.clock() >= self.decided_at(record, started, decided_at))
