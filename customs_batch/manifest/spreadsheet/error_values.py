"""Excel error values the XLSX reader does not know, replaced before it reads the sheet.

python-calamine knows the seven classic error values (``#N/A``, ``#DIV/0!`` ...) and fails
the whole workbook on any other: ``#GETTING_DATA`` (in the ECMA-376 list), and the errors of
Excel 365 (``#SPILL!``, ``#CALC!``, ``#FIELD!`` ...) where a workbook stores them so. A column
the manifest does not read may hold errors (docs/spreadsheets.md), so such a sheet is read
from a copy in which those cells hold ``#N/A``: the check (``cell_scan``) has already noted
each error cell with the value it shows, and the rows give that value, never the stand-in.

The copy is made only for such a sheet: the sheet's part is streamed (inflated within the
same bound as the check) with its error cells rewritten, the other parts copied as they
are, into memory: nothing of the workbook is written anywhere the user did not name, not
even for a moment (a process killed while it read would have left customs data behind).
"""

from __future__ import annotations

import io
import re
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from customs_batch.manifest.spreadsheet.cell_scan import NO_RESULT, CellScan, after_last_cell
from customs_batch.manifest.spreadsheet.model import SheetLimits

READER_ERRORS = frozenset(
    {"#N/A", "#DIV/0!", "#NAME?", "#NULL!", "#NUM!", "#REF!", "#VALUE!", "#", NO_RESULT}
)
"""The values of error cells the reader gives (as empty cells), and what ``cell_scan`` notes
for an error cell without a value (``#``) and a formula without a result."""

_ERROR_CELL = re.compile(
    rb"""(<(?:[\w.-]+:)?c(?=[\s>])[^>]*\st\s*=\s*["']e["'][^>]*(?<!/)>)(.*?)(</(?:[\w.-]+:)?c>)""",
    re.DOTALL,
)
_VALUE = re.compile(rb"(<(?:[\w.-]+:)?v>)([^<]*)(</(?:[\w.-]+:)?v>)")
_LONGEST_CELL = 4 * 1024 * 1024
_CHUNK = 1024 * 1024


def unknown_errors(scan: CellScan | None) -> bool:
    """Whether the sheet ``scan`` looked at holds an error value the reader does not know."""
    if scan is None or scan.member is None:
        return False
    return any(
        code not in READER_ERRORS for cells in scan.found.values() for code in cells.values()
    )


def readable_copy(path: Path, member: str, limits: SheetLimits) -> io.BytesIO:
    """A copy, in memory, of the workbook at ``path`` whose part ``member`` has every error
    value the reader does not know replaced by ``#N/A`` (compressed again: about the
    workbook's size)."""
    copy_bytes = io.BytesIO()
    with (
        zipfile.ZipFile(path) as source,
        zipfile.ZipFile(copy_bytes, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as copy,
    ):
        for info in source.infolist():
            with source.open(info) as data, copy.open(_entry(info), "w") as out:
                if info.filename == member:
                    for piece in _rewritten(data, limits):
                        out.write(piece)
                else:
                    shutil.copyfileobj(data, out, _CHUNK)
    copy_bytes.seek(0)
    return copy_bytes


def _entry(info: zipfile.ZipInfo) -> zipfile.ZipInfo:
    entry = zipfile.ZipInfo(info.filename, info.date_time)
    entry.compress_type = zipfile.ZIP_DEFLATED
    return entry


def _rewritten(data: IO[bytes], limits: SheetLimits) -> Iterator[bytes]:
    """The part's XML with the unknown error values replaced, in pieces that end after a
    cell (so no error cell is cut in two), within ``limits.bytes`` in all."""
    rest = b""
    left = limits.bytes
    while chunk := data.read(_CHUNK):
        left -= len(chunk)
        if left < 0:  # the check read the same part within the bound: it changed since
            raise zipfile.BadZipFile("the sheet's part is larger than it was when checked")
        text = rest + chunk
        cut = after_last_cell(text)
        if cut == 0 and len(text) <= _LONGEST_CELL:
            rest = text
            continue
        cut = cut or len(text)
        yield _ERROR_CELL.sub(_replace_cell, text[:cut])
        rest = text[cut:]
    if rest:
        yield _ERROR_CELL.sub(_replace_cell, rest)


def _replace_cell(cell: re.Match[bytes]) -> bytes:
    inner = _VALUE.sub(_replace_value, cell.group(2))
    return cell.group(1) + inner + cell.group(3)


def _replace_value(value: re.Match[bytes]) -> bytes:
    shown = value.group(2).strip().decode("utf-8", errors="replace")
    if shown in READER_ERRORS or not shown:
        return value.group(0)
    return value.group(1) + b"#N/A" + value.group(3)
