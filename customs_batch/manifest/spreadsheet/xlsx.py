"""XLSX rows with python-calamine.

Chosen by measurement (docs/benchmarks.md): on a 100,000-row export calamine reads every
row in about 1.3 s where openpyxl's read-only mode takes about 16 s. Calamine keeps the
sheet's cells in native memory while the rows stream through Python.

Calamine gives a cell holding an Excel error (``#N/A``) or a formula with no saved result
as an empty string; the workbook check finds them in the sheet's XML, and they reach the
rows as :class:`BadCell` values (an error wherever the manifest uses them). It gives numbers
without their formats: a whole number a format of zeros shows with leading zeros (``00000``)
is found there too, and reaches the rows as the text shown.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import itertools
import math
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import python_calamine

from customs_batch.findings import column_letter
from customs_batch.manifest.spreadsheet.cell_scan import (
    NO_RESULT,
    PADDED,
    PERCENT,
    CellScan,
    TotalsRow,
)
from customs_batch.manifest.spreadsheet.error_values import readable_copy, unknown_errors
from customs_batch.manifest.spreadsheet.header import (
    beyond_header,
    build_header,
    repeated_header,
    under_no_name,
    unnamed_columns,
)
from customs_batch.manifest.spreadsheet.limits import open_sheet_file, too_many_rows
from customs_batch.manifest.spreadsheet.model import (
    BadCell,
    Cell,
    DateText,
    Row,
    RowSource,
    SheetError,
    ShownNumber,
)
from customs_batch.manifest.spreadsheet.workbook_check import check_workbook
from customs_batch.manifest.text_pool import TextPool

TOTALS_ROW = "row.totals-row"
"""The rule of a value in a table's totals row outside the table."""


def read_xlsx(source: RowSource) -> Iterator[Row]:
    """The data rows of one sheet (the first visible worksheet, unless ``sheet`` names one;
    hidden rows too, each marked so, as the hidden columns are in the header)."""
    file = str(source.path)
    with open_sheet_file(source) as handle:
        errors = check_workbook(handle, file, source.sheet, source.limits)
    if errors is not None and errors.member is not None and unknown_errors(errors):
        try:
            copy = readable_copy(source.path, errors.member, source.limits)
            yield from _read(source, copy, file, errors)
        except (OSError, zipfile.BadZipFile) as exc:
            raise SheetError(
                f"cannot read {file}: its sheet holds error values the reader does not know, "
                f"and no copy without them could be made ({exc})",
                file=file,
                hint="open it in Excel and save it again, or export it as CSV",
            ) from exc
        return
    yield from _read(source, source.path, file, errors)


_ZIP = b"PK\x03\x04"
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
"""The first bytes of a zip (.xlsx, .ods) and of an Excel 97-2003 workbook (.xls)."""


def _what_it_is(path: Path) -> tuple[str, str] | None:
    """What the file the reader refused is (message, hint) when its first bytes tell it
    is no workbook of its suffix: empty, text (a CSV export named .xlsx), an HTML page (what
    many ERP systems save as .xls), a workbook of another type than its suffix says; None:
    they do not tell (a damaged workbook, said as the reader says it)."""
    try:
        with open(path, "rb") as handle:
            start = handle.read(4096)
    except OSError:
        return None
    suffix = path.suffix.lower()
    if not start:
        return (
            "the file is empty (0 bytes), not a workbook",
            "export the sheet again (a copy or a download may have been cut short)",
        )
    if start.startswith(_OLE) and suffix != ".xls":
        return (
            f"it is an Excel 97-2003 workbook (.xls), not the {suffix} its name says",
            "rename it to .xls (and forEach.file with it), or save it from Excel as .xlsx",
        )
    if start.startswith(_ZIP) and suffix in (".xls", ".xlsb", ".ods") and b"xl/" in start:
        return (
            f"it is an Excel workbook (.xlsx), not the {suffix} its name says",
            "rename it to .xlsx (and forEach.file with it)",
        )
    if start.startswith((_ZIP, _OLE)):
        return None
    head = start.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith(b"<") and (b"<html" in start.lower() or b"<table" in start.lower()):
        return (
            f"it is an HTML page (a web table) named {suffix}, not a workbook: many systems "
            "export one so that Excel opens it",
            "open it in Excel or LibreOffice and save it as .xlsx, or export the data as CSV",
        )
    if b"\x00" not in start or start.startswith((b"\xff\xfe", b"\xfe\xff")):
        return (
            f"it holds text, not a workbook: a CSV (or tab-separated) export named {suffix}",
            "rename it to .csv (and forEach.file with it): a CSV file is read by its .csv "
            "name, or save it from the spreadsheet program as .xlsx",
        )
    return None


