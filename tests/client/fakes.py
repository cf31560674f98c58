"""A fake clock whose sleep advances time, so limiter and retry tests never wait, and a
sender on it."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

import httpx

from customs_batch.client import RateLimit, RateLimiter, RetryPolicy, Sender


class FakeClock:
    """Monotonic time that moves only when something sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self.now += seconds


def sender_on(
    clock: FakeClock,
    handler: Callable[[httpx.Request], httpx.Response],
    policy: RetryPolicy | None = None,
) -> Sender:
    """A sender to ``handler`` whose waits (backoff, Retry-After, the rate limiter's) pass
    on ``clock`` alone: no rate limit, the default retries unless ``policy``."""
    return Sender(
        "http://svc.test",
        "k-123",
        rate_limiter=RateLimiter(RateLimit.parse("off"), clock=clock, sleep=clock.sleep),
        retry_policy=policy or RetryPolicy(),
        transport=httpx.MockTransport(handler),
        sleep=clock.sleep,
        clock=clock,
        rng=random.Random(7),
    )
