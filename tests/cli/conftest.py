"""What the CLI tests share: a copy of the examples' project, and running one command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from customs_batch.cli.main import invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The examples' manifests and templates in ``tmp_path``. The spreadsheet examples
    (``*-sheet.yaml``) are left out: the tests count documents."""
    sheets = shutil.ignore_patterns("*-sheet.yaml")
    shutil.copytree(EXAMPLES / "manifests", tmp_path / "manifests", ignore=sheets)
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    return tmp_path


def run_alone(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run one command in a process of its own, stopped after two minutes: for a command
    that could wait for ever (on a named pipe), so that a wait fails the test
    (``TimeoutExpired``) instead of hanging it."""
    return subprocess.run(
        [sys.executable, "-m", "customs_batch", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run one command in-process: its exit code, stdout and stderr."""
    code = invoke(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
