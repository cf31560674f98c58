"""``customs-batch refresh`` and ``status``: what the service says now, what was last known."""

from __future__ import annotations

import json
from collections.abc import Callable

import click

from customs_batch.cli._files import format_option
from customs_batch.cli._inputs import allow_empty_state_option, lock_timeout_option
from customs_batch.cli._service import env_option, set_http_log, verbose_option
from customs_batch.commands.status import (
    RefreshOptions,
    StatusOptions,
    StatusResult,
    read_status,
    refresh_environment,
)
from customs_batch.errors import ExitCode
from customs_batch.execution.reconcile import entry_lines
from customs_batch.formats import VERSION_KEY, Formats

STATUS_JSON_VERSION = 1

STATUS_FORMATS: Formats[Callable[[StatusResult], str]] = Formats("status", ("text", "json"))
"""``status --format``: text for people, json for tools."""


@STATUS_FORMATS.register("text")
def _status_text(result: StatusResult) -> str:
    lines = _lines(result)
    return "".join(f"{line}\n" for line in lines)


@STATUS_FORMATS.register("json")
def _status_json(result: StatusResult) -> str:
    body = {
        VERSION_KEY: STATUS_JSON_VERSION,
        "environment": result.environment,
        "declarations": [entry.to_json() for entry in result.entries],
        "summary": {
            "declarations": len(result.entries),
            "blocking": len(result.blocking),
            "pending": len(result.pending),
        },
    }
    return json.dumps(body, indent=2, sort_keys=True) + "\n"


def _lines(result: StatusResult) -> list[str]:
    return [line for entry in result.entries for line in entry_lines(entry)]


@click.command()
@env_option
@verbose_option
@lock_timeout_option
@allow_empty_state_option
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 1 while anything is rejected at the service or needs a decision, 2 when "
    "something changed at the service, 0 when nothing did.",
)
def refresh(
    env_name: str | None,
    verbose: bool,
    lock_timeout: float,
    allow_empty_state: bool,
    detailed_exitcode: bool,
) -> int:
    """Poll what the state knows and record what changed at the service.

    Departure declarations and party updates get their current status and errors; export
    declarations their status (a requested cancellation: customs' decision, once made);
    template groups that were changed elsewhere are recorded as
    the service holds them, so the next plan shows what the manifests would change back.
    Movements cannot be read back one by one: the API has no endpoint for it. A departure
    whose submission's outcome is unknown is looked for among the transit declarations
    created since: when none could be it, its record is dropped and the next plan submits
    it again; otherwise the ones that could be it are listed for `state adopt`.

    \b
    Example:
      customs-batch refresh --env sandbox --detailed-exitcode
    """
    set_http_log(enabled=verbose)
    options = RefreshOptions(env_name, allow_empty_state, lock_timeout)
    result = refresh_environment(options, notice=lambda text: click.echo(text, err=True))
    for lost in result.lost:
        click.echo(lost)
    for drift in result.drifts:
        click.echo(f"{drift.address}: {drift.message}")
    blocking = result.status.blocking
    for entry in blocking:
        why = "rejected at the service" if entry.rejected else "needs a decision"
        click.echo(f"{entry.address}: {why}", err=True)
    click.echo(
        f"Refreshed: {len(result.drifts)} change(s) found, {len(result.lost)} lost "
        f"submission(s) looked for, {len(blocking)} rejected or needing a decision.",
        err=True,
    )
    return int(result.exit_code(detailed=detailed_exitcode))


@click.command()
@env_option
@format_option(STATUS_FORMATS, "text: a line per declaration; json: a stable object for tools.")
@allow_empty_state_option
def status(env_name: str | None, format_name: str, allow_empty_state: bool) -> int:
    """Show the declarations and cancellations of the state, last known status (no network).

    One marked rejected was refused at the service; a cancellation marked pending has not
    been decided by customs yet. Run `customs-batch refresh` first for the current status.
    `--format json` gives
    `{"formatVersion": 1, "declarations": [...], "summary": {...}}`, each declaration with
    its lifecycle, ID, state at the service, whether customs rejected it or has not decided
    yet, and the service's errors.

    \b
    Examples:
      customs-batch status --env sandbox
      customs-batch status --format json
    """
    result = read_status(StatusOptions(env_name, allow_empty_state))
    click.echo(STATUS_FORMATS.get(format_name)(result), nl=False)
    if format_name == "text" and not result.entries:
        click.echo("No declarations in the state.", err=True)
    return int(ExitCode.OK)
