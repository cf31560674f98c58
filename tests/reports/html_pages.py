"""The HTML reports the browser tests open and the documentation's screenshot shows, made by
the real CLI (``python -m customs_batch``) on a copy of the examples' project.

The plan is the one a reviewer meets most: the examples applied to the embedded emulator,
then a template group edited (two values change, one holding markup that must show as
text), listed with the unchanged documents so the graph shows the whole project.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TIMEOUT = 120


def cli(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run ``customs-batch argv`` in ``project``, without the load cache (the screenshot
    script runs outside the tests' private home: it leaves the user's cache alone)."""
    return subprocess.run(
        [sys.executable, "-m", "customs_batch", *argv, "--no-cache"],
        cwd=project,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def examples_project(folder: Path) -> Path:
    """A copy of the examples' project (without any local state) in ``folder/project``."""
    project = folder / "project"
    shutil.copytree(EXAMPLES, project, ignore=shutil.ignore_patterns(".customs-batch"))
    return project


def plan_page(folder: Path) -> Path:
    """``plan --format html`` of the examples after an edit of their template group."""
    project = examples_project(folder)
    done = cli(project, "apply", "manifests/", "--auto-approve")
    assert done.returncode == 0, done.stderr
    groups = project / "manifests" / "template-groups.yaml"
    text = groups.read_text(encoding="utf-8")
    text = text.replace("name: EU road imports", "name: EU road imports <b>& co</b>")
    text = text.replace("incotermLocation: Rotterdam", "incotermLocation: Rotterdam Maasvlakte")
    groups.write_text(text, encoding="utf-8")
    page = folder / "plan.html"
    done = cli(
        project, "plan", "manifests/", "--show-unchanged", "--format", "html", "-o", str(page)
    )
    assert done.returncode == 0, done.stderr
    return page


def validate_page(folder: Path) -> Path:
    """``validate --format html`` of the examples' deliberately broken manifests."""
    project = examples_project(folder)
    broken = sorted(str(path.relative_to(project)) for path in (project / "bad").glob("*.bad"))
    page = folder / "validate.html"
    done = cli(project, "validate", *broken, "--format", "html", "-o", str(page))
    assert done.returncode == 1, done.stderr
    return page


def results_page(folder: Path) -> Path:
    """``results --format html`` after the examples were applied with the first movement
    row naming a party its shipment lacks: the service refuses that row and the next
    movement on its HAWB is skipped."""
    import openpyxl

    project = examples_project(folder)
    book = openpyxl.load_workbook(project / "data" / "movements.xlsx")
    book["Movements"]["F3"] = "rpty_nobody"
    book.save(project / "data" / "movements.xlsx")
    done = cli(project, "apply", "manifests/", "--auto-approve")
    assert done.returncode == 1, done.stdout + done.stderr
    page = folder / "results.html"
    done = cli(project, "results", "manifests/", "--format", "html", "-o", str(page))
    assert done.returncode == 0, done.stderr
    return page
