"""The run's one rate limiter: evenly spaced requests, a shared pause on 429.

Why a small class rather than pyrate-limiter or aiolimiter: the service counts requests
in a window, so a bucket that lets 100 requests out at once and then waits a minute trips
it at every window edge; what keeps the limit full without exceeding it is spacing, one
request every ``period / requests`` seconds (GCRA with a burst of one). The limiter must
also be a blocking, thread-safe acquire for a pool of sync workers, pause *every* sender
when one of them gets a 429 with Retry-After, and slow down after one. aiolimiter is
asyncio-only and bursts; pyrate-limiter's buckets allow a whole window's burst and have no
shared pause. The class below is twenty lines of logic and fully tested with a fake clock.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from customs_batch.errors import ConfigError

_UNITS = {"second": 1.0, "minute": 60.0, "hour": 3600.0}
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*/\s*(second|minute|hour)s?\s*$")

# Requests leave this much more than period/requests apart: network jitter can bring two
# requests closer at the service than they were at the client, and a window that sees
# requests+1 answers 429. Two percent costs two percent of throughput and absorbs ~10 ms
# of jitter at 100/minute.
MARGIN = 1.02
# After a 429 the spacing grows by this factor, and shrinks back by SPEEDUP per success,
# never below the configured spacing nor above MAX_SLOWDOWN times it.
SLOWDOWN = 1.25
SPEEDUP = 0.98
MAX_SLOWDOWN = 4.0


@dataclass(frozen=True)
class RateLimit:
    """``requests`` per ``period`` seconds; None requests means no limit (``off``)."""

    requests: float | None
    period: float = 1.0

    @property
    def interval(self) -> float:
        """Seconds between two requests (with a small safety margin); 0 when unlimited."""
        if self.requests is None:
            return 0.0
        return self.period / self.requests * MARGIN

    def __str__(self) -> str:
        if self.requests is None:
            return "off"
        for unit, seconds in _UNITS.items():
            if seconds == self.period:
                return f"{self.requests:g}/{unit}"
        return f"{self.requests:g}/{self.period:g}s"

    @classmethod
    def parse(cls, text: str) -> RateLimit:
        """Parse ``100/minute``, ``5/second``, ``1000/hour`` or ``off``."""
        if text.strip().lower() == "off":
            return cls(None)
        match = _RATE.match(text.lower())
        if match is None or float(match.group(1)) <= 0:
            raise ConfigError(
                f"rate limit {text!r} is not N/second, N/minute, N/hour or off",
                hint="write it like 100/minute (the sandbox) or 1000/hour (production)",
            )
        return cls(float(match.group(1)), _UNITS[match.group(2)])


class RateLimiter:
    """Hands out send slots ``interval`` apart to any number of threads.

    ``acquire()`` blocks until the caller may send. ``pause(seconds)`` (after a 429)
    holds back every sender until then and widens the spacing; ``succeeded()`` narrows it
    back toward the configured limit.
    """

    def __init__(
        self,
        limit: RateLimit,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.limit = limit
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._interval = limit.interval
        self._next_slot = clock()

    @property
    def interval(self) -> float:
        """The current spacing between requests, in seconds."""
        with self._lock:
            return self._interval

    def acquire(self) -> float:
        """Wait for this caller's slot; return how long it waited."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self._interval
        wait = slot - now
        if wait > 0:
            self._sleep(wait)
        return wait

    def pause(self, seconds: float) -> None:
        """A 429 said to wait ``seconds``: hold every sender back and slow down."""
        with self._lock:
            self._next_slot = max(self._next_slot, self._clock() + seconds)
            base = self.limit.interval
            if base > 0:
                self._interval = min(self._interval * SLOWDOWN, base * MAX_SLOWDOWN)

    def succeeded(self) -> None:
        """A request went through: drift the spacing back toward the configured limit."""
        with self._lock:
            self._interval = max(self.limit.interval, self._interval * SPEEDUP)
