"""A state folder that runs out of space or turns read-only under a real ``customs-batch``
process, without root: ``injected_disk/sitecustomize.py`` makes the process's own file
calls fail for that folder (ENOSPC past a size, EROFS when read-only), as a small tmpfs
would. The reliability suite mounts a real tmpfs instead when it runs as root."""

from __future__ import annotations

import os
from pathlib import Path

from tests.e2e.conftest import Project, Sandbox

INJECTOR = Path(__file__).resolve().parent / "injected_disk"


class InjectedDisk:
    """The settings a process needs to see ``folder`` as a disk of ``size`` bytes."""

    def __init__(self, folder: Path, size: int) -> None:
        self.folder = folder
        self.size = size
        self.read_only = False

    def env(self) -> dict[str, str]:
        path = os.environ.get("PYTHONPATH")
        return {
            "PYTHONPATH": str(INJECTOR) + (os.pathsep + path if path else ""),
            "CUSTOMS_TEST_DISK_FOLDER": str(self.folder),
            "CUSTOMS_TEST_DISK_SIZE": str(self.size),
            "CUSTOMS_TEST_DISK_READ_ONLY": "1" if self.read_only else "",
        }


class DiskProject(Project):
    """A project whose commands see its ``.customs-batch`` folder through ``disk`` (none:
    the real disk)."""

    def __init__(self, root: Path, sandbox: Sandbox, **options: int) -> None:
        self.disk: InjectedDisk | None = None
        super().__init__(root, sandbox, **options)

    def env(self) -> dict[str, str]:
        # The load cache beside the state would take the injected disk's room (a real small
        # disk keeps it from writing at all; the injected one does not say how full it is).
        cache = {"CUSTOMS_BATCH_CACHE_DIR": str(self.root.parent / "load-cache")}
        return {**super().env(), **cache, **(self.disk.env() if self.disk else {})}
