"""The run's one rate limiter: even spacing, and never more than the service's window.

The service counts requests in a sliding window (the emulator: at most N requests of a key
in any ``period``, counted when it handles them). Spacing alone (one request every
``period / N`` seconds) keeps the average right, but a thread that takes its slot and is
scheduled late sends late, close to the next ones: on a loaded machine, or when the server
handles a request late, the window sees N + 1 and answers 429. So the limiter also keeps the
window itself, in the only time it can vouch for: a request is counted by the service at
some instant between the moment it leaves and the moment its answer is back. A request may
leave only ``period`` after the answer of the request N before it (of every request up to
that one) came back: then no window of the service, sliding or fixed, can hold N + 1 of
this limiter's requests, however threads are scheduled. A slow answer holds the requests
of the next window back; the spacing does not move with them, so the ones after catch up
as soon as the window lets them, and the run keeps the limit's pace, where a safety
margin on the spacing would cost its margin always and still not be safe.

A 429 (another client on the same key, a service that counts differently) makes the request
that got it wait its Retry-After, as the service asks; the others go on, one place fewer in
the window for a period, instead of all waiting a whole second.

Why a small class rather than pyrate-limiter or aiolimiter: those are buckets or windows of
their own clock, with no notion of the answer coming back; aiolimiter is asyncio-only and
bursts. The class below is fully tested with a fake clock.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from customs_batch.errors import ConfigError

_UNITS = {"second": 1.0, "minute": 60.0, "hour": 3600.0}
_RATE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*(second|minute|hour)s?\s*$")  # ASCII digits

LONGEST_SPACING = 86400.0
"""The most seconds a rate limit may put between two requests (one a day): a wait longer
than that is no limit any service sets, and far longer ones overflow the clock's waits."""

# The shared rate limit (PostgreSQL) spaces requests this much more than period/requests apart:
# it keeps no window, and network jitter can bring two requests closer at the service than
# they were at the client.
MARGIN = 1.02


@dataclass(frozen=True)
class RateLimit:
    """``requests`` per ``period`` seconds; None requests means no limit (``off``)."""

    requests: float | None
    period: float = 1.0

    @property
    def spacing(self) -> float:
        """Seconds between two requests at exactly the limit; 0 when unlimited."""
        if self.requests is None:
            return 0.0
        return self.period / self.requests

    @property
    def interval(self) -> float:
        """The spacing with a small safety margin, for a limiter that keeps no window."""
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
                hint="write it like 100/minute (the sandbox) or 1000/hour (production), in "
                "digits 0-9",
            )
        requests = float(match.group(1))
        if not math.isfinite(requests):
            # 400 nines were read as infinity: plan said "inf/second", apply ended in
            # "internal error: OverflowError".
            raise ConfigError(
                f"rate limit {text!r} is more requests than a number here can hold",
                hint="write the service's limit, like 1000/hour, or off for no limit",
            )
        period = _UNITS[match.group(2)]
        if period / requests > LONGEST_SPACING:
            # 1e-28/second passed: plan estimated "24999999999999998346959548 h", and apply
            # failed each request after the first with "OverflowError: timestamp out of range
            # for platform time_t", then hung.
            raise ConfigError(
                f"rate limit {text!r} is fewer than one request a day, which no service asks",
                hint="write the service's limit, like 1000/hour, or off for no limit",
            )
        return cls(requests, period)


class _Sent:
    """One request this limiter let go: when its answer came back (None while it is out)."""

    __slots__ = ("answered",)

    def __init__(self, answered: float | None = None) -> None:
        self.answered = answered


