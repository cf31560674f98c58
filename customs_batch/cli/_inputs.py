"""Options plan, apply and the state commands share: selection, lock timeout, empty state,
the severity of a wrong MRN check character (validate's too)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import click

from customs_batch.cli._choices import CutChoice
from customs_batch.findings import Severity

F = TypeVar("F", bound=Callable[..., Any])


def selection_options(function: F) -> F:
    """``-l SELECTOR``, ``--target ADDR`` and ``--exclude ADDR``."""
    function = click.option(
        "--exclude",
        "excluded",
        multiple=True,
        metavar="ADDR",
        help="Leave out this document (Kind/name) and every document that depends on it. "
        "Repeatable.",
    )(function)
    function = click.option(
        "--target",
        "targets",
        multiple=True,
        metavar="ADDR",
        help="Only this document (Kind/name) and what it depends on. Repeatable.",
    )(function)
    return click.option(
        "-l",
        "--selector",
        "labels",
        multiple=True,
        metavar="SELECTOR",
        help="Only documents whose labels match (and what they depend on): key=value, "
        "key!=value, 'key in (a,b)', 'key notin (a,b)', key, !key, comma-separated, all "
        "must hold. Repeatable (each must hold). Matching no document is an error.",
    )(function)


_MAX_LOCK_TIMEOUT = 2_000_000.0
"""About 23 days: the most PostgreSQL's lock_timeout holds (2**31 - 1 ms); nan and inf are
outside every range."""


def a_number(_context: click.Context, parameter: click.Parameter, value: float) -> float:
    """The callback of a float option of seconds: nan and inf refused as usage errors (a
    deadline of now + inf, or now + nan, is never reached: the wait would go on for ever)."""
    if math.isnan(value):  # (every comparison with nan is false: no range refuses it)
        raise click.BadParameter("nan is not a number of seconds", param=parameter)
    if math.isinf(value):  # inf, infinity, 1e400: within FloatRange(min=0)
        raise click.BadParameter(
            f"{value} is not a number of seconds: give a finite one, such as 600",
            param=parameter,
        )
    return value


lock_timeout_option = click.option(
    "--lock-timeout",
    type=click.FloatRange(min=0, max=_MAX_LOCK_TIMEOUT),
    callback=a_number,
    default=0.0,
    show_default=True,
    help="Seconds to wait for another run's state lock.",
)


allow_empty_state_option = click.option(
    "--allow-empty-state",
    is_flag=True,
    help="Start without the missing state.json although an earlier state left its backup, "
    "journal or history (a journal's own records are kept), or without a database state "
    "whose history is kept (see docs/state.md).",
)
"""``--allow-empty-state``, passed to the command as ``allow_empty_state`` for its options
object."""


# `off` keeps the MRN layout check and drops only the check-character one.
MRN_CHECK_LEVELS: dict[str, Severity | None] = {
    "error": Severity.ERROR,
    "warning": Severity.WARNING,
    "off": None,
}

mrn_check_digit_option = click.option(
    "--mrn-check-digit",
    type=CutChoice(list(MRN_CHECK_LEVELS)),
    default="error",
    show_default=True,
    help="How a wrong MRN or GRN check character is reported (validate, plan, apply, import "
    "and results check alike: an error stops plan, apply and import).",
)
"""``--mrn-check-digit``, passed to the command as ``mrn_check_digit`` (a key of
:data:`MRN_CHECK_LEVELS`): validate, plan, apply, import and results take it, so that
what validate lets through, the others do too."""
