"""What a careful user does after an interrupted or faulty run: re-apply until it is done,
resolving each departure whose outcome is unknown by what the service really holds."""

from __future__ import annotations

import subprocess
from collections.abc import Collection
from typing import Any

from customs_batch.errors import ExitCode
from tests.e2e.batches import departure_weight
from tests.e2e.conftest import Project

DEPARTURE = "DepartureDeclaration/"
TRANSIENT = (
    "error: cannot reach the service",
    "error: no answer in time",
    "error: the service failed",
)
"""How a failure that may go away by itself starts (``client/_errors.py``)."""
DECISION_TRIES = 10
"""``state adopt`` reads the object first; against an emulator failing two requests in five
its five attempts all fail about once in a hundred, and a person then runs it again."""


def pending_departures(records: dict[str, dict[str, Any]]) -> list[str]:
    """Departures whose submission has an unknown outcome (needs a decision)."""
    return sorted(
        address
        for address, record in records.items()
        if address.startswith(DEPARTURE)
        and record["status"] in ("pending", "unknown")
        and not record["outputs"].get("declarationId")
    )


def resolve_departures(project: Project, only: Collection[str] | None = None) -> list[str]:
    """Adopt every needs-decision departure the emulator did create, forget the others.

    ``only``: just these addresses. Departures are matched by their distinct total weight
    (see ``batches.departures``);
    an ID already recorded for another address is never adopted twice. Returns the
    commands run, for the failure messages.
    """
    records = project.state()
    recorded = {
        record["outputs"].get("declarationId")
        for record in records.values()
        if record["status"] == "applied"
    }
    created = project.sandbox.created_transit()
    done = []
    for address in pending_departures(records):
        if only is not None and address not in only:
            continue
        weight = records[address]["spec"]["totalWeight"]
        matches = [
            declaration_id
            for declaration_id, detail in created.items()
            if detail.get("totalWeight") == weight and declaration_id not in recorded
        ]
        assert len(matches) <= 1, f"{address} was submitted more than once: {matches}"
        argv = ["state", "forget", address]
        if matches:
            argv = ["state", "adopt", address, str(matches[0])]
            recorded.add(matches[0])
        result = decide(project, argv)
        assert result.returncode == 0, result.stderr
        done.append(" ".join(argv))
    return done


def decide(project: Project, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a decision command, again while it fails only because the service did not
    answer (nothing is recorded then: the command records after the service's answer)."""
    result = project.run(*argv)
    for _ in range(DECISION_TRIES - 1):
        if result.returncode != ExitCode.ERROR or not result.stderr.startswith(TRANSIENT):
            break
        result = project.run(*argv)
    return result


def apply_until_done(project: Project, *paths: str, runs: int = 4) -> int:
    """Apply until it exits 0, resolving needs-decision departures between runs; returns
    how many runs it took."""
    history = []
    for attempt in range(1, runs + 1):
        result = project.run("apply", *paths, "--auto-approve")
        history.append(f"exit {result.returncode}\n{result.stdout}\n{result.stderr}")
        if result.returncode == 0:
            return attempt
        assert result.returncode == 1, history[-1]
        history += resolve_departures(project)
    raise AssertionError("apply did not finish:\n" + "\n".join(history))


def departure_weights(count: int) -> list[float]:
    """The total weights of ``batches.departures(count)``."""
    return [departure_weight(number) for number in range(1, count + 1)]