def _read(
    source: RowSource, workbook_at: Path | io.BytesIO, file: str, errors: CellScan | None
) -> Iterator[Row]:
    """The rows of the workbook at ``workbook_at`` (``source``'s file, or a copy of it in
    memory)."""
    try:
        workbook = (
            python_calamine.CalamineWorkbook.from_path(str(workbook_at))
            if isinstance(workbook_at, Path)
            else python_calamine.CalamineWorkbook.from_filelike(workbook_at)
        )
    except Exception as exc:  # calamine raises several of its own types for a bad file
        what = _what_it_is(source.path) if isinstance(workbook_at, Path) else None
        if what is not None:
            raise SheetError(f"cannot read {file}: {what[0]}", file=file, hint=what[1]) from exc
        raise SheetError(
            f"cannot read {file} as an XLSX workbook ({exc})",
            file=file,
            hint="save the export as .xlsx (Excel 2007+) or as CSV",
        ) from exc
    try:
        yield from _rows(workbook, source, file, errors)
    except python_calamine.CalamineError as exc:
        # A damaged part found while reading the sheet: a cell naming a shared string the
        # workbook does not have, XML that does not parse.
        raise SheetError(
            f"cannot read {file}: the workbook is damaged ({exc})",
            file=file,
            hint="open it in Excel and save it again, or export it as CSV",
        ) from exc
    finally:
        workbook.close()


def _sheet_hint(asked: str | None, names: list[str]) -> str:
    """The sheets there are, and the one meant when it differs only in case or in spaces
    around it (a tab's trailing space does not show in Excel)."""
    listed = f"the sheets are: {', '.join(map(repr, names))}"
    if asked is None:
        return listed
    meant = [name for name in names if name.strip().casefold() == asked.strip().casefold()]
    if len(meant) != 1:
        return listed
    return f"write sheet: {meant[0]!r}, as the tab names it (quoted, with its spaces); {listed}"


def _rows(workbook: Any, source: RowSource, file: str, errors: CellScan | None) -> Iterator[Row]:
    names = list(workbook.sheet_names)
    if not names:
        raise SheetError(
            f"cannot read {file}: the workbook lists no sheets (its xl/workbook.xml part is "
            "missing or names none)",
            file=file,
            hint="open it in Excel or LibreOffice and save it again, or export it as CSV",
        )
    if source.sheet is not None:
        sheet_name: str | None = source.sheet
    elif errors is not None and errors.sheet is not None:
        sheet_name = errors.sheet  # the sheet the check searched for bad cells
    else:
        sheet_name = _first_shown(workbook, names)
    if sheet_name is None or sheet_name not in names:
        raise SheetError(
            f"{file} has no sheet {sheet_name!r}",
            file=file,
            hint=_sheet_hint(sheet_name, names),
            key="sheet" if source.sheet is not None else "file",
        )
    if errors is not None and errors.unplaced is not None:
        raise SheetError(
            f"sheet {sheet_name!r} of {file} has a cell without a cell reference that holds "
            f"{_held(errors.unplaced)}",
            file=file,
            hint="open the workbook in Excel or LibreOffice and save it again",
        )
    if errors is not None and errors.bad_shared is not None:
        cell, held = errors.bad_shared
        raise SheetError(
            f"cannot read {file}: the workbook is damaged (cell {cell} of sheet "
            f"{sheet_name!r} names the shared string {held!r}, where a shared string is "
            "named by its number)",
            file=file,
            hint="open it in Excel and save it again, or export it as CSV",
        )
    try:
        yield from _sheet_rows(
            workbook.get_sheet_by_name(sheet_name), sheet_name, source, file, errors
        )
    except SheetError as error:
        error.sheet = sheet_name  # the first sheet's name when forEach names none
        raise


