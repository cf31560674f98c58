"""``apply --time-budget``: the duration, the estimate, and a run that stops in time and
goes on where it stopped. Time is a fake clock that the rate limiter's waits move on."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from customs_batch.client import CustomsClient, RateLimit, RateLimiter, Sender
from customs_batch.errors import ExitCode, UsageError
from customs_batch.execution.apply import apply_plan
from customs_batch.execution.scheduler import NodeStatus, walk
from customs_batch.execution.time_budget import BudgetWatch, TimeBudget, parse_time_budget
from customs_batch.planning import plan_changes
from customs_batch.reports import apply_markdown
from customs_batch.state import LocalBackend, RecordStatus

from ..planning.helpers import movement
from .conftest import Emulator


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("5h30m", 19800), ("45m", 2700), ("90s", 90), ("1h15m30s", 4530), (" 2H ", 7200)],
)
def test_durations_in_hours_minutes_and_seconds(text: str, seconds: int) -> None:
    assert parse_time_budget(text).seconds == seconds


@pytest.mark.parametrize(
    "text",
    ["", "5", "5x", "1.5h", "30m5h", "-5m", "5 m", "h", "0s", "0h0m", "\u0661h", "\u096a\u096bm"],
)
def test_a_bad_duration_is_a_usage_error_that_shows_the_spelling(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_time_budget(text)
    assert caught.value.exit_code == ExitCode.USAGE
    assert repr(text) in caught.value.message
    assert caught.value.hint and "90s" in caught.value.hint


@pytest.mark.parametrize("text", ["\u0665h", "4\uff15m", "\u0969\u0966s"])
def test_digits_of_other_scripts_are_no_duration(text: str) -> None:
    # int() reads Arabic-Indic or full-width digits: '\u0665h' was a budget of 5 hours.
    with pytest.raises(UsageError) as caught:
        parse_time_budget(text)
    assert caught.value.exit_code == ExitCode.USAGE
    assert "is not a duration" in caught.value.message


@pytest.mark.parametrize(
    "text", ["8785h", "527041m", "31622401s", "8784h1s", "1" + "0" * 400 + "h", "9" * 5000 + "s"]
)
def test_a_budget_longer_than_a_year_is_a_usage_error_not_a_crash(text: str) -> None:
    # '1' and 400 zeros 'h' ended in "internal error: OverflowError", and 5,000 digits in
    # int()'s ValueError (more than 4,300 digits): both reached the user as a bug.
    with pytest.raises(UsageError) as caught:
        parse_time_budget(text)
    assert caught.value.exit_code == ExitCode.USAGE
    assert "is longer than 8784h (366 days)" in caught.value.message
    assert len(caught.value.message) < 200
    assert caught.value.hint and "5h30m" in caught.value.hint


@pytest.mark.parametrize(("text", "seconds"), [("8784h", 8784 * 3600), ("0008784h", 8784 * 3600)])
def test_a_budget_of_a_year_is_taken(text: str, seconds: int) -> None:
    assert parse_time_budget(text).seconds == seconds


def test_the_budget_exit_code_is_its_own() -> None:
    assert int(ExitCode.OUT_OF_TIME) == 4
    others = {ExitCode.OK, ExitCode.FINDINGS, ExitCode.CHANGES, ExitCode.ERROR}
    assert ExitCode.OUT_OF_TIME not in others | {ExitCode.USAGE, ExitCode.INTERRUPTED}


class FakeTime:
    """A clock that only a sleep moves on."""

    def __init__(self) -> None:
        self.now = 0.0
        self.lock = threading.Lock()

    def clock(self) -> float:
        with self.lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.now += seconds


def test_the_estimate_queues_behind_the_requests_in_flight_and_follows_what_it_sees() -> None:
    time = FakeTime()
    watch = BudgetWatch(TimeBudget(10, "10s", started=0.0), spacing=lambda: 1.0, clock=time.clock)
    assert watch.estimate(in_flight=0) == 1.0
    assert watch.admits(in_flight=9)  # ends at exactly 10 s: inside
    watch.observe(4.0)
    assert watch.estimate(in_flight=0) == 4.0  # slower than the spacing: the service
    time.sleep(6.5)
    assert not watch.admits(in_flight=0)  # 6.5 + 4 > 10
    time.now = 0.0
    assert not watch.admits(in_flight=0), "once out of time, nothing more starts"


def test_the_walk_starts_nothing_once_the_budget_refuses_and_finishes_what_runs() -> None:
    started: list[str] = []
    answers = iter([True, True, False])

    def run(key: str) -> bool:
        started.append(key)
        return True

    results = walk(
        ["a", "b", "c", "d"],
        {"d": ["c"]},
        run,
        parallelism=1,
        stop=threading.Event(),
        admit=lambda in_flight: next(answers),
    )
    assert started == ["a", "b"]
    assert {k: r.status for k, r in results.items()} == {
        "a": NodeStatus.SUCCEEDED,
        "b": NodeStatus.SUCCEEDED,
        "c": NodeStatus.NOT_STARTED,
        "d": NodeStatus.NOT_STARTED,
    }


def test_a_run_stops_when_the_next_operation_would_end_late_and_the_next_run_goes_on(
    tmp_path: Path, emulator: Emulator
) -> None:
    time = FakeTime()
    limiter = RateLimiter(RateLimit(1.0), clock=time.clock, sleep=time.sleep)  # 1 s apart
    sender = Sender(
        "http://sandbox.test", "sandbox-key", rate_limiter=limiter, transport=emulator.transport
    )
    documents = [movement(f"m{i}", i, quantity=i + 1) for i in range(10)]
    backend = LocalBackend(tmp_path)
    with CustomsClient(sender) as client:
        with backend.open("apply") as session:
            plan = plan_changes(documents, session.state)
            report = apply_plan(
                plan,
                session,
                client,
                parallelism=1,
                stop=threading.Event(),
                budget=TimeBudget(4.5, "4.5s", started=0.0),
                clock=time.clock,
            )
        # Requests leave at 0, 1, 2, 3 and 4 s; a sixth would leave at 5 s, past 4.5 s.
        assert report.out_of_time is not None and report.out_of_time.not_started == 5
        assert report.count(NodeStatus.SUCCEEDED) == 5 and not report.ok and not report.stopped
        assert len(emulator.movements()) == 5
        summary = apply_markdown(report, environment="e2e")
        assert "`e2e`: out of time, 5 operation(s) left for the next run" in summary
        state = backend.read()
        assert [r.status for r in state.resources.values()] == [RecordStatus.APPLIED] * 5

        with backend.open("apply") as session:
            plan = plan_changes(documents, session.state)
            assert plan.requests == 5  # exactly what was not started
            again = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    assert again.ok and again.out_of_time is None
    created = emulator.movements()
    assert len(created) == 10
    assert sorted(m["quantity"] for m in created) == list(range(1, 11))


def test_a_budget_that_fits_everything_changes_nothing(tmp_path: Path, emulator: Emulator) -> None:
    documents = [movement(f"m{i}", i, quantity=i + 1) for i in range(3)]
    backend = LocalBackend(tmp_path)
    with backend.open("apply") as session:
        plan = plan_changes(documents, session.state)
        report = apply_plan(
            plan,
            session,
            emulator.client,
            parallelism=2,
            stop=threading.Event(),
            budget=TimeBudget(3600, "1h"),
        )
    assert report.ok and report.out_of_time is None


def test_the_budget_counts_from_the_start_of_the_command(
    tmp_path: Path, emulator: Emulator
) -> None:
    """Time spent before apply sends anything (waiting for the lock, planning) is spent."""
    time = FakeTime()
    time.now = 100.0
    documents = [movement(f"m{i}", i, quantity=i + 1) for i in range(2)]
    with LocalBackend(tmp_path).open("apply") as session:
        plan = plan_changes(documents, session.state)
        report = apply_plan(
            plan,
            session,
            emulator.client,
            parallelism=1,
            stop=threading.Event(),
            budget=TimeBudget(60, "1m", started=30.0),  # the command started 70 s ago
            clock=time.clock,
        )
    assert report.out_of_time is not None and report.out_of_time.not_started == 2
    assert emulator.movements() == []
