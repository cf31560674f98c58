"""The results in the workbook: a copy of every spreadsheet the manifests expand over, with
result columns after each row (status, document, the IDs the service gave, the service's
state and errors, when), coloured by outcome, and a first sheet ``Summary`` that counts the
rows per status with a link to each row.

The copies are written as ``validate --annotate`` writes its own (see
:mod:`customs_batch.manifest.spreadsheet.copy`): XLSX even for a CSV input, under a folder
of the user's choice, readable by the owner only; the originals are never opened for
writing. A column that gave a sensitive value of its row's document (a guarantee's access
code) in some row is left empty in every data row of the copy.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from openpyxl.cell.cell import Cell, MergedCell
from openpyxl.styles import Font, PatternFill
from openpyxl.utils.cell import range_boundaries
from openpyxl.workbook.workbook import Workbook
from openpyxl.worksheet.hyperlink import Hyperlink
from openpyxl.worksheet.worksheet import Worksheet

from customs_batch.errors import CustomsBatchError
from customs_batch.execution.results import Outcome, ResultStatus, RowResult
from customs_batch.findings import column_letter
from customs_batch.kinds.model import ServiceId
from customs_batch.manifest.spreadsheet.copy import (
    cell_text,
    copy_paths,
    empty_columns,
    new_sheet_name,
    open_copy,
    save_copy,
    sheet_title,
)
from customs_batch.manifest.spreadsheet.limits import MAX_COLUMNS
from customs_batch.state.model import Scalar

SUMMARY_SHEET = "Summary"
RESULT_COLUMNS = (
    "Result",
    "Document",
    "Declaration ID",
    "MRN",
    "Movement ID",
    "Other ID",
    "Service state",
    "Errors",
    "Recorded at",
)
"""The columns appended after each sheet's last column, in this order."""
ID_COLUMNS = (ServiceId.DECLARATION, ServiceId.MRN, ServiceId.MOVEMENT, ServiceId.OTHER)
FILLS = {
    Outcome.FAILED: "FFC7CE",
    Outcome.WAITING: "FFEB9C",
    Outcome.DONE: "C6EFCE",
}
"""The fill colour (RGB) of a row's result cells by outcome: red, yellow, green; none for
a row that is not part of the run (not selected, forgotten)."""
MEANINGS = {
    ResultStatus.REJECTED: "refused by the service, or rejected by customs: fix the row, apply again",
    ResultStatus.INVALID: "the row's document has errors (customs-batch validate --annotate)",
    ResultStatus.NO_DOCUMENT: "the row gave no document (customs-batch validate --annotate)",
    ResultStatus.SKIPPED: "not sent: a document it depends on failed",
    ResultStatus.NEEDS_DECISION: "nothing more is sent until you decide, as its Errors say: "
    "an outcome unknown, or an object the service may already hold (state adopt or state "
    "forget), or one no longer found there (state rm --gone)",
    ResultStatus.PENDING: "sent; the service or customs has not decided yet (refresh)",
    ResultStatus.NOT_APPLIED: "not sent yet, or its outcome is unknown and the next apply "
    "repeats it safely (apply)",
    ResultStatus.FORGOTTEN: "no longer followed (state rm)",
    ResultStatus.NOT_SELECTED: "left out by the selection (-l, --target, --exclude)",
    ResultStatus.DONE: "created or updated, and accepted as far as the state knows",
}
UNREAD_ROW = (
    "the manifests made no document of this row (outside forEach rows, or a problem "
    "reported at the manifest: customs-batch validate)"
)
_WIDTHS = (14, 36, 15, 22, 16, 12, 16, 60, 26)
_HEADER_FONT = Font(bold=True)


@dataclass(frozen=True)
class ResultsFile:
    """One copy written: the spreadsheet it copies, where it went, its rows per status."""

    source: str
    written: Path
    counts: dict[ResultStatus, int]


def write_results_workbooks(
    rows: Sequence[RowResult], folder: Path, *, option: str = "--annotate"
) -> list[ResultsFile]:
    """Write the results copy of every spreadsheet ``rows`` name, under ``folder``; a copy
    that would replace its original is refused before anything is written (the error names
    ``option``, the command's option that gave the folder)."""
    by_file: dict[str, list[RowResult]] = defaultdict(list)
    for row in rows:
        by_file[row.file].append(row)
    targets = copy_paths(by_file, folder, option=option)
    written = []
    for file in sorted(by_file):
        target = targets[file]
        first = by_file[file][0]
        workbook = open_copy(Path(file), csv_sheet=first.sheet, reading=first.reading)
        listed = annotate_results(workbook, by_file[file])
        save_copy(workbook, target)
        counts = Counter(row.status for row in listed)
        written.append(ResultsFile(file, target, dict(counts)))
    return written


