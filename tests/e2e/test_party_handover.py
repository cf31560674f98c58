"""A party field moved from one document to another of the same declaration, against a real
emulator: planned as a handover (nothing sent), recorded as the new document's, and the next
plan shows no change; the service keeps the value."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.e2e import batches
from tests.e2e.conftest import Project, Sandbox

pytestmark = pytest.mark.e2e

DEPARTURE = "DepartureDeclaration/dep-e2e-01"
UPDATE = "TransitPartyUpdate/dep-e2e-01-consignee"


def _update(consignee: str) -> str:
    return (
        "apiVersion: customs-batch/v1\n"
        "kind: TransitPartyUpdate\n"
        "metadata: {name: dep-e2e-01-consignee}\n"
        "spec:\n"
        "  declarationId: ${ref:DepartureDeclaration/dep-e2e-01.declarationId}\n"
        f"  Consignee: {consignee}\n"
    )


def _consignee_held(sandbox: Sandbox, ident: int) -> dict[str, object]:
    """The consignee the emulator holds for declaration ``ident`` (the API does not give a
    declaration's parties back)."""
    with sqlite3.connect(sandbox.db) as db:
        where = ("transitDeclarations", str(ident))
        (body,) = db.execute("SELECT body FROM records WHERE tbl = ? AND id = ?", where).fetchone()
    consignee = json.loads(body)["_body"]["Consignee"]
    assert isinstance(consignee, dict)
    return consignee


def test_a_party_field_moved_to_a_party_update_is_handed_over_without_a_request(
    project: Project, sandbox: Sandbox
) -> None:
    project.write("manifests/departures.yaml", batches.departures(1))
    project.write("manifests/party-updates.yaml", _update("{eoriNo: BE0123456789}"))
    applied = project.run("apply", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    ident = project.state()[DEPARTURE]["outputs"]["declarationId"]

    # The consignee's city moves, with its value, from the departure to the party update.
    project.edit("manifests/departures.yaml", "    city: Antwerpen\n", "")
    project.write(
        "manifests/party-updates.yaml", _update("{eoriNo: BE0123456789, city: Antwerpen}")
    )
    assert project.run("validate").returncode == 0
    planned = project.run("plan", "--detailed-exitcode")
    assert planned.returncode == 2, planned.stdout + planned.stderr
    # The taker first: the giver lets the field go only once the taker holds it.
    assert (
        f"  ~ update         {UPDATE}\n"
        f"      takes Consignee.city over from {DEPARTURE} at the value the service holds: "
        "the state records the new owner; nothing is sent\n"
        '      Consignee.city: (none) -> "Antwerpen"\n'
        f"  ~ update         {DEPARTURE}\n"
        f"      hands Consignee.city over to {UPDATE}: the service keeps the value and the "
        "state records the new owner; nothing is sent\n"
        '      Consignee.city: "Antwerpen" -> (none)\n'
    ) in planned.stdout
    assert "Requests: 0" in planned.stdout

    patched = sandbox.requests("PATCH", "parties")
    applied = project.run("apply", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert sandbox.requests("PATCH", "parties") == patched, "a handover sends nothing"
    state = project.state()
    assert "city" not in state[DEPARTURE]["spec"]["Consignee"]
    assert state[UPDATE]["spec"]["Consignee"] == {"eoriNo": "BE0123456789", "city": "Antwerpen"}
    assert project.run("plan", "--detailed-exitcode").returncode == 0
    held = _consignee_held(sandbox, ident)
    assert held["city"] == "Antwerpen" and held["eoriNo"] == "BE0123456789"

    # Handed back with another value: an update by the new owner, the departure.
    project.edit(
        "manifests/departures.yaml",
        "    street: Noorderlaan 147\n",
        ("    city: Antwerp\n    street: Noorderlaan 147\n"),
    )
    project.write("manifests/party-updates.yaml", _update("{eoriNo: BE0123456789}"))
    planned = project.run("plan")
    assert f"takes Consignee.city over from {UPDATE}, writing another value" in planned.stdout
    assert f"hands Consignee.city over to {DEPARTURE}, which sends the value" in planned.stdout
    applied = project.run("apply", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert sandbox.requests("PATCH", "parties") == patched + 1
    assert project.run("plan", "--detailed-exitcode").returncode == 0
    held = _consignee_held(sandbox, ident)
    assert held["city"] == "Antwerp" and held["eoriNo"] == "BE0123456789"
