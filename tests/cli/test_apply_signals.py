"""SIGTERM to an apply that has not started sending (waiting for the state's lock): an
interrupted run, as Ctrl-C, exit 130 with a word said, never killed by the signal."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import filelock
import pytest

from customs_batch.state.lock import StateLock
from tests.cli.conftest import run


@pytest.mark.parametrize("format_name", ["text", "json"])
def test_sigterm_while_waiting_for_the_lock_exits_130_as_ctrl_c(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    format_name: str,
) -> None:
    waiting = StateLock._wait_for_lock

    def terminated_while_waiting(self: StateLock, timeout: float) -> None:
        # Another run holds the lock, and a CI runner cancels the job meanwhile. The signal
        # is handled before raise_signal returns; let through, the wait goes on (and ends).
        signal.raise_signal(signal.SIGTERM)
        waiting(self, timeout)

    seen: list[int] = []

    def outside(signum: int, frame: FrameType | None) -> None:
        seen.append(signum)  # stands for the default action: death by the signal, exit 143

    monkeypatch.setattr(StateLock, "_wait_for_lock", terminated_while_waiting)
    previous = signal.signal(signal.SIGTERM, outside)
    try:
        argv = ("apply", "--auto-approve", "--lock-timeout", "60", "--format", format_name)
        code, out, err = run(capsys, *argv)
        assert signal.getsignal(signal.SIGTERM) is outside  # given back once apply ends
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == [], "SIGTERM reached the process's own handler: apply did not take it"
    assert code == 130, out + err
    assert err.strip() == "Aborted." and out == ""  # as Ctrl-C says it
    assert not (project / ".customs-batch" / "local" / "state.json").exists()


def test_sigterm_after_every_request_was_sent_lets_the_run_finish(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found in review: SIGTERM while the notifications were sent, after everything was
    # applied and recorded, ended the run "Aborted.", exit 130, its summary never printed.
    import customs_batch.commands.apply as apply_command
    from customs_batch.commands._notify import notify as real

    notified: list[str] = []

    def terminated_while_notifying(result: Any, notice: Any) -> None:
        signal.raise_signal(signal.SIGTERM)  # a CI runner cancels the job now
        notified.append(result.status.value)
        real(result, notice)

    seen: list[int] = []

    def outside(signum: int, frame: FrameType | None) -> None:
        seen.append(signum)  # stands for the default action: death by the signal, exit 143

    monkeypatch.setattr(apply_command, "notify", terminated_while_notifying)
    previous = signal.signal(signal.SIGTERM, outside)
    try:
        code, out, err = run(capsys, "apply", "--auto-approve")
        assert signal.getsignal(signal.SIGTERM) is outside  # given back once apply ends
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == [] and notified == ["applied"]
    assert code == 0, out + err
    assert "Aborted." not in err
    assert "after the run's requests ended, each one recorded: finishing this run" in err
    assert "failed" in out and "succeeded" in out  # the summary


def _terminated_in(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> None:
    """``owner.name`` raising SIGTERM as it is called (a CI runner cancels the job then)."""
    real = getattr(owner, name)

    def terminated(*args: Any, **kwargs: Any) -> Any:
        signal.raise_signal(signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, terminated)


@pytest.fixture
def reached_outside() -> Iterator[list[int]]:
    """The SIGTERMs that reach the process's own handler, which stands for the default
    action: death by the signal, exit 143."""
    seen: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    yield seen
    signal.signal(signal.SIGTERM, previous)


def test_sigterm_as_the_sending_starts_stops_the_run_before_any_request(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    reached_outside: list[int],
) -> None:
    # Found in review: the run counted as sending one line before graceful_stop took the
    # signals over; a SIGTERM between the two was taken for one after the run ("finishing
    # this run") and the whole plan was sent, exit 0.
    import customs_batch.commands.apply as apply_command

    _terminated_in(monkeypatch, apply_command, "graceful_stop")
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert reached_outside == []
    assert code == 130, out + err
    assert err.strip() == "Aborted." and "Apply:" not in out  # ended before any request


def test_sigterm_while_the_summary_is_printed_lets_it_finish(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    reached_outside: list[int],
) -> None:
    # Found in review: the summary was printed after apply gave the signal back, so a
    # SIGTERM then killed the process (exit 143) half-way through it.
    from customs_batch.cli._progress import TextPresenter

    _terminated_in(monkeypatch, TextPresenter, "finished")
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert reached_outside == []
    assert code == 0, out + err
    assert "finishing this run" in err and "Apply: " in out


@pytest.mark.parametrize(
    ("signum", "said", "not_said"),
    [
        (signal.SIGTERM, "a terminate signal (SIGTERM) was received", "Press Ctrl-C"),
        (signal.SIGINT, "Press Ctrl-C again to stop at once", "SIGTERM"),
    ],
)
def test_a_signal_while_sending_says_what_was_received_and_what_to_do(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    reached_outside: list[int],
    signum: int,
    said: str,
    not_said: str,
) -> None:
    """A CI runner's SIGTERM while the requests go was told "Press Ctrl-C again", which
    no one can press there: each signal is named, with what may follow it."""
    import customs_batch.commands.apply as apply_command
    from customs_batch.execution.apply import apply_plan as real

    def signalled(*args: Any, **kwargs: Any) -> Any:
        signal.raise_signal(signum)
        return real(*args, **kwargs)

    monkeypatch.setattr(apply_command, "apply_plan", signalled)
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert reached_outside == []
    assert code == 130, out + err
    assert "Stopping: " in err and said in err
    assert not_said not in err
    assert "Interrupted: what was in flight is recorded" in err


def test_an_apply_that_waits_for_another_run_s_lock_says_whose_it_is_first(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found by a probe: a second apply with --lock-timeout waited in silence for the run
    # holding the lock, then said "Nothing to apply.". It now says what it waits for, and
    # whose the lock is, before it waits. The wait itself is cut short here (the lock is
    # still held when it ends: refused, exit 3), so no clock runs.
    from customs_batch.state.backend import LocalBackend

    waiting = StateLock._wait_for_lock
    with LocalBackend(project / ".customs-batch" / "local").open("apply"):

        def no_wait(self: StateLock, timeout: float) -> None:
            raise filelock.Timeout(str(self.lock_path))

        monkeypatch.setattr(StateLock, "_wait_for_lock", no_wait)
        code, out, err = run(capsys, "apply", "--auto-approve", "--lock-timeout", "30")
    assert code == 3, out + err
    said = err.index("waiting up to 30 s for the state lock: lock ")
    assert f"(process {os.getpid()}) for apply since" in err[said:]
    assert said < err.index("error: the state is locked"), err
    # The lock let go, and no wait asked for: nothing is said of one.
    monkeypatch.setattr(StateLock, "_wait_for_lock", waiting)
    code, out, err = run(capsys, "apply", "--auto-approve", "--lock-timeout", "0")
    assert code == 0 and "waiting" not in err, out + err
