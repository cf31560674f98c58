"""The lifecycle of a resource, as plan, apply and status tell it, against a real emulator.

Each test is one promise of the resource model: a plan tells the truth about what exists at
the service, and exits 1 while anything needs the user.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from customs_batch.state import LocalBackend
from tests.e2e import batches
from tests.e2e.conftest import Project, Sandbox

pytestmark = pytest.mark.e2e


def _plan(project: Project, *extra: str) -> tuple[int, dict[str, dict[str, object]]]:
    done = project.run("plan", "--format", "json", *extra)
    assert done.stdout, done.stderr
    return done.returncode, {c["address"]: c for c in json.loads(done.stdout)["changes"]}


def test_a_rejected_departure_fails_the_plan_and_a_corrected_one_replaces_it(
    project: Project, sandbox: Sandbox
) -> None:
    project.write("manifests/departures.yaml", batches.departures(2))
    project.edit("manifests/departures.yaml", "E2E-0001", "INVALID-0001")
    applied = project.run("apply", "--auto-approve", "--wait")
    assert applied.returncode == 1, applied.stdout + applied.stderr
    assert "invalid" in applied.stdout + applied.stderr

    address = "DepartureDeclaration/dep-e2e-01"
    code, changes = _plan(project)
    assert code == 1, "a departure customs rejected must not pass a pipeline"
    assert changes[address]["action"] == "rejected"
    assert "SANDBOX_INVALID_REFERENCE" in str(changes[address]["reason"])
    assert changes["DepartureDeclaration/dep-e2e-02"]["action"] == "no-change"
    assert project.run("plan", "--detailed-exitcode").returncode == 1
    shown = project.run("plan").stdout
    assert f"rejected       {address}" in shown
    status = project.run("status").stdout
    assert "invalid  rejected" in status

    first_id = project.state()[address]["outputs"]["declarationId"]
    project.edit("manifests/departures.yaml", "INVALID-0001", "E2E-0101")
    code, changes = _plan(project)
    assert code == 0
    assert changes[address]["action"] == "resubmit"
    assert changes[address]["values"] == [
        {"path": "commercialReference", "old": "INVALID-0001", "new": "E2E-0101"}
    ]
    applied = project.run("apply", "--auto-approve", "--wait")
    assert applied.returncode == 0, applied.stdout + applied.stderr

    record = project.state()[address]
    assert record["outputs"]["declarationId"] != first_id
    assert record["remoteStatus"] == "ready"
    assert record["superseded"][0]["outputs"]["declarationId"] == first_id
    assert record["superseded"][0]["remoteStatus"] == "invalid"
    assert len(sandbox.created_transit()) == 3  # two submitted, one resubmitted: no more
    assert project.run("plan", "--detailed-exitcode").returncode == 0


def test_a_change_to_a_submitted_departure_is_refused_without_suggesting_a_second_one(
    project: Project,
) -> None:
    project.write("manifests/departures.yaml", batches.departures(1))
    assert project.run("apply", "--auto-approve").returncode == 0
    project.edit("manifests/departures.yaml", "E2E-0001", "E2E-0999")
    code, changes = _plan(project, "--detailed-exitcode")
    assert code == 1
    change = changes["DepartureDeclaration/dep-e2e-01"]
    assert change["action"] == "refused"
    assert "declare the same goods twice" in str(change["reason"])
    assert "new name to send a new request" not in str(change["reason"])


def test_a_movement_refused_by_the_service_and_renamed_is_dropped_not_orphaned(
    project: Project, sandbox: Sandbox
) -> None:
    text = batches.movements(per_lane=1, lanes=1).replace("rpty_p1", "rpty_nobody")
    project.write("manifests/movements.yaml", text)
    applied = project.run("apply", "--auto-approve")
    assert applied.returncode == 1, applied.stdout + applied.stderr
    assert project.state()["Movement/mov-l0-01"]["status"] == "failed"

    project.write("manifests/movements.yaml", text.replace("mov-l0-01", "mov-l0-01b"))
    code, changes = _plan(project)
    assert code == 0
    assert changes["Movement/mov-l0-01"]["action"] == "drop"
    assert changes["Movement/mov-l0-01b"]["action"] == "create"
    shown = project.run("plan").stdout
    assert "1 to drop" in shown and "0 orphaned" in shown

    project.write("manifests/movements.yaml", batches.movements(per_lane=1, lanes=1))
    project.edit("manifests/movements.yaml", "mov-l0-01", "mov-l0-01b")
    applied = project.run("apply", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert set(project.state()) == {"Movement/mov-l0-01b"}
    assert len(sandbox.movements()) == 1


def test_an_object_the_service_lost_is_said_not_found_until_confirmed_gone(
    project: Project, sandbox: Sandbox
) -> None:
    """The service lost what the state records (its data reset): refresh says each object
    is not found with the way out, counts no change and exits 1 (the user must confirm),
    the same on every run; status and plan say so too, not ready and "No changes"; once
    `state rm --gone` confirms it, the next apply submits it again."""
    project.write("manifests/departures.yaml", batches.departures(1))
    assert project.run("apply", "--auto-approve", "--wait").returncode == 0
    address = "DepartureDeclaration/dep-e2e-01"
    sandbox.port = int(sandbox.url.rsplit(":", 1)[1].split("/")[0])  # the same service
    sandbox.stop()
    for lost in sandbox.directory.glob("sandbox.sqlite3*"):
        lost.unlink()  # its data reset to the seed
    sandbox.start()
    assert sandbox.created_transit() == {}

    for _ in range(2):
        refreshed = project.run("refresh", "--detailed-exitcode")
        assert refreshed.returncode == 1, refreshed.stdout + refreshed.stderr
        assert f"{address}: " in refreshed.stdout and "not found at the service" in refreshed.stdout
        assert f"`customs-batch state rm --gone {address}`" in refreshed.stdout
        assert "0 change(s) found, 1 no longer found at the service" in refreshed.stderr
    record = project.state()[address]
    assert (record["status"], record["remoteStatus"]) == ("applied", "ready")  # as last read
    assert record["notFoundAt"]
    status = project.run("status")
    assert f"{address}  " in status.stdout and "not-found" in status.stdout, status.stdout
    assert "ready" not in status.stdout.split("(")[0], status.stdout
    shown = json.loads(project.run("status", "--format", "json").stdout)["declarations"]
    assert [(d["lifecycle"], d["serviceState"]) for d in shown] == [("not-found", None)]
    code, changes = _plan(project, "--detailed-exitcode")
    assert code == 1
    assert changes[address]["action"] == "needs-decision"
    assert "state rm --gone" in str(changes[address]["reason"])
    assert project.run("apply", "--auto-approve").returncode == 1  # nothing sent for it
    assert sandbox.created_transit() == {}

    gone = project.run("state", "rm", "--gone", address)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    applied = project.run("apply", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert len(sandbox.created_transit()) == 1
    assert "notFoundAt" not in project.state()[address]


def test_an_id_the_service_gave_to_another_object_is_never_written_to(
    tmp_path: Path, project: Project, sandbox: Sandbox
) -> None:
    """The service's data was reset and the recorded IDs given again to another client's
    departure (another weight) and group (another code): refresh says the service holds
    another object there (exit 1), plan holds both for a decision, and apply sends nothing
    to them, whatever the documents change; `state rm --gone` then lets them be created
    anew."""
    project.write("manifests/departures.yaml", batches.departures(1))
    project.write("manifests/groups.yaml", GROUPS)
    assert project.run("apply", "--auto-approve", "--wait").returncode == 0
    departure, group = "DepartureDeclaration/dep-e2e-01", "TemplateGroup/plain"
    ids = {a: project.state()[a]["outputs"] for a in (departure, group)}
    sandbox.port = int(sandbox.url.rsplit(":", 1)[1].split("/")[0])  # the same service
    sandbox.stop()
    for lost in sandbox.directory.glob("sandbox.sqlite3*"):
        lost.unlink()  # its data reset to the seed
    sandbox.start()
    other = Project(tmp_path / "other-client", sandbox)
    other.write("manifests/departures.yaml", batches.departures(1).replace("101.0", "150.0"))
    other.write("manifests/groups.yaml", GROUPS.replace("PLAIN-1", "OTHER-1"))
    assert other.run("apply", "--auto-approve", "--wait").returncode == 0
    assert {
        a: other.state()[a]["outputs"]["declarationId" if "Dep" in a else "id"] for a in ids
    } == {
        departure: ids[departure]["declarationId"],
        group: ids[group]["id"],
    }, "the emulator gave the same IDs again"

    refreshed = project.run("refresh", "--detailed-exitcode")
    assert refreshed.returncode == 1, refreshed.stdout + refreshed.stderr
    assert "totalWeight 150.0 there, 101.0 recorded" in refreshed.stdout
    assert "code 'OTHER-1' there, 'PLAIN-1' recorded" in refreshed.stdout
    assert "another object" in project.run("status").stdout
    project.edit("manifests/departures.yaml", "city: Antwerpen", "city: Antwerp")
    project.edit("manifests/groups.yaml", "name: Plain group", "name: Plainer group")
    code, changes = _plan(project, "--detailed-exitcode")
    assert code == 1
    assert {changes[a]["action"] for a in ids} == {"needs-decision"}
    assert "another object" in str(changes[departure]["reason"])
    assert project.run("apply", "--auto-approve").returncode == 1
    assert sandbox.requests("PATCH", "") == 0, "a write went to another client's object"

    for address in ids:
        gone = project.run("state", "rm", "--gone", address)
        assert gone.returncode == 0, gone.stdout + gone.stderr
    applied = project.run("apply", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert len(sandbox.created_transit()) == 2
    assert project.state()[departure]["outputs"]["declarationId"] != ids[departure]["declarationId"]


LOSES_THE_PATCH = ("drop-after=0.9", 56)
"""Faults and their seed under which the first request (the read before a group's PATCH)
is answered and the next ones (the PATCH, and any attempt of it again) take effect and lose
their answers."""


def _reset_with_the_id_taken(tmp_path: Path, sandbox: Sandbox, groups: str) -> None:
    """The emulator's data reset to the seed, and another client's group given the ID again."""
    sandbox.stop()
    for lost in sandbox.directory.glob("sandbox.sqlite3*"):
        lost.unlink()
    sandbox.start()
    other = Project(tmp_path / "other-client", sandbox)
    other.write("manifests/groups.yaml", groups)
    assert other.run("apply", "--auto-approve").returncode == 0


def test_a_repeat_refused_for_another_object_is_held_by_the_next_plan(
    tmp_path: Path, project: Project, sandbox: Sandbox
) -> None:
    """A group's PATCH took effect and its answer was lost; the service's data was then
    reset and the ID given to another client's group. The repeat reads it first and sends
    nothing; it used to note nothing either, so every plan planned the update again and
    every apply read and refused it again. Now the record is noted: the next plan holds it
    for a decision with the ways out of an unknown outcome, and apply sends nothing."""
    project.write("manifests/groups.yaml", GROUPS)
    assert project.run("apply", "--auto-approve").returncode == 0
    address = "TemplateGroup/plain"
    ident = project.state()[address]["outputs"]["id"]
    project.edit("manifests/groups.yaml", "name: Plain group", "name: Plainer group")
    faults, seed = LOSES_THE_PATCH
    # On the same port: a service named anew would be read back first (one more request).
    sandbox.port = int(sandbox.url.rsplit(":", 1)[1].split("/")[0])
    sandbox.start(faults=faults, fault_seed=seed)
    lost = project.run("apply", "--auto-approve")
    assert lost.returncode == 1, lost.stdout + lost.stderr
    assert project.state()[address]["status"] == "unknown", lost.stdout
    _reset_with_the_id_taken(tmp_path, sandbox, GROUPS.replace("PLAIN-1", "OTHER-1"))

    refused = project.run("apply", "--auto-approve")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "not sent: the service holds another object at" in refused.stdout
    record = project.state()[address]
    assert record["status"] == "unknown" and "OTHER-1" in record["foundInstead"]
    code, changes = _plan(project, "--detailed-exitcode")
    assert code == 1
    held = changes[address]
    assert held["action"] == "needs-decision", held
    reason = " ".join(str(held["reason"]).split())
    assert (
        f"`customs-batch state forget {address}`, then `customs-batch import {address} {ident}`"
        in reason
    )
    assert "needs-decision" in project.run("state", "list").stdout
    reads = sandbox.requests("GET", "groups")
    again = project.run("apply", "--auto-approve")
    assert again.returncode == 1, again.stdout + again.stderr
    assert sandbox.requests("GET", "groups") == reads, "the held record was read again"
    assert sandbox.requests("PATCH", "") == 0, "a write went to another client's group"


def test_a_group_left_at_the_first_of_two_lost_code_changes_is_changed_to_the_last(
    project: Project, sandbox: Sandbox
) -> None:
    """A group's code changed 1 -> 2 and the answer lost after the change was made, then
    2 -> 3 and the answer lost again, before it was made. The record remembered 1 and 3
    only, so the group at 2 was taken for another object and the change never sent again.
    Now it remembers 2 as well: the next apply changes the code to 3."""
    project.write("manifests/groups.yaml", GROUPS)
    assert project.run("apply", "--auto-approve").returncode == 0
    address = "TemplateGroup/plain"
    ident = project.state()[address]["outputs"]["id"]
    sandbox.port = int(sandbox.url.rsplit(":", 1)[1].split("/")[0])  # the same service
    faults, seed = LOSES_THE_PATCH
    for code, lose in (("PLAIN-2", faults), ("PLAIN-3", faults.replace("drop-after", "drop"))):
        project.edit("manifests/groups.yaml", "PLAIN-" + str(int(code[-1]) - 1), code)
        sandbox.start(faults=lose, fault_seed=seed)
        lost = project.run("apply", "--auto-approve")
        assert lost.returncode == 1, lost.stdout + lost.stderr
        assert project.state()[address]["status"] == "unknown", lost.stdout
    sandbox.start()
    groups = sandbox.get("/v1/declaration-templates/groups")["result"]
    assert [g["code"] for g in groups if g["id"] == ident] == ["PLAIN-2"]

    applied = project.run("apply", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    groups = sandbox.get("/v1/declaration-templates/groups")["result"]
    assert [g["code"] for g in groups if g["id"] == ident] == ["PLAIN-3"]
    assert project.state()[address]["status"] == "applied"


def test_a_group_whose_code_was_changed_there_is_taken_back_by_the_way_its_refusal_says(
    project: Project, sandbox: Sandbox
) -> None:
    """A colleague changed the group's code at the service (the same PATCH customs-batch
    sends): refresh cannot tell it from an ID given again, and holds it. Found by an outside
    probe: the words said only `state rm --gone`, and the apply after it created a second
    group. They now name `import` after it, which takes the group back; the next apply
    changes the code back, and the service holds one group."""
    project.write("manifests/groups.yaml", GROUPS)
    assert project.run("apply", "--auto-approve").returncode == 0
    address = "TemplateGroup/plain"
    ident = project.state()[address]["outputs"]["id"]
    changed = sandbox.client.patch(
        f"/v1/declaration-templates/groups/{ident}", json={"code": "X-1"}
    )
    assert changed.status_code == 200, changed.text
    refreshed = project.run("refresh", "--detailed-exitcode")
    assert refreshed.returncode == 1, refreshed.stdout + refreshed.stderr
    said = " ".join(refreshed.stdout.split())
    way = (
        f"`customs-batch state rm --gone {address}`, then `customs-batch import {address} {ident}`"
    )
    assert way in said, said
    assert project.run("state", "rm", "--gone", address).returncode == 0
    imported = project.run("import", address, str(ident))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert project.run("apply", "--auto-approve").returncode == 0
    groups = sandbox.get("/v1/declaration-templates/groups")["result"]
    assert [(g["id"], g["code"]) for g in groups if g["name"] == "Plain group"] == [
        (ident, "PLAIN-1")
    ]


def test_an_import_at_another_groups_id_is_refused_and_rewrites_nothing(
    project: Project, sandbox: Sandbox
) -> None:
    """A mistyped ID: `import` of a group document of code PLAIN-1 at the ID of a
    colleague's group (code THEIRS, made at the service, never recorded here). Found by an
    outside probe: it was recorded, and the next apply PATCHed that group's code and name.
    Refused now, exit 1, nothing recorded; the next apply creates the document's own group
    and leaves the colleague's alone."""
    theirs = sandbox.client.post(
        "/v1/declaration-templates/groups",
        json={"name": "Their group", "code": "THEIRS", "companyId": 1},
    )
    assert theirs.status_code == 201, theirs.text
    ident = theirs.json()["id"]
    project.write("manifests/groups.yaml", GROUPS)
    refused = project.run("import", "TemplateGroup/plain", str(ident))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    said = " ".join(refused.stderr.split())
    assert (
        f"template group {ident} has code 'THEIRS' at the service, and TemplateGroup/plain "
        f"({Path('manifests') / 'groups.yaml'}:4:{GROUPS.splitlines()[3].index('PLAIN-1') + 1}) "
        "says 'PLAIN-1'"
    ) in said, said
    assert "Nothing was recorded" in said and "Traceback" not in said
    assert project.state() == {}
    assert project.run("apply", "--auto-approve").returncode == 0
    assert sandbox.requests("PATCH", "") == 0
    groups = sandbox.get("/v1/declaration-templates/groups")["result"]
    codes = {g["id"]: (g["code"], g["name"]) for g in groups}
    assert codes[ident] == ("THEIRS", "Their group")
    assert codes[project.state()["TemplateGroup/plain"]["outputs"]["id"]][0] == "PLAIN-1"


