"""A party field handed from one party update to another, through plan and apply on the
built-in local environment: what the plan says, its exit code, and what apply records."""

from __future__ import annotations

import json
import sqlite3
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


def _requests(project: Path) -> list[tuple[str, str]]:
    """Each request apply sent, as history records it: its address and operation."""
    path = project / ".customs-batch" / "local" / "history.jsonl"
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    return [(e["address"], e["operation"]) for e in entries if e["event"] == "request"]


def _consignor_held(project: Path, ident: object) -> dict[str, object]:
    """The consignor the local emulator holds for declaration ``ident``."""
    with sqlite3.connect(project / ".customs-batch" / "local" / "sandbox.sqlite3") as db:
        where = ("transitDeclarations", str(ident))
        (body,) = db.execute("SELECT body FROM records WHERE tbl = ? AND id = ?", where).fetchone()
    consignor = json.loads(body)["_body"]["Consignor"]
    assert isinstance(consignor, dict)
    return consignor


def test_a_party_update_split_while_the_old_one_writes_another_field_sends_each_once(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found in review: the giver changed to write Consignor.postcode instead of the city,
    and a new update took the city: plan refused both, the new one taken for the old one
    under a name moved ("the names of the documents have moved"). Each now sends its own
    PATCH once, to the departure's declaration, and the next plan has nothing to do."""
    updates = project / "manifests" / "party-updates.yaml"
    written = updates.read_text()
    ref = "${ref:DepartureDeclaration/dep-rtm-ham-0001.declarationId}"
    updates.write_text(written + _update(GIVER_NAME, ref, "{city: Rotterdam}"))
    code, _, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, err
    outputs = _state(project)[DEPARTURE]["outputs"]
    assert isinstance(outputs, dict)
    sent = len(_requests(project))

    updates.write_text(
        written
        + _update(GIVER_NAME, ref, '{postcode: "3011"}')
        + _update(TAKER_NAME, ref, "{city: Rotterdam}")
    )
    code, out, err = run(capsys, "plan", "--detailed-exitcode")
    assert code == 2, out + err
    assert (f"  + create         {TAKER}\n      takes Consignor.city over from {GIVER}\n") in out
    assert (
        f"  ~ update         {GIVER}\n      changes Consignor; hands Consignor.city over to "
        f"{TAKER} (the service keeps the value)\n"
    ) in out
    assert "0 refused" in out

    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, out + err
    assert _requests(project)[sent:] == [
        (TAKER, "update-transit-parties"),
        (GIVER, "update-transit-parties"),
    ]
    state = _state(project)
    assert state[TAKER]["spec"] == {
        "declarationId": outputs["declarationId"],
        "Consignor": {"city": "Rotterdam"},
    }
    assert state[GIVER]["spec"] == {
        "declarationId": outputs["declarationId"],
        "Consignor": {"postcode": "3011"},
    }
    held = _consignor_held(project, outputs["declarationId"])
    assert held["city"] == "Rotterdam" and held["postcode"] == "3011"
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 0, out
