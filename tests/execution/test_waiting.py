"""``--wait``'s polling loop, which a kind's ``wait`` is handed: settled, out of time, stopped."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

from customs_batch.execution.waiting import WaitOptions, poll
from customs_batch.kinds.model import SETTLED, STOPPED, TIMED_OUT


def _reads(settled_at: int | None) -> tuple[list[int], Callable[[], bool]]:
    calls: list[int] = []

    def read() -> bool:
        calls.append(len(calls) + 1)
        return settled_at is not None and len(calls) >= settled_at

    return calls, read


def _clock() -> Callable[[], float]:
    """A clock one second later at each look (no real time passes)."""
    ticks = itertools.count()
    return lambda: float(next(ticks))


def test_it_reads_until_the_object_is_settled() -> None:
    calls, read = _reads(3)
    clock = _clock()
    ended = poll(read, WaitOptions(timeout=100, interval=0), threading.Event(), clock=clock)
    assert (ended, calls) == (SETTLED, [1, 2, 3])


def test_it_stops_reading_when_the_time_is_up() -> None:
    calls, read = _reads(None)
    clock = _clock()  # one second a look at the clock
    ended = poll(read, WaitOptions(timeout=3, interval=0), threading.Event(), clock=clock)
    assert ended == TIMED_OUT
    assert calls == [1, 2, 3]


def test_a_stop_ends_the_wait_after_the_read_under_way() -> None:
    calls, read = _reads(None)
    stop = threading.Event()
    stop.set()
    clock = _clock()
    ended = poll(read, WaitOptions(timeout=100, interval=5), stop, clock=clock)
    assert (ended, calls) == (STOPPED, [1])
