"""Ctrl-C and SIGTERM during apply: the first stops new work, the second stops at once.

Every intent is already in the fsynced journal before its request leaves, so stopping at
once loses nothing: the next run folds the journal and decides what to do with each intent.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

INTERRUPTED = 130


class Sending:
    """Where a run stands for :func:`terminate_as_interrupt`: ``started`` once it sends."""

    def __init__(self) -> None:
        self.started = False

    def start(self) -> None:
        """From now on SIGTERM no longer interrupts: the run sends (under
        :func:`graceful_stop`), then finishes what it has sent and recorded."""
        self.started = True


@contextmanager
def terminate_as_interrupt(notify: Callable[[str], None]) -> Iterator[Sending]:
    """Within the block, SIGTERM before the run starts sending (``Sending.start``) is
    Ctrl-C (a ``KeyboardInterrupt``): a run stopped while it waits for the state's lock,
    plans or asks ends as an interrupted one, exit 130, as the user was told, never killed
    by the signal (exit 143, nothing said). A CI runner cancels a job with SIGTERM.
    :func:`graceful_stop` takes both signals over while requests go. After them, every
    request is sent and recorded: SIGTERM is noted (``notify``) and the run finishes (its
    notifications, results copies and summary), with the exit code of what it did."""
    sending = Sending()
    if threading.current_thread() is not threading.main_thread():
        yield sending
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        if not sending.started:
            raise KeyboardInterrupt
        notify(FINISHING)

    previous = signal.signal(signal.SIGTERM, handle)
    try:
        yield sending
    finally:
        signal.signal(signal.SIGTERM, previous)


FINISHING = (
    "Terminate signal received after the run's requests ended, each one recorded: "
    "finishing this run."
)


@contextmanager
def terminate_noted(notify: Callable[[str], None]) -> Iterator[None]:
    """Within the block (the end of a run whose requests have ended: its summary), SIGTERM
    is noted (``notify``) and the run finishes, where it would kill the process (exit 143)
    half-way through its summary."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        notify(FINISHING)

    previous = signal.signal(signal.SIGTERM, handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


_STOPPING: dict[int, str] = {
    signal.SIGINT: (
        "Stopping: no new requests; finishing and recording those in flight. "
        "Press Ctrl-C again to stop at once (the journal keeps every intent)."
    ),
    signal.SIGTERM: (
        "Stopping: a terminate signal (SIGTERM) was received: no new requests; finishing "
        "and recording those in flight. Another SIGTERM (or Ctrl-C) stops at once (the "
        "journal keeps every intent)."
    ),
}
"""What the first signal says, by signal: Ctrl-C is typed, SIGTERM is sent (a CI runner
cancelling its job, `kill`), where no Ctrl-C can follow."""


@contextmanager
def graceful_stop(stop: threading.Event, notify: Callable[[str], None]) -> Iterator[None]:
    """Within the block, the first SIGINT/SIGTERM sets ``stop`` and says so, in the words
    of the signal received; a second (either) exits with 130."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals_seen = 0

    def handle(signum: int, frame: FrameType | None) -> None:
        nonlocal signals_seen
        signals_seen += 1
        if signals_seen == 1:
            stop.set()
            notify(_STOPPING.get(signum, _STOPPING[signal.SIGTERM]))
        else:
            os._exit(INTERRUPTED)

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
