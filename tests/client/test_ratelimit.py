from __future__ import annotations

import itertools
import random
import threading
import time

import pytest

from customs_batch.client import RateLimit, RateLimiter
from customs_batch.client._ratelimit import MARGIN
from customs_batch.errors import ConfigError
from tests.client.fakes import FakeClock


@pytest.mark.parametrize(
    ("text", "interval"),
    [("100/minute", 0.6), ("5/second", 0.2), ("1000/hour", 3.6), ("2 / seconds", 0.5)],
)
def test_rate_limits_are_parsed(text: str, interval: float) -> None:
    assert RateLimit.parse(text).spacing == pytest.approx(interval)
    assert RateLimit.parse(text).interval == pytest.approx(interval * MARGIN)


def test_off_means_no_spacing() -> None:
    limit = RateLimit.parse("off")
    assert limit.interval == 0.0
    assert str(limit) == "off"


# \u0661\u0660 and \u0967\u0966 are 10 in Arabic-Indic and Devanagari digits, which \d took for 10.
@pytest.mark.parametrize(
    "text", ["100", "0/second", "5/day", "fast", "\u0661\u0660/minute", "\u0967\u0966/second"]
)
def test_bad_rate_limits_are_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="N/second"):
        RateLimit.parse(text)


def test_requests_are_spaced_evenly_not_burst() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit.parse("100/minute"), clock=clock, sleep=clock.sleep)
    start = clock()
    sent = []
    for _ in range(5):
        limiter.acquire()
        sent.append(clock() - start)
    assert sent == pytest.approx([0.0, 0.6, 1.2, 1.8, 2.4], rel=0.03)
    assert all(b - a >= 0.6 - 1e-9 for a, b in itertools.pairwise(sent))


def test_an_idle_limiter_does_not_save_up_a_burst() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit.parse("10/second"), clock=clock, sleep=clock.sleep)
    limiter.acquire()
    clock.now += 60
    assert limiter.acquire() == 0.0
    assert limiter.acquire() == pytest.approx(0.1)


def test_a_request_leaves_a_period_after_the_answer_n_requests_before_it() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit.parse("10/second"), clock=clock, sleep=clock.sleep)
    start = clock()
    limiter.acquire()
    clock.sleep(0.05)  # the first answer comes back 50 ms after it left
    limiter.release()
    for _ in range(9):
        limiter.acquire()
        limiter.release()
    # Evenly spaced, the eleventh would leave at 1.0 s; the service may have counted the
    # first as late as its answer, so the eleventh waits for 1.05 s.
    limiter.acquire()
    assert clock() - start == pytest.approx(1.05)


def test_after_a_slow_answer_the_requests_held_back_catch_up() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit.parse("10/second"), clock=clock, sleep=clock.sleep)
    start = clock()
    sent, answer = threading.Event(), threading.Event()

    def slow() -> None:  # the first request, whose answer takes 1.3 s
        limiter.acquire()
        sent.set()
        assert answer.wait(timeout=20)
        limiter.release()

    first = threading.Thread(target=slow)
    first.start()
    assert sent.wait(timeout=20)
    for _ in range(9):  # the rest of the window, answered at once
        limiter.acquire()
    limiter.release()
    clock.now = start + 1.3
    answer.set()
    first.join(timeout=20)
    limiter.acquire()
    assert clock() - start == pytest.approx(2.3)  # a period after the slow answer
    # The twelfth was due at 1.1 s: it does not wait another spacing behind the eleventh.
    assert limiter.acquire() == 0.0


def test_a_429_holds_back_only_the_thread_that_got_it_for_its_retry_after() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit.parse("10/second"), clock=clock, sleep=clock.sleep)
    limiter.acquire()
    limiter.pause(2.0)  # this thread's request got a 429 with Retry-After: 2
    others: list[float] = []
    other = threading.Thread(target=lambda: others.append(limiter.acquire()))
    other.start()
    other.join(timeout=20)
    assert others == [pytest.approx(0.1)]  # the next slot, not a pause of two seconds
    assert limiter.acquire() >= 2.0 - 0.1 - 1e-9  # this one waits out its Retry-After


class TickingClock:
    """Fake time that a ticker thread moves on in 1 ms steps, whatever the workers do: a
    worker that sleeps waits for the time to come while the others go on, as a thread that
    the system schedules late does."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.changed = threading.Condition()
        self.stopped = False

    def __call__(self) -> float:
        with self.changed:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self.changed:
            until = self.now + seconds
            while self.now < until and not self.stopped:
                self.changed.wait(timeout=5)

    def tick(self) -> None:
        while True:
            with self.changed:
                if self.stopped:
                    return
                self.now += 0.001
                self.changed.notify_all()
            time.sleep(0)  # let the workers run between two ticks


def test_with_threads_scheduled_late_no_window_ever_holds_more_than_the_limit() -> None:
    clock = TickingClock()
    limiter = RateLimiter(RateLimit.parse("10/second"), clock=clock, sleep=clock.sleep)
    counted: list[float] = []
    lock = threading.Lock()

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(8):
            limiter.acquire()
            clock.sleep(rng.uniform(0.0, 0.3))  # the thread is scheduled late to send
            with lock:
                counted.append(clock())  # the service counts the request now
            clock.sleep(rng.uniform(0.0, 0.1))  # its answer comes back later
            limiter.release()

    ticker = threading.Thread(target=clock.tick)
    ticker.start()
    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(8)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    finally:
        with clock.changed:
            clock.stopped = True
        ticker.join(timeout=20)
    counted.sort()
    assert len(counted) == 64
    # The service's sliding window: any 11 counts in a row span at least one period.
    assert min(b - a for a, b in zip(counted, counted[10:], strict=False)) >= 1.0 - 1e-9


def test_threads_share_the_slots_without_exceeding_the_limit() -> None:
    limiter = RateLimiter(RateLimit.parse("200/second"))
    stamps: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(5):
            limiter.acquire()
            with lock:
                stamps.append(time.monotonic())

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stamps.sort()
    # 20 slots 5 ms apart: the last cannot come before 19 intervals have passed.
    assert stamps[-1] - stamps[0] >= 19 * 0.005 * 0.9


def test_a_reserved_slot_is_the_next_requests_and_a_stop_ends_the_wait_for_one() -> None:
    limiter = RateLimiter(RateLimit.parse("1/hour"))  # the real clock: a stop ends a wait
    running = threading.Event()
    assert limiter.reserve(running)  # the first slot is now
    assert limiter.acquire() == 0.0, "the request takes the reserved slot"
    limiter.release()
    limiter.unreserve()  # nothing reserved: nothing given back twice

    # The next slot is an hour away: a stop ends the wait, and no slot is held.
    stopped = threading.Event()
    result: list[bool] = []
    waiting = threading.Thread(target=lambda: result.append(limiter.reserve(stopped)))
    waiting.start()
    stopped.set()
    waiting.join(timeout=30)
    assert not waiting.is_alive(), "the wait for the slot did not end at the stop"
    assert result == [False]
