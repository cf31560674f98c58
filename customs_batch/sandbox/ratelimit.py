"""Per-key rate limiting with a sliding window, answering how long to wait when over."""

from __future__ import annotations

import math
import re
import threading
from collections import deque
from dataclasses import dataclass

from customs_batch.errors import UsageError

_PERIODS = {"second": 1.0, "minute": 60.0, "hour": 3600.0}
_SPEC = re.compile(r"^\s*(?P<n>[0-9]+)\s*/\s*(?P<period>second|minute|hour)s?\s*$")


@dataclass(frozen=True)
class RateLimit:
    """At most ``requests`` requests per ``period_seconds``, per API key."""

    requests: int
    period_seconds: float

    def __str__(self) -> str:
        name = next(k for k, v in _PERIODS.items() if v == self.period_seconds)
        return f"{self.requests}/{name}"


DEFAULT_RATE_LIMIT = RateLimit(100, 60.0)  # like the real sandbox


def parse_rate_limit(text: str) -> RateLimit | None:
    """Parse ``N/second``, ``N/minute``, ``N/hour`` or ``off`` (None: no limit)."""
    if text.strip().lower() == "off":
        return None
    match = _SPEC.match(text.lower())
    if match is None or int(match["n"]) < 1:
        raise UsageError(
            f"invalid rate limit '{text}'",
            hint="write N/second, N/minute or N/hour with N >= 1, or off",
        )
    return RateLimit(int(match["n"]), _PERIODS[match["period"]])


class RateLimiter:
    """Remembers when each key's recent requests came; thread-safe."""

    def __init__(self, limit: RateLimit) -> None:
        self._limit = limit
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def admit(self, key: str, now: float) -> int:
        """0 if a request by ``key`` at ``now`` is admitted, else whole seconds to wait (>= 1)."""
        period = self._limit.period_seconds
        with self._lock:
            times = self._seen.setdefault(key, deque())
            while times and times[0] <= now - period:
                times.popleft()
            if len(times) < self._limit.requests:
                times.append(now)
                return 0
            return max(1, math.ceil(times[0] + period - now))
