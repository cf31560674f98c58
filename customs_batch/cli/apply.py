"""``customs-batch apply``: make the service match the manifests, recording every outcome."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.core import ParameterSource

from customs_batch.cli._cache import no_cache_option
from customs_batch.cli._choices import CutChoice
from customs_batch.cli._command_line import command_line, with_env
from customs_batch.cli._inputs import (
    MRN_CHECK_LEVELS,
    a_number,
    allow_empty_state_option,
    lock_timeout_option,
    mrn_check_digit_option,
    selection_options,
)
from customs_batch.cli._once import OnceOption
from customs_batch.cli._paths import FolderToWrite, ManifestPath
from customs_batch.cli._progress import APPLY_FORMATS
from customs_batch.cli._service import env_option, set_http_log, verbose_option
from customs_batch.commands import ApplyOptions, Inputs, apply_changes
from customs_batch.execution.interrupt import terminate_noted
from customs_batch.execution.time_budget import parse_time_budget
from customs_batch.execution.waiting import WaitOptions


@click.command()
@click.argument(
    "targets_or_paths",
    nargs=-1,
    metavar="[PLANFILE | PATHS...]",
    type=ManifestPath(),
)
@env_option
@verbose_option
@click.option("--auto-approve", is_flag=True, help="Apply without asking.")
@click.option(
    "--parallelism",
    cls=OnceOption,
    noun="number",
    type=click.IntRange(1, 64),
    default=None,
    help="Requests in flight at once [default: the environment's parallelism].",
)
@click.option(
    "--wait",
    is_flag=True,
    help="Poll submitted departures (and those an earlier run left processing) until they "
    "leave processing, and requested export cancellations until customs decides.",
)
@click.option(
    "--wait-timeout",
    cls=OnceOption,
    noun="number",
    type=click.FloatRange(min=0),
    callback=a_number,
    default=600.0,
    show_default=True,
    help="Seconds --wait waits for one declaration (a finite number).",
)
@lock_timeout_option
@click.option(
    "--allow-large-change",
    is_flag=True,
    help="Apply a plan the environment's large-change guard would stop (by default: creates "
    "more than half the records of a state of at least 50); without it such an apply sends "
    "nothing and exits 1.",
)
@click.option(
    "--time-budget",
    cls=OnceOption,
    noun="duration",
    metavar="DURATION",
    help="Start no operation that would not end within DURATION (5h30m, 45m, 90s); what is "
    "left is for the command it prints (exit 4).",
)
@click.option(
    "--format",
    "format_name",
    cls=OnceOption,
    noun="format",
    type=CutChoice(APPLY_FORMATS.names()),
    default=APPLY_FORMATS.default,
    show_default=True,
    help="json: a versioned JSON-lines event stream (plan, start, progress, outcome, summary), "
    "each line with formatVersion and type; on a terminal it asks too, on stderr.",
)
@click.option(
    "--annotate-results",
    "annotate_dir",
    cls=OnceOption,
    noun="folder",
    type=FolderToWrite(),
    metavar="DIR",
    help="Once the run ends (also when operations were refused or skipped), write into DIR "
    "the results copy of every spreadsheet the manifests expand over, as `results --annotate "
    "DIR` does; a DIR where a copy could not be written (it would replace its original) "
    "is refused before anything is sent.",
)
@selection_options
@mrn_check_digit_option
@allow_empty_state_option
@no_cache_option
def apply(
    targets_or_paths: tuple[Path, ...],
    env_name: str | None,
    verbose: bool,
    auto_approve: bool,
    parallelism: int | None,
    wait: bool,
    wait_timeout: float,
    lock_timeout: float,
    allow_large_change: bool,
    time_budget: str | None,
    format_name: str,
    annotate_dir: Path | None,
    labels: tuple[str, ...],
    targets: tuple[str, ...],
    excluded: tuple[str, ...],
    mrn_check_digit: str,
    no_cache: bool,
    allow_empty_state: bool,
) -> int:
    """Apply the manifests (or a saved plan) to an environment.

    Takes the state lock, sends the changes in dependency order under the environment's
    rate limit, and records every intent before it is sent and every outcome after, so an
    interrupted run resumes where it stopped and nothing is sent twice that the service
    would duplicate. On a terminal it shows the plan and asks first; elsewhere it needs
    --auto-approve or a plan file. Ctrl-C (or SIGTERM) stops starting new work and records
    what is in flight (exit 130); a second one (either) stops at once; before anything is sent
    (waiting for the lock, planning) either one ends the run (exit 130); once its requests
    have ended, each recorded, SIGTERM lets the run finish (notifications, summary). With --time-budget it starts no
    operation that would not end in time, records what is in flight, prints what is left and
    the command that goes on, and exits 4. Once the state holds 50 records (by default), a
    plan that creates more than half as many as it holds is stopped before anything is sent
    (exit 1) unless --allow-large-change is given; both numbers are the environment's
    large_change_guard in customs-batch.yaml. An environment with a notify: block sends a
    message at the end of a run in which customs rejected something or an outcome is unknown
    (or at every end), to the Apprise URLs in the variable it names.

    PLANFILE is a plan saved with `plan -out FILE`, known by its content; a plan written with
    `plan -o` (for reading), or any file that is neither a saved plan nor a manifest, is
    refused (exit 64). Apply reads again the manifests the plan was made from (run it from
    the same folder), with the -l, --target, --exclude and --mrn-check-digit level it was
    made with (another level given with a plan is refused), and refuses the plan (exit 3)
    when they, their templates or spreadsheets changed since; a saved plan holds guarantee
    access codes only as digests and takes them from those manifests.

    \b
    Examples:
      customs-batch apply manifests/
      customs-batch apply manifests/ --env sandbox --auto-approve --wait
      customs-batch plan manifests/ -out release.plan && customs-batch apply release.plan
      customs-batch apply --auto-approve --format json > apply-events.jsonl
      customs-batch apply manifests/ --auto-approve --time-budget 5h30m
      customs-batch apply --auto-approve --wait --annotate-results results/
    """
    budget = parse_time_budget(time_budget) if time_budget is not None else None
    set_http_log(enabled=verbose)
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    presenter = APPLY_FORMATS.get(format_name)(interactive)
    result = apply_changes(
        ApplyOptions(
            Inputs(
                targets_or_paths,
                labels,
                targets,
                env_name,
                allow_empty_state,
                excluded,
                cache=not no_cache,
                mrn_check_digit=MRN_CHECK_LEVELS[mrn_check_digit],
            ),
            auto_approve=auto_approve,
            parallelism=parallelism,
            wait=WaitOptions(timeout=wait_timeout) if wait else None,
            lock_timeout=lock_timeout,
            time_budget=budget,
            command=command_line(),
            allow_large_change=allow_large_change,
            annotate_results=annotate_dir,
            go_on_words=with_env,
            mrn_check_digit_given=_given("mrn_check_digit"),
        ),
        presenter,
    )
    with terminate_noted(presenter.notice):  # the summary is printed whole
        presenter.finished(result)
        if result.annotated:
            from customs_batch.cli.results import report_written

            report_written(result.annotated)
    return int(result.exit_code)


def _given(parameter: str) -> bool:
    """Whether the option ``parameter`` was given on the command line (not its default)."""
    source = click.get_current_context().get_parameter_source(parameter)
    return source is not None and source is not ParameterSource.DEFAULT
