"""Annotated copies of spreadsheet inputs: every cell with a finding highlighted and
commented, and a first sheet listing the findings with a link to each cell.

The copies are XLSX workbooks (a CSV export becomes one too), written under a folder of the
user's choice; the original files are never opened for writing. An XLSX workbook is copied
with its formatting (openpyxl); a CSV file is read the way ``forEach`` reads it by default
(encoding and delimiter detected) and every field is written as the text it holds, so
leading zeros and decimal commas look as they did.
"""

from __future__ import annotations

import csv
import io
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openpyxl
import python_calamine
from openpyxl.comments import Comment
from openpyxl.styles import Font, PatternFill
from openpyxl.workbook.workbook import Workbook
from openpyxl.worksheet.hyperlink import Hyperlink
from openpyxl.worksheet.worksheet import Worksheet

from customs_batch.errors import CustomsBatchError
from customs_batch.findings import Finding, Severity, column_letter
from customs_batch.manifest.spreadsheet.csvfile import (
    SAMPLE_BYTES,
    detect_delimiter,
    detect_encoding,
)
from customs_batch.output_file import write_named_file

FINDINGS_SHEET = "Findings"
_FILLS = {
    Severity.ERROR: PatternFill("solid", fgColor="FFC7CE"),
    Severity.WARNING: PatternFill("solid", fgColor="FFEB9C"),
    Severity.INFO: PatternFill("solid", fgColor="DDEBF7"),
}
_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
_COLUMNS = ("Severity", "Rule", "Sheet", "Cell", "Column", "Message", "Hint", "Document")
_WIDTHS = (10, 24, 16, 8, 20, 60, 60, 40)
_OPENPYXL_SUFFIXES = frozenset({".xlsx", ".xlsm"})
_CSV_SUFFIXES = frozenset({".csv", ".tsv", ".txt"})


@dataclass(frozen=True)
class AnnotatedFile:
    """One annotated copy: the spreadsheet it copies, where it was written, how many
    findings it carries."""

    source: str
    written: Path
    findings: int


def annotate_spreadsheets(findings: Iterable[Finding], folder: Path) -> list[AnnotatedFile]:
    """Write an annotated XLSX copy, under ``folder``, of every spreadsheet that has
    findings; return what was written, in file order."""
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        if finding.location.sheet is not None and finding.location.row:
            by_file[finding.location.file].append(finding)
    written = []
    for file in sorted(by_file):
        target = copy_path(Path(file), folder)
        workbook = _open(Path(file), by_file[file])
        annotate(workbook, by_file[file])
        _save(workbook, target)
        written.append(AnnotatedFile(file, target, len(by_file[file])))
    return written


def copy_path(source: Path, folder: Path) -> Path:
    """Where the copy of ``source`` goes: its path under ``folder`` (relative to the
    current folder when it lies inside it, else its name), ending in ``.xlsx``:
    ``data/movements.xlsx`` -> ``FOLDER/data/movements.xlsx``, ``data/d.csv`` ->
    ``FOLDER/data/d.csv.xlsx``. A copy that would replace its original is an error."""
    try:
        relative = source.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        relative = Path(source.name)
    name = relative.name if relative.suffix.lower() == ".xlsx" else f"{relative.name}.xlsx"
    target = folder / relative.parent / name
    if target.resolve() == source.resolve():
        raise CustomsBatchError(
            f"the annotated copy of {source} would replace the file itself",
            hint="pass --annotate a folder of its own, e.g. --annotate annotated/",
        )
    return target


def annotate(workbook: Workbook, findings: Sequence[Finding]) -> None:
    """Highlight and comment every cell of ``workbook`` that ``findings`` point at (a finding
    of a whole row at the row's first cell), freeze each annotated sheet's header, and put a
    ``Findings`` sheet first with a link to each cell."""
    cells: dict[tuple[str, int, int], list[Finding]] = defaultdict(list)
    for finding in findings:
        loc = finding.location
        if _title(loc.sheet) in workbook.sheetnames and loc.row:
            cells[_title(loc.sheet), loc.row, max(loc.column, 1)].append(finding)
    for (sheet, row, column), here in cells.items():
        cell = workbook[sheet].cell(row, column)
        here.sort(key=lambda f: _RANK[f.severity])
        cell.fill = _FILLS[here[0].severity]
        text = "\n\n".join(_comment(finding) for finding in here)
        comment = Comment(text, "customs-batch")
        comment.width, comment.height = 360, min(60 + 70 * len(here), 600)
        cell.comment = comment
    for sheet in {sheet for sheet, _, _ in cells}:
        sheet_findings = [f for f in findings if _title(f.location.sheet) == sheet]
        header = header_row(workbook[sheet], sheet_findings)
        workbook[sheet].freeze_panes = f"A{header + 1}"
    _findings_sheet(workbook, findings)


