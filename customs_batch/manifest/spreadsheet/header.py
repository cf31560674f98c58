"""Turning a header row into column names."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from customs_batch.findings import column_letter
from customs_batch.manifest.spreadsheet.model import BadCell, Cell, Header, SheetError, column_name

BEYOND_HEADER = "row.beyond-header"
UNNAMED_COLUMN = "row.unnamed-column"
REPEATED_HEADER = "row.repeated-header"


def build_header(
    raw: Sequence[Cell],
    *,
    file: str,
    row: int,
    merged: Callable[[int], Cell] = lambda column: None,
    merged_range: Callable[[int], str | None] = lambda column: None,
) -> Header:
    """Name every column that has a header; an empty header cell inside a merged range takes
    the range's value (``merged``; ``merged_range`` gives the range's address, ``B1:C1``).
    Two columns with one name are an error naming both, and the merged range that gave a
    name twice.
    """
    names: list[str] = []
    columns: list[int] = []
    seen: dict[str, int] = {}
    ranges: dict[int, str] = {}  # the columns named by a merged range, and its address
    for column, value in enumerate(raw, start=1):
        if value is None or (isinstance(value, str) and not value.strip()):
            value = merged(column)
            if value is not None and (address := merged_range(column)) is not None:
                ranges[column] = address
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        if isinstance(value, BadCell):
            raise SheetError(
                f"{value.message}, in the header row {row}", file=file, row=row, hint=value.hint
            )
        name = cell_name(value)
        if not name:  # only characters that do not show (a zero-width space)
            continue
        if name in seen and column in ranges:
            letter, address = column_letter(column), ranges[column]
            hint = (
                f"unmerge the cells {address} and give each of their columns a name of its own "
                f"in row {row}"
            )
            if _one_value(raw):
                # A title merged across the columns above the header (its only value): the
                # header is further down, not to be made by unmerging the title.
                hint = (
                    f"if row {row} is a title above the column names, say which row holds them "
                    f"with `header:` in forEach (`header: {row + 1}` when they are right below "
                    f"it); else {hint}"
                )
            raise SheetError(
                f"header {name!r} appears in columns {column_letter(seen[name])} and {letter} "
                f"of row {row}: {letter}{row} is empty, inside the merged cells {address}, "
                "whose name each of their columns takes",
                file=file,
                row=row,
                hint=hint,
            )
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
    return Header(tuple(names), tuple(columns), row)


def beyond_header(
    values: Sequence[Cell], header: Header, row: int, *, delimiter: str | None = None
) -> BadCell | None:
    """The problem of a row holding a value right of the header's last column, or None.

    Such a value would be dropped without a word; in a CSV file it is most often a value
    holding the delimiter that was not quoted (``60,5``), which shifts the row's other
    values too, so none of them can be trusted. ``delimiter``: the CSV file's (None for a
    workbook).
    """
    last = header.columns[-1]
    if len(values) <= last:
        return None
    extra = [
        column for column in range(last + 1, len(values) + 1) if values[column - 1] is not None
    ]
    if not extra:
        return None  # empty trailing fields: `a;b;c;;`
    column, letter = extra[0], column_letter(extra[0])
    value = values[column - 1]
    if delimiter is None:
        return _no_name(
            column, row, value, f"(row {header.row}, columns A to {column_letter(last)})",
            BEYOND_HEADER,
        )  # fmt: skip
    shown = "tab" if delimiter == "\t" else delimiter
    example = "" if delimiter == "\t" else f', e.g. "60{delimiter}5"'
    return BadCell(
        column,
        f"row {row} has {extra[-1]} values where the header (row {header.row}) names "
        f"{last} columns: {value!r} in column {letter} has no column name",
        f"quote a value that holds the delimiter ({shown}) so that it stays one cell"
        f"{example}; or name the column in the header row",
        BEYOND_HEADER,
    )


def repeated_header(values: Sequence[Cell], header: Header, row: int) -> BadCell | None:
    """The problem of a row that repeats the header's column names (two or more, every
    value it holds under a named column), or None: most often a second export pasted below
    the first. Read as data, its names would be the values of a document (a declaration
    referenced ``Reference``)."""
    same = 0
    first = 0
    for name, column in zip(header.names, header.columns, strict=True):
        value = values[column - 1] if column <= len(values) else None
        if value is None:
            continue
        # In any case: a second export pasted below the first, from a system that writes its
        # header in capitals (or a sheet's header retyped), is no data either.
        if isinstance(value, BadCell) or cell_name(value).casefold() != name.casefold():
            return None
        same += 1
        first = first or column
    if same < 2:
        return None
    return BadCell(
        first,
        f"row {row} repeats the column names of the header (row {header.row}), which is "
        "no data: most often a second export pasted below the first",
        "delete the row (and check that the rows below it belong to this sheet)",
        REPEATED_HEADER,
    )


def unnamed_columns(header: Header) -> tuple[int, ...]:
    """The columns left of the header's last one whose header cell is empty."""
    named = set(header.columns)
    return tuple(column for column in range(1, header.columns[-1]) if column not in named)


def under_no_name(
    values: Sequence[Cell], header: Header, row: int, unnamed: Sequence[int]
) -> BadCell | None:
    """The problem of a row holding a value in a column whose header cell is empty (one of
    ``unnamed``), or None: no column name reads it, and it would be dropped without a word."""
    for column in unnamed:
        if column > len(values):
            return None
        value = values[column - 1]
        if value is None:
            continue
        return _no_name(
            column, row, value, f"(row {header.row}): no column name reads it", UNNAMED_COLUMN
        )
    return None


def _no_name(column: int, row: int, value: Cell, where: str, rule: str) -> BadCell:
    """The problem of a value in a column without a name in the header row (``where``
    says which header, and what follows)."""
    letter = column_letter(column)
    held = (value.shown or "a formula") if isinstance(value, BadCell) else repr(value)
    return BadCell(
        column,
        f"cell {letter}{row} holds {held}, but column {letter} has no name in the header " + where,
        "name the column in the header row, or clear the cell",
        rule,
    )


def _one_value(raw: Sequence[Cell]) -> bool:
    """Whether the row holds one value only (a title)."""
    filled = [v for v in raw if v is not None and not (isinstance(v, str) and not v.strip())]
    return len(filled) == 1


def cell_name(value: Cell) -> str:
    """The column name a header cell holding ``value`` gives (empty: none), as
    :func:`build_header` names it; also where a copy of the sheet looks for a column by
    its name."""
    return column_name(_text(value))


def _text(value: Cell) -> str:
    if isinstance(value, bool):  # as the sheet shows it, and its CSV export writes it
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
