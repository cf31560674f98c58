"""Annotated copies of spreadsheet inputs: every cell with a finding highlighted and
commented, and a first sheet listing the findings with a link to each cell.

The copies are XLSX workbooks (a CSV export becomes one too), written under a folder of the
user's choice; the original files are never opened for writing (see
:mod:`customs_batch.manifest.spreadsheet.copy`, which ``results --annotate`` shares).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openpyxl.comments import Comment
from openpyxl.styles import Font, PatternFill
from openpyxl.workbook.workbook import Workbook
from openpyxl.worksheet.hyperlink import Hyperlink
from openpyxl.worksheet.worksheet import Worksheet

from customs_batch.findings import Finding, Severity, column_letter
from customs_batch.manifest.spreadsheet.copy import (
    cell_text,
    copy_paths,
    empty_columns,
    named_columns,
    new_sheet_name,
    open_copy,
    save_copy,
    sheet_title,
)

FINDINGS_SHEET = "Findings"
_FILLS = {
    Severity.ERROR: PatternFill("solid", fgColor="FFC7CE"),
    Severity.WARNING: PatternFill("solid", fgColor="FFEB9C"),
    Severity.INFO: PatternFill("solid", fgColor="DDEBF7"),
}
_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
_COLUMNS = ("Severity", "Rule", "Sheet", "Cell", "Column", "Message", "Hint", "Document")
_WIDTHS = (10, 24, 16, 8, 20, 60, 60, 40)


@dataclass(frozen=True)
class AnnotatedFile:
    """One annotated copy: the spreadsheet it copies, where it was written, how many
    findings it carries."""

    source: str
    written: Path
    findings: int


def annotate_spreadsheets(
    findings: Iterable[Finding],
    folder: Path,
    sensitive_columns: Collection[tuple[str, str, str]] = (),
) -> list[AnnotatedFile]:
    """Write an annotated XLSX copy, under ``folder``, of every spreadsheet that has
    findings; return what was written, in file order. ``sensitive_columns`` (file, sheet,
    column name): the columns that gave a sensitive value (a guarantee's access code),
    left empty below their header in the copies."""
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        if finding.location.sheet is not None and finding.location.row:
            by_file[finding.location.file].append(finding)
    targets = copy_paths(by_file, folder)
    written = []
    for file in sorted(by_file):
        target = targets[file]
        first = by_file[file][0].location
        workbook = open_copy(Path(file), str(first.sheet), reading=first.reading)
        withhold(workbook, {(sheet, name) for at, sheet, name in sensitive_columns if at == file})
        annotate(workbook, by_file[file])
        save_copy(workbook, target)
        written.append(AnnotatedFile(file, target, len(by_file[file])))
    return written


def withhold(workbook: Workbook, columns: Collection[tuple[str, str]]) -> None:
    """Empty the ``columns`` (sheet, column name) of ``workbook`` below their header, as
    ``results --annotate`` does: the copy never holds a sensitive value."""
    by_sheet: dict[str, set[str]] = defaultdict(set)
    for sheet, name in columns:
        by_sheet[sheet_title(sheet)].add(name)
    for title, names in by_sheet.items():
        if title not in workbook.sheetnames:
            continue
        found = named_columns(workbook[title], names)
        if found is not None:
            header, numbers = found
            empty_columns(workbook[title], numbers, header + 1)


def annotate(workbook: Workbook, findings: Sequence[Finding]) -> None:
    """Highlight and comment every cell of ``workbook`` that ``findings`` point at (a finding
    of a whole row at the row's first cell), freeze each annotated sheet's header, and put a
    ``Findings`` sheet first with a link to each cell."""
    cells: dict[tuple[str, int, int], list[Finding]] = defaultdict(list)
    merged: dict[str, list[Any]] = {}
    for finding in findings:
        loc = finding.location
        title = sheet_title(loc.sheet)
        if title in workbook.sheetnames and loc.row:
            if title not in merged:
                merged[title] = list(workbook[title].merged_cells.ranges)
            ranges = merged[title]
            if loc.column_number >= 1:
                cells[(title, *_top_left(ranges, loc.row, loc.column_number))].append(finding)
            else:
                cells[title, loc.row, _first_free(ranges, loc.row)].append(finding)
    for (sheet, row, column), here in cells.items():
        cell = workbook[sheet].cell(row, column)
        here.sort(key=lambda f: _RANK[f.severity])
        cell.fill = _FILLS[here[0].severity]
        text = cell_text("\n\n".join(_comment(finding, (row, column)) for finding in here))
        comment = Comment(text, "customs-batch")
        comment.width, comment.height = 360, min(60 + 70 * len(here), 600)
        cell.comment = comment
    for sheet in {sheet for sheet, _, _ in cells}:
        sheet_findings = [f for f in findings if sheet_title(f.location.sheet) == sheet]
        header = header_row(workbook[sheet], sheet_findings)
        workbook[sheet].freeze_panes = f"A{header + 1}"
    _findings_sheet(workbook, findings)


def header_row(sheet: Worksheet, findings: Sequence[Finding]) -> int:
    """The row holding the column names the findings give (``forEach.header``), else 1."""
    named = [
        (f.location.column_number, f.location.column_name)
        for f in findings
        if f.location.column_number >= 1 and f.location.column_name
    ]
    top = min((f.location.row or 1 for f in findings), default=1)
    for row in range(1, top):
        if named and all(_text(sheet.cell(row, column).value) == name for column, name in named):
            return row
    return 1


def _top_left(ranges: Sequence[Any], row: int, column: int) -> tuple[int, int]:
    """The cell that carries a note for (``row``, ``column``): itself, or, inside merged
    cells (``ranges``), their top-left one, which a spreadsheet program shows and the only
    one that can carry a comment."""
    for merged in ranges:
        if merged.min_row <= row <= merged.max_row and merged.min_col <= column <= merged.max_col:
            return merged.min_row, merged.min_col
    return row, column


def _first_free(ranges: Sequence[Any], row: int) -> int:
    """The first column of ``row`` whose cell can carry the note of a whole row: not
    inside merged cells, unless it is their top-left one in this row."""
    column = 1
    while (found := _top_left(ranges, row, column)) != (row, column):
        merged = next(r for r in ranges if (r.min_row, r.min_col) == found and r.max_col >= column)
        column = merged.max_col + 1
    return column


def _comment(finding: Finding, at: tuple[int, int]) -> str:
    loc = finding.location
    where = "" if loc.column_number >= 1 else " (this row)"
    if (
        loc.column_number >= 1 and (loc.row, loc.column_number) != at
    ):  # noted at the merged cells' first
        where += f" (cell {column_letter(max(loc.column_number, 1))}{loc.row}, inside these merged cells)"
    text = f"{finding.severity.value} [{finding.rule}]{where}: {finding.message}"
    return f"{text}\nhint: {finding.hint}" if finding.hint else text


def _findings_sheet(workbook: Workbook, findings: Sequence[Finding]) -> None:
    sheet = workbook.create_sheet(new_sheet_name(workbook, FINDINGS_SHEET), 0)
    sheet.append(_COLUMNS)
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    ordered = sorted(findings, key=lambda f: (_RANK[f.severity], f.location.row or 0))
    # Row numbers counted here: the sheet's max_row is counted over every cell each time.
    for number, finding in enumerate(ordered, start=2):
        loc = finding.location
        coordinate = f"{column_letter(max(loc.column_number, 1))}{loc.row}"
        column = column_letter(loc.column_number) if loc.column_number >= 1 else "(row)"
        if loc.column_name:
            column += f" {loc.column_name}"
        values = (
            finding.severity.value,
            finding.rule,
            loc.sheet,
            coordinate,
            column,
            finding.message,
            finding.hint,
            finding.document or "",
        )
        for index, value in enumerate(values, start=1):
            if value:
                value = cell_text(value)
                # Text stays text: a sheet name or a message beginning with "=" (a CSV file
                # named "=1+2.csv", a policy's message) is never a formula, as in the data
                # sheets.
                sheet.cell(number, index, value).data_type = "s"
        if sheet_title(loc.sheet) in workbook.sheetnames:
            link = sheet.cell(number, 4)
            quoted = sheet_title(loc.sheet).replace("'", "''")
            link.hyperlink = Hyperlink(ref=link.coordinate, location=f"'{quoted}'!{coordinate}")
            link.style = "Hyperlink"
    for index, width in enumerate(_WIDTHS, start=1):
        sheet.column_dimensions[column_letter(index)].width = width
    sheet.freeze_panes = "A2"
    sheet.auto_filter.ref = f"A1:{column_letter(len(_COLUMNS))}{sheet.max_row}"
    workbook.active = 0


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()
