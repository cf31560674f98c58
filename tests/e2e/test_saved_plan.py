"""Saved plans: ``plan -out FILE`` then ``apply FILE``; a plan the state outran is refused."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import Project

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
