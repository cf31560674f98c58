"""A real ``apply`` whose state folder fills up, then turns read-only (write errors
injected into the process, see tests/e2e/disk.py): each is exit 3 naming the file and the
system's reason; once there is room again the next run completes, nothing created twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e import batches
from tests.e2e.conftest import Sandbox
from tests.e2e.disk import DiskProject, InjectedDisk

pytestmark = pytest.mark.e2e

LANES, PER_LANE = 2, 15


def test_a_full_then_read_only_state_folder_loses_nothing(tmp_path: Path, sandbox: Sandbox) -> None:
    sandbox.start()
    project = DiskProject(tmp_path / "project", sandbox, parallelism=1)
    project.write("manifests/movements.yaml", batches.movements(PER_LANE, LANES))
    folder = project.root / ".customs-batch"
    # Four pages: the lock and its note take two, the journal fills the rest mid-run.
    project.disk = InjectedDisk(folder, 4 * 4096)

    full = project.run("apply", "--auto-approve")
    assert full.returncode == 3, full.stdout + full.stderr
    journal = project.state_dir / "journal.jsonl"
    assert f"{journal}: cannot write (No space left on device, ENOSPC)" in full.stderr
    assert "is full: free space, then run again" in full.stderr
    sent = len(sandbox.movements())
    assert 0 < sent < LANES * PER_LANE, "the disk did not fill up mid-run"
    assert journal.read_bytes().endswith(b"\n"), "a half-written journal line was left"

    project.disk.read_only = True
    refused = project.run("apply", "--auto-approve")
    assert refused.returncode == 3, refused.stdout + refused.stderr
    lock = project.state_dir / "state.lock"
    assert f"{lock}: cannot take the state lock (Read-only file system, EROFS)" in refused.stderr
    assert len(sandbox.movements()) == sent, "an apply on a read-only state folder sent"
    assert project.run("plan", "--detailed-exitcode").returncode == 2  # reading still works

    project.disk = None  # room again, and writable
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    created = sandbox.movements()
    assert not batches.duplicates(created), batches.duplicates(created)
    assert len(created) == LANES * PER_LANE
    recorded = {r["outputs"]["movementId"] for r in project.state().values()}
    assert recorded == {m["movementId"] for m in created}  # nothing recorded was lost
    assert project.run("plan", "--detailed-exitcode").returncode == 0
