"""``customs-batch refresh`` and ``status``: what the service says now, what was last known."""

from __future__ import annotations

import click

from customs_batch.cli._inputs import allow_empty_state_option, backend_for, lock_timeout_option
from customs_batch.cli._service import env_option, select_environment, set_http_log, verbose_option
from customs_batch.environments import connect
from customs_batch.errors import ExitCode
from customs_batch.execution.reconcile import refresh as refresh_state
from customs_batch.execution.reconcile import status_lines
from customs_batch.execution.settle import settle_lost_creations


@click.command()
@env_option
@verbose_option
@lock_timeout_option
@allow_empty_state_option
def refresh(env_name: str | None, verbose: bool, lock_timeout: float) -> int:
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
      customs-batch refresh --env sandbox
    """
    environment = select_environment(env_name)
    set_http_log(enabled=verbose)
    with (
        connect(environment) as client,
        backend_for(environment).open("refresh", lock_timeout=lock_timeout) as session,
    ):
        settled = settle_lost_creations(
            session,
            client,
            answered_within=environment.timeouts.answered_within,
            notice=lambda text: click.echo(text, err=True),
        )
        drifts = refresh_state(session, client)
    for lost in settled:
        click.echo(lost.describe())
    for drift in drifts:
        click.echo(f"{drift.address}: {drift.message}")
    click.echo(
        f"Refreshed: {len(drifts)} change(s) found, {len(settled)} lost submission(s) looked for.",
        err=True,
    )
    return int(ExitCode.OK)


@click.command()
@env_option
@allow_empty_state_option
def status(env_name: str | None) -> int:
    """Show the declarations and cancellations of the state, last known status (no network).

    One marked rejected was refused at the service; a cancellation marked pending has not
    been decided by customs yet. Run `customs-batch refresh` first for the current status.

    \b
    Example:
      customs-batch status --env sandbox
    """
    state = backend_for(select_environment(env_name)).read()
    lines = status_lines(state)
    for line in lines:
        click.echo(line)
    if not lines:
        click.echo("No declarations in the state.", err=True)
    return int(ExitCode.OK)
