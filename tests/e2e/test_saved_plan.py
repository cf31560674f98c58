"""Saved plans: ``plan -out FILE`` then ``apply FILE``; a plan the state outran is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e import batches
from tests.e2e.conftest import Project, Sandbox

pytestmark = pytest.mark.e2e


def test_a_saved_plan_applies_and_a_stale_one_is_refused(project: Project) -> None:
    project.copy_examples()
    done = project.run("plan", "-out", "first.plan")
    assert done.returncode == 0, done.stderr
    assert "Saved the plan to first.plan" in done.stdout
    done = project.run("apply", "first.plan")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(project.sandbox.movements()) == 3

    # A plan for a rename, then something else is applied before it: the state moved on.
    project.edit("manifests/template-groups.yaml", "name: EU road imports", "name: EU road 2")
    done = project.run("plan", "-out", "rename.plan")
    assert done.returncode == 0, done.stderr
    project.edit("manifests/departures.yaml", "name: Initech NV", "name: Initech Belgium NV")
    done = project.run(
        "apply", "--auto-approve", "--target", "DepartureDeclaration/dep-rtm-ant-0002"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    before = project.sandbox.get("/_sandbox/stats")["requests"]

    done = project.run("apply", "rename.plan")
    assert done.returncode not in (0, 2), done.stdout
    assert done.returncode == 3
    assert "rename.plan: the plan is stale: the state changed since it was made" in done.stderr
    assert "customs-batch plan -out FILE" in done.stderr
    assert project.sandbox.get("/_sandbox/stats")["requests"] == {
        **before,
        "GET /_sandbox/stats": before["GET /_sandbox/stats"] + 1,
    }, "a stale plan sent requests"
    groups = project.sandbox.get("/v1/declaration-templates/groups")["result"]
    assert [g["name"] for g in groups if g["code"] == "EU-ROAD"] == ["EU road imports"]

    # A fresh plan of the same manifests applies.
    done = project.run("plan", "-out", "again.plan")
    assert done.returncode == 0
    plan = json.loads((project.root / "again.plan").read_text())
    assert [c["address"] for c in plan["changes"] if c["action"] == "update"] == [
        "TemplateGroup/eu-road"
    ]
    done = project.run("apply", "again.plan")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_plan_made_while_an_apply_runs_is_stale_once_that_apply_ends(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # The running apply's journal holds only what it recorded so far, and the state it
    # will fold it into has the very serial the plan is made for: the plan's creations of
    # what that apply sends later would be sent again.
    sandbox.start()
    project = Project(tmp_path / "project", sandbox, parallelism=1)
    project.write("manifests/movements.yaml", batches.movements(per_lane=3, lanes=1))
    sandbox.close_gate()
    first = project.start("apply", "--auto-approve")
    assert first.wait_for_line(lambda line: line.startswith("Applying "))
    sandbox.wait_until_held(1)  # its first intent is in the journal, the rest is not
    done = project.run("plan", "-out", "during.plan")
    assert done.returncode == 0, done.stderr
    assert first.process.poll() is None, "the apply ended before the plan was made"
    sandbox.open_gate()
    code, stdout, stderr = first.finish()
    assert code == 0, stdout + stderr
    assert len(sandbox.movements()) == 3

    done = project.run("apply", "during.plan")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "during.plan: the plan is stale" in done.stderr
    assert "while the journal of another run was not yet folded" in done.stderr
    assert "customs-batch plan -out FILE" in done.stderr
    assert len(sandbox.movements()) == 3, "the saved plan sent movements a second time"
    assert not batches.duplicates(sandbox.movements())


PARTY_UPDATE = (
    "apiVersion: customs-batch/v1\nkind: TransitPartyUpdate\n"
    "metadata: {name: consignee-eori}\n"
    "spec: {declarationId: '${ref:DepartureDeclaration/dep-e2e-01.declarationId}', "
    "variant: departure, Consignee: {eoriNo: DE123456789012345}}\n"
)


def test_a_plan_saved_while_a_request_was_in_flight_applied_after_its_run_died(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    """The plan saw a departure in flight for the run holding the lock; that run was then
    killed. Applied, the plan says what is true now: the outcome is unknown and needs a
    decision (not "in flight", not "waiting"), and the party update naming the departure is
    skipped for that reason, not failed for an unknown value."""
    sandbox.start()
    project = Project(tmp_path / "project", sandbox, parallelism=1)
    project.write("manifests/departures.yaml", batches.departures(1))
    project.write("manifests/party.yaml", PARTY_UPDATE)
    sandbox.close_gate(writes=True)  # its look at the declarations made since passes
    holder = project.start("apply", "--auto-approve")
    assert holder.wait_for_line(lambda line: line.startswith("Applying "))
    sandbox.wait_until_held(1)  # the submission is in flight
    saved = project.run("plan", "-out", "during.plan")
    assert saved.returncode == 0, saved.stdout + saved.stderr
    assert "in flight: sent by the run that holds the state's lock" in saved.stdout
    holder.kill()
    sandbox.open_gate()

    done = project.run("apply", "during.plan")
    assert done.returncode == 1, done.stdout + done.stderr
    departure, update = "DepartureDeclaration/dep-e2e-01", "TransitPartyUpdate/consignee-eori"
    assert f"? needs decision {departure}" in done.stdout, done.stdout
    assert "the outcome is unknown" in done.stdout, done.stdout
    assert "which has not recorded the answer yet" not in done.stdout, done.stdout
    assert "waiting at the service" not in done.stdout, done.stdout
    assert "FAILED" not in done.stdout, done.stdout
    assert f"skipped  {update}  it depends on {departure}" in done.stdout, done.stdout
    assert "needs a decision first" in done.stdout, done.stdout
    assert sandbox.requests("PATCH", "parties") == 0
    assert project.state()[departure]["status"] in ("pending", "unknown")


def test_a_saved_plan_is_applied_at_the_mrn_check_level_it_was_made_with(
    project: Project,
) -> None:
    # Found in review: `plan --mrn-check-digit off -out FILE` then `apply FILE` read the
    # manifests again (for the departures' access codes) at the default level, error, and
    # stopped on the MRN the plan had let through: the plan did not record the option.
    project.copy_examples()
    project.edit("manifests/movements.yaml", "24NLR1234567890120", "24NLR1234567890121")
    done = project.run("plan", "-out", "strict.plan")
    assert done.returncode == 1 and "error[mrn.check-digit]" in done.stdout + done.stderr
    done = project.run("plan", "--mrn-check-digit", "off", "-out", "relaxed.plan")
    assert done.returncode == 0, done.stdout + done.stderr

    # Without the option, apply reads the manifests at the plan's level and applies it.
    done = project.run("apply", "relaxed.plan")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error[mrn.check-digit]" not in done.stdout + done.stderr
    assert "0 failed" in done.stdout, done.stdout
    assert len(project.sandbox.movements()) == 3

    # Given another level, apply refuses the plan, sending nothing.
    project.edit("manifests/template-groups.yaml", "name: EU road imports", "name: EU road 2")
    done = project.run("plan", "--mrn-check-digit", "warning", "-out", "rename.plan")
    assert done.returncode == 0, done.stdout + done.stderr
    saved = json.loads((project.root / "rename.plan").read_text())
    assert saved["options"] == {"mrnCheckDigit": "warning"}
    before = project.sandbox.get("/_sandbox/stats")["requests"]
    for other in ("error", "off"):
        done = project.run("apply", "rename.plan", "--mrn-check-digit", other)
        assert done.returncode == 64, done.stdout + done.stderr
        assert (
            f"rename.plan was made with --mrn-check-digit warning, not {other}: a saved plan "
            "is applied as it was made" in done.stderr
        )
        assert "leave out --mrn-check-digit" in done.stderr
    assert project.sandbox.get("/_sandbox/stats")["requests"] == {
        **before,
        "GET /_sandbox/stats": before["GET /_sandbox/stats"] + 1,
    }, "a refused plan sent requests"
    # The same level given again is no contradiction.
    done = project.run("apply", "rename.plan", "--mrn-check-digit", "warning")
    assert done.returncode == 0, done.stdout + done.stderr
    groups = project.sandbox.get("/v1/declaration-templates/groups")["result"]
    assert [g["name"] for g in groups if g["code"] == "EU-ROAD"] == ["EU road 2"]
