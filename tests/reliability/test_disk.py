"""A state folder that fills up in the middle of an apply, then turns read-only: each is a
clear error (exit 3, the file and the system's reason), nothing is recorded lost, and once
there is room again the re-run completes with nothing created twice.

The state folder is a size-limited tmpfs, which needs root; elsewhere the test is skipped
(the quick cases in tests/cli/test_state_safety.py inject the write errors instead).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Project, Running
from tests.reliability.runs import apply_until_done
from tests.reliability.world import Mix, SeededSandbox, audit, write_batch

pytestmark = pytest.mark.reliability

MIX = Mix()
SMALL = "96k"


@contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    folder.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def remount(folder: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(folder)], check=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_disk_full_then_read_only_state_folder(tmp_path: Path, results: dict[str, Any]) -> None:
    sandbox = SeededSandbox(tmp_path / "server", MIX.spares)
    figures: dict[str, Any] = {"resources": MIX.total, "tmpfs": SMALL}
    try:
        sandbox.start(faults="slow=0.3:0.2s", fault_seed=7)
        project = Project(tmp_path / "project", sandbox)
        write_batch(project, MIX)
        with tmpfs(project.root / ".customs-batch", SMALL) as folder:
            full = project.run("apply", "--auto-approve", timeout=300)
            assert full.returncode == 3, full.stdout[-2000:] + full.stderr
            assert "No space left on device" in full.stderr, full.stderr
            figures["disk_full_error"] = full.stderr.strip().splitlines()[0][:200]
            figures["outcomes_before_full"] = full.stdout.count("\ndone ")
            listed = project.run("state", "list")
            assert listed.returncode == 0, listed.stderr  # the state still loads

            remount(folder, "size=64m")
            runs = apply_until_done(project)
            figures["reruns_after_full"] = runs.runs
            figures["decisions_after_full"] = runs.decisions
            figures["decisions_never_sent_after_full"] = runs.forgotten

            bigger = replace(MIX, per_lane=MIX.per_lane + 5)
            write_batch(project, bigger)
            before = len(sandbox.movements())
            remount(folder, "ro")
            refused = project.run("apply", "--auto-approve", timeout=300)
            assert refused.returncode == 3, refused.stdout[-2000:] + refused.stderr
            assert "Read-only file system" in refused.stderr, refused.stderr
            figures["read_only_error"] = refused.stderr.strip().splitlines()[0][:200]
            assert len(sandbox.movements()) == before, "an apply on a read-only state sent"
            planned = project.run("plan", "--detailed-exitcode")
            assert planned.returncode == 2, planned.stdout[-2000:] + planned.stderr
            remount(folder, "rw")
            runs = apply_until_done(project)
            figures["reruns_after_read_only"] = runs.runs
            sandbox.start()
            project.write_config()
            found = audit(project, sandbox, bigger)
    finally:
        Running.reap_all()
        sandbox.stop()
    figures.update(
        duplicates=found.duplicates,
        lost=found.lost,
        phantoms=found.phantoms,
        converged=found.converged and not found.not_applied,
    )
    results["disk"] = figures
    assert found.details == [], found.details
    assert (found.duplicates, found.lost, found.phantoms) == (0, 0, 0)
    assert found.converged
