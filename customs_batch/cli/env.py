"""``customs-batch env``: list, show and check environments, never showing a key."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from customs_batch.cli._files import format_option, output_option
from customs_batch.cli._output import RECORD_FORMATS, Column, Records, show_records
from customs_batch.cli._service import env_option, select_environment, verbose_option
from customs_batch.cli._service import open_client as _open_client
from customs_batch.client import NO_RETRIES, AuthenticationError, PermissionDeniedError
from customs_batch.environments import Environment, load_project
from customs_batch.errors import ExitCode, ServiceError

LIST_COLUMNS = tuple(
    Column(h, h) for h in ("name", "base_url", "api_key", "rate_limit", "parallelism", "default")
)


def describe(environment: Environment, *, default: bool = False) -> dict[str, Any]:
    """What ``env list`` and ``env show`` print: settings and where the key is, not the key."""
    return {
        "name": environment.name,
        "base_url": environment.base_url or "built-in emulator (in-process)",
        "api_key": environment.credential.describe(),
        "rate_limit": str(environment.rate_limit),
        "parallelism": environment.parallelism,
        "timeouts": {
            "connect": environment.timeouts.connect,
            "read": environment.timeouts.read,
        },
        "state_dir": str(environment.state_dir),
        "endpoint_overrides": dict(environment.endpoint_overrides),
        "default": default,
    }


@click.group()
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
def list_environments(format_name: str, output: Path | None) -> int:
    """List the environments (the built-in local one included), without secrets.

    \b
    Example:
      customs-batch env list --format json
    """
    project = load_project()
    chosen = project.select(None).name
    rows: list[Mapping[str, Any]] = [
        describe(e, default=e.name == chosen) for _, e in sorted(project.environments.items())
    ]
    show_records(Records(rows, LIST_COLUMNS), format_name, output)
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
    environment = select_environment(name)
    chosen = load_project().select(None).name
    record = describe(environment, default=environment.name == chosen)
    show_records(Records([record], single=True), format_name, output)
    return int(ExitCode.OK)


@env.command()
@env_option
@verbose_option
def check(env_name: str | None, verbose: bool) -> int:
    """Make one cheap authenticated call and say whether the key works.

    \b
    Example:
      CUSTOMS_SANDBOX_KEY=... customs-batch env check --env sandbox
    """
    environment = select_environment(env_name)
    where = environment.base_url or "the built-in emulator"
    source = environment.credential.describe()
    started = time.perf_counter()
    try:
        # One attempt: a check reports what happens now, it does not wait for a recovery.
        with _open_client(env_name, verbose=verbose, retry_policy=NO_RETRIES) as client:
            client.list_template_groups(page_size=1)
    except AuthenticationError as error:
        click.echo(
            f"{environment.name}: {where} rejected the key from {source} as invalid or "
            f"expired (401): {error.service_message}. Check that it holds the current key.",
            err=True,
        )
        return int(ExitCode.ERROR)
    except PermissionDeniedError as error:
        click.echo(
            f"{environment.name}: {where} knows the key from {source} but refuses it (403): "
            f"{error.service_message}. Check that the account is activated and the key has "
            "permission.",
            err=True,
        )
        return int(ExitCode.ERROR)
    except ServiceError as error:
        click.echo(f"{environment.name}: {error.message}", err=True)
        return int(ExitCode.ERROR)
    elapsed = (time.perf_counter() - started) * 1000
    click.echo(f"{environment.name}: {where} accepted the key from {source} ({elapsed:.0f} ms)")
    return int(ExitCode.OK)