def annotate_results(workbook: Workbook, rows: Sequence[RowResult]) -> list[RowResult]:
    """Append the result columns to each sheet of ``rows`` and put the ``Summary`` sheet
    first; return every row annotated (those the manifests made nothing of included)."""
    by_sheet: dict[str, list[RowResult]] = defaultdict(list)
    for row in rows:
        by_sheet[sheet_title(row.sheet)].append(row)
    listed: list[RowResult] = []
    for title, here in by_sheet.items():
        if title in workbook.sheetnames:
            listed += _annotate_sheet(workbook[title], here)
    _summary(workbook, listed)
    return listed


def _annotate_sheet(sheet: Worksheet, rows: list[RowResult]) -> list[RowResult]:
    known = {row.row: row for row in rows}
    first_data = min(known)
    # forEach.header where a document says it (the first rows may be left out by
    # forEach.rows: the row above the first one read is then a data row)
    stated = [row.header for row in rows if row.header is not None and row.header < first_data]
    header = min(stated) if stated else _header_row(sheet, first_data)
    first = sheet.max_column + 1
    _check_room(sheet, rows[0], first)
    last = sheet.max_row
    for offset, name in enumerate(RESULT_COLUMNS):
        cell = sheet.cell(header, first + offset, name)
        cell.font = _HEADER_FONT
        sheet.column_dimensions[column_letter(first + offset)].width = _WIDTHS[offset]
    totals = _totals_cells(sheet)
    unread = [
        RowResult(rows[0].file, rows[0].sheet, number, problems=(UNREAD_ROW,))
        for number in range(header + 1, last + 1)
        if number not in known and _holds_values(sheet, number, first, totals.get(number, ()))
    ]
    every = sorted([*rows, *unread], key=lambda row: row.row)
    empty_columns(sheet, _sensitive_columns(sheet, rows, first), header + 1)
    for row in every:
        _write_row(sheet, row, first)
    sheet.freeze_panes = f"A{header + 1}"
    return every


def _check_room(sheet: Worksheet, row: RowResult, first: int) -> None:
    """Refuse a sheet whose result columns would go past XFD, the last column a
    spreadsheet has: Excel drops such cells when it repairs the file, results and all."""
    if first + len(RESULT_COLUMNS) - 1 <= MAX_COLUMNS:
        return
    raise CustomsBatchError(
        f"{row.file}, sheet {row.sheet!r} uses every column up to "
        f"{column_letter(sheet.max_column)}: the {len(RESULT_COLUMNS)} result columns "
        f"would go past {column_letter(MAX_COLUMNS)}, the last column a spreadsheet has",
        hint=f"delete the unused columns right of the data (leave {len(RESULT_COLUMNS)} free "
        "after the last one), or read the results with `customs-batch results` "
        "(`--format json` or `--format html`)",
    )


def _header_row(sheet: Worksheet, first_data: int) -> int:
    """The row of the column names: the last row holding values above the first data
    row (``forEach.header``; a title row above it is left alone), else row 1."""
    end = sheet.max_column + 1
    for number in range(first_data - 1, 0, -1):
        if _holds_values(sheet, number, end):
            return number
    return 1


def _holds_values(
    sheet: Worksheet, number: int, end: int, skipped: Sequence[tuple[int, int]] = ()
) -> bool:
    """Whether row ``number`` holds a value left of column ``end``, outside the column
    ranges ``skipped`` (a table's totals row)."""
    return any(
        sheet.cell(number, column).value not in (None, "")
        for column in range(1, end)
        if not any(left <= column <= right for left, right in skipped)
    )


def _totals_cells(sheet: Worksheet) -> dict[int, list[tuple[int, int]]]:
    """The totals rows of the sheet's tables (row -> the tables' column ranges there): no
    data, which the reader leaves out as it leaves out blank rows."""
    found: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for table in sheet.tables.values():
        count = table.totalsRowCount or 0
        if not count or not table.ref:
            continue
        try:
            left, top, right, bottom = range_boundaries(table.ref)
        except (TypeError, ValueError):
            continue
        if left is None or top is None or right is None or bottom is None:
            continue
        for number in range(max(top, bottom - count + 1), bottom + 1):
            found[number].append((left, right))
    return found