def test_a_departure_customs_cancelled_is_held_and_never_patched(
    project: Project, sandbox: Sandbox
) -> None:
    """Customs cancelled the declaration (the service holds it `canceled`): once refresh
    reads it, plan holds it for a decision (not unchanged), even with its parties edited,
    and apply sends nothing to it; `state rm --gone` lets the document be submitted anew."""
    project.write("manifests/departures.yaml", batches.departures(1))
    assert project.run("apply", "--auto-approve", "--wait").returncode == 0
    address = "DepartureDeclaration/dep-e2e-01"
    ident = project.state()[address]["outputs"]["declarationId"]
    sandbox.port = int(sandbox.url.rsplit(":", 1)[1].split("/")[0])  # the same service
    sandbox.stop()
    with sqlite3.connect(sandbox.db) as db:  # customs' decision: the API cannot make it
        where = ("transitDeclarations", str(ident))
        (body,) = db.execute("SELECT body FROM records WHERE tbl = ? AND id = ?", where).fetchone()
        canceled = json.dumps({**json.loads(body), "status": "canceled"})
        db.execute("UPDATE records SET body = ? WHERE tbl = ? AND id = ?", (canceled, *where))
    sandbox.start()

    assert project.run("refresh", "--detailed-exitcode").returncode == 1
    assert f"{ident}  canceled  ended" in project.run("status").stdout
    project.edit("manifests/departures.yaml", "city: Antwerpen", "city: Antwerp")
    code, changes = _plan(project, "--detailed-exitcode")
    assert code == 1
    assert changes[address]["action"] == "needs-decision"
    assert "customs cancelled it" in str(changes[address]["reason"])
    assert project.run("apply", "--auto-approve").returncode == 1
    assert sandbox.requests("PATCH", "") == 0, "a parties update went to a cancelled declaration"

    assert project.run("state", "rm", "--gone", address).returncode == 0
    assert project.run("apply", "--auto-approve").returncode == 0
    assert project.state()[address]["outputs"]["declarationId"] != ident


