"""The guard on the size of a change: plan says when it would stop apply, apply stops before
sending anything unless --allow-large-change, the limits come from customs-batch.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from customs_batch.state import LocalBackend
from tests.cli.conftest import run

GUARD = """\
environments:
  local:
    large_change_guard: {min_records: 4, max_create_share: 0.5}
"""


def groups(count: int) -> str:
    """``count`` new template groups, each a create."""
    return "".join(
        f"---\napiVersion: customs-batch/v1\nkind: TemplateGroup\nmetadata: {{name: g-{n}}}\n"
        f"spec: {{name: Group {n}, code: G-{n}, companyId: 1, isDefault: false}}\n"
        for n in range(1, count + 1)
    )


def recorded(project: Path) -> set[str]:
    return set(LocalBackend(project / ".customs-batch" / "local").read().resources)


def test_apply_stops_a_large_change_before_sending_anything(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "customs-batch.yaml").write_text(GUARD)
    # A first bulk load into a state smaller than min_records is not stopped.
    code, _, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, err
    before = recorded(project)
    assert len(before) == 9

    # 5 creates against 9 records: more than half.
    (project / "manifests" / "more-groups.yaml").write_text(groups(5))
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 2  # plan itself still says: changes present
    assert (
        "Large change: apply stops before sending anything: 5 creates against 9 records in the "
        "state: more than 50% of them (the guard applies from 4 records). "
        "`customs-batch apply --allow-large-change` applies it if it is meant." in out
    )
    code, out, _ = run(capsys, "plan", "--format", "json")
    guard = json.loads(out)["largeChange"]
    assert (guard["stopsApply"], guard["creates"], guard["records"]) == (True, 5, 9)
    assert (guard["minRecords"], guard["maxCreateShare"]) == (4, 0.5)
    code, out, _ = run(capsys, "plan", "--format", "markdown")
    head = out.split("| action |")[0]
    assert "> **Large change:** apply stops before sending anything: 5 creates" in head

    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 1
    assert "Apply stopped by the large-change guard; nothing was sent: 5 creates" in err
    assert "--allow-large-change" in err and "environments.local.large_change_guard" in err
    assert "Applying" not in out
    assert recorded(project) == before
    code, out, _ = run(capsys, "get", "template-groups", "--format", "json")
    assert code == 0 and "EU-ROAD" in out and "G-1" not in out  # nothing reached the service

    # A saved plan is guarded the same way when applied.
    assert run(capsys, "plan", "-out", "large.plan")[0] == 0
    code, _, err = run(capsys, "apply", "large.plan")
    assert code == 1 and "large-change guard" in err
    code, out, err = run(capsys, "apply", "large.plan", "--allow-large-change")
    assert code == 0, err
    assert "Apply: 5 succeeded, 0 failed" in out
    assert len(recorded(project)) == 14


def test_a_change_within_the_share_is_applied(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "customs-batch.yaml").write_text(GUARD)
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    (project / "manifests" / "more-groups.yaml").write_text(groups(4))  # 4 of 9: not more than half
    code, out, _ = run(capsys, "plan")
    assert code == 0 and "Large change" not in out
    code, out, _ = run(capsys, "plan", "--format", "json")
    assert json.loads(out)["largeChange"] is None
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, err
    assert len(recorded(project)) == 13


def test_by_default_the_guard_applies_from_fifty_records_to_more_than_half(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A first bulk load: 59 creates into an empty state.
    (project / "manifests" / "more-groups.yaml").write_text(groups(50))
    code, _, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, err
    assert len(recorded(project)) == 59
    (project / "manifests" / "more-groups.yaml").write_text(groups(80))  # 30 creates
    code, _, err = run(capsys, "apply", "--auto-approve")
    assert code == 1
    assert "30 creates against 59 records in the state: more than 50% of them" in err
    assert "(the guard applies from 50 records)" in err
    (project / "manifests" / "more-groups.yaml").write_text(groups(79))  # 29 creates
    code, _, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, err
    assert len(recorded(project)) == 88
