"""The ``--rows`` option: limit every ``forEach`` to a range of spreadsheet rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from customs_batch.manifest import RowRange

F = TypeVar("F", bound=Callable[..., Any])


def _parse(ctx: click.Context, param: click.Parameter, value: str | None) -> RowRange | None:
    if value is None:
        return None
    parsed = RowRange.parse(value)
    if parsed is None:
        raise click.BadParameter(
            f"{value!r} is not a row range; write e.g. 10-20, 10-, -20 or 15 (rows are "
            "numbered from 1, as the spreadsheet numbers them; the last row not before the "
            "first)"
        )
    return parsed


def rows_option(function: F) -> F:
    """Add ``--rows FIRST-LAST`` (parsed into a RowRange, or None) to a command."""
    option = click.option(
        "--rows",
        metavar="FIRST-LAST",
        callback=_parse,
        default=None,
        help=(
            "Expand forEach documents over these spreadsheet rows only (e.g. 10-20); a range "
            "naming no data row of any sheet is an error."
        ),
    )
    return option(function)
