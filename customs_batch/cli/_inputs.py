"""What plan, apply and the state commands share: paths, selection, environment, state."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from customs_batch.environments import Environment
from customs_batch.errors import ExitCode
from customs_batch.manifest import Document
from customs_batch.planning.inputs import Selection, load_inputs
from customs_batch.state import StateBackend
from customs_batch.state.select import backend_for as _configured_backend
from customs_batch.validation.reporters import make_reporter

F = TypeVar("F", bound=Callable[..., Any])


class FindingsFailed(click.exceptions.Exit):
    """The manifests have errors: the findings were printed; exit 1."""

    def __init__(self) -> None:
        super().__init__(int(ExitCode.FINDINGS))


def selection_options(function: F) -> F:
    """``-l LABEL=VALUE`` and ``--target ADDR``."""
    function = click.option(
        "-l",
        "--label",
        "labels",
        multiple=True,
        metavar="LABEL=VALUE",
        help="Only documents with this label (and what they depend on). Repeatable.",
    )(function)
    return click.option(
        "--target",
        "targets",
        multiple=True,
        metavar="ADDR",
        help="Only this document (Kind/name) and what it depends on. Repeatable.",
    )(function)


lock_timeout_option = click.option(
    "--lock-timeout",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="Seconds to wait for another run's state lock.",
)


ALLOW_EMPTY_STATE = "customs_batch.allow_empty_state"


def _remember_allow_empty_state(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    ctx.meta[ALLOW_EMPTY_STATE] = value
    return value


allow_empty_state_option = click.option(
    "--allow-empty-state",
    is_flag=True,
    expose_value=False,
    callback=_remember_allow_empty_state,
    help="Start from an empty state although an earlier one left its backup or journal "
    "(see docs/state.md).",
)
"""One decorator line per command: ``backend_for`` reads the flag from the click context."""


def load_documents(
    paths: tuple[Path, ...], labels: tuple[str, ...], targets: tuple[str, ...]
) -> tuple[list[Document], Selection]:
    """The selected, valid documents; with errors, print the findings and exit 1."""
    selection = Selection.parse(labels, targets)
    inputs = load_inputs(list(paths) or [Path(".")])
    if inputs.failed:
        click.echo(make_reporter("text").render(inputs.validation), err=True, nl=False)
        click.echo("The manifests have errors: fix them before planning.", err=True)
        raise FindingsFailed()
    return selection.apply(inputs.documents), selection


def backend_for(environment: Environment) -> StateBackend:
    """Where the environment's state lives (its ``state:`` settings), with the command's
    --allow-empty-state."""
    context = click.get_current_context(silent=True)
    allow = bool(context is not None and context.meta.get(ALLOW_EMPTY_STATE))
    return _configured_backend(environment, allow_empty_state=allow)