def _customs_sets(sandbox: Sandbox, ident: int, status: str) -> None:
    """The service holds transit declaration ``ident`` in ``status`` from now on (customs'
    doing: the API cannot make it)."""
    sandbox.port = int(sandbox.url.rsplit(":", 1)[1].split("/")[0])  # the same service
    sandbox.stop()
    with sqlite3.connect(sandbox.db) as db:
        where = ("transitDeclarations", str(ident))
        (body,) = db.execute("SELECT body FROM records WHERE tbl = ? AND id = ?", where).fetchone()
        changed = json.dumps({**json.loads(body), "status": status})
        db.execute("UPDATE records SET body = ? WHERE tbl = ? AND id = ?", (changed, *where))
    sandbox.start()


def test_a_departure_in_a_status_it_does_not_know_is_followed_never_done(
    project: Project, sandbox: Sandbox
) -> None:
    """A transit status outside the departure's lists (BLOCKED: the API document lists it
    without a meaning) is neither done nor failed: apply --wait waits on it and fails at its
    timeout, plan shows it waiting, status pending; once customs releases it, it is done."""
    project.write("manifests/departures.yaml", batches.departures(1))
    assert project.run("apply", "--auto-approve").returncode == 0
    address = "DepartureDeclaration/dep-e2e-01"
    ident = project.state()[address]["outputs"]["declarationId"]
    _customs_sets(sandbox, ident, "BLOCKED")
    project.write_config()

    waited = project.run("apply", "--auto-approve", "--wait", "--wait-timeout", "0")
    assert waited.returncode == 1, waited.stdout + waited.stderr
    unknown = "(a status customs-batch does not know for it: never counted as done)"
    assert f"{ident} still BLOCKED {unknown}" in waited.stdout, waited.stdout
    assert "0 succeeded, 1 failed" in waited.stdout
    code, changes = _plan(project, "--detailed-exitcode")
    assert code == 2 and changes[address]["action"] == "waiting", changes
    status = project.run("status", "--format", "json")
    (entry,) = json.loads(status.stdout)["declarations"]
    assert (entry["serviceState"], entry["pending"], entry["rejected"]) == ("BLOCKED", True, False)
    assert sandbox.requests("PATCH", "") == 0 and len(sandbox.created_transit()) == 1

    _customs_sets(sandbox, ident, "RELEASED")
    project.write_config()
    done = project.run("apply", "--auto-approve", "--wait")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{ident} is RELEASED" in done.stdout and "1 succeeded" in done.stdout
    assert project.run("plan", "--detailed-exitcode").returncode == 0


