"""The autouse fixture of tests/conftest.py: no test sees a variable the tool reads."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import TOOL_VARIABLE_PREFIX, TOOL_VARIABLES

PACKAGE = Path(__file__).resolve().parent.parent / "customs_batch"
# How the package reads a variable: os.environ.get("X"), environ["X"], os.getenv("X"), and
# the constants that name one (MAX_FILE_MB_VARIABLE = "X").
_READS = re.compile(
    r"""(?:environ(?:\.get)?\(\s*|environ\[\s*|getenv\(\s*|_VARIABLE\s*=\s*)["']([A-Za-z_][A-Za-z0-9_]*)["']"""
)


def _cleared(name: str) -> bool:
    return name.startswith(TOOL_VARIABLE_PREFIX) or name in TOOL_VARIABLES


def test_no_variable_the_tool_reads_is_set_inside_a_test() -> None:
    assert [name for name in os.environ if _cleared(name)] == []


def test_variables_set_by_the_runner_do_not_reach_a_test(tmp_path: Path) -> None:
    summary = tmp_path / "job-summary.md"
    runner = {name: "1" for name in TOOL_VARIABLES}
    runner |= {"GITHUB_STEP_SUMMARY": str(summary), "CUSTOMS_BATCH_ENV": "production"}
    runner |= {"CUSTOMS_BATCH_DEBUG": "1", "CUSTOMS_BATCH_STATE_URL": "postgresql://x@y/z"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"{__file__}::test_no_variable_the_tool_reads_is_set_inside_a_test",
        ],
        cwd=PACKAGE.parent,
        env={**os.environ, **runner},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_every_variable_the_package_reads_is_cleared() -> None:
    read = {
        name
        for source in PACKAGE.rglob("*.py")
        for name in _READS.findall(source.read_text(encoding="utf-8"))
    }
    assert "GITHUB_STEP_SUMMARY" in read  # the pattern finds what the package reads
    assert sorted(name for name in read if not _cleared(name)) == []
