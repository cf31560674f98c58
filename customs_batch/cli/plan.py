"""``customs-batch plan``: what apply would do, without sending anything."""

from __future__ import annotations

import os
import shlex
from dataclasses import replace
from pathlib import Path

import click

from customs_batch.cli._cache import no_cache_option
from customs_batch.cli._command_line import with_env
from customs_batch.cli._files import (
    append_step_summary,
    format_option,
    output_option,
    write_output,
)
from customs_batch.cli._inputs import (
    MRN_CHECK_LEVELS,
    allow_empty_state_option,
    mrn_check_digit_option,
    selection_options,
)
from customs_batch.cli._once import OnceOption
from customs_batch.cli._paths import CutPath, ManifestPath
from customs_batch.cli._plan_view import colours_wanted
from customs_batch.cli._service import env_option
from customs_batch.commands import Inputs, PlanOptions, make_plan
from customs_batch.environments import env_words
from customs_batch.errors import UsageError
from customs_batch.planning import Plan
from customs_batch.reports import (
    PLAN_FORMATS,
    PlanView,
    render_plan,
    render_plan_pieces,
    summary_text,
)


@click.command()
@click.argument("paths", nargs=-1, type=ManifestPath())
@env_option
@click.option(
    "-out",
    "--out",
    "out",
    cls=OnceOption,
    noun="file",
    type=CutPath(dir_okay=False, path_type=Path),
    callback=lambda _ctx, _param, value: _saved_plan_file(value),
    help="Save the plan to FILE for `customs-batch apply FILE`.",
)
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 0 when there is nothing to do, 2 when there are changes (a waiting "
    "cancellation too); 1 (as without "
    "this flag) when anything is refused, rejected at the service or needs a decision; "
    "3 when an error stops the plan.",
)
@format_option(
    PLAN_FORMATS,
    "text for people, json for tools, markdown for a pull-request comment, html for a "
    "page with a sortable, filterable table and the graph that opens in any browser, "
    "mermaid or dot for the dependency graph.",
)
@output_option(
    PLAN_FORMATS,
    "plan",
    "Write the rendered plan to FILE (readable by you only) instead of stdout, for people to "
    "read (apply refuses it: -out saves a plan); the summary goes to stderr.",
)
@click.option("--show-unchanged", is_flag=True, help="List unchanged documents too.")
@selection_options
@mrn_check_digit_option
@allow_empty_state_option
@no_cache_option
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
    excluded: tuple[str, ...],
    mrn_check_digit: str,
    no_cache: bool,
    allow_empty_state: bool,
) -> int:
    """Compare the manifests with the recorded state and show what apply would do.

    Needs no network: it reads the manifests and the environment's state. Guarantee access
    codes are compared by digests keyed by the environment's API key: without the key a
    recorded code is taken as unchanged (a note says so), and -out needs it. Each
    document is to create, to update in place (old -> new values shown), to resubmit (a
    departure the service rejected, now corrected), unchanged, to drop (refused by the
    service, never created, gone from the manifests), refused (a change the API cannot make,
    with the way out), rejected (invalid or in error at the service; a cancellation customs
    refused), waiting (a cancellation customs has not decided yet: apply reads where it
    stands), orphaned (recorded, gone from the manifests) or needs a decision (an earlier
    outcome is unknown, or refresh found the object no longer at the service). Exits 1 while anything is refused, rejected or needs a decision.
    When the environment's large-change guard would stop apply (creates more than half the
    records of a state of at least 50, by default), a "Large change:" line says so.

    \b
    Examples:
      customs-batch plan manifests/
      customs-batch plan manifests/ --env sandbox -out release.plan
      customs-batch plan --detailed-exitcode --format json
      customs-batch plan manifests/ --format markdown -o plan.md
      customs-batch plan manifests/ --format html -o plan.html
      customs-batch plan manifests/ --format dot -o plan.dot
      customs-batch plan -l lane=rtm-ham --target TransitPartyUpdate/dep-rtm-ham-0001-consignee
      customs-batch plan -l 'lane in (rtm-ham,rtm-ant),team!=road' --exclude DepartureDeclaration/dep-rtm-ant-0002
    """
    if output is not None and out is not None and _same_file(output, out):
        raise UsageError(
            f"-o {output} and -out {out} name the same file: the report written for reading "
            "would replace the saved plan",
            hint="give each its own file (`-out release.plan -o plan.txt`), or leave out -o "
            "to print the report",
        )
    if output is not None and output.suffix.lower() == ".plan":
        click.echo(
            f"warning: -o writes the plan for people to read, and `customs-batch apply` "
            f"refuses it; to save a plan that apply applies, write -out {output}",
            err=True,
        )
    result = make_plan(
        PlanOptions(
            Inputs(
                paths,
                labels,
                targets,
                env_name,
                allow_empty_state,
                excluded,
                cache=not no_cache,
                mrn_check_digit=MRN_CHECK_LEVELS[mrn_check_digit],
            ),
            save_to=out,
        )
    )
    environment = result.environment
    view = PlanView(
        _naming_env(result.plan),
        environment.name,
        environment.rate_limit,
        show_unchanged=show_unchanged,
        edges=result.edges,
    )
    if output is None:
        # click.echo drops the text format's colours when stdout is not a terminal; none
        # with NO_COLOR or TERM=dumb (colours_wanted).
        for piece in render_plan_pieces(format_name, replace(view, colour=colours_wanted())):
            click.echo(_env_named(format_name, piece), nl=False)
    else:
        pieces = render_plan_pieces(format_name, view)
        write_output(output, (_env_named(format_name, piece) for piece in pieces), what="plan")
        click.echo(summary_text(result.plan, environment.rate_limit), err=True)
    append_step_summary(lambda: with_env(render_plan("markdown", view)))
    if result.rate_limit_note and format_name == "text":
        click.echo(f"Note: {result.rate_limit_note}.", err=True)
    if result.sensitive_note:
        click.echo(f"Note: {result.sensitive_note}.", err=True)
    if result.service_note:
        click.echo(f"Warning: {result.service_note}.", err=True)
    if out is not None and format_name == "text" and output is None:
        # A state still empty is refused again by apply unless it is started on purpose.
        empty = allow_empty_state and not result.plan.lineage
        again = ["--allow-empty-state"] if empty else []
        apply = shlex.join(
            ["customs-batch", "apply", str(out), *env_words(environment.name), *again]
        )
        click.echo(f"\nSaved the plan to {out}; apply exactly it with `{apply}`.")
    return int(result.exit_code(detailed=detailed_exitcode))


