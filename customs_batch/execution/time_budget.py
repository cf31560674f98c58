"""``apply --time-budget``: start no operation that would not finish inside the budget.

A CI job has a time limit; an apply that is killed at the limit leaves requests in flight
whose outcome is unknown. With a budget, the run estimates before each operation when it
would end, and starts it only if that is inside the budget. What is in flight finishes and
is recorded; what was not started is simply planned again by the next run of the same
command, on any machine that reaches the same state, so nothing is sent twice.

The estimate is the larger of two figures:

- the rate limit's queue: an operation started now waits behind every request in flight, so
  it ends no sooner than ``(in flight + 1) x the limiter's current spacing`` from now;
- the observed time of an operation: the mean of the last operations' durations, which
  holds what the spacing alone does not (the service's answer time, ``--wait`` polls, a
  budget shared with other processes through the state database).
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from customs_batch.errors import UsageError

RECENT = 20
"""How many of the last operations the observed time is the mean of."""

_DURATION = re.compile(r"^(?:(?P<h>[0-9]+)h)?(?:(?P<m>[0-9]+)m)?(?:(?P<s>[0-9]+)s)?$")
"""The digits 0-9 only: ``\\d`` also takes other scripts' digits, which int() reads."""

MAX_BUDGET_HOURS = 8784
"""366 days: no run lasts longer, and a longer number (``10...0h``, thousands of digits) would
not even convert to a float."""


@dataclass(frozen=True)
class TimeBudget:
    """How long a run may take: ``seconds`` from ``started`` (on the monotonic clock; by
    default when the budget was made, at the start of the command, so that waiting for the
    lock and planning count too), as the user wrote it."""

    seconds: float
    text: str
    started: float = field(default_factory=time.monotonic)

    def __str__(self) -> str:
        return self.text


def parse_time_budget(text: str) -> TimeBudget:
    """``5h30m``, ``45m``, ``90s``, ``1h15m30s``; a UsageError for anything else."""
    compact = text.strip().lower()
    match = _DURATION.match(compact)
    if not compact or match is None:
        raise UsageError(
            f"--time-budget {text!r} is not a duration",
            hint="write hours, minutes and seconds in that order, each a whole number in "
            "digits 0-9: 5h30m, 45m, 90s or 1h15m30s",
        )
    # Leading zeros aside, a number of more digits than the limit has is above it: it is
    # never converted (int() refuses more than 4,300 digits, float() overflows far sooner).
    longest = len(str(MAX_BUDGET_HOURS * 3600))
    if any(len((match[unit] or "").lstrip("0")) > longest for unit in ("h", "m", "s")):
        seconds = MAX_BUDGET_HOURS * 3600 + 1
    else:
        seconds = sum(
            int(match[unit] or 0) * factor for unit, factor in (("h", 3600), ("m", 60), ("s", 1))
        )
    if seconds > MAX_BUDGET_HOURS * 3600:
        raise UsageError(
            f"--time-budget {text[:40]!r}{'…' if len(text) > 40 else ''} is longer than "
            f"{MAX_BUDGET_HOURS}h (366 days), the longest budget a run takes",
            hint="give the time the CI job allows, such as 5h30m; leave --time-budget out "
            "for a run without one",
        )
    if seconds <= 0:
        raise UsageError(
            f"--time-budget {text!r} leaves no time to apply anything",
            hint="give a duration above zero, such as 90s or 5h30m",
        )
    return TimeBudget(float(seconds), compact)


@dataclass(frozen=True)
class OutOfTime:
    """A run the budget stopped: ``not_started`` operations are left for the next run."""

    budget: TimeBudget
    not_started: int

    def describe(self, resume: str) -> str:
        """What the user reads: what is left and the command that goes on."""
        return (
            f"Time budget of {self.budget} used up: {self.not_started} operation(s) not "
            "started; what was in flight is recorded. The same command goes on where this "
            f"run stopped, on any machine that reaches the same state:\n  {resume}"
        )


class BudgetWatch:
    """Decides, before each operation starts, whether it would end inside the budget.

    ``spacing`` is the rate limiter's current spacing between requests (0 when unlimited).
    Thread-safe: the workers of a walk report their operations' durations concurrently.
    """

    def __init__(
        self,
        budget: TimeBudget,
        *,
        spacing: Callable[[], float],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.budget = budget
        self._spacing = spacing
        self._clock = clock
        self._deadline = budget.started + budget.seconds
        self._recent: deque[float] = deque(maxlen=RECENT)
        self._lock = threading.Lock()
        self.exhausted = False

    def estimate(self, in_flight: int) -> float:
        """Seconds an operation started now would take, with ``in_flight`` ahead of it."""
        queued = (in_flight + 1) * self._spacing()
        with self._lock:
            observed = sum(self._recent) / len(self._recent) if self._recent else 0.0
        return max(queued, observed)

    def admits(self, in_flight: int) -> bool:
        """Whether an operation started now would end inside the budget. Once it says no,
        it says no for the rest of the run (the walk starts nothing more)."""
        if self.exhausted:
            return False
        if self._clock() + self.estimate(in_flight) > self._deadline:
            self.exhausted = True
        return not self.exhausted

    def observe(self, seconds: float) -> None:
        """One operation took ``seconds``, from its start to its recorded outcome."""
        with self._lock:
            self._recent.append(seconds)
