"""A movement whose outcome is unknown, edited before the next run: the service already
holds it, so the tool must neither forget it nor send the edited one as a second movement."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.e2e import batches
from tests.e2e.conftest import Project, Sandbox

pytestmark = pytest.mark.e2e

ADDRESS = "Movement/mov-l0-01"


def test_an_edited_movement_with_an_unknown_outcome_is_not_sent_twice(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # Every movement takes effect and is then answered 503, retries included: the
    # service holds it, the tool cannot know.
    sandbox.start(faults="5xx-after=1")
    project = Project(tmp_path / "project", sandbox)
    project.write("manifests/movements.yaml", batches.movements(per_lane=1, lanes=1))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "outcome unknown, recorded for the next run" in done.stdout
    assert project.state()[ADDRESS]["status"] == "unknown"  # sent, no answer
    assert len(sandbox.movements()) == 1

    sandbox.start()  # the same data, no faults
    project.write_config()
    documents = list(yaml.safe_load_all((project.root / "manifests/movements.yaml").read_text()))
    documents[0]["spec"]["quantity"] = 7
    project.write("manifests/movements.yaml", yaml.safe_dump_all(documents, sort_keys=False))

    done = project.run("plan", "--detailed-exitcode")
    assert done.returncode == 1, "a needs-decision must not pass a pipeline"
    assert "needs decision " + ADDRESS in done.stdout
    assert "changed since" in done.stdout and "quantity" in done.stdout
    for _ in range(2):
        done = project.run("apply", "--auto-approve")
        assert done.returncode == 1, done.stdout + done.stderr
    assert len(sandbox.movements()) == 1, "the edited movement was sent as a second one"
    assert project.state()[ADDRESS]["status"] == "unknown"

    # Reverting the edit lets the next run re-send it with its key: the service replays it.
    documents[0]["spec"]["quantity"] = 1
    project.write("manifests/movements.yaml", yaml.safe_dump_all(documents, sort_keys=False))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    created = sandbox.movements()
    assert len(created) == 1
    assert project.state()[ADDRESS]["outputs"]["movementId"] == created[0]["movementId"]


def test_a_movement_with_an_unknown_outcome_removed_from_the_manifests_needs_a_decision(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # It was called orphaned ("the API cannot delete it") and passed a pipeline, while
    # nobody knew whether the service held it; without its document nothing sends it again.
    sandbox.start(faults="5xx-after=1")
    project = Project(tmp_path / "project", sandbox)
    project.write("manifests/movements.yaml", batches.movements(per_lane=1, lanes=1))
    assert project.run("apply", "--auto-approve").returncode == 1
    assert project.state()[ADDRESS]["status"] == "unknown"
    sandbox.start()  # the same data, no faults
    project.write_config()
    (project.root / "manifests/movements.yaml").unlink()
    project.write("manifests/none.yaml", "")

    done = project.run("plan", "--detailed-exitcode")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "needs decision " + ADDRESS in done.stdout and "1 need a decision" in done.stdout
    assert f"state adopt {ADDRESS} ID" in done.stdout
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(sandbox.movements()) == 1

    (created,) = sandbox.movements()
    adopted = project.run("state", "adopt", ADDRESS, created["movementId"])
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    done = project.run("plan", "--detailed-exitcode")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "orphaned       " + ADDRESS in done.stdout
