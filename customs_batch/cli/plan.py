"""``customs-batch plan``: what apply would do, without sending anything."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from customs_batch.cli._files import append_step_summary, write_output
from customs_batch.cli._inputs import (
    allow_empty_state_option,
    backend_for,
    load_documents,
    selection_options,
)
from customs_batch.cli._service import env_option, select_environment
from customs_batch.errors import ExitCode
from customs_batch.planning import plan_changes
from customs_batch.planning.graph import dependency_edges
from customs_batch.planning.planfile import digest_documents, write_plan
from customs_batch.reports import PlanView, plan_format_names, render_plan, summary_text
from customs_batch.state.select import rate_budget_note


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@env_option
@click.option(
    "-out",
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Save the plan to FILE for `customs-batch apply FILE`.",
)
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 0 when there is nothing to do, 2 when there are changes; 1 (as without "
    "this flag) when anything is refused, rejected at the service or needs a decision; "
    "3 when an error stops the plan.",
)
@click.option(
    "--format",
    "format_name",
    type=click.Choice(plan_format_names()),
    default="text",
    show_default=True,
    help="text for people, json for tools, markdown for a pull-request comment, "
    "mermaid or dot for the dependency graph.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the rendered plan to FILE instead of stdout; the summary goes to stderr.",
)
@click.option("--show-unchanged", is_flag=True, help="List unchanged documents too.")
@selection_options
@allow_empty_state_option
def plan(
    paths: tuple[Path, ...],
    env_name: str | None,
    out: Path | None,
    detailed_exitcode: bool,
    format_name: str,
    output: Path | None,
    show_unchanged: bool,
    labels: tuple[str, ...],
    targets: tuple[str, ...],
) -> int:
    """Compare the manifests with the recorded state and show what apply would do.

    Needs no network and no key: it reads the manifests and the environment's state. Each
    document is to create, to update in place (old -> new values shown), to resubmit (a
    departure the service rejected, now corrected), unchanged, to drop (refused by the
    service, never created, gone from the manifests), refused (a change the API cannot make,
    with the way out), rejected (invalid or in error at the service), orphaned (recorded,
    gone from the manifests) or needs a decision (an earlier outcome is unknown). Exits 1
    while anything is refused, rejected or needs a decision.

    \b
    Examples:
      customs-batch plan manifests/
      customs-batch plan manifests/ --env sandbox -out release.plan
      customs-batch plan --detailed-exitcode --format json
      customs-batch plan manifests/ --format markdown -o plan.md
      customs-batch plan manifests/ --format dot -o plan.dot
      customs-batch plan -l lane=ham-rtm --target Movement/mov-0001
    """
    documents, selection = load_documents(paths, labels, targets)
    environment = select_environment(env_name)
    state = backend_for(environment).read()
    result = plan_changes(
        documents,
        state,
        inputs_digest=digest_documents(documents),
        orphans=selection.everything,
    )
    view = PlanView(
        result,
        environment.name,
        environment.rate_limit,
        show_unchanged=show_unchanged,
        edges=dependency_edges(documents),
    )
    if output is None:
        # click.echo drops the text format's colours when stdout is not a terminal.
        click.echo(render_plan(format_name, replace(view, colour=True)), nl=False)
    else:
        write_output(output, render_plan(format_name, view), what="plan")
        click.echo(summary_text(result, environment.rate_limit), err=True)
    append_step_summary(lambda: render_plan("markdown", view))
    note = rate_budget_note(environment)
    if note and format_name == "text":
        click.echo(f"Note: {note}.", err=True)
    if out is not None:
        write_plan(out, result, environment=environment.name)
        if format_name == "text" and output is None:
            click.echo(
                f"\nSaved the plan to {out}; apply exactly it with `customs-batch apply {out}`."
            )
    if result.blocked:
        return int(ExitCode.FINDINGS)
    if detailed_exitcode and result.has_changes:
        return int(ExitCode.CHANGES)
    return int(ExitCode.OK)
