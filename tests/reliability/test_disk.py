"""A state folder that fills up in the middle of an apply, then turns read-only: each is a
clear error (exit 3, the file and the system's reason), nothing is recorded lost, and once
there is room again the re-run completes with nothing created twice.

The state folder is a size-limited tmpfs when the suite runs as root and may mount one;
otherwise the same scenario runs with the write errors injected into the real processes
(tests/e2e/disk.py). ``RELIABILITY_DISK=tmpfs`` or ``injected`` chooses (default: a tmpfs
when it can be mounted).
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

from tests.e2e.conftest import Running
from tests.e2e.disk import DiskProject, InjectedDisk
from tests.reliability.runs import apply_until_done
from tests.reliability.world import Mix, SeededSandbox, audit, write_batch

pytestmark = pytest.mark.reliability

MIX = Mix()
SMALL, LARGE = 96 * 1024, 64 * 1024 * 1024
MODE = os.environ.get("RELIABILITY_DISK", "auto")


class Tmpfs:
    """The folder as a mounted tmpfs, resized and remounted read-only in place."""

    mode = "tmpfs"

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def resize(self, size: int) -> None:
        self._remount(f"size={size}")

    def read_only(self, on: bool) -> None:
        self._remount("ro" if on else "rw")

    def _remount(self, options: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{options}", str(self.folder)], check=True)


class Injected:
    """The folder on the real disk, the write errors injected into every command run."""

    mode = "injected"

    def __init__(self, project: DiskProject, size: int) -> None:
        self.disk = InjectedDisk(project.root / ".customs-batch", size)
        project.disk = self.disk

    def resize(self, size: int) -> None:
        self.disk.size = size

    def read_only(self, on: bool) -> None:
        self.disk.read_only = on


@contextmanager
def small_disk(project: DiskProject, size: int) -> Iterator[Tmpfs | Injected]:
    """The project's ``.customs-batch`` folder as a disk of ``size`` bytes."""
    folder = project.root / ".customs-batch"
    if MODE == "injected" or (MODE == "auto" and os.geteuid() != 0):
        yield Injected(project, size)
        return
    folder.mkdir(parents=True)
    options = f"size={size},mode=0700"
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        if MODE == "tmpfs":
            pytest.fail(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
        yield Injected(project, size)  # root without the right to mount (a container)
        return
    try:
        yield Tmpfs(folder)
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_disk_full_then_read_only_state_folder(tmp_path: Path, results: dict[str, Any]) -> None:
    sandbox = SeededSandbox(tmp_path / "server", MIX.spares)
    figures: dict[str, Any] = {"resources": MIX.total, "tmpfs": f"{SMALL // 1024}k"}
    try:
        sandbox.start(faults="slow=0.3:0.2s", fault_seed=7)
        project = DiskProject(tmp_path / "project", sandbox)
        write_batch(project, MIX)
        with small_disk(project, SMALL) as disk:
            figures["mode"] = disk.mode
            full = project.run("apply", "--auto-approve", timeout=300)
            assert full.returncode == 3, full.stdout[-2000:] + full.stderr
            assert "No space left on device" in full.stderr, full.stderr
            figures["disk_full_error"] = full.stderr.strip().splitlines()[0][:200]
            figures["outcomes_before_full"] = full.stdout.count("\ndone ")
            listed = project.run("state", "list")
            assert listed.returncode == 0, listed.stderr  # the state still loads

            disk.resize(LARGE)
            runs = apply_until_done(project)
            figures["reruns_after_full"] = runs.runs
            figures["decisions_after_full"] = runs.decisions
            figures["decisions_never_sent_after_full"] = runs.forgotten

            bigger = replace(MIX, per_lane=MIX.per_lane + 5)
            write_batch(project, bigger)
            before = len(sandbox.movements())
            disk.read_only(True)
            refused = project.run("apply", "--auto-approve", timeout=300)
            assert refused.returncode == 3, refused.stdout[-2000:] + refused.stderr
            assert "Read-only file system" in refused.stderr, refused.stderr
            figures["read_only_error"] = refused.stderr.strip().splitlines()[0][:200]
            assert len(sandbox.movements()) == before, "an apply on a read-only state sent"
            planned = project.run("plan", "--detailed-exitcode")
            assert planned.returncode == 2, planned.stdout[-2000:] + planned.stderr
            disk.read_only(False)
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
