"""SIGTERM to an apply that has not started sending (waiting for the state's lock): an
interrupted run, as Ctrl-C, exit 130 with a word said, never killed by the signal."""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType

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