def _naming_env(plan: Plan) -> Plan:
    """The plan as shown: the commands its reasons give to go on (`customs-batch state rm
    ADDR`) name this run's --env, in every format and file, so that one copied from a
    pull-request comment or a page acts on the environment planned, not the default. A
    change whose reason names no command is kept as it is: a copy of each of 100,000
    unchanged documents was a sixth of a warm plan's time (docs/benchmarks.md)."""
    changes = []
    named = False
    for change in plan.changes:
        reason = with_env(change.reason)
        if reason != change.reason:
            change = replace(change, reason=reason)
            named = True
        changes.append(change)
    return replace(plan, changes=tuple(changes)) if named else plan


def _env_named(format_name: str, piece: str) -> str:
    """A rendered piece with this run's --env in the commands it quotes beyond the reasons
    (the large-change guard's); the graphs quote none, and JSON keeps its values as planned."""
    return with_env(piece) if format_name in ("text", "markdown", "html") else piece


def _same_file(one: Path, other: Path) -> bool:
    """Whether two paths name one file: the same path, or links to one file."""
    if one.resolve() == other.resolve():
        return True
    try:
        return os.path.samefile(one, other)
    except OSError:  # either does not exist yet: only the resolved paths tell
        return False


def _saved_plan_file(value: Path | None) -> Path | None:
    """``-out FILE``: a file apply reads back by name, so never ``-`` (standard output)."""
    if value is not None and str(value) == "-":
        raise click.BadParameter(
            "a saved plan is a file `customs-batch apply FILE` reads: name one "
            "(`-out release.plan`); to print the plan, leave out -out (or write -o -)"
        )
    return value