def test_a_service_that_refuses_connections_leaves_nothing_to_decide(
    project: Project, sandbox: Sandbox
) -> None:
    project.write("manifests/departures.yaml", batches.departures(3))
    sandbox.stop()  # nothing listens at the environment's address any more
    down = project.run("apply", "--auto-approve")
    assert down.returncode == 1, down.stdout + down.stderr
    assert "not sent" in down.stdout + down.stderr
    code, changes = _plan(project)
    assert code == 0
    assert {c["action"] for c in changes.values()} == {"create"}

    sandbox.start()
    project.write_config()
    applied = project.run("apply", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert len(sandbox.created_transit()) == 3


GROUPS = """\
apiVersion: customs-batch/v1
kind: TemplateGroup
metadata: {name: plain}
spec: {name: Plain group, code: PLAIN-1, companyId: 1, isDefault: false}
"""


def test_a_template_group_whose_record_was_removed_is_found_by_its_code(
    project: Project, sandbox: Sandbox
) -> None:
    project.copy_examples()
    project.write("manifests/plain-group.yaml", GROUPS)
    assert project.run("apply", "--auto-approve").returncode == 0
    plain_id = project.state()["TemplateGroup/plain"]["outputs"]["id"]
    road_id = project.state()["TemplateGroup/eu-road"]["outputs"]["id"]

    # Records lost, the groups still at the service (`state rm --gone` asks the service, and
    # refuses): described exactly by the manifests, adopted, not created twice, not a 409.
    assert project.run("state", "rm", "--gone", "TemplateGroup/plain").returncode == 3
    _lose_records(project, "TemplateGroup/plain")
    again = project.run("apply", "--auto-approve")
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"adopted existing group {plain_id}" in again.stdout
    assert project.state()["TemplateGroup/plain"]["outputs"]["id"] == plain_id

    # With templates the service does not list back, or other fields: how to import it.
    _lose_records(project, "TemplateGroup/eu-road", "TemplateGroup/plain")
    project.edit("manifests/plain-group.yaml", "name: Plain group", "name: Plainer group")
    refused = project.run("apply", "--auto-approve")
    assert refused.returncode == 1
    assert f"customs-batch import TemplateGroup/eu-road {road_id}" in refused.stderr
    assert "differs in name" in refused.stderr
    assert f"customs-batch import TemplateGroup/plain {plain_id}" in refused.stderr
    groups = sandbox.get("/v1/declaration-templates/groups", itemsPerPage=100)["result"]
    assert sorted(g["code"] for g in groups).count("PLAIN-1") == 1


def _lose_records(project: Project, *addresses: str) -> None:
    """The records of ``addresses`` gone from the state (a state edited by hand, say),
    whatever the service holds."""
    with LocalBackend(project.state_dir).open("test") as session:
        for address in addresses:
            session.forget(address)


def test_status_follows_a_cancellation_and_wait_follows_a_parties_update(
    project: Project,
) -> None:
    project.copy_examples()
    assert project.run("apply", "--auto-approve", "--wait").returncode == 0
    status = project.run("status").stdout
    assert "ExportCancellation/cancel-export-501  501  canceled" in status
    assert project.run("refresh").returncode == 0  # read back from the service: the same
    assert "ExportCancellation/cancel-export-501  501  canceled" in project.run("status").stdout

    project.edit("manifests/departures.yaml", "street: Kehrwieder 2", "street: Kehrwieder 4")
    code, changes = _plan(project)
    assert code == 0
    change = changes["DepartureDeclaration/dep-rtm-ham-0001"]
    assert change["action"] == "update"
    assert change["values"] == [
        {"path": "Consignee.street", "old": "Kehrwieder 2", "new": "Kehrwieder 4"}
    ]
    assert 'Consignee.street: "Kehrwieder 2" -> "Kehrwieder 4"' in project.run("plan").stdout
    updated = project.run("apply", "--auto-approve", "--wait")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    record = project.state()["DepartureDeclaration/dep-rtm-ham-0001"]
    assert record["remoteStatus"] == "ready", "--wait returned while it was processing"


def test_wait_follows_a_departure_until_customs_decides(tmp_path: Path, sandbox: Sandbox) -> None:
    sandbox.start(processing_seconds=2)  # on the manual clock: processing until it is moved
    project = Project(tmp_path / "project", sandbox)
    project.write("manifests/departures.yaml", batches.departures(1))
    run = project.start("apply", "--auto-approve", "--wait")
    deadline = time.monotonic() + 60
    while sandbox.requests("GET", "/declarations/transit/{id}") < 1:  # --wait read it once
        assert run.process.poll() is None, "apply --wait ended before it read the departure"
        assert time.monotonic() < deadline, "apply --wait never read the departure"
        time.sleep(0.02)
    assert run.process.poll() is None, "--wait returned while the departure was processing"
    sandbox.advance_clock(2)  # customs decides; the next poll sees it
    code, out, err = run.finish()
    assert code == 0, out + err
    assert project.state()["DepartureDeclaration/dep-e2e-01"]["remoteStatus"] == "ready"
    assert sandbox.requests("POST", "/declarations/transit") == 1


def test_ctrl_c_while_waiting_leaves_the_departure_submitted_not_failed(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    """The submission was answered 201; stopping the wait for customs' decision does not
    undo it: apply tells it submitted and still processing, never FAILED."""
    sandbox.start(processing_seconds=2)  # on the manual clock: processing until it is moved
    project = Project(tmp_path / "project", sandbox)
    project.write("manifests/departures.yaml", batches.departures(1))
    run = project.start("apply", "--auto-approve", "--wait")
    deadline = time.monotonic() + 60
    while sandbox.requests("GET", "/declarations/transit/{id}") < 1:  # --wait read it once
        assert run.process.poll() is None, "apply --wait ended before it read the departure"
        assert time.monotonic() < deadline, "apply --wait never read the departure"
        time.sleep(0.02)
    run.process.send_signal(signal.SIGINT)
    code, out, err = run.finish()

    assert code == 130, out + err
    assert "FAILED" not in out and "failed DepartureDeclaration" not in err, out + err
    assert "done     DepartureDeclaration/dep-e2e-01" in out, out
    assert "still processing" in out and "customs-batch refresh" in out, out
    assert "Apply: 1 succeeded, 0 failed" in out, out
    record = project.state()["DepartureDeclaration/dep-e2e-01"]
    assert (record["status"], record["remoteStatus"]) == ("applied", "processing")
    assert "processing" in project.run("status").stdout
    assert sandbox.requests("POST", "/declarations/transit") == 1


def test_a_later_apply_wait_follows_the_departures_left_processing(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    """README: a departure a wait left processing is recorded so, and a later `apply
    --wait` follows it: it reads each until customs decides, records it, and fails the run
    for one customs found invalid, showing the errors; nothing is sent again."""
    sandbox.start(processing_seconds=2)  # on the manual clock: processing until it is moved
    project = Project(tmp_path / "project", sandbox)
    project.write("manifests/departures.yaml", batches.departures(2))
    project.edit("manifests/departures.yaml", "E2E-0002", "INVALID-0002")
    first = project.run("apply", "--auto-approve", "--wait", "--wait-timeout", "0")
    assert first.returncode == 1, first.stdout + first.stderr
    assert first.stdout.count("still processing after 0 s") == 2, first.stdout
    ready, invalid = "DepartureDeclaration/dep-e2e-01", "DepartureDeclaration/dep-e2e-02"
    assert {project.state()[a]["remoteStatus"] for a in (ready, invalid)} == {"processing"}
    assert project.run("plan", "--detailed-exitcode").returncode == 0  # nothing to send

    sandbox.advance_clock(2)  # customs decides: one ready, one invalid
    later = project.run("apply", "--auto-approve", "--wait")
    assert later.returncode == 1, later.stdout + later.stderr
    assert "Nothing to apply" not in later.stdout, later.stdout
    assert f"* waiting        {ready}" in later.stdout, later.stdout
    assert "2 waiting at the service" in later.stdout, later.stdout
    assert f"done     {ready}" in later.stdout and "is ready" in later.stdout, later.stdout
    assert f"FAILED   {invalid}" in later.stdout, later.stdout
    assert "is invalid: " in later.stdout and "SANDBOX_INVALID_REFERENCE" in later.stdout
    assert project.state()[ready]["remoteStatus"] == "ready"
    assert project.state()[invalid]["remoteStatus"] == "invalid"
    assert f"{invalid}" in project.run("status").stdout
    assert sandbox.requests("POST", "/declarations/transit") == 2  # nothing sent again

    again = project.run("apply", "--auto-approve", "--wait")  # decided: nothing to follow
    assert again.returncode == 1, again.stdout + again.stderr  # the invalid one is rejected
    assert "waiting" not in again.stdout, again.stdout
    assert "rejected" in again.stdout, again.stdout


def test_apply_wait_follows_what_an_apply_without_wait_left_processing(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    """An apply without --wait records its departures as answered, processing; a later
    `apply --wait` follows them (and the party update that sent one back to processing)."""
    sandbox.start(processing_seconds=2)  # on the manual clock: processing until it is moved
    project = Project(tmp_path / "project", sandbox)
    project.copy_examples()
    assert project.run("apply", "--auto-approve").returncode == 0
    address = "DepartureDeclaration/dep-rtm-ham-0001"
    assert project.state()[address]["outputs"]["status"] == "processing"
    sandbox.advance_clock(2)
    followed = project.run("apply", "--auto-approve", "--wait")
    assert followed.returncode == 0, followed.stdout + followed.stderr
    assert f"* waiting        {address}" in followed.stdout, followed.stdout
    assert f"done     {address}" in followed.stdout, followed.stdout
    assert project.state()[address]["remoteStatus"] == "ready"
    assert "processing" not in project.run("status").stdout
    assert "waiting" not in project.run("apply", "--auto-approve", "--wait").stdout


@pytest.mark.parametrize("by_number", [False, True])
def test_status_follows_a_departure_a_party_update_sent_back_to_processing(
    tmp_path: Path, sandbox: Sandbox, by_number: bool
) -> None:
    """A party update sends its declaration back to processing, and its answer says so:
    the departure's status (and its results) tell that, not the ready it was before; found
    through the update's reference, or by the number it names."""
    sandbox.start(processing_seconds=2)  # on the manual clock: processing until it is moved
    project = Project(tmp_path / "project", sandbox)
    project.copy_examples()
    assert project.run("apply", "--auto-approve").returncode == 0
    sandbox.advance_clock(2)
    assert project.run("refresh").returncode == 0
    address = "DepartureDeclaration/dep-rtm-ham-0001"
    declaration = project.state()[address]["outputs"]["declarationId"]
    assert f"{address}  {declaration}  ready" in project.run("status").stdout

    project.edit("manifests/party-updates.yaml", "DE123456789012345", "DE123456789012346")
    if by_number:
        project.edit(
            "manifests/party-updates.yaml", f"${{ref:{address}.declarationId}}", str(declaration)
        )
    applied = project.run("apply", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert sandbox.get(f"/v1/declarations/transit/{declaration}")["status"] == "processing"
    assert f"{address}  {declaration}  processing" in project.run("status").stdout
    record = project.state()[address]
    assert (record["remoteStatus"], record["outputs"]["status"]) == ("processing", "processing")
    code, changes = _plan(project)
    assert code == 0 and changes[address]["action"] == "no-change"

    sandbox.advance_clock(2)
    refreshed = project.run("refresh")
    assert f"{address}: status processing -> ready" in refreshed.stdout, refreshed.stdout
    assert f"{address}  {declaration}  ready" in project.run("status").stdout


def test_every_kind_has_a_complete_model() -> None:
    from customs_batch.kinds import Kind
    from customs_batch.kinds.registry import KINDS, SEND
    from customs_batch.planning import Operation

    assert set(KINDS) == set(Kind)
    for kind, model in KINDS.items():
        assert model.kind is kind
        assert model.create in model.send
        assert model.update is None or model.update in model.send
        assert model.resubmit is None or model.resubmit in model.send
        assert model.immutable.format(address="K/x", fields="f")
        assert model.id_field in model.outputs, f"{kind}: its ID is one of its outputs"
        assert model.identity is not None, f"{kind}: plan needs its identity"
        # What waits at the service is read back by the kind's refresh.
        assert not model.pending_states or model.refresh is not None
        assert not model.pending_states & model.rejected_states
    # FOLLOW sends nothing: it is the kind's refresh of an object not decided yet.
    sending = {op for op in Operation if op.requests and op is not Operation.FOLLOW}
    assert sending == set(SEND)
