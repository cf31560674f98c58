from __future__ import annotations

import itertools
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
    assert RateLimit.parse(text).interval == pytest.approx(interval * MARGIN)


def test_off_means_no_spacing() -> None:
    limit = RateLimit.parse("off")
    assert limit.interval == 0.0
    assert str(limit) == "off"


@pytest.mark.parametrize("text", ["100", "0/second", "5/day", "fast"])
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
    assert all(b - a >= 0.6 for a, b in itertools.pairwise(sent))


def test_an_idle_limiter_does_not_save_up_a_burst() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit.parse("10/second"), clock=clock, sleep=clock.sleep)
    limiter.acquire()
    clock.now += 60
    assert limiter.acquire() == 0.0
    assert limiter.acquire() == pytest.approx(0.1 * MARGIN)


def test_a_429_pauses_every_sender_and_slows_down() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit.parse("10/second"), clock=clock, sleep=clock.sleep)
    limiter.acquire()
    limiter.pause(5.0)
    assert limiter.acquire() == pytest.approx(5.0)
    assert limiter.interval > 0.1
    for _ in range(200):
        limiter.succeeded()
    assert limiter.interval == pytest.approx(0.1 * MARGIN)


def test_the_slowdown_is_bounded() -> None:
    limiter = RateLimiter(RateLimit.parse("10/second"))
    for _ in range(50):
        limiter.pause(0.0)
    assert limiter.interval == pytest.approx(0.4 * MARGIN)


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
