"""Where a command's output goes besides standard output: a file named with ``-o``, and the
job summary of a GitHub Actions run. Light on purpose: validate imports it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import click

from customs_batch.errors import CustomsBatchError


def write_output(path: Path, text: str, *, what: str) -> None:
    """Write ``text`` (a report, a rendered plan) to ``path``, or say why it cannot be."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CustomsBatchError(
            f"cannot write the {what} to {path}: {exc.strerror}",
            hint="check that the folder exists and is writable",
        ) from exc


def append_step_summary(markdown: Callable[[], str]) -> None:
    """Append what ``markdown`` returns to the file ``GITHUB_STEP_SUMMARY`` names, when it is set (in a
    GitHub Actions job), so the job's summary page shows it. A summary that cannot be
    written is a warning: the command's own work and exit code stand."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as summary:
            summary.write(markdown().rstrip("\n") + "\n\n")
    except OSError as exc:
        click.echo(
            f"warning: cannot append the job summary to {target} (GITHUB_STEP_SUMMARY): "
            f"{exc.strerror}",
            err=True,
        )
