"""Create, no change, update: every kind through the real CLI against a real emulator."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Project

pytestmark = pytest.mark.e2e

TEMPLATE_GROUPS = "manifests/template-groups.yaml"
DEPARTURES = "manifests/departures.yaml"
PARTY_UPDATES = "manifests/party-updates.yaml"
MOVEMENTS = "manifests/movements.yaml"


def _plan(project: Project) -> tuple[int, str]:
    done = project.run("plan", "--detailed-exitcode")
    assert done.returncode in (0, 1, 2), done.stderr
    return done.returncode, done.stdout


def _line(text: str, address: str) -> str:
    """The plan's or apply's line about ``address``."""
    lines = [line for line in text.splitlines() if line.rstrip().endswith(address)]
    assert len(lines) == 1, text
    return lines[0]


def test_create_then_no_change_then_update_every_kind(project: Project) -> None:
    project.copy_examples()
    server = project.sandbox

    code, shown = _plan(project)
    assert code == 2
    assert "Plan: 9 to create, 0 to update, 0 unchanged" in shown
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(server.movements()) == 3
    assert server.requests("POST", "/declarations/transit") == 2
    code, shown = _plan(project)
    assert code == 0
    assert "0 to create, 0 to update, 9 unchanged" in shown

    # Changes the API can make: a rename, a party of a departure, a party update again.
    project.edit(TEMPLATE_GROUPS, "name: EU road imports", "name: EU road imports 2027")
    project.edit(DEPARTURES, "name: Initech NV", "name: Initech Belgium NV")
    project.edit(PARTY_UPDATES, "eoriNo: DE123456789012345", "eoriNo: DE123456789012346")
    code, shown = _plan(project)
    assert code == 2
    assert "update" in _line(shown, "TemplateGroup/eu-road")
    assert "update" in _line(shown, "DepartureDeclaration/dep-rtm-ant-0002")
    assert "update" in _line(shown, "TransitPartyUpdate/dep-rtm-ham-0001-consignee")
    assert "0 to create, 3 to update, 6 unchanged, 0 refused" in shown
    patches_before = server.requests("PATCH", "parties")
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    assert server.requests("PATCH", "parties") == patches_before + 2
    assert server.requests("PATCH", "/groups/") == 1
    groups = server.get("/v1/declaration-templates/groups")["result"]
    assert [g["name"] for g in groups if g["code"] == "EU-ROAD"] == ["EU road imports 2027"]
    code, shown = _plan(project)
    assert code == 0, shown

    # Changes the API cannot make: refused by plan, explained, and apply says why.
    project.edit(DEPARTURES, "totalWeight: 137.5", "totalWeight: 138.0")
    project.edit(MOVEMENTS, "quantity: 6\n", "quantity: 5\n")
    code, shown = _plan(project)
    assert code == 1, "a refused change fails the plan, so a pull request with it cannot pass"
    assert "0 to create, 0 to update, 7 unchanged, 2 refused" in shown
    assert "refused" in _line(shown, "DepartureDeclaration/dep-rtm-ham-0001")
    assert "totalWeight of a submitted departure declaration cannot change" in shown
    assert "refused" in _line(shown, "Movement/mov-a1-clearance")
    assert "a movement is immutable once created (changed: quantity)" in shown
    requests_before = server.get("/_sandbox/stats")["requests"]
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 1, done.stdout + done.stderr
    skipped = [line for line in done.stdout.splitlines() if line.startswith("skipped")]
    assert len(skipped) == 2, done.stdout
    assert "DepartureDeclaration/dep-rtm-ham-0001  totalWeight" in skipped[0] + skipped[1]
    assert "Movement/mov-a1-clearance  a movement is immutable" in skipped[0] + skipped[1]
    after = server.get("/_sandbox/stats")["requests"]
    sent = {k: n - requests_before.get(k, 0) for k, n in after.items() if not k.endswith("stats")}
    assert not any(sent.values()), f"a refused change sent requests: {sent}"
    assert len(server.movements()) == 3

    # Reverting the refused changes leaves nothing to do; the deactivation and the
    # cancellation were never sent again.
    project.edit(DEPARTURES, "totalWeight: 138.0", "totalWeight: 137.5")
    project.edit(MOVEMENTS, "quantity: 5\n", "quantity: 6\n")
    code, shown = _plan(project)
    assert code == 0
    assert "0 to create, 0 to update, 9 unchanged" in shown
    assert server.requests("DELETE", "/hawbs/") == 1
    assert server.requests("DELETE", "/declarations/") == 1
