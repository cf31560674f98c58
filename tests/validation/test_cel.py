"""The CEL library's core, loaded without the package's command-line tool: it works, and
the package imported later or earlier shares the one extension module."""

from __future__ import annotations

import subprocess
import sys

import pytest

_CORE_FIRST = """
import sys
from customs_batch.validation._cel import cel_core
core = cel_core()
assert core.compile("spec.x > 1").execute(core.Context({"spec": {"x": 2}})) is True
assert not {"cel", "cel.cli", "typer", "prompt_toolkit"} & set(sys.modules), sorted(sys.modules)
import cel  # the package itself, later: the same extension, not a second one
assert cel.compile is core.compile and cel.Context is core.Context
print("ok")
"""

_PACKAGE_FIRST = """
import cel
from customs_batch.validation._cel import cel_core
assert cel_core().compile is cel.compile
print("ok")
"""


@pytest.mark.parametrize(
    "script", [_CORE_FIRST, _PACKAGE_FIRST], ids=["core-first", "package-first"]
)
def test_the_core_and_the_package_share_one_extension_module(script: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
