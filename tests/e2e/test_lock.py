"""Two applies at once: the second is refused at once, naming the run that holds the lock.

The race is held open by the emulator's gate, not by a slow response: the first apply's
first request waits at the closed gate (so it holds the lock) for as long as the test needs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e import batches
from tests.e2e.conftest import Project, Sandbox, assert_secret_nowhere

pytestmark = pytest.mark.e2e


def test_a_second_apply_names_the_holder_and_a_third_one_runs(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    sandbox.start()
    project = Project(tmp_path / "project", sandbox, parallelism=2)
    project.write("manifests/movements.yaml", batches.movements(per_lane=3, lanes=2))

    sandbox.close_gate()
    first = project.start("apply", "--auto-approve")
    assert first.wait_for_line(lambda line: line.startswith("Applying "))
    sandbox.wait_until_held(1)  # the first apply is sending under its lock, and cannot end
    second = project.run("apply", "--auto-approve", "--lock-timeout", "0")
    assert first.process.poll() is None, "the first apply ended before the race"
    assert second.returncode == 3, second.stdout + second.stderr
    message = second.stderr
    assert "the state is locked" in message
    assert f"(process {first.process.pid}) for apply" in message
    holder = re.search(r"force-unlock ([0-9a-f-]{36})", message)
    assert holder, message
    assert "Applying" not in second.stdout
    assert (project.state_dir / "state.lock.info").exists()
    assert_secret_nowhere(project)  # the holder's note and the journal of a running apply
    assert sandbox.movements() == [], "a request passed the closed gate"

    sandbox.open_gate()
    code, stdout, stderr = first.finish()
    assert code == 0, stdout + stderr
    assert len(sandbox.movements()) == 6
    assert not (project.state_dir / "state.lock.info").exists()

    # The lock was released: the next run takes it (and adds one movement per lane).
    project.write("manifests/movements.yaml", batches.movements(per_lane=4, lanes=2))
    third = project.run("apply", "--auto-approve", "--lock-timeout", "0")
    assert third.returncode == 0, third.stdout + third.stderr
    assert "Applying 2 operation(s)." in third.stdout
    assert len(sandbox.movements()) == 8
    assert not batches.duplicates(sandbox.movements())
