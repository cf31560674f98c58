from __future__ import annotations

import subprocess
import sys

from customs_batch import __version__
from customs_batch.cli.main import invoke


def test_version_is_printed(capsys) -> None:  # type: ignore[no-untyped-def]
    assert invoke(["--version"]) == 0
    assert __version__ in capsys.readouterr().out


def test_unknown_command_is_a_usage_error_with_its_own_code(capsys) -> None:  # type: ignore[no-untyped-def]
    assert invoke(["no-such-command"]) == 64
    assert "No such command" in capsys.readouterr().err


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "customs_batch", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    assert __version__ in done.stdout
