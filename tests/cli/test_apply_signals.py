"""SIGTERM to an apply that has not started sending (waiting for the state's lock): an
interrupted run, as Ctrl-C, exit 130 with a word said, never killed by the signal."""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType
from typing import Any

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
    assert "after every request was sent and recorded: finishing this run" in err
    assert "failed" in out and "succeeded" in out  # the summary