def _first_shown(workbook: Any, names: list[str]) -> str | None:
    """The first worksheet the spreadsheet program shows: not a hidden one (an old copy
    left behind a visible tab is what its user does not see), nor a chart."""
    try:
        shown = [
            meta.name
            for meta in workbook.sheets_metadata
            if meta.visible == python_calamine.SheetVisibleEnum.Visible
            and meta.typ == python_calamine.SheetTypeEnum.WorkSheet
        ]
    except (AttributeError, python_calamine.CalamineError):
        shown = []
    return shown[0] if shown else (names[0] if names else None)


def _sheet_rows(
    sheet: Any, sheet_name: str, source: RowSource, file: str, errors: CellScan | None
) -> Iterator[Row]:
    merged = _merged_ranges(sheet)
    covered = _Covered(merged)
    above: dict[int, list[Cell]] = {}  # the rows up to the header, for merged header cells
    header = None
    rows_read = last = 0
    unnamed: tuple[int, ...] = ()
    pool = TextPool()
    bad, padded = (errors.found, errors.padded) if errors is not None else ({}, {})
    percent: Any = errors.percent if errors is not None else {}
    if errors is not None and errors.table_percent:
        percent = errors.table_percent.get(sheet_name) or {}
    totals: dict[int, list[TotalsRow]] = {}
    for total in errors.totals if errors is not None else ():
        totals.setdefault(total.row, []).append(total)
    for number, values in _numbered_rows(sheet, bad, padded, percent):
        if header is None:
            above[number] = values
            if number < source.header_row:
                continue

            def merged_at(column: int, row: int = number) -> Cell:
                return _merged_value(merged, above, row, column)

            def range_at(column: int, row: int = number) -> str | None:
                return _merged_address(merged, row, column)

            header = build_header(
                values, file=file, row=number, merged=merged_at, merged_range=range_at
            )
            if errors is not None and errors.hidden_columns:
                columns = tuple(c for c in header.columns if c in errors.hidden_columns)
                header = dataclasses.replace(header, hidden=columns)
            last = header.columns[-1]
            unnamed = unnamed_columns(header)
            above.clear()
            continue
        if not source.wants(number):
            continue
        if merged:
            covered.mark(values, number, header.columns)
        problem = None
        if number in totals:
            problem = _without_totals(values, totals[number], number, last)
        row = {
            name: values[column - 1] if column <= len(values) else None
            for name, column in zip(header.names, header.columns, strict=True)
        }
        if problem is None and len(values) > last:
            problem = beyond_header(values, header, number)
        if problem is None and unnamed:
            problem = under_no_name(values, header, number, unnamed)
        if problem is None:
            problem = repeated_header(values, header, number)
        if problem is None and all(value is None for value in row.values()):
            continue
        rows_read += 1
        if rows_read > source.limits.rows:
            raise too_many_rows(file, source.limits, number)
        hidden = errors is not None and errors.row_hidden(number)
        yield Row(number, pool.share(row), header, sheet_name, problem, hidden=hidden)
    if header is None and not above:
        # No cell holds a value: said as "no row 1 to take the header from", with the hint
        # to check `header:`, which no value of it mends.
        raise SheetError(
            f"sheet {sheet_name!r} of {file} is empty: none of its cells holds a value",
            file=file,
            hint="check that this is the right file; name the sheet that holds the rows with "
            "`sheet:` in forEach (without it, the first visible sheet is read)",
        )
    if header is None:
        raise SheetError(
            f"sheet {sheet_name!r} of {file} has no row {source.header_row} to take the "
            "header from",
            file=file,
            hint="check `header:` in forEach",
        )


