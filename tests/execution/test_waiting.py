"""``--wait``'s polling loop, which a kind's ``wait`` is handed (settled, out of time, stopped),
and following an object the service has not decided yet."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

from customs_batch.client import ServerError
from customs_batch.errors import ServiceError
from customs_batch.execution.waiting import WaitOptions, follow_pending, poll
from customs_batch.kinds.model import SETTLED, STOPPED, TIMED_OUT, Refreshed


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


def _answers(*states: str | ServiceError) -> tuple[list[str], Callable[[], Refreshed | None]]:
    asked: list[str] = []

    def read() -> Refreshed | None:
        state = states[len(asked)]
        asked.append(str(state))
        if isinstance(state, ServiceError):
            raise state
        return Refreshed(service_state=state)

    return asked, read


PENDING = frozenset({"cancellation_requested"}).__contains__


def test_a_pending_object_is_read_once_without_wait_options() -> None:
    asked, read = _answers("cancellation_requested")
    followed = follow_pending(read, PENDING, None, threading.Event(), clock=_clock())
    assert followed.answer == Refreshed(service_state="cancellation_requested")
    assert (len(asked), followed.read, followed.timed_out) == (1, True, False)


def test_a_pending_object_is_followed_until_decided_or_out_of_time() -> None:
    options = WaitOptions(timeout=100, interval=0)
    asked, read = _answers("cancellation_requested", "cancellation_requested", "canceled")
    decided = follow_pending(read, PENDING, options, threading.Event(), clock=_clock())
    assert decided.answer == Refreshed(service_state="canceled")
    assert len(asked) == 3
    _, read = _answers(*["cancellation_requested"] * 5)
    late = follow_pending(
        read, PENDING, WaitOptions(timeout=2, interval=0), threading.Event(), clock=_clock()
    )
    assert late.timed_out and late.answer == Refreshed(service_state="cancellation_requested")


def test_a_read_that_fails_ends_the_follow_with_why() -> None:
    _, read = _answers("cancellation_requested", ServiceError("503 unavailable"))
    options = WaitOptions(timeout=100, interval=0)
    followed = follow_pending(read, PENDING, options, threading.Event(), clock=_clock())
    assert (followed.read, followed.answer) == (False, None)
    assert followed.failure == "could not read where it stands: 503 unavailable"


def test_a_read_that_fails_for_a_while_is_asked_again_until_decided() -> None:
    unavailable = ServerError("503 unavailable", status=503, body=None, operation="get")
    options = WaitOptions(timeout=100, interval=0)
    asked, read = _answers("cancellation_requested", unavailable, "canceled")
    followed = follow_pending(read, PENDING, options, threading.Event(), clock=_clock())
    assert (followed.read, followed.answer) == (True, Refreshed(service_state="canceled"))
    assert len(asked) == 3
    # Without --wait, one read: its failure is the answer.
    _, read = _answers(unavailable)
    once = follow_pending(read, PENDING, None, threading.Event(), clock=_clock())
    assert once.failure == "could not read where it stands: 503 unavailable"
    # Still failing when the time is up: why.
    _, read = _answers(*[unavailable] * 3)
    late = follow_pending(
        read, PENDING, WaitOptions(timeout=2, interval=0), threading.Event(), clock=_clock()
    )
    assert (late.read, late.failure) == (False, "could not read where it stands: 503 unavailable")
