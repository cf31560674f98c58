"""Turning a header row into column names."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from customs_batch.findings import column_letter
from customs_batch.manifest.spreadsheet.model import Cell, Header, SheetError


def build_header(
    raw: Sequence[Cell],
    *,
    file: str,
    row: int,
    merged: Callable[[int], Cell] = lambda column: None,
) -> Header:
    """Name every column that has a header; an empty header cell inside a merged range takes
    the range's value. Two columns with one name are an error naming both.
    """
    names: list[str] = []
    columns: list[int] = []
    seen: dict[str, int] = {}
    for column, value in enumerate(raw, start=1):
        if value is None or (isinstance(value, str) and not value.strip()):
            value = merged(column)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        name = _text(value).strip()
        if name in seen:
            raise SheetError(
                f"header {name!r} appears in columns {column_letter(seen[name])} and "
                f"{column_letter(column)} of row {row}",
                file=file,
                row=row,
                hint="give every column of the header row its own name",
            )
        seen[name] = column
        names.append(name)
        columns.append(column)
    if not names:
        raise SheetError(
            f"row {row} has no header names",
            file=file,
            row=row,
            hint="point `header:` in forEach at the row that names the columns",
        )
    return Header(tuple(names), tuple(columns))


def _text(value: Cell) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