def _numbered_rows(
    sheet: Any,
    bad: dict[int, dict[int, str]],
    padded: dict[int, dict[int, str]],
    percent: Any = None,
) -> Iterator[tuple[int, list[Cell]]]:
    """Each row's number and values from column A, the bad cells among them as
    :class:`BadCell`, the whole numbers a format of zeros shows with leading zeros as
    the text shown (``01234``, as a CSV export writes them), and the numbers a percentage
    format shows as :class:`ShownNumber` (``40%``, holding 0.4); rows holding only bad
    cells, which the reader leaves out of its range, come too."""
    # iter_rows starts at the used range's first column, not always at A; python-calamine
    # 0.9 yields the empty rows above the used range too (from row 1), where the range's
    # first row holds a value: an empty first row says the rows are counted from row 1.
    # Counting them from the range's first row put every row below an empty top row one
    # row or more too low (the header taken from an empty row, findings at the wrong row).
    first_row, first_column = (int(sheet.start[0]), int(sheet.start[1])) if sheet.start else (0, 0)
    rows = sheet.iter_rows()
    first = next(rows, None)
    from_row_1 = first_row > 0 and first is not None and all(_cell(v) is None for v in first)
    start = 0 if from_row_1 else first_row
    if not from_row_1:
        for number in sorted(n for n in bad if n <= first_row):
            yield number, _marked([], bad[number], number)
    number = start
    for index, raw in enumerate(rows if first is None else itertools.chain([first], rows)):
        number = start + index + 1
        values = [None] * first_column + [_cell(value) for value in raw]
        if _INEXACT in values or _NOT_FINITE in values:
            _mark_unreadable_numbers(values, raw, first_column, number)
        if padded and number in padded:
            _shown_padded(values, padded[number])
        shown = percent.get(number) if percent else None
        if shown:
            _shown_percent(values, shown)
        cells = bad.get(number)
        yield number, (values if cells is None else _marked(values, cells, number))
    for later in sorted(n for n in bad if n > number):
        yield later, _marked([], bad[later], later)


def _without_totals(
    values: list[Cell], tables: list[TotalsRow], row: int, last: int
) -> BadCell | None:
    """Empty the cells of ``row`` that are the totals row of one of ``tables`` (its label,
    its sums: no data); the problem of the row when it still holds a value in the header's
    columns outside those tables (a table narrower than the sheet's data), or None.

    A row left empty is then skipped as a blank row. One still holding a value is half a
    totals row: read, it would give a document without the cells the totals took."""
    for table in tables:
        for column in range(table.first, min(table.last, len(values)) + 1):
            values[column - 1] = None
    for column in range(1, min(last, len(values)) + 1):
        value = values[column - 1]
        if value is None:
            continue
        letter = column_letter(column)
        held = (value.shown or "a formula") if isinstance(value, BadCell) else repr(value)
        table = tables[0]
        return BadCell(
            column,
            f"cell {letter}{row} holds {held}, but row {row} is the totals row of the table "
            f"{table.name!r} ({table.ref}, columns {column_letter(table.first)} to "
            f"{column_letter(table.last)}), which is not data: the row is not read",
            "move the value out of the table's totals row (to a row of its own), or "
            "leave that row out with `rows:` in forEach",
            TOTALS_ROW,
        )
    return None


def _shown_padded(values: list[Cell], cells: dict[int, str]) -> None:
    for column, shown in cells.items():
        held = values[column - 1] if column <= len(values) else None
        if type(held) is int and held == int(shown):
            values[column - 1] = shown


def _shown_percent(values: list[Cell], cells: dict[int, str]) -> None:
    for column, shown in cells.items():
        held = values[column - 1] if column <= len(values) else None
        if type(held) is int or type(held) is float:
            values[column - 1] = ShownNumber(shown, held)


def _marked(values: list[Cell], cells: dict[int, str], row: int) -> list[Cell]:
    for column, shown in cells.items():
        if column > len(values):
            values += [None] * (column - len(values))
        values[column - 1] = _bad_cell(column, row, shown)
    return values


