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


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM is Ctrl-C (a ``KeyboardInterrupt``): a run stopped while it
    waits for the state's lock, plans or asks ends as an interrupted one, exit 130, as the
    user was told, never killed by the signal (exit 143, nothing said). A CI runner cancels
    a job with SIGTERM. :func:`graceful_stop` takes both signals over while requests go."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def graceful_stop(stop: threading.Event, notify: Callable[[str], None]) -> Iterator[None]:
    """Within the block, the first SIGINT/SIGTERM sets ``stop``; a second exits with 130."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals_seen = 0

    def handle(signum: int, frame: FrameType | None) -> None:
        nonlocal signals_seen
        signals_seen += 1
        if signals_seen == 1:
            stop.set()
            notify(
                "Stopping: no new requests; finishing and recording those in flight. "
                "Press Ctrl-C again to stop at once (the journal keeps every intent)."
            )
        else:
            os._exit(INTERRUPTED)

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
