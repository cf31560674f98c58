"""`make typecheck` holds the tests to the same strict type check as the package."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_checks_the_package_and_the_tests_strictly() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["strict"] is True
    assert {"customs_batch", "tests"} <= set(config["files"])
    overrides = config.get("overrides", [])
    assert not any(module.startswith("tests") for o in overrides for module in o["module"])


def test_make_typecheck_runs_mypy_on_what_the_config_names() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^typecheck:\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe is not None
    assert recipe[1].strip() == "$(BIN)/mypy"
    assert re.search(r"^test: .*\btypecheck\b", makefile, re.MULTILINE)
