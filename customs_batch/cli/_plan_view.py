"""How the CLI shows a plan: the formats of ``customs_batch.reports``, written where asked."""

from __future__ import annotations

import os

import click

from customs_batch.cli._command_line import with_env
from customs_batch.client import RateLimit
from customs_batch.planning import Plan
from customs_batch.reports import PlanView, duration, rate_per_second, render_plan

__all__ = ["colours_wanted", "duration", "rate_per_second", "show_plan"]


def colours_wanted() -> bool:
    """Whether a terminal may get colours: not with ``NO_COLOR`` set (to anything but
    nothing, https://no-color.org), nor on ``TERM=dumb``, as the tables and the progress
    bar (rich) decide; the plan's actions were yellow and green under both."""
    return not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def show_plan(plan: Plan, *, environment: str, limit: RateLimit, verbose: bool = False) -> None:
    """Print the plan for people: one line per change (unchanged ones only counted unless
    ``verbose``), the reasons, the values known only after apply, then the summary."""
    view = PlanView(plan, environment, limit, show_unchanged=verbose, colour=colours_wanted())
    # click.echo drops the colours when stdout is not a terminal.
    click.echo(with_env(render_plan("text", view)), nl=False)
