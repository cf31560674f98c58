"""A fake clock whose sleep advances time, so limiter and retry tests never wait."""

from __future__ import annotations

import threading


class FakeClock:
    """Monotonic time that moves only when something sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self.now += seconds