def header_row(sheet: Worksheet, findings: Sequence[Finding]) -> int:
    """The row holding the column names the findings give (``forEach.header``), else 1."""
    named = [
        (f.location.column, f.location.column_name)
        for f in findings
        if f.location.column >= 1 and f.location.column_name
    ]
    top = min((f.location.row or 1 for f in findings), default=1)
    for row in range(1, top):
        if named and all(_text(sheet.cell(row, column).value) == name for column, name in named):
            return row
    return 1


def _comment(finding: Finding) -> str:
    where = "" if finding.location.column >= 1 else " (this row)"
    text = f"{finding.severity.value} [{finding.rule}]{where}: {finding.message}"
    return f"{text}\nhint: {finding.hint}" if finding.hint else text


def _findings_sheet(workbook: Workbook, findings: Sequence[Finding]) -> None:
    name = FINDINGS_SHEET
    while name in workbook.sheetnames:
        name = f"{name} (customs-batch)" if name == FINDINGS_SHEET else f"_{name}"
    sheet = workbook.create_sheet(name, 0)
    sheet.append(_COLUMNS)
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for finding in sorted(findings, key=lambda f: (_RANK[f.severity], f.location.row or 0)):
        loc = finding.location
        coordinate = f"{column_letter(max(loc.column, 1))}{loc.row}"
        column = column_letter(loc.column) if loc.column >= 1 else "(row)"
        if loc.column_name:
            column += f" {loc.column_name}"
        sheet.append(
            (
                finding.severity.value,
                finding.rule,
                loc.sheet,
                coordinate,
                column,
                finding.message,
                finding.hint,
                finding.document or "",
            )
        )
        if _title(loc.sheet) in workbook.sheetnames:
            link = sheet.cell(sheet.max_row, 4)
            quoted = _title(loc.sheet).replace("'", "''")
            link.hyperlink = Hyperlink(ref=link.coordinate, location=f"'{quoted}'!{coordinate}")
            link.style = "Hyperlink"
    for index, width in enumerate(_WIDTHS, start=1):
        sheet.column_dimensions[column_letter(index)].width = width
    sheet.freeze_panes = "A2"
    sheet.auto_filter.ref = f"A1:{column_letter(len(_COLUMNS))}{sheet.max_row}"
    workbook.active = 0


def _open(path: Path, findings: Sequence[Finding]) -> Workbook:
    suffix = path.suffix.lower()
    try:
        if suffix in _OPENPYXL_SUFFIXES:
            return openpyxl.load_workbook(path)
        sheet = str(findings[0].location.sheet)
        if suffix in _CSV_SUFFIXES:
            return _workbook({sheet: _csv_rows(path)})
        return _workbook(_calamine_sheets(path))
    except (OSError, UnicodeDecodeError, csv.Error, ValueError) as exc:
        raise CustomsBatchError(
            f"cannot read {path} to annotate it: {exc}",
            hint="check that the spreadsheet is still there and readable",
        ) from exc


def _csv_rows(path: Path) -> list[list[Any]]:
    with open(path, "rb") as raw:
        encoding = detect_encoding(raw.read(SAMPLE_BYTES))
    with open(path, encoding=encoding, newline="") as text:
        delimiter = detect_delimiter(text.readline())
        text.seek(0)
        return [list(record) for record in csv.reader(text, delimiter=delimiter, strict=False)]


def _calamine_sheets(path: Path) -> dict[str, list[list[Any]]]:
    workbook = python_calamine.CalamineWorkbook.from_path(str(path))
    try:
        sheets: dict[str, list[list[Any]]] = {}
        for name in workbook.sheet_names:
            sheet = workbook.get_sheet_by_name(name)
            top, left = (int(sheet.start[0]), int(sheet.start[1])) if sheet.start else (0, 0)
            rows = sheet.to_python(skip_empty_area=False)
            sheets[name] = [[]] * top + [[None] * left + list(row) for row in rows]
        return sheets
    finally:
        workbook.close()


def _workbook(sheets: dict[str, list[list[Any]]]) -> Workbook:
    workbook = Workbook()
    for blank in list(workbook.worksheets):
        workbook.remove(blank)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(_title(name))
        for number, values in enumerate(rows, start=1):
            for column, value in enumerate(values, start=1):
                if value not in (None, ""):
                    cell = sheet.cell(number, column, value)
                    if isinstance(value, str):
                        cell.data_type = "s"  # text stays text: no formula, no number
    return workbook


def _save(workbook: Workbook, target: Path) -> None:
    """Write the copy readable by its owner only: it holds the spreadsheet's customs data."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CustomsBatchError(
            f"cannot write the annotated copy {target}: {exc.strerror}",
            hint="check that the folder is writable",
        ) from exc
    content = io.BytesIO()
    workbook.save(content)
    write_named_file(target, content.getvalue(), what="annotated copy")


def _title(name: str | None) -> str:
    """A sheet name as a workbook can hold it: 31 characters at most, none of ``[]:*?/\\``."""
    return re.sub(r"[\[\]:*?/\\]", "_", name or "")[:31]


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()
