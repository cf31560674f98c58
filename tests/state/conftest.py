"""Both state backends behind one fixture, so that one contract suite runs against each."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from customs_batch.state import LocalBackend, StateBackend
from customs_batch.state.postgres import PostgresBackend

STATE_NAME = "contract"

# Builds the backend in a child process from argv: ("local", folder) or ("postgres", url).
MAKE_BACKEND = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord
    from customs_batch.state.postgres import PostgresBackend
    kind, where = sys.argv[1], sys.argv[2]
    backend = LocalBackend(Path(where)) if kind == "local" else PostgresBackend(where, "contract")
    """
)

HOLD_SCRIPT = """
session = backend.open("apply")
session.record(ResourceRecord("Movement/held", RecordStatus.APPLIED, "create", {}, {"movementId": "mov_h"}))
print(session.lock_info.id, flush=True)
sys.stdin.readline()
session.close()
print("released", flush=True)
"""
"""Holds the lock until a line comes on stdin (a gate); prints its lock id, then "released"."""


@dataclass(frozen=True)
class Backends:
    """How to reach one backend, here and from another process."""

    kind: str
    where: str

    def make(self) -> StateBackend:
        if self.kind == "local":
            return LocalBackend(Path(self.where))
        return PostgresBackend(self.where, STATE_NAME)

    def run(self, body: str) -> subprocess.CompletedProcess[str]:
        """Run ``body`` in a child process that has ``backend``; wait for its end."""
        return subprocess.run(
            [sys.executable, "-c", MAKE_BACKEND + textwrap.dedent(body), self.kind, self.where],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def start(self, body: str) -> subprocess.Popen[str]:
        """Start ``body`` in a child process with pipes for its stdin and stdout."""
        return subprocess.Popen(
            [sys.executable, "-c", MAKE_BACKEND + textwrap.dedent(body), self.kind, self.where],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


@pytest.fixture(params=["local", "postgres"])
def backends(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backends]:
    """Each backend in turn: a state folder in tmp_path, or a new PostgreSQL database."""
    if request.param == "local":
        yield Backends("local", str(tmp_path / "state"))
    else:
        yield Backends("postgres", request.getfixturevalue("postgres_url"))
