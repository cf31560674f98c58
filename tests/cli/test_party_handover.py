"""A party field handed from one party update to another, through plan and apply on the
built-in local environment: what the plan says, its exit code, and what apply records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import run

DEPARTURE = "DepartureDeclaration/dep-rtm-ham-0001"
GIVER_NAME = "dep-rtm-ham-0001-consignor"
TAKER_NAME = "dep-rtm-ham-0001-consignor-city"
GIVER = f"TransitPartyUpdate/{GIVER_NAME}"
TAKER = f"TransitPartyUpdate/{TAKER_NAME}"


def _update(name: str, declaration: str, consignor: str) -> str:
    return (
        "---\napiVersion: customs-batch/v1\nkind: TransitPartyUpdate\n"
        f"metadata: {{name: {name}}}\nspec:\n  declarationId: {declaration}\n"
        f"  Consignor: {consignor}\n"
    )


def _state(project: Path) -> dict[str, dict[str, object]]:
    path = project / ".customs-batch" / "local" / "state.json"
    resources = json.loads(path.read_text())["resources"]
    assert isinstance(resources, dict)
    return resources


def test_a_giver_whose_taker_is_refused_sends_nothing_and_keeps_the_field(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found in review: the taker of Consignor.city was refused as a second writer of
    Consignor.postcode, which the giver (first by address) started writing; the giver was
    applied all the same, its record let the city go, and the next plan said No changes
    while the service held a city no document declared. Both are refused now; apply sends
    neither and the giver's record keeps the city."""
    updates = project / "manifests" / "party-updates.yaml"
    written = updates.read_text()
    ref = "${ref:DepartureDeclaration/dep-rtm-ham-0001.declarationId}"
    updates.write_text(written + _update(GIVER_NAME, ref, "{city: Rotterdam, street: Kade 1}"))
    code, _, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, err
    ident = _state(project)[DEPARTURE]["outputs"]
    assert isinstance(ident, dict)
    before = _state(project)[GIVER]

    # The giver writes the street and a postcode; a new update, by the declaration's ID,
    # takes the city and writes the postcode too.
    updates.write_text(
        written
        + _update(GIVER_NAME, ref, '{street: Kade 1, postcode: "3011"}')
        + _update(TAKER_NAME, str(ident["declarationId"]), '{city: Rotterdam, postcode: "3011"}')
    )
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 1, out
    assert f"  ! refused        {TAKER}\n" in out
    assert f"  ! refused        {GIVER}\n" in out
    assert (
        f"no longer writes Consignor.city, which it would hand over to {TAKER}, refused in "
        "this plan"
    ) in out
    assert "0 to update" in out and "2 refused" in out and "Requests: 0" in out

    code, out, err = run(capsys, "apply", "--auto-approve")
    assert "0 succeeded, 0 failed, 2 skipped" in out, out + err
    state = _state(project)
    assert state[GIVER] == before
    assert TAKER not in state
