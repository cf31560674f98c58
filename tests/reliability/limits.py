"""Run a command under a memory bound and a time bound, measuring its peak memory."""

from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

GIB = 1 << 30


@dataclass(frozen=True)
class Bounded:
    """How one bounded command ended: exit code (None: killed at the time bound), output,
    peak resident memory in MB and wall time in seconds."""

    code: int | None
    stdout: str
    stderr: str
    peak_mb: float
    seconds: float


def run_bounded(argv: list[str], cwd: Path, *, seconds: float = 30, memory: int = GIB) -> Bounded:
    """``argv`` in ``cwd`` with its address space limited to ``memory`` (RLIMIT_AS) and
    killed after ``seconds``; its own peak RSS read from wait4 (not the session's)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    out, err = cwd / ".bounded-stdout", cwd / ".bounded-stderr"
    started = time.monotonic()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            preexec_fn=limit,
        )
    timer = threading.Timer(seconds, process.kill)
    timer.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        timer.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.monotonic() - started
    code = None if process.returncode == -9 and elapsed >= seconds else process.returncode
    text = out.read_text(errors="replace"), err.read_text(errors="replace")
    out.unlink()
    err.unlink()
    return Bounded(code, text[0], text[1], round(usage.ru_maxrss / 1024, 1), round(elapsed, 2))
