"""``customs-batch env``: list, show and check environments, never showing a key."""

from __future__ import annotations

from pathlib import Path

import click

from customs_batch.cli._choices import CutGroup
from customs_batch.cli._files import format_option, output_option
from customs_batch.cli._output import RECORD_FORMATS, Column, Records, show_records
from customs_batch.cli._service import env_option, set_http_log, verbose_option
from customs_batch.commands.env import (
    EnvOptions,
    check_environment,
    list_environments,
    show_environment,
)
from customs_batch.errors import ExitCode

ENV_JSON_VERSION = 1
"""``formatVersion`` of ``env list`` and ``env show`` in JSON, JSON Lines and YAML."""

LIST_COLUMNS = tuple(
    Column(h, h)
    for h in (
        "name",
        "base_url",
        "api_key",
        "rate_limit",
        "parallelism",
        "default",
        "state",
    )
)


@click.group(cls=CutGroup)
def env() -> None:
    """List, show and check the environments of customs-batch.yaml.

    \b
    Examples:
      customs-batch env list
      customs-batch env show sandbox
      customs-batch env check --env sandbox
    """


@env.command("list")
@format_option(RECORD_FORMATS, "table for people; json, jsonl, csv and yaml for scripts.")
@output_option(RECORD_FORMATS, "environments")
def list_environments_(format_name: str, output: Path | None) -> int:
    """List the environments (the built-in local one included), without secrets.

    JSON: `{"formatVersion": 1, "environments": [...]}`.

    \b
    Example:
      customs-batch env list --format json
    """
    rows = [entry.describe() for entry in list_environments()]
    records = Records(rows, LIST_COLUMNS, version=ENV_JSON_VERSION, key="environments")
    show_records(records, format_name, output)
    return int(ExitCode.OK)


@env.command()
@click.argument("name", required=False)
@format_option(RECORD_FORMATS, "table for people; json, jsonl, csv and yaml for scripts.")
@output_option(RECORD_FORMATS, "settings")
def show(name: str | None, format_name: str, output: Path | None) -> int:
    """Show one environment's settings (the chosen one without NAME), without secrets.

    \b
    Example:
      customs-batch env show production --format yaml
    """
    record = show_environment(EnvOptions(name)).describe()
    show_records(Records([record], single=True, version=ENV_JSON_VERSION), format_name, output)
    return int(ExitCode.OK)


@env.command()
@env_option
@verbose_option
def check(env_name: str | None, verbose: bool) -> int:
    """Make one cheap authenticated call and say whether the key works.

    A dropped connection, a timeout or a 5xx is retried as apply retries it; the
    line says how many attempts failed first.

    \b
    Example:
      CUSTOMS_SANDBOX_KEY=... customs-batch env check --env sandbox
    """
    set_http_log(enabled=verbose)
    result = check_environment(EnvOptions(env_name))
    click.echo(result.message, err=result.problem is not None)
    if result.problem is not None and result.hint is not None:
        click.echo(f"  hint: {result.hint}", err=True)
    return int(result.exit_code)
