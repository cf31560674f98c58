"""The reliability suite (``make reliability``): real processes, many trials, counted.

Every test here is marked ``reliability`` and left out of ``make test`` (whose quick cases
of the same faults live in ``tests/e2e``). Each test adds its figures to one session-wide
record; at the end of the session they are written to ``RELIABILITY_RESULTS`` (JSON), and
to ``docs/reliability.md`` when ``RELIABILITY_DOC`` names that file.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Running
from tests.reliability.report import write_report


@pytest.fixture(scope="session")
def results() -> Iterator[dict[str, Any]]:
    """The figures of the session, by section; written out when the session ends."""
    record: dict[str, Any] = {"started": time.time(), "commit": _commit()}
    yield record
    record["seconds"] = round(time.time() - record["started"], 1)
    target = os.environ.get("RELIABILITY_RESULTS")
    if target:
        Path(target).write_text(json.dumps(record, indent=2, default=str), encoding="utf-8")
    doc = os.environ.get("RELIABILITY_DOC")
    if doc:
        write_report(record, Path(doc))


def _commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip()


@pytest.fixture(autouse=True)
def _load(results: dict[str, Any]) -> None:
    """Sample the machine's load before each test: the figures mean little without it."""
    loads = results.setdefault("load", [])
    loads.append(os.getloadavg()[0])
    results["load"] = [min(loads), max(loads)]


@pytest.fixture(autouse=True)
def _reap_processes() -> Iterator[None]:
    """No process a test started outlives it with open pipes."""
    yield
    Running.reap_all()