def _sensitive_columns(sheet: Worksheet, rows: Sequence[RowResult], end: int) -> set[int]:
    """The columns that gave a sensitive value (a guarantee's access code) in some row:
    emptied in every data row, those that gave no document included."""
    return {
        column
        for row in rows
        if row.withheld
        for column in range(1, end)
        if row.withholds(sheet.cell(row.row, column).value)
    } | {column for row in rows for column in row.withheld_columns if column < end}


def _write_row(sheet: Worksheet, row: RowResult, first: int) -> None:
    values: list[str | int] = [
        row.status.value,
        "\n".join(doc.address for doc in row.documents),
        *(_ids_cell(row.ids(what)) for what in ID_COLUMNS),
        "\n".join(doc.service_state for doc in row.documents if doc.service_state),
        "\n".join(row.errors),
        row.at,
    ]
    for offset, value in enumerate(values):
        if isinstance(value, str):
            value = cell_text(value)
        cell = sheet.cell(row.row, first + offset, value if value != "" else None)
        if isinstance(value, str):
            cell.data_type = "s"  # an error's text is never a formula
        _fill(cell, row.status)


def _ids_cell(ids: tuple[Scalar, ...]) -> str | int:
    """One ID as the service gave it (a number stays a number), several one per line."""
    if len(ids) == 1 and isinstance(ids[0], int) and not isinstance(ids[0], bool):
        return ids[0]
    return "\n".join(str(ident) for ident in ids)


def _summary(workbook: Workbook, rows: Sequence[RowResult]) -> None:
    """Rows per status, each count linked to the status's first row in the list below it;
    then every row, worst first, its row number linked to the row."""
    sheet = workbook.create_sheet(new_sheet_name(workbook, SUMMARY_SHEET), 0)
    counts = Counter(row.status for row in rows)
    present = [status for status in ResultStatus if counts[status]]
    sheet.append(("Result", "Rows", "", "Meaning"))
    for number, status in enumerate(present, start=2):
        sheet.append((status.value, counts[status], None, MEANINGS[status]))
        _fill(sheet.cell(number, 1), status)
    sheet.append(("Total", len(rows)))
    sheet.append(())
    listing = len(present) + 4  # the header of the list of rows
    sheet.append(("Result", "Sheet", "Row", "Document", "Errors"))
    for header in (1, listing):
        for cell in sheet[header]:
            cell.font = _HEADER_FONT
    rank = {status: index for index, status in enumerate(ResultStatus)}
    first_of: dict[ResultStatus, int] = {}
    ordered = sorted(rows, key=lambda r: (rank[r.status], r.sheet, r.row))
    # Row numbers are counted here: the sheet's max_row is counted over every cell.
    for number, row in enumerate(ordered, start=listing + 1):
        documents = ", ".join(doc.address for doc in row.documents)
        errors = cell_text("\n".join(row.errors))
        sheet.append((row.status.value, cell_text(row.sheet), row.row, documents, errors))
        first_of.setdefault(row.status, number)
        _fill(sheet.cell(number, 1), row.status)
        _link(sheet.cell(number, 3), row.sheet, f"A{row.row}")
        for column in (1, 2, 4, 5):
            sheet.cell(number, column).data_type = "s"
    for number, status in enumerate(present, start=2):
        _link(sheet.cell(number, 2), sheet.title, f"A{first_of[status]}")
    for letter, width in zip("ABCDE", (16, 20, 8, 44, 70), strict=True):
        sheet.column_dimensions[letter].width = width
    workbook.active = 0


def _link(cell: Cell | MergedCell, sheet: str, coordinate: str) -> None:
    quoted = sheet_title(sheet).replace("'", "''")
    cell.hyperlink = Hyperlink(ref=cell.coordinate, location=f"'{quoted}'!{coordinate}")
    cell.style = "Hyperlink"


def _fill(cell: Cell | MergedCell, status: ResultStatus) -> None:
    colour = FILLS.get(status.outcome)
    if colour is not None:
        cell.fill = PatternFill("solid", fgColor=colour)
