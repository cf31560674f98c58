"""How the CLI shows a plan: the formats of ``customs_batch.reports``, written where asked."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import click

from customs_batch.client import RateLimit
from customs_batch.errors import CustomsBatchError
from customs_batch.planning import Plan
from customs_batch.reports import PlanView, duration, rate_per_second, render_plan

__all__ = ["append_step_summary", "duration", "rate_per_second", "show_plan", "write_output"]


def show_plan(plan: Plan, *, environment: str, limit: RateLimit, verbose: bool = False) -> None:
    """Print the plan for people: one line per change (unchanged ones only counted unless
    ``verbose``), the reasons, the values known only after apply, then the summary."""
    view = PlanView(plan, environment, limit, show_unchanged=verbose, colour=True)
    # click.echo drops the colours when stdout is not a terminal.
    click.echo(render_plan("text", view), nl=False)


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