def _held(shown: str) -> str:
    """What a bad cell holds, from what :class:`CellScan` found there."""
    if shown == NO_RESULT:
        return "a formula with no saved result"
    if shown.startswith(PERCENT):
        return (
            f"a number its percentage format shows as {shown[len(PERCENT) :]}, which the "
            "reader would give as the number alone"
        )
    if shown.startswith(PADDED):
        return (
            f"a whole number its format of zeros shows as {shown[len(PADDED) :]}, which the "
            "reader would give without its leading zeros"
        )
    return "an Excel error" if shown == "#" else f"the Excel error {shown}"


def _bad_cell(column: int, row: int, shown: str) -> BadCell:
    where = f"cell {column_letter(column)}{row} holds {_held(shown)}"
    if shown == NO_RESULT:
        return BadCell(
            column,
            where,
            "open the workbook in Excel or LibreOffice and save it: that saves each "
            "formula's result (a program that writes workbooks without calculating leaves "
            "them out)",
        )
    return BadCell(
        column,
        where,
        "fix the formula in the workbook (or the cells it reads), then save it",
        shown=shown if shown != "#" else "an Excel error",
    )


class _Inexact:
    """What :func:`_cell` gives for a number too large for its digits to be exact."""


_INEXACT: Any = _Inexact()
_EXACT_BELOW = 1e15
"""Whole numbers of 16 digits or more are not what was typed: Excel keeps 15 significant
digits (123456789012345678 is kept as 123456789012345000 and shown as 1.23457E+17), and a
cell holds a double, exact only below 2**53."""


class _NotFinite:
    """What :func:`_cell` gives for a number that is not finite (``inf``, ``-inf``, ``nan``)."""


_NOT_FINITE: Any = _NotFinite()
"""No spreadsheet program types such a number (Excel shows #NUM! for an overflow), but a
workbook written by a program may hold ``inf`` or ``nan`` in a cell's value: it is no
number a field can take, nor text."""


def _mark_unreadable_numbers(
    values: list[Cell], raw: list[Any], first_column: int, row: int
) -> None:
    for at, value in enumerate(values):
        if value is _INEXACT:
            values[at] = _inexact_cell(raw[at - first_column], at + 1, row)
        elif value is _NOT_FINITE:
            number = raw[at - first_column]
            column = at + 1
            values[at] = BadCell(
                column,
                f"cell {column_letter(column)}{row} holds {_non_finite(number)}, which is no "
                "value a field or an expression can take (no spreadsheet program types it: "
                "the program that wrote the workbook put it there)",
                "type the value into the cell (or fix the program that wrote the workbook), "
                "then save it again",
                rule="row.cell-type",
            )


def _inexact_cell(number: float, column: int, row: int) -> BadCell:
    """The finding for a whole number of 16 digits or more. One of 15 significant digits
    (as many as Excel keeps) is a long number typed whole, whose last digits were lost; one
    of fewer is no such number (``1E+300``, a code such as ``1E300`` a spreadsheet took for
    a number in scientific notation, or a number far larger than any field takes): nothing
    typed was lost, it is too large to be read as an exact whole number."""
    shown = f"{number:.15G}"
    where = f"cell {column_letter(column)}{row} holds the number {shown}"
    significant = shown.split("E")[0].lstrip("-").replace(".", "").strip("0")
    if len(significant) >= 15:
        return BadCell(
            column,
            f"{where}, too long for a spreadsheet to keep every digit (Excel keeps 15): the "
            "digits typed after those are lost",
            "format the column as Text and type the numbers again (or put an apostrophe "
            "before each), so that every digit is kept",
            rule="row.cell-type",
        )
    digits = len(f"{abs(int(number))}")
    return BadCell(
        column,
        f"{where}, a whole number of {digits:,} digits: past 15 digits a cell holds no whole "
        "number exactly, so it is not read (a code such as 1E300 typed into a cell is taken "
        "for a number in scientific notation)",
        "if the cell holds a code or a reference, format the column as Text and type it again "
        "(or put an apostrophe before it); if it is a number, type the one meant",
        rule="row.cell-type",
    )


