"""A state file put back to an older copy (a CI cache restored late, the backup, a copy from
version control) while its history records the runs after it: plan and apply refuse it,
naming what those runs created, and nothing is sent twice."""

from __future__ import annotations

import shutil

import pytest

from tests.e2e.conftest import Project

pytestmark = pytest.mark.e2e

MOVEMENTS = "manifests/movements.yaml"
ADDED = """
---
apiVersion: customs-batch/v1
kind: Movement
metadata:
  name: mov-a1-late
spec:
  shipmentId: shp_7Hk2Lm
  hawbId: hawb_a1
  action: ISL
  quantity: 1
  grossWeightKg: 12.5
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: rpty_p1
"""


def test_an_older_state_file_is_refused_and_nothing_is_sent_twice(project: Project) -> None:
    project.copy_examples()
    server = project.sandbox
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    state_file = project.state_dir / "state.json"
    older = project.root / "state-after-the-first-run.json"
    shutil.copy2(state_file, older)

    # The next run creates a movement; then the state file is put back to the older copy.
    project.write(MOVEMENTS, (project.root / MOVEMENTS).read_text() + ADDED)
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    movements = len(server.movements())
    shutil.copy2(older, state_file)

    for command in (("plan",), ("apply", "--auto-approve")):
        done = project.run(*command)
        assert done.returncode == 3, done.stdout + done.stderr
        assert "is older than its history" in done.stderr
        assert "Movement/mov-a1-late (movementId=" in done.stderr, done.stderr
        assert "customs-batch import ADDR ID" in done.stderr
        assert "Traceback" not in done.stderr
    assert len(server.movements()) == movements, "nothing was sent again"
    # The way out when the newer state is lost: import what the history names; the state
    # then moves past its history, and the plan has nothing left to create.
    created = [m for m in server.movements() if m.get("quantity") == 1]
    assert len(created) == 1, created
    done = project.run("import", "Movement/mov-a1-late", str(created[0]["movementId"]))
    assert done.returncode == 0, done.stdout + done.stderr
    done = project.run("plan", "--detailed-exitcode")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 to create" in done.stdout
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(server.movements()) == movements


def test_a_state_begun_anew_on_purpose_is_not_refused(project: Project) -> None:
    """``--allow-empty-state`` begins another lineage: the history of the old one says
    nothing about it."""
    project.copy_examples()
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    (project.state_dir / "state.json").unlink()
    (project.state_dir / "state.json.backup").unlink(missing_ok=True)
    done = project.run("plan", "--allow-empty-state")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is older than its history" not in done.stderr


def test_the_backup_put_back_is_refused_when_the_last_run_sent(project: Project) -> None:
    """The backup is the state before the last run that wrote it: when that run created
    objects, planning from the backup would create them again."""
    project.copy_examples()
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    project.write(MOVEMENTS, (project.root / MOVEMENTS).read_text() + ADDED)
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    state_file = project.state_dir / "state.json"
    shutil.copy2(project.state_dir / "state.json.backup", state_file)
    done = project.run("plan")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Movement/mov-a1-late (movementId=" in done.stderr
