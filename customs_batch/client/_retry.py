"""When a failed request may be sent again, and how long to wait first.

A small policy rather than tenacity: the decision depends on the request (method,
Idempotency-Key) as much as on the error, and the 429 wait belongs to the shared rate
limiter, not to one caller's backoff. Backoff is exponential with full jitter (a uniform
draw between zero and the capped exponential), bounded in attempts and in total time.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from customs_batch.client._errors import ConnectionFailedError, ServerError, TlsFailedError
from customs_batch.errors import ServiceError

# Methods whose repetition cannot create anything twice. PATCH is sent with the same body
# on every attempt, so a repeat sets the same values again.
_REPEATABLE = frozenset({"GET", "HEAD", "OPTIONS", "DELETE", "PUT", "PATCH"})


def is_repeatable(method: str, *, has_idempotency_key: bool) -> bool:
    """Whether sending this request twice cannot duplicate a side effect.

    A POST is repeatable only with an Idempotency-Key: the service replays the first
    response for the same key and body instead of creating a second record.
    """
    return method.upper() in _REPEATABLE or (method.upper() == "POST" and has_idempotency_key)


def is_transient(error: ServiceError) -> bool:
    """Whether ``error`` may go away by itself: a 5xx or a network failure or timeout.

    401, 403, 404 and other refusals never do, nor does a secure connection that could not
    be made (an untrusted certificate); a 429 is waited out by the rate limiter.
    """
    if isinstance(error, TlsFailedError):
        return False
    return isinstance(error, ServerError | ConnectionFailedError)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds of the retries: attempts in all, delays and total time in seconds.

    ``max_rate_limited`` bounds how many 429s one request waits out before giving up.
    """

    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_total: float = 120.0
    max_rate_limited: int = 20

    def backoff(self, retry_number: int, rng: random.Random) -> float:
        """The delay before retry ``retry_number`` (1 for the first), with full jitter."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (retry_number - 1))
        return rng.uniform(0.0, ceiling)

    def may_retry(self, *, attempts: int, elapsed: float, next_delay: float) -> bool:
        """Whether another attempt fits in both bounds after ``attempts`` so far."""
        return attempts < self.max_attempts and elapsed + next_delay <= self.max_total


NO_RETRIES = RetryPolicy(max_attempts=1, max_rate_limited=0)
