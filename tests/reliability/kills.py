"""kill -9 of a running apply at a random instant."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from tests.e2e.conftest import Project

PROGRESS = ("done ", "FAILED ", "skipped ")


@dataclass(frozen=True)
class Kill:
    """Where one kill struck: seconds after the run started applying (or after it started,
    while it loaded), and how many outcomes it had printed; ``hit`` is False when the run
    had ended before the kill."""

    phase: str
    seconds: float
    outcomes: int
    hit: bool


def kill_at_random(project: Project, rng: random.Random, window: float) -> Kill:
    """Start ``apply`` and kill -9 it at a random instant: one time in six while it starts
    up (loading, planning, folding the last run's journal), else up to ``window`` seconds
    after it printed ``Applying``."""
    run = project.start("apply", "--auto-approve")
    if rng.random() < 1 / 6:
        phase, delay = "start-up", rng.uniform(0.2, 2.0)
    else:
        phase, delay = "applying", rng.uniform(0.0, window)
        if run.wait_for_line(lambda line: line.startswith("Applying "), timeout=120) is None:
            run.finish()
            return Kill(phase, 0.0, 0, hit=False)
    time.sleep(delay)
    hit = run.process.poll() is None
    run.kill()
    outcomes = sum(1 for line in run.lines if line.startswith(PROGRESS))
    return Kill(phase, round(delay, 2), outcomes, hit)
