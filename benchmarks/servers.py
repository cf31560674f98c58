"""Servers the benchmarks start as child processes, each on a port it binds itself.

A child binds port 0, so the system picks a free port that nobody else can take between
the choice and the bind, and prints ``listening on http://HOST:PORT`` as its first line; the
parent reads the address from that line. ``sandbox serve --port 0`` already announces
itself so; :func:`uvicorn_app` gives a bare app the same start-up.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

UVICORN_MAIN = """
import socket, sys, uvicorn
# IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say TCP (Nagle otherwise).
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
listener.bind(("127.0.0.1", 0))
listener.listen(2048)
print(f"listening on http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
uvicorn.Server(config).run(sockets=[listener])
"""


def uvicorn_app(defines_app: str) -> list[str]:
    """The command that runs the Starlette app ``defines_app`` assigns to ``app`` under
    uvicorn, on a port of its own choosing."""
    return [sys.executable, "-c", defines_app + UVICORN_MAIN]


def sandbox_serve(*options: str) -> list[str]:
    """The command that runs ``customs-batch sandbox serve OPTIONS`` on a port of its own."""
    return [sys.executable, "-m", "customs_batch", "sandbox", "serve", "--port", "0", *options]


@dataclass(frozen=True)
class Server:
    """A server started by :func:`server_process`: its base URL and its process ID."""

    url: str
    pid: int

    def cpu_seconds(self) -> float | None:
        """The CPU time (user and system) the server's threads have used so far, to the
        nanosecond (Linux ``/proc/PID/task/TID/schedstat``); None where there is none."""
        try:
            tasks = list(Path(f"/proc/{self.pid}/task").iterdir())
            return sum(int((task / "schedstat").read_text().split()[0]) for task in tasks) / 1e9
        except (OSError, ValueError, IndexError):
            return None


@contextmanager
def serving(command: list[str]) -> Iterator[str]:
    """Run the server ``command``; yield its base URL once it listens (see
    :func:`server_process`)."""
    with server_process(command) as server:
        yield server.url


@contextmanager
def server_process(command: list[str]) -> Iterator[Server]:
    """Run the server ``command``; yield it once it listens, with the base URL read from its
    first line (printed after the bind and the listen: connections queue). Stopped, and its
    pipe closed, at the end."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    try:
        first = process.stdout.readline()
        if "listening on http" not in first:
            raise SystemExit(f"the server did not start: {command[-1]!r} printed {first!r}")
        yield Server(first.split()[-1], process.pid)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
