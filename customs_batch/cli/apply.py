"""``customs-batch apply``: make the service match the manifests, recording every outcome."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import click

from customs_batch.cli._command_line import command_line
from customs_batch.cli._files import append_step_summary
from customs_batch.cli._inputs import (
    allow_empty_state_option,
    backend_for,
    load_documents,
    lock_timeout_option,
    selection_options,
)
from customs_batch.cli._plan_view import rate_per_second, show_plan
from customs_batch.cli._progress import JsonEvents, LineEvents, RichEvents, show_summary
from customs_batch.cli._service import (
    env_option,
    select_environment,
    set_http_log,
    verbose_option,
)
from customs_batch.environments import connect
from customs_batch.errors import ExitCode, UsageError
from customs_batch.execution.apply import ApplyReport, apply_plan
from customs_batch.execution.budget import parse_time_budget
from customs_batch.execution.interrupt import graceful_stop
from customs_batch.execution.waiting import WaitOptions
from customs_batch.planning import Plan, plan_changes
from customs_batch.planning.planfile import (
    check_current,
    digest_documents,
    is_plan_file,
    read_plan,
)
from customs_batch.reports import apply_markdown


@click.command()
@click.argument(
    "targets_or_paths",
    nargs=-1,
    metavar="[PLANFILE | PATHS...]",
    type=click.Path(exists=True, path_type=Path),
)
@env_option
@verbose_option
@click.option("--auto-approve", is_flag=True, help="Apply without asking.")
@click.option(
    "--parallelism",
    type=click.IntRange(1, 64),
    default=None,
    help="Requests in flight at once [default: the environment's parallelism].",
)
@click.option("--wait", is_flag=True, help="Poll submitted departures until they leave processing.")
@click.option(
    "--wait-timeout",
    type=click.FloatRange(min=0),
    default=600.0,
    show_default=True,
    help="Seconds --wait waits for one declaration.",
)
@lock_timeout_option
@click.option(
    "--time-budget",
    metavar="DURATION",
    help="Start no operation that would not end within DURATION (5h30m, 45m, 90s); what is "
    "left is for the next run of the same command (exit 4).",
)
@click.option(
    "--format",
    "format_name",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: a versioned JSON-lines event stream (plan, start, progress, outcome, summary).",
)
@selection_options
@allow_empty_state_option
def apply(
    targets_or_paths: tuple[Path, ...],
    env_name: str | None,
    verbose: bool,
    auto_approve: bool,
    parallelism: int | None,
    wait: bool,
    wait_timeout: float,
    lock_timeout: float,
    time_budget: str | None,
    format_name: str,
    labels: tuple[str, ...],
    targets: tuple[str, ...],
) -> int:
    """Apply the manifests (or a saved plan) to an environment.

    Takes the state lock, sends the changes in dependency order under the environment's
    rate limit, and records every intent before it is sent and every outcome after, so an
    interrupted run resumes where it stopped and nothing is sent twice that the service
    would duplicate. On a terminal it shows the plan and asks first; elsewhere it needs
    --auto-approve or a plan file. Ctrl-C stops starting new work and records what is in
    flight (exit 130); a second Ctrl-C stops at once. With --time-budget it starts no
    operation that would not end in time, records what is in flight, prints what is left and
    the command that goes on, and exits 4.

    \b
    Examples:
      customs-batch apply manifests/
      customs-batch apply manifests/ --env sandbox --auto-approve --wait
      customs-batch plan manifests/ -out release.plan && customs-batch apply release.plan
      customs-batch apply --auto-approve --format json > apply-events.jsonl
      customs-batch apply manifests/ --auto-approve --time-budget 5h30m
    """
    budget = parse_time_budget(time_budget) if time_budget is not None else None
    plan_path = (
        targets_or_paths[0]
        if len(targets_or_paths) == 1 and is_plan_file(targets_or_paths[0])
        else None
    )
    interactive = sys.stdin.isatty() and sys.stdout.isatty() and format_name == "text"
    if plan_path is None and not auto_approve and not interactive:
        raise UsageError(
            "apply needs confirmation, and this is not an interactive terminal",
            hint="pass --auto-approve, or apply a reviewed plan: `customs-batch plan -out FILE` "
            "then `customs-batch apply FILE`",
        )
    environment = select_environment(env_name)
    saved = read_plan(plan_path, environment=environment.name) if plan_path else None
    documents, selection = (
        load_documents(targets_or_paths, labels, targets) if saved is None else ([], None)
    )
    set_http_log(enabled=verbose)
    client = connect(environment)
    json_events = JsonEvents() if format_name == "json" else None
    with client, backend_for(environment).open("apply", lock_timeout=lock_timeout) as session:
        if saved is not None and plan_path is not None:
            check_current(saved, session.state.lineage, session.state.serial, source=plan_path)
            plan = saved
        else:
            plan = plan_changes(
                documents,
                session.state,
                inputs_digest=digest_documents(documents),
                orphans=selection is None or selection.everything,
            )
        if json_events is not None:
            json_events.plan(plan, environment.name)
        else:
            show_plan(plan, environment=environment.name, limit=environment.rate_limit)
        if not plan.has_changes and not _blocked(plan):
            if json_events is None:
                click.echo("Nothing to apply.")
            return int(ExitCode.OK)
        if saved is None and not auto_approve and not click.confirm("\nApply these changes?"):
            click.echo("Apply cancelled.", err=True)
            return int(ExitCode.FINDINGS)
        rate = rate_per_second(environment.rate_limit)
        events = json_events or (
            RichEvents(1 / rate if rate else None) if interactive else LineEvents()
        )
        stop = threading.Event()
        with graceful_stop(stop, lambda text: click.echo(text, err=True)):
            try:
                report = apply_plan(
                    plan,
                    session,
                    client,
                    parallelism=parallelism or environment.parallelism,
                    stop=stop,
                    events=events,
                    wait=WaitOptions(timeout=wait_timeout) if wait else None,
                    budget=budget,
                )
            finally:
                events.close()
    if json_events is not None:
        json_events.summary(report)
    else:
        show_summary(report, terminal=interactive)
    append_step_summary(lambda: apply_markdown(report, environment=environment.name))
    return _exit_code(report, saved=plan_path)


def _blocked(plan: Plan) -> bool:
    return any(c.action.value in ("refused", "needs-decision") for c in plan.changes)


def _exit_code(report: ApplyReport, *, saved: Path | None) -> int:
    if report.fatal is not None:
        click.echo(f"error: {report.fatal}", err=True)
        return int(ExitCode.ERROR)
    if report.stopped:
        click.echo(
            "Interrupted: what was in flight is recorded; run apply again to go on.", err=True
        )
        return int(ExitCode.INTERRUPTED)
    if report.out_of_time is not None:
        # A saved plan is spent once part of it is applied: the state has moved on.
        resume = f"customs-batch plan [PATHS] -out {saved}, then " if saved else ""
        click.echo(report.out_of_time.describe(resume + command_line()), err=True)
        return int(ExitCode.OUT_OF_TIME)
    return int(ExitCode.OK if report.ok else ExitCode.FINDINGS)
