"""kill -9 of apply while a request of each kind is at the service (held there by a gate,
so the kill lands in the same place every time): the re-runs create nothing twice, forget
nothing the service did, and ask no decision about a request that never left."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Project, Running
from tests.e2e.gate import GatedProxy
from tests.reliability.runs import Runs, apply_until_done
from tests.reliability.world import Mix, SeededSandbox, audit, write_batch

pytestmark = pytest.mark.e2e

SMALL = Mix(
    lanes=2, per_lane=3, departures=3, groups=2, party_updates=2, deactivations=2, cancellations=2
)
KINDS: dict[str, Callable[[str, str], bool]] = {
    "Movement": lambda method, path: method == "POST" and path.endswith("/movements"),
    "DepartureDeclaration": lambda method, path: (
        method == "POST" and path == "/v1/declarations/transit"
    ),
    "TemplateGroup": lambda method, path: method == "POST" and "/groups" in path,
    "TransitPartyUpdate": lambda method, path: method == "PATCH" and path.endswith("/parties"),
    "HawbDeactivation": lambda method, path: method == "DELETE" and "/hawbs/" in path,
    "ExportCancellation": lambda method, path: (
        method == "DELETE" and path.startswith("/v1/declarations/")
    ),
}


def _killed_at_the_gate(tmp_path: Path, kind: str, *, arrives: bool) -> tuple[Runs, dict[str, Any]]:
    """kill -9 of apply while its second request of ``kind`` waits at a gate, which then
    forwards it (``arrives``) or drops it (the service never hears of it); then apply until
    done, checking nothing is duplicated, lost or left over. The re-runs, and the state right
    after the kill."""
    sandbox = SeededSandbox(tmp_path / "server", SMALL.spares)
    try:
        sandbox.start()
        # One worker: when the gate holds the request, nothing else is between its recorded
        # intent and the socket, so the kill lands in the same place every time (with two,
        # the other worker's request may or may not have left, and the counts below vary).
        project = Project(tmp_path / "project", sandbox, parallelism=1)
        write_batch(project, SMALL)
        with GatedProxy(sandbox.url, hold=2, select=KINDS[kind]) as gate:
            project.edit("customs-batch.yaml", sandbox.url, gate.url)
            run = project.start("apply", "--auto-approve")
            assert gate.held.wait(timeout=60), f"the apply never sent a second {kind}"
            run.kill()  # its request is at the gate: its answer is never read
            if arrives:
                gate.open()
                assert gate.forwarded.wait(timeout=60)
            else:
                gate.drop()
        project.write_config()
        killed = project.state()
        runs = apply_until_done(project)
        found = audit(project, sandbox, SMALL)
    finally:
        Running.reap_all()
        sandbox.stop()
    assert found.details == [], found.details
    assert (found.duplicates, found.lost, found.phantoms) == (0, 0, 0)
    assert found.converged and not found.not_applied
    return runs, killed


@pytest.mark.parametrize("kind", list(KINDS))
def test_kill_9_while_a_request_of_each_kind_is_out(kind: str, tmp_path: Path) -> None:
    runs, _ = _killed_at_the_gate(tmp_path, kind, arrives=True)
    assert runs.forgotten == 0, runs.history
    if kind == "DepartureDeclaration":
        # Created, its answer lost: adopted, not sent again.
        assert runs.adopted == 1, runs.history


def test_a_departure_killed_before_it_reached_the_service_is_sent_again(
    tmp_path: Path,
) -> None:
    """Killed after its intent was recorded, its request never arriving: the next apply
    finds nothing at the service that could be it and submits it again, without asking
    anyone, and without sending any departure twice."""
    runs, killed = _killed_at_the_gate(tmp_path, "DepartureDeclaration", arrives=False)
    held = [a for a, r in killed.items() if r["status"] == "pending"]
    assert held and all(a.startswith("DepartureDeclaration/") for a in held)
    assert (runs.runs, runs.decisions) == (1, 0), runs.history
    assert "never reached the service" in runs.history[0]
