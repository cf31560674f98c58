"""Copies of spreadsheet inputs to write on: an XLSX workbook beside the original, which is
never opened for writing.

``validate --annotate`` (findings) and ``results --annotate`` (apply's outcomes) both copy
the spreadsheets ``forEach`` read. An XLSX workbook is copied with its formatting
(openpyxl); a CSV file is read with the encoding and delimiter its ``forEach`` states
(what it does not state detected, as ``forEach`` does) and every field is written as the text it holds, so leading zeros and
decimal commas look as they did; other workbooks (``.xls``, ``.ods``) are copied by value.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

import openpyxl
import python_calamine
from openpyxl.cell.cell import MergedCell
from openpyxl.workbook.workbook import Workbook
from openpyxl.worksheet.worksheet import Worksheet

from customs_batch.env_numbers import positive_whole_number
from customs_batch.errors import CustomsBatchError, UsageError
from customs_batch.findings import CsvReading
from customs_batch.folders import make_private_folder
from customs_batch.manifest.spreadsheet.csvfile import (
    SAMPLE_BYTES,
    detect_encoding,
    excel_separator,
    guess_delimiter,
    utf16_without_bom,
)
from customs_batch.manifest.spreadsheet.header import cell_name
from customs_batch.manifest.spreadsheet.limits import MAX_COLUMNS
from customs_batch.manifest.spreadsheet.model import SheetError, SheetLimits
from customs_batch.manifest.spreadsheet.workbook_check import workbook_cells
from customs_batch.output_file import check_named_file, write_named_file
from customs_batch.userfiles import InputKind, note_read

OPENPYXL_SUFFIXES = frozenset({".xlsx", ".xlsm"})
CSV_SUFFIXES = frozenset({".csv", ".tsv", ".txt"})


def copy_path(source: Path, folder: Path, *, option: str = "--annotate") -> Path:
    """Where the copy of ``source`` goes: its path under ``folder`` (relative to the
    current folder when it lies inside it, else its name), ending in ``.xlsx``:
    ``data/movements.xlsx`` -> ``FOLDER/data/movements.xlsx``, ``data/d.csv`` ->
    ``FOLDER/data/d.csv.xlsx``. A copy that would replace its original is an error that
    names ``option``, the command's option giving the folder (a usage error: the folder
    is the wrong one, exit 64)."""
    try:
        relative = source.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        relative = Path(source.name)
    name = relative.name if relative.suffix.lower() == ".xlsx" else f"{relative.name}.xlsx"
    target = folder / relative.parent / name
    if target.resolve() == source.resolve():
        raise UsageError(
            f"the annotated copy of {source} would replace the file itself",
            hint=f"pass {option} a folder of its own, e.g. {option} annotated/",
        )
    return target


def copy_paths(
    files: Iterable[str], folder: Path, *, option: str = "--annotate"
) -> dict[str, Path]:
    """:func:`copy_path` of each of ``files``, checked before any is written: two
    spreadsheets outside the current folder with one name would share a copy (the second
    replacing the first), which is an error naming both."""
    targets: dict[str, Path] = {}
    seen: dict[Path, str] = {}
    for file in sorted(files):
        target = copy_path(Path(file), folder, option=option)
        if target in seen:
            raise CustomsBatchError(
                f"{seen[target]} and {file} would both be copied to {target}",
                hint="run customs-batch from a folder that holds both spreadsheets, so that "
                "their copies keep their folders",
            )
        seen[target] = file
        targets[file] = target
    return targets


def check_copy_folder(files: Iterable[str], folder: Path, *, option: str) -> None:
    """Refuse now the folder ``option`` names for the copies of ``files`` when a copy
    there could not be written (it would replace its original, two would share a name, or
    one would be a record of customs-batch's, a file the run reads, another user's file):
    ``apply --annotate-results`` asks before it sends anything, not once the run is over."""
    for target in copy_paths(files, folder, option=option).values():
        try:
            check_named_file(target, what="annotated copy")
            if target.is_dir():
                raise CustomsBatchError(
                    f"cannot write the annotated copy {target}: a folder is there",
                    hint=f"pass {option} a folder of its own, e.g. {option} annotated/",
                )
        except CustomsBatchError as exc:
            raise UsageError(f"{option} {folder}: {exc.message}", hint=exc.hint) from exc


def open_copy(path: Path, csv_sheet: str, reading: CsvReading | None = None) -> Workbook:
    """The spreadsheet at ``path`` as a workbook in memory; a CSV file becomes the one
    sheet ``csv_sheet``, read with the encoding and delimiter its ``forEach`` states
    (``reading``; what is not stated is detected, as the reader does). A file that cannot
    be read is a CustomsBatchError naming it."""
    suffix = path.suffix.lower()
    note_read(path, InputKind.SPREADSHEET)
    bound = max_copy_cells()
    try:
        if suffix in OPENPYXL_SUFFIXES:
            _check_workbook_cells(path, bound)
            try:
                return openpyxl.load_workbook(path)
            except Exception:  # openpyxl raises whatever its parsers meet
                # A workbook the reader read but openpyxl cannot load (its shared strings
                # not named in the workbook's relationships gave an IndexError, an
                # "internal error"): copied from the values the reader reads, without the
                # workbook's formats.
                return _workbook(_calamine_sheets(path, bound))
        if suffix in CSV_SUFFIXES:
            return _workbook({csv_sheet: _csv_rows(path, bound, reading)})
        return _workbook(_calamine_sheets(path, bound))
    except (
        OSError,
        UnicodeDecodeError,
        csv.Error,
        ValueError,
        KeyError,
        python_calamine.CalamineError,
    ) as exc:
        raise CustomsBatchError(
            f"cannot read {path} to annotate it: {exc}",
            hint="check that the spreadsheet is still there and readable",
        ) from exc


def save_copy(workbook: Workbook, target: Path) -> None:
    """Write the copy readable by its owner only (0600): it holds the spreadsheet's customs
    data. An earlier copy of the user's own is replaced; one refused (a record of
    customs-batch's, another user's file) is refused before its folder is made."""
    check_named_file(target, what="annotated copy")
    try:
        make_private_folder(target.parent)  # it holds the copies: 0700
    except OSError as exc:
        raise CustomsBatchError(
            f"cannot write the annotated copy {target}: {exc.strerror}",
            hint="check that the folder is writable",
        ) from exc
    content = io.BytesIO()
    workbook.save(content)
    write_named_file(target, content.getvalue(), what="annotated copy")


def empty_columns(sheet: Worksheet, columns: Iterable[int], first_row: int) -> None:
    """Leave ``columns`` (1-based) of ``sheet`` empty from ``first_row`` down: the columns
    that gave a sensitive value (a guarantee's access code), which no copy holds."""
    columns = sorted(set(columns))
    for number in range(first_row, sheet.max_row + 1):
        for column in columns:
            cell = sheet.cell(number, column)
            if not isinstance(cell, MergedCell):
                cell.value = None


def named_columns(sheet: Worksheet, names: Collection[str]) -> tuple[int, set[int]] | None:
    """The first row of ``sheet`` holding one of the column names ``names`` (the header
    row), and the columns there that hold one of them; None when no row does."""
    for number, values in enumerate(sheet.iter_rows(values_only=True), start=1):
        found = {
            column
            for column, value in enumerate(values, start=1)
            if value is not None and cell_name(value) in names
        }
        if found:
            return number, found
    return None


def sheet_title(name: str | None) -> str:
    """A sheet name as a workbook can hold it: 31 characters at most, none of ``[]:*?/\\``,
    its control characters shown as :func:`cell_text` shows them."""
    return re.sub(r"[\[\]:*?/\\]", "_", cell_text(name or ""))[:31]


# What XML 1.0 cannot carry, even escaped: the control characters but the tab and line breaks
# (openpyxl's ILLEGAL_CHARACTERS_RE, which it refuses), and U+FFFE, U+FFFF and lone
# surrogates, which it lets through into a sheet's XML that no program then reads.
_NOT_IN_XLSX = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def cell_text(text: str) -> str:
    """Text a workbook can hold: the control characters XLSX refuses (a CSV field, a cell
    of an ``.xls`` or ``.ods`` workbook, a service's error or a finding quoting either may
    carry any) shown as ``\\xNN``, U+FFFE and U+FFFF as ``\\ufffe`` and ``\\uffff``, a
    lone surrogate (a byte that was not UTF-8) as ``\\udcff``; tabs and line breaks kept.
    openpyxl refuses the control characters outright and writes the others into a copy no
    program opens; a comment holding one would make the copy unreadable."""
    return _NOT_IN_XLSX.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def new_sheet_name(workbook: Workbook, wanted: str) -> str:
    """``wanted``, or a variant of it no sheet of ``workbook`` has yet."""
    name = wanted
    while name in workbook.sheetnames:
        name = f"{name} (customs-batch)" if name == wanted else f"_{name}"
    return name


MAX_COPY_CELLS_VARIABLE = "CUSTOMS_BATCH_MAX_COPY_CELLS"
DEFAULT_MAX_COPY_CELLS = 2_500_000
"""The most cells (rows times columns of every sheet) an annotated copy is made of: the
copy is built in memory, about 0.4 KB a cell (a 950,000-row CSV export of 86 MB, well
within the reader's limits, took results --annotate past 6 GB)."""


def max_copy_cells(environ: Mapping[str, str] | None = None) -> int:
    """The most cells a copy may hold, from ``CUSTOMS_BATCH_MAX_COPY_CELLS``."""
    return positive_whole_number(
        MAX_COPY_CELLS_VARIABLE,
        DEFAULT_MAX_COPY_CELLS,
        unit="cells",
        example=2 * DEFAULT_MAX_COPY_CELLS,
        environ=environ,
    )


def _too_large(path: Path, cells: str, bound: int) -> CustomsBatchError:
    return CustomsBatchError(
        f"{path} is too large to copy: {cells}, over the {bound:,} an annotated copy may "
        "hold (it is built in memory, about 0.4 KB a cell)",
        hint="read the rows in the report instead (`--format html -o report.html`, or "
        "`--format json`), or split the spreadsheet; to make the copy anyway, raise the "
        f"bound with {MAX_COPY_CELLS_VARIABLE}=<cells>",
    )


def _check_workbook_cells(path: Path, bound: int) -> None:
    """Refuse a workbook whose sheets hold more than ``bound`` cells in all, found from
    the zip as the reader's check finds them, before openpyxl holds every one."""
    with open(path, "rb") as handle:
        try:
            cells = workbook_cells(handle, str(path), SheetLimits())
        except SheetError as error:
            raise CustomsBatchError(
                f"cannot copy {path}: {error.message}", hint=error.hint
            ) from error
    if cells > bound:
        raise _too_large(path, f"its sheets span {cells:,} cells", bound)


def _csv_rows(path: Path, bound: int, reading: CsvReading | None) -> list[list[Any]]:
    stated = reading or CsvReading(None, None)
    if stated.encoding is not None:
        return _csv_records(path, stated.encoding, bound, stated.delimiter)
    with open(path, "rb") as raw:
        sample = raw.read(SAMPLE_BYTES)
    encoding = detect_encoding(sample)
    if encoding in ("utf-8", "cp1252") and b"\x00" in sample:
        # UTF-16 without a BOM, which the reader read with the `encoding` its forEach
        # gives (a finding does not carry it): the NUL bytes tell its byte order. Read
        # as UTF-8, every character came with a NUL, and each line end made two rows,
        # putting every row's outcome on another row of the copy.
        encoding = utf16_without_bom(sample) or encoding
    try:
        return _csv_records(path, encoding, bound, stated.delimiter)
    except UnicodeDecodeError:
        # Not the encoding the start of the file suggests (the reader stopped at it, its
        # rows an error): Windows-1252 reads any byte.
        return _csv_records(path, "cp1252", bound, stated.delimiter)


def _csv_records(
    path: Path, encoding: str, bound: int, stated: str | None = None
) -> list[list[Any]]:
    with open(path, encoding=encoding, newline="") as text:
        # Not a row, as the reader skips it; padded, it is as wide as the header (a field
        # for each of up to MAX_COLUMNS columns).
        separator = excel_separator(text.readline(2 * MAX_COLUMNS + 16))
        start = text.tell() if separator is not None else 0
        text.seek(start)
        delimiter = (
            stated
            or separator
            or guess_delimiter([line for _, line in zip(range(50), text, strict=False)])
        )
        text.seek(start)
        records: list[list[Any]] = []
        cells = 0
        for number, record in enumerate(csv.reader(text, delimiter=delimiter, strict=False), 1):
            cells += max(len(record), 1)
            if cells > bound:
                raise _too_large(path, f"its first {number:,} rows hold {cells:,} cells", bound)
            records.append(record)
        return records


def _calamine_sheets(path: Path, bound: int) -> dict[str, list[list[Any]]]:
    workbook = python_calamine.CalamineWorkbook.from_path(str(path))
    try:
        sheets: dict[str, list[list[Any]]] = {}
        cells = 0
        for name in workbook.sheet_names:
            # From A1: without skipping the empty area, the rows and columns above and left
            # of the used range are there already (adding them again put every cell of a
            # sheet with empty top rows that many rows and columns off its own).
            sheet = workbook.get_sheet_by_name(name)
            start = sheet.start or (0, 0)
            cells += (int(start[0]) + sheet.height) * (int(start[1]) + sheet.width)
            if cells > bound:
                raise _too_large(path, f"its sheets span more than {cells:,} cells", bound)
            rows = sheet.to_python(skip_empty_area=False)
            sheets[name] = [list(row) for row in rows]
        return sheets
    finally:
        workbook.close()


def _workbook(sheets: dict[str, list[list[Any]]]) -> Workbook:
    workbook = Workbook()
    for blank in list(workbook.worksheets):
        workbook.remove(blank)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(sheet_title(name))
        for number, values in enumerate(rows, start=1):
            for column, value in enumerate(values, start=1):
                if value not in (None, ""):
                    if isinstance(value, str):
                        value = cell_text(value)
                    cell = sheet.cell(number, column, value)
                    if isinstance(value, str):
                        cell.data_type = "s"  # text stays text: no formula, no number
    return workbook