class RateLimiter:
    """Hands out send slots to any number of threads: evenly spaced, and never more than
    the limit's requests in a window that ends at the answer of the oldest of them.

    ``acquire()`` blocks until the caller may send; ``release()`` says its answer is back
    (a thread's next ``acquire`` says so too). ``pause(seconds)`` after a 429 holds back the
    thread that got it for ``seconds``, and counts one unseen request in the window.
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
        # A wait a stop may end (reserve): on the real clock the stop's own wait; a sleep
        # of the caller's (a fake clock's) is slept whole, and the stop looked at after it.
        self._stoppable = sleep is time.sleep
        self._changed = threading.Condition()
        self._next_slot = clock()
        # At most `capacity` requests in any `window` seconds: the limit, with the window
        # scaled for a fractional limit (1.5/second: one request in any 0.67 s).
        requests = limit.requests or 0.0
        self._capacity = max(1, math.floor(requests))
        self._window = limit.period * self._capacity / requests if requests else 0.0
        self._sent: deque[_Sent] = deque()  # the last requests, in the order they left
        self._horizon = -math.inf  # the latest answer of the requests before those
        self._mine = threading.local()

    @property
    def interval(self) -> float:
        """The spacing between requests, in seconds."""
        return self.limit.spacing

    def acquire(self) -> float:
        """Wait for this caller's slot; return how long it waited (0 when the caller
        reserved it: :meth:`reserve`)."""
        if self._reserved():
            return 0.0
        self.release()  # a thread sends one request at a time: its last one is answered
        waited = self._wait_out_retry_after()
        if self.limit.requests is None or self._called_off():
            return waited
        with self._changed:
            while len(self._sent) >= self._capacity:
                oldest = self._sent[0]
                if oldest.answered is None:
                    if self._called_off():
                        return waited  # no slot taken: the caller sends nothing
                    # A window's worth is out: wait for an answer (or, while a stop is
                    # watched, look at it every tenth of a second).
                    self._changed.wait(None if self._watched() is None else 0.1)
                    continue
                self._horizon = max(self._horizon, oldest.answered)
                self._sent.popleft()
            now = self._clock()
            spaced = max(now, self._next_slot)
            slot = max(spaced, self._horizon + self._window)
            # The spacing goes on from where it was, not from a slot the window held back:
            # the requests after a slow answer catch up as soon as the window lets them.
            self._next_slot = spaced + self.limit.spacing
            self._mine.sent = _Sent()
            self._sent.append(self._mine.sent)
        wait = slot - now
        if wait > 0:
            self._nap(wait)
        return waited + max(wait, 0.0)

    def reserve(self, stop: threading.Event) -> bool:
        """Wait for the slot of this thread's next request before anything of it is
        recorded, and hold it for that request's :meth:`acquire`; False, with no slot held,
        when ``stop`` is set first (the wait ends then: a run that is stopped sends nothing
        more, and has recorded nothing of what it did not send)."""
        self._mine.stop = stop
        try:
            self.acquire()
        finally:
            self._mine.stop = None
        if stop.is_set():
            self.release()
            return False
        self._mine.reserved = True
        return True

    def unreserve(self) -> None:
        """Give back a slot :meth:`reserve` held, if no request took it."""
        if self._reserved():
            self.release()

    def _reserved(self) -> bool:
        """Whether this thread holds a reserved slot (it is taken by this call)."""
        if getattr(self._mine, "reserved", False):
            self._mine.reserved = False
            return True
        return False

    def _watched(self) -> threading.Event | None:
        watched: threading.Event | None = getattr(self._mine, "stop", None)
        return watched

    def _called_off(self) -> bool:
        """Whether the stop this thread's :meth:`reserve` watches is set."""
        watched = self._watched()
        return watched is not None and watched.is_set()

    def _nap(self, seconds: float) -> bool:
        """Sleep ``seconds``, or until the stop this thread's :meth:`reserve` watches is
        set (True then)."""
        watched = self._watched()
        if watched is None or not self._stoppable:
            self._sleep(seconds)
            return watched is not None and watched.is_set()
        return watched.wait(seconds)

    def release(self) -> None:
        """The calling thread's request is answered (or failed): it counts in the window
        until ``period`` after now."""
        sent: _Sent | None = getattr(self._mine, "sent", None)
        if sent is None:
            return
        self._mine.sent = None
        with self._changed:
            sent.answered = self._clock()
            self._changed.notify_all()

    def pause(self, seconds: float) -> None:
        """A 429 said to wait ``seconds``: this thread waits that long before it sends
        again; the service counted a request this limiter did not see, so the window holds
        one more for a period."""
        self.release()
        now = self._clock()
        self._mine.not_before = now + seconds
        if self.limit.requests is not None:
            with self._changed:
                self._sent.append(_Sent(answered=now))
                self._changed.notify_all()

    def _wait_out_retry_after(self) -> float:
        not_before: float = getattr(self._mine, "not_before", 0.0)
        self._mine.not_before = 0.0
        wait = not_before - self._clock()
        if wait <= 0:
            return 0.0
        self._nap(wait)
        return wait
