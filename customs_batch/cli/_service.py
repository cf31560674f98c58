"""Options shared by the commands that talk to a service (``--env``, ``-v``), and the
request log ``-v`` turns on. Connecting is :mod:`customs_batch.commands.session`'s."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import click

from customs_batch.cli._command_line import remember_env
from customs_batch.cli._once import OnceOption

F = TypeVar("F", bound=Callable[..., Any])


def env_option(function: F) -> F:
    """``--env NAME``: the environment; defaults to $CUSTOMS_BATCH_ENV, then the config's."""
    return click.option(
        "--env",
        "env_name",
        metavar="NAME",
        cls=OnceOption,
        noun="environment",
        callback=remember_env,
        help="Environment from customs-batch.yaml [default: $CUSTOMS_BATCH_ENV, then "
        "default_environment, then local]. An empty name, here or in $CUSTOMS_BATCH_ENV, is "
        "refused, never taken for the default.",
    )(function)


def verbose_option(function: F) -> F:
    """``-v/--verbose``: log every HTTP request to stderr (the key redacted)."""
    return click.option(
        "-v",
        "--verbose",
        is_flag=True,
        help="Log every HTTP request and response status to stderr (the key is redacted).",
    )(function)


def set_http_log(*, enabled: bool) -> None:
    """Send the client's request log to stderr, or stop sending it.

    Set on every command, so one ``--verbose`` invocation in a process (tests run many)
    does not leave the log on for the next.
    """
    logger = logging.getLogger("customs_batch.client")
    for handler in [h for h in logger.handlers if isinstance(h, _StderrHandler)]:
        logger.removeHandler(handler)
    if enabled:
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("http: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if enabled else logging.NOTSET)


class _StderrHandler(logging.Handler):
    """Writes through click, so tests that capture click's stderr see the log."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(self.format(record), err=True)
