"""``--wait``: the polling loop a kind's ``wait`` follows an object just sent with (a
departure until it leaves ``processing``, see ``kinds/departure.py``), and following an
object the service has not decided yet (a requested cancellation) until it is."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from customs_batch.client import is_transient
from customs_batch.errors import ServiceError
from customs_batch.kinds.model import SETTLED, STOPPED, TIMED_OUT, Refreshed


@dataclass(frozen=True)
class WaitOptions:
    """How long to wait in all, and how often to ask (each ask also waits its turn at the
    rate limiter, so polling never exceeds the environment's limit)."""

    timeout: float = 600.0
    interval: float = 1.0


def poll(
    read: Callable[[], bool],
    options: WaitOptions,
    stop: threading.Event,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> str:
    """Call ``read`` now and every ``interval`` until it says the object is settled
    (``"settled"``), ``timeout`` has passed (``"timed-out"``) or a stop (``"stopped"``): the
    loop a kind's ``wait`` is handed (see ``kinds/model.py``'s ``Poll``)."""
    deadline = clock() + options.timeout
    while True:
        if read():
            return SETTLED
        if clock() >= deadline:
            return TIMED_OUT
        if stop.wait(options.interval):
            return STOPPED


@dataclass(frozen=True)
class Followed:
    """Where a pending object stood at the last read: ``answer`` None when it was no longer
    found; ``failure`` when it could not be read; ``timed_out``/``stopped`` when the wait
    ended before a decision."""

    answer: Refreshed | None
    read: bool
    failure: str = ""
    timed_out: bool = False
    stopped: bool = False


def follow_pending(
    read: Callable[[], Refreshed | None],
    pending: Callable[[str | None], bool],
    options: WaitOptions | None,
    stop: threading.Event,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> Followed:
    """Read once; with ``options``, read again every ``interval`` while ``pending`` says
    the state is undecided, until ``timeout`` or a stop (the loop of :func:`poll`)."""
    answers: list[Refreshed | None] = []
    failures: list[str] = []

    def decided() -> bool:
        try:
            answer = read()
        except ServiceError as exc:
            failures.append(f"could not read where it stands: {exc.message}")
            # A 5xx or a lost connection that outlasted the client's own retries is asked
            # again at the next interval, until the wait's time is up; a refusal ends it.
            return options is None or not is_transient(exc)
        failures.clear()
        answers.append(answer)
        return answer is None or not pending(answer.service_state) or options is None

    if options is None:
        decided()
        ended = SETTLED
    else:
        ended = poll(decided, options, stop, clock=clock)
    if failures:
        return Followed(None, False, failures[-1])
    return Followed(answers[-1], True, timed_out=ended == TIMED_OUT, stopped=ended == STOPPED)