def _non_finite(number: float) -> str:
    if math.isnan(number):
        return "NaN ('not a number')"
    return "minus infinity (-inf)" if number < 0 else "infinity (inf)"


class _Covered:
    """The cells of data rows inside a merged range but its top-left one: a spreadsheet
    program shows the range's value across it, but the cells hold nothing, so each is a bad
    cell (not an empty one, which would leave its field out of the row's document)."""

    def __init__(self, merged: list[tuple[int, int, int, int]]) -> None:
        self._waiting = sorted(merged, reverse=True)  # the next range to start at the end
        self._active: list[tuple[int, int, int, int]] = []

    def mark(self, values: list[Cell], row: int, columns: Sequence[int]) -> None:
        """Mark ``row``'s covered cells among ``columns`` in ``values`` (rows in order)."""
        while self._waiting and self._waiting[-1][0] <= row:
            self._active.append(self._waiting.pop())
        if not self._active:
            return
        self._active = [merged for merged in self._active if merged[2] >= row]
        for top, left, bottom, right in self._active:
            for column in columns:
                if left <= column <= right and (row, column) != (top, left):
                    if column > len(values):
                        values += [None] * (column - len(values))
                    first = f"{column_letter(left)}{top}"
                    values[column - 1] = BadCell(
                        column,
                        f"cell {column_letter(column)}{row} is inside the merged cells "
                        f"{first}:{column_letter(right)}{bottom}, whose value is in {first} "
                        "only",
                        "unmerge the cells and fill the value into each row's cell (the "
                        "spreadsheet program shows it across the range, but the other cells "
                        "hold nothing)",
                    )


def _merged_ranges(sheet: Any) -> list[tuple[int, int, int, int]]:
    """Merged ranges as 1-based (top row, left column, bottom row, right column)."""
    ranges = getattr(sheet, "merged_cell_ranges", None) or []
    return [(int(r0) + 1, int(c0) + 1, int(r1) + 1, int(c1) + 1) for (r0, c0), (r1, c1) in ranges]


def _merged_value(
    merged: list[tuple[int, int, int, int]], rows: dict[int, list[Cell]], row: int, column: int
) -> Cell:
    """The value of the merged range holding (row, column): its top-left cell's value."""
    for top, left, bottom, right in merged:
        if top <= row <= bottom and left <= column <= right:
            values = rows.get(top, [])
            return values[left - 1] if left <= len(values) else None
    return None


def _merged_address(merged: list[tuple[int, int, int, int]], row: int, column: int) -> str | None:
    """The address of the merged range holding (row, column), ``B1:C1``; None: none."""
    for top, left, bottom, right in merged:
        if top <= row <= bottom and left <= column <= right:
            return f"{column_letter(left)}{top}:{column_letter(right)}{bottom}"
    return None


def _duration_text(value: dt.timedelta) -> str:
    """``36:30:00``, as a duration format of hours shows it (``-1:00:00`` before zero)."""
    seconds = round(value.total_seconds())
    sign, seconds = ("-", -seconds) if seconds < 0 else ("", seconds)
    return f"{sign}{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _cell(value: Any) -> Cell:
    """Cell values as the documents see them: integral numbers as integers, dates in ISO 8601,
    empty cells and cells of only spaces as None (as a CSV export's are), text exactly as
    typed (leading zeros kept)."""
    if value is None or value == "":
        return None
    if type(value) is str:
        return None if value.isspace() else value
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return _NOT_FINITE
        if value.is_integer():
            return int(value) if -_EXACT_BELOW < value < _EXACT_BELOW else _INEXACT
        return value
    if isinstance(value, dt.date | dt.time):
        return DateText(value.isoformat())
    if isinstance(value, dt.timedelta):
        # A cell of a duration format ([h]:mm), as Excel makes of 36:30 typed into it: a
        # time, which no field takes (it was sent as its seconds, 131400.0, a number
        # nobody typed, and that the sheet neither shows nor holds).
        return DateText(_duration_text(value))
    if isinstance(value, int | str):
        return value
    return str(value)
