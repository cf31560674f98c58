"""What a workbook would cost to read, found from the zip before the XLSX reader sees it.

The reader holds the whole used range of a sheet (rows times columns, empty cells too) and
every shared string in memory. So before it runs:

- the members' sizes, as the zip's directory states them, must add up to at most
  ``maxMegabytes`` uncompressed (a zip bomb stops here, having read only the directory);
- the sheet's XML and the shared strings are inflated as a stream, never more than that
  many bytes in all whatever the directory claims, and the sheet's cell references
  (``<c r="XFD1048576">``) give the used range, which must hold at most ``maxCells``;
- the shared strings, which the reader keeps all of, are at most ``maxCells`` too;
- an ODS's ``content.xml`` is inflated as a stream too, and its tables, which the reader
  holds all of with their repeated rows and cells expanded, hold at most ``maxCells`` in all,
  and their text, copied into each repeated cell, at most ``maxMegabytes``.

On the way the sheet's cells that hold an Excel error or a formula with no saved result are
noted (``cell_scan``): the reader gives them as empty cells; so are whole numbers that a
format of zeros shows with leading zeros, and numbers a percentage format shows (an ODS's
too), which the reader gives as the number alone.

Only cells that hold something count (the reader skips empty ``<c .../>`` elements, and so
does the check); a cell without a reference is placed after the one before it in its row, and
a row without one after the furthest row, which is never less than where the reader puts
them. ``<dimension ref=...>`` is not trusted: the reader ignores it too.

No text between two tags (a cell's value, a shared string) may be longer than the bound of
a CSV line (1 MB, ``CUSTOMS_BATCH_MAX_LINE_MB``): the reader would hold it whole, in one
allocation, however small the zip.
"""

from __future__ import annotations

import bisect
import copy
import decimal
import html
import posixpath
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from customs_batch.findings import column_letter
from customs_batch.line_bound import MAX_LINE_MB_VARIABLE, max_line_bytes
from customs_batch.manifest.spreadsheet.cell_scan import CellScan, TotalsRow
from customs_batch.manifest.spreadsheet.limits import TOO_LARGE, too_large
from customs_batch.manifest.spreadsheet.model import MEGABYTE, SheetError, SheetLimits

_CHUNK = 1024 * 1024
_LONGEST_TAG = 1024 * 1024
_PREFIX = rb"<(?:[\w.-]+:)?"
_ROW_OR_CELL = re.compile(_PREFIX + rb"(row|c)(?=[\s>/])([^>]*)>")
_REFERENCE = re.compile(rb"""\sr\s*=\s*["']([A-Za-z]*)([0-9]+)["']""")
_DIMENSION = re.compile(
    rb"<(?:[\w.-]+:)?dimension\s+ref\s*=\s*[\"']([A-Za-z]*)([0-9]*)(?::([A-Za-z]*)([0-9]*))?[\"']"
)
# Cells or rows whose first attribute is not ``r="..."`` after one space (placed after the
# previous one, or spelled in a way the quick search does not read): these, and prefixed
# tags, send a sheet the slow way.
_UNREFERENCED = re.compile(rb'<(?:c|row)(?! r=")[\s>]')
_UNUSUAL = (b":c ", b":c>", b":row")  # prefixed tags
_SHARED_STRING = re.compile(_PREFIX + rb"si(?=[\s>/])")
_SHEET_TAG = re.compile(rb"<(?:[\w.-]+:)?sheet\s[^>]*>")
_RELATION_TAG = re.compile(rb"<(?:[\w.-]+:)?Relationship\s[^>]*>")
_NUMBER_FORMAT_TAG = re.compile(rb"<(?:[\w.-]+:)?numFmt\s[^>]*>")
_STYLES = "xl/styles.xml"
_STYLE_TAG = re.compile(rb"<(/?)(?:[\w.-]+:)?(cellXfs|xf)(?=[\s>/])([^>]*)>")
_FORMAT_ID = re.compile(rb"""(?<![\w:.-])numFmtId\s*=\s*["']([^"']*)["']""")
_BEFORE, _INSIDE, _AFTER = range(3)  # where the second pass is, for the cellXfs section
_ZEROS = re.compile(r"0{2,15}")
_PERCENT = re.compile(r"0(?:\.(0{1,15}))?%")
"""A percentage format: ``0%``, ``0.0%``, ``0.00%`` (one with text, colours, sections or
grouped thousands gives the number held, as before)."""
_PERCENT_FORMATS = {b"9": 0, b"10": 2}
"""Excel's own percentage formats (``0%``, ``0.00%``), which ``styles.xml`` uses without
writing them out."""
_BUILT_IN_PERCENT = re.compile(rb"""numFmtId\s*=\s*["'](?:9|10)["']""")
_ATTRIBUTE = re.compile(rb"""([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")


@dataclass
class _Extent:
    """The furthest row and column holding a value. A cell without a reference is placed
    after the one before it in its row (from column 1 at the row's start), as the reader
    places it; a row without one after the furthest row (never less than the reader).
    A row or a cell holding nothing (rows formatted down to the sheet's end, a styled
    empty cell) does not count: the reader skips them."""

    last_row: int = 0
    last_column: int = 0
    rows_without_ref: int = 0
    column: int = 0
    """Where the last cell of the row being read was placed."""
    row: int = 0
    """The number of the row being read (0: a row without a reference)."""

    def scan(self, xml: bytes) -> None:
        for tag in _ROW_OR_CELL.finditer(xml):
            attributes = tag.group(2)
            reference = _REFERENCE.search(attributes)
            if tag.group(1) == b"row":
                self.column = 0
                if reference is None:
                    self.rows_without_ref += 1
                    self.row = 0
                else:
                    self.row = int(reference.group(2))
                continue
            row = self.row
            if reference is not None and reference.group(1):
                self.column = _column_number(reference.group(1).upper())
                row = int(reference.group(2))
            else:
                self.column += 1
            if not attributes.endswith(b"/"):  # an empty cell holds nothing (see above)
                self.last_column = max(self.last_column, self.column)
                self.last_row = max(self.last_row, row)

    @property
    def rows(self) -> int:
        return self.last_row + self.rows_without_ref

    @property
    def columns(self) -> int:
        return self.last_column


def check_workbook(
    handle: IO[bytes], file: str, sheet: str | None, limits: SheetLimits
) -> CellScan | None:
    """Raise SheetError when reading ``sheet`` (None: the first) of the workbook open in
    ``handle`` would take more than ``limits`` allow; else the sheet's bad cells. Not a zip
    (an old .xls): nothing to check beyond the file's size, which the caller bounds, and
    no bad cells known (None, as for a sheet that is not found)."""
    try:
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, ValueError):
        return None
    with archive, _damaged_zip(file):
        return _check(archive, file, sheet, limits)


def workbook_cells(handle: IO[bytes], file: str, limits: SheetLimits) -> int:
    """The cells of every worksheet's used range (rows times columns), summed: what a
    program that holds the whole workbook (openpyxl, for an annotated copy) holds. 0 for a
    file that is not a zip (its own reader reports it)."""
    try:
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, ValueError):
        return 0
    with archive:
        inflater = _Inflater(file, limits)
        total = 0
        with _damaged_zip(file):
            for member in sorted(archive.namelist()):
                if member.startswith("xl/worksheets/") and member.endswith(".xml"):
                    rows, columns = _used_range(archive, member, inflater, limits, None)
                    total += rows * columns
        return total


@contextmanager
def _damaged_zip(file: str) -> Iterator[None]:
    """What reading a member of ``file``'s zip raises when the zip is damaged (a truncated
    or corrupt member, an entry no reader supports), as the SheetError a user reads."""
    try:
        yield
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as exc:
        raise SheetError(
            f"cannot read {file} as an XLSX workbook (the zip is damaged: {exc})",
            file=file,
            hint="save the export again as .xlsx",
        ) from exc


def _check(
    archive: zipfile.ZipFile, file: str, sheet: str | None, limits: SheetLimits
) -> CellScan | None:
    stated = sum(info.file_size for info in archive.infolist())
    if stated > limits.bytes:
        what = f"the workbook expands to {_megabytes(stated)} when uncompressed"
        raise too_large(file, what, "maxMegabytes", limits.megabytes)
    inflater = _Inflater(file, limits)
    names = set(archive.namelist())
    if len(names) != len(archive.infolist()):
        # Which of two same-named parts a reader takes is its own choice: the check could
        # look at one and the reader read the other.
        raise SheetError(
            f"cannot read {file} as an XLSX workbook: the zip holds two parts of one name",
            file=file,
            hint="save the export again from the spreadsheet program",
        )
    if "xl/sharedStrings.xml" in names:
        _check_shared_strings(archive, file, inflater, limits)
    ods_percent = None
    if "content.xml" in names:  # an ODS's sheets and strings
        ods_percent = _check_ods_tables(archive, file, inflater, limits)
    members, named = _sheet_members(archive, names, sheet, inflater)
    # Several members: the workbook does not say which is the sheet, nor which the reader takes.
    padded, percent = _shown_styles(archive, inflater, limits) if _STYLES in names else ({}, {})
    cells = CellScan(padded, percent) if len(members) == 1 else None
    if cells is not None:
        cells.member = members[0][0]
        if named is not None:
            cells.sheet = named
    if cells is not None:
        cells.totals = _totals_rows(archive, names, members[0][0], inflater)
    if ods_percent and not members:
        # An ODS: the reader gives a percentage as the number alone; its table is known by
        # name once the reader has chosen it.
        cells = CellScan()
        cells.table_percent = ods_percent
    for member, shown in members:
        rows, columns = _used_range(archive, member, inflater, limits, cells)
        if rows * columns > limits.cells:
            what = (
                f"sheet {shown!r} spans {rows:,} rows by {columns:,} columns "
                f"(A1:{column_letter(columns)}{rows}), {rows * columns:,} cells"
            )
            raise too_large(file, what, "maxCells", limits.cells)
    return cells


def _check_shared_strings(
    archive: zipfile.ZipFile, file: str, inflater: _Inflater, limits: SheetLimits
) -> None:
    """The reader keeps every shared string (a few dozen bytes each, empty ones too): no
    more of them than the sheet may have cells (``maxCells``)."""
    count = 0
    for piece in _tags(inflater.stream(archive, "xl/sharedStrings.xml"), file):
        count += len(_SHARED_STRING.findall(piece))
        if count > limits.cells:
            what = "its shared-strings part holds more strings than the sheet may have cells"
            raise too_large(file, what, "maxCells", limits.cells)


_ODS_TAG = re.compile(
    rb"<(/?)(?:[\w.-]+:)?(table|table-row|table-cell|covered-table-cell)(?=[\s>/])([^>]*)>"
)
_ODS_REPEATED = re.compile(rb"""number-(rows|columns)-repeated\s*=\s*["']\s*([0-9]+)\s*["']""")
_ODS_VALUE_TYPE = re.compile(rb"value-type\s*=")
_ODS_NAME = re.compile(rb"""[\s:]name\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_ODS_PERCENT = re.compile(rb"""value-type\s*=\s*["']percentage["']""")
_ODS_VALUE = re.compile(rb"""[\s:]value\s*=\s*["']([^"']{0,64})["']""")
_ODS_MARKUP = re.compile(rb"<[^>]*>")


class _OdsTables:
    """The used range of each table of an ODS's ``content.xml``, its repeated rows and
    cells counted as many times as they are repeated (``table:number-rows-repeated``,
    ``table:number-columns-repeated``): the reader expands them, and holds every table of
    the workbook at once. Only rows and cells holding something count, as for XLSX: empty
    rows and cells after the last value (which LibreOffice writes as one repeated row to
    the sheet's end) are not expanded by the reader. The reader copies a repeated cell's
    text into each cell too: :attr:`text_bytes` counts it so."""

    def __init__(self) -> None:
        self.tables: list[tuple[str, int, int]] = []
        """(name, rows, columns) of each table ended so far."""
        self.text_bytes = 0
        """The bytes inside the cells holding something (their text and its markup), each
        counted as many times as its row and the cell are repeated."""
        self._open: int | None = None  # where the open cell's content starts in this piece
        self._carried = 0  # the open cell's bytes in the pieces before
        self._open_columns = 0
        self._name = ""
        self._row = self._last_row = self._last_column = 0
        self._row_repeat = 0  # the open row's repeat; 0: no row open
        self._row_holds = False
        self._column = 0
        self.percent: dict[str, PercentCells] = {}
        """By table: the cells holding a percentage (``office:value-type="percentage"``),
        with the text the sheet shows (its ``<text:p>``, ``40%``), which the reader gives
        as the number alone (0.4)."""
        self._percent = PercentCells()
        self._pending: tuple[int, int, int, int, str] | None = None
        """The open cell's rows and columns (first, last of each) and its shown text made
        from its value, when it holds a percentage."""

    def _note_percent(self, attributes: bytes, columns: int) -> None:
        found = _ODS_VALUE.search(attributes)
        shown = _exact_percent(found.group(1)) if found is not None else None
        if shown is None:
            return
        first_row = self._row + 1
        self._pending = (
            first_row,
            first_row + max(self._row_repeat, 1) - 1,
            self._column - columns + 1,
            self._column,
            shown,
        )

    def _end_percent(self, shown: str | None) -> None:
        assert self._pending is not None
        first_row, last_row, first_column, last_column, from_value = self._pending
        self._pending = None
        self._percent.add(first_row, last_row, first_column, last_column, shown or from_value)

    def scan(self, xml: bytes) -> None:
        for tag in _ODS_TAG.finditer(xml):
            closing, kind, attributes = tag.group(1), tag.group(2), tag.group(3)
            if kind == b"table-row":
                self._end_row()
                if not closing and not attributes.endswith(b"/"):
                    self._row_repeat = _repeat(attributes, b"rows")
                elif not closing:  # an empty row, repeated or not
                    self._row += _repeat(attributes, b"rows")
            elif kind == b"table":
                self._end_row()
                if closing:
                    self.end()
                else:
                    found = _ODS_NAME.search(attributes)
                    self._name = (
                        html.unescape(
                            (found.group(1) or found.group(2) or b"").decode(errors="replace")
                        )
                        if found
                        else f"table {len(self.tables) + 1}"
                    )
            elif closing:  # a cell's end
                if self._open is not None:
                    held = self._carried + tag.start() - self._open
                    self.text_bytes += held * self._open_columns * max(self._row_repeat, 1)
                    if self._pending is not None:
                        shown = None
                        if not self._carried:  # the cell's text is in this piece
                            text = _ODS_MARKUP.sub(b"", xml[self._open : tag.start()])
                            shown = html.unescape(text.decode("utf-8", errors="replace"))
                        self._end_percent(shown.strip() if shown else None)
                    self._open = None
            else:  # a cell
                columns = _repeat(attributes, b"columns")
                holds = not attributes.endswith(b"/") or _ODS_VALUE_TYPE.search(attributes)
                self._column += columns
                if holds:
                    self._last_column = max(self._last_column, self._column)
                    self._row_holds = True
                if b"percentage" in attributes and _ODS_PERCENT.search(attributes):
                    self._note_percent(attributes, columns)
                    if attributes.endswith(b"/"):
                        self._end_percent(None)
                if not attributes.endswith(b"/"):
                    self._open, self._carried, self._open_columns = tag.end(), 0, columns
        if self._open is not None:  # a cell still open: its content goes on in the next piece
            self._carried += len(xml) - self._open
            self._open = 0

    def _end_row(self) -> None:
        if not self._row_repeat:
            return
        self._row += self._row_repeat
        if self._row_holds:
            self._last_row = self._row
        self._row_repeat, self._row_holds, self._column = 0, False, 0

    def end(self) -> None:
        """End the open table, if any (also at the end of the part)."""
        self._end_row()
        if self._last_row or self._row:
            self.tables.append((self._name, self._last_row, self._last_column))
            if self._percent:
                self.percent.setdefault(self._name, self._percent)
        self._percent = PercentCells()
        self._row = self._last_row = self._last_column = 0


class PercentCells:
    """The cells of one ODS table that hold a percentage, with the text each shows: by row
    and column, and a row repeated several times (``table:number-rows-repeated``) as one
    range, never a row each. The rows come in order and never overlap (each row element
    follows the one before), so the range holding a row is found by bisection."""

    def __init__(self) -> None:
        self.rows: dict[int, dict[int, str]] = {}
        self._firsts: list[int] = []
        self._lasts: list[int] = []
        self._cells: list[dict[int, str]] = []

    def __bool__(self) -> bool:
        return bool(self.rows or self._cells)

    def add(self, first_row: int, last_row: int, first: int, last: int, shown: str) -> None:
        cells = dict.fromkeys(range(first, last + 1), shown)
        if first_row == last_row:
            self.rows.setdefault(first_row, {}).update(cells)
        elif self._firsts and self._firsts[-1] == first_row:
            self._cells[-1].update(cells)  # another cell of the same repeated row
        else:
            self._firsts.append(first_row)
            self._lasts.append(last_row)
            self._cells.append(cells)

    def get(self, row: int) -> dict[int, str] | None:
        """Column -> the text shown, for the cells of ``row`` holding a percentage."""
        found = self.rows.get(row)
        if found is not None or not self._firsts:
            return found
        at = bisect.bisect_right(self._firsts, row) - 1
        return self._cells[at] if at >= 0 and row <= self._lasts[at] else None


def _exact_percent(value: bytes) -> str | None:
    """``12.5%`` for ``office:value="0.125"``: the number times 100 with every digit it has
    (what a cell shows when its text is not at hand)."""
    try:
        number = decimal.Decimal(value.decode("ascii").strip())
    except (UnicodeDecodeError, decimal.InvalidOperation):
        return None
    if not number.is_finite():
        return None
    shown = (number * 100).normalize()
    return f"{shown:f}%"


def _repeat(attributes: bytes, what: bytes) -> int:
    for found in _ODS_REPEATED.finditer(attributes):
        if found.group(1) == what:
            digits = found.group(2).lstrip(b"0")
            return max(1, int(digits)) if len(digits) <= 12 else _HUGE
    return 1


def _check_ods_tables(
    archive: zipfile.ZipFile, file: str, inflater: _Inflater, limits: SheetLimits
) -> dict[str, PercentCells]:
    """An ODS's tables may hold at most ``maxCells`` cells in all, their repeated rows and
    cells expanded as the reader expands them (an 837-byte file claiming 98 million cells
    took the reader past 3 GB): found from the part as a stream, before the reader runs."""
    tables = _OdsTables()
    for piece in _tags(inflater.stream(archive, "content.xml"), file):
        tables.scan(piece)
    tables.end()
    total = 0
    for name, rows, columns in tables.tables:
        cells = rows * columns
        total += cells
        if cells > limits.cells:
            what = (
                f"sheet {name!r} spans {rows:,} rows by {columns:,} columns "
                f"(A1:{column_letter(columns)}{rows}), {cells:,} cells once its "
                "repeated rows and cells are expanded"
            )
            raise too_large(file, what, "maxCells", limits.cells)
    if total > limits.cells:
        what = (
            f"its {len(tables.tables)} sheets span {total:,} cells in all once their repeated "
            "rows and cells are expanded (the reader holds every sheet of an ODS workbook)"
        )
        raise too_large(file, what, "maxCells", limits.cells)
    if tables.text_bytes > limits.bytes:
        what = (
            f"its cells' text expands to {_megabytes(tables.text_bytes)} once repeated rows and "
            "cells are expanded (the reader copies the text into each)"
        )
        raise too_large(file, what, "maxMegabytes", limits.megabytes)
    return tables.percent


def _used_range(
    archive: zipfile.ZipFile,
    member: str,
    inflater: _Inflater,
    limits: SheetLimits,
    cells: CellScan | None,
) -> tuple[int, int]:
    """Rows and columns of the sheet's used range, at least (from A1).

    The quick way, taken by every file a spreadsheet program writes: the sheet's
    ``<dimension>`` is trusted once a search finds no reference beyond it and no cell or
    row placed without a reference. Otherwise every reference is read (several times
    slower, and only for such files).
    """
    quick = _Claimed()
    for xml in _tags(inflater.stream(archive, member), inflater.file):
        quick.scan(xml)
        if cells is not None:
            cells.scan(xml)
    if quick.rows and not quick.beyond and quick.rows * quick.columns <= limits.cells:
        return quick.rows, quick.columns
    extent = _Extent()
    for xml in _tags(_Inflater(inflater.file, limits).stream(archive, member), inflater.file):
        extent.scan(xml)
    return extent.rows, extent.columns


class _Claimed:
    """The used range a sheet claims in ``<dimension ref=...>``, and whether anything in the
    sheet lies beyond it (then the claim is not used)."""

    def __init__(self) -> None:
        self.rows = self.columns = 0
        self.beyond = False
        self.outside: re.Pattern[bytes] | None = None

    def scan(self, xml: bytes) -> None:
        if self.beyond:
            return
        if self.outside is None:
            self._claim(xml)
            if self.outside is None:
                self.beyond = True  # no dimension at the start: read every reference
                return
        self.beyond = (
            any(odd in xml for odd in _UNUSUAL)
            or _UNREFERENCED.search(xml) is not None
            or self.outside.search(xml) is not None
        )

    def _claim(self, xml: bytes) -> None:
        found = _DIMENSION.search(xml)
        if found is None:
            return
        letters, digits = found.group(3) or found.group(1), found.group(4) or found.group(2)
        if not letters or not digits or len(letters) > 3 or len(digits) > 7:
            return
        self.columns = _column_number(letters.upper())
        self.rows = int(digits)
        # A reference past the claimed corner, or one with lowercase letters or leading
        # zeros (which the pattern below would not compare).
        self.outside = re.compile(
            rb' r="(?:(?:'
            + _greater(letters.upper(), b"ABCDEFGHIJKLMNOPQRSTUVWXYZ")
            + rb")[0-9]|[A-Za-z]*(?:"
            + _greater(digits.lstrip(b"0") or b"0", b"0123456789")
            + rb')"|[A-Z]*[a-z0])'
        )


class _Inflater:
    """The uncompressed bytes left to read, across every member streamed."""

    def __init__(self, file: str, limits: SheetLimits) -> None:
        self.file, self.limits, self.left = file, limits, limits.bytes

    def stream(self, archive: zipfile.ZipFile, member: str) -> Iterator[bytes]:
        info = copy.copy(archive.getinfo(member))
        # Inflate by what the stream holds, not by what the directory claims it holds.
        info.file_size = self.limits.bytes + 1
        longest = max_line_bytes()
        text = 0  # bytes since the last tag's bracket
        with archive.open(info) as data:
            while chunk := data.read(_CHUNK):
                self.left -= len(chunk)
                if self.left < 0:
                    what = "the workbook expands to more than its stated size when uncompressed"
                    raise too_large(self.file, what, "maxMegabytes", self.limits.megabytes)
                # A chunk is no longer than the least bound (1 MB): only a text carried
                # over from chunks before can run over it.
                last = max(chunk.rfind(b"<"), chunk.rfind(b">"))
                if last < 0:
                    text += len(chunk)
                else:
                    text += min(i for i in (chunk.find(b"<"), chunk.find(b">")) if i >= 0)
                if text > longest:
                    raise self._too_long(longest, member)
                if last >= 0:
                    text = len(chunk) - last - 1
                yield chunk

    def _too_long(self, longest: int, member: str) -> SheetError:
        """The error for a text of ``member`` longer than ``longest`` bytes."""
        return SheetError(
            f"{self.file}: {member} holds a value longer than {longest // MEGABYTE:,} MB, "
            "which no field of a declaration needs (the reader would hold it whole)",
            file=self.file,
            rule=TOO_LARGE,
            hint=(
                "check that this is the right file; if it is, raise the bound with "
                f"{MAX_LINE_MB_VARIABLE}=<megabytes>"
            ),
        )


def _tags(chunks: Iterator[bytes], file: str) -> Iterator[bytes]:
    """The XML in pieces that never cut a tag in two."""
    rest = b""
    for chunk in chunks:
        text = rest + chunk
        cut = text.rfind(b"<")
        if cut < 0 or text.find(b">", cut) >= 0:
            rest = b""
            yield text
            continue
        rest = text[cut:]
        if len(rest) > _LONGEST_TAG:
            raise SheetError(
                f"cannot read {file}: it holds an XML tag longer than 1 MB",
                file=file,
                hint="save the export again from the spreadsheet program",
            )
        yield text[:cut]
    if rest:
        yield rest


def _sheet_members(
    archive: zipfile.ZipFile, names: set[str], sheet: str | None, inflater: _Inflater
) -> tuple[list[tuple[str, str]], str | None]:
    """The member holding ``sheet`` and the sheet's name, and that name as the workbook
    gives it; every worksheet, and no name, when the workbook does not say which member is
    which (the reader may then take any of them).

    Without ``sheet`` it is the first worksheet a spreadsheet program shows: neither a
    hidden tab (an old copy left in the workbook) nor a chart sheet before it, whose part
    holds no cells. The reader then reads the sheet named here, so that the cells this
    check finds (errors, formulas without a result, numbers a format of zeros pads) are
    those of the rows it gives.
    """
    wanted = _named_sheets(archive, names, inflater)
    if wanted:
        shown_first = [name for name, _, shown in wanted if shown]
        name = sheet if sheet is not None else (shown_first or [wanted[0][0]])[0]
        found = [(member, named) for named, member, _ in wanted if named == name]
        if found and found[0][0] in names:
            return found[:1], name
        if not found:
            return [], None  # no such sheet: the reader says so, with the names there are
    every = [
        (member, member.rsplit("/", 1)[-1].removesuffix(".xml"))
        for member in sorted(names)
        if member.startswith("xl/worksheets/") and member.endswith(".xml")
    ]
    return every, None


def _named_sheets(
    archive: zipfile.ZipFile, names: set[str], inflater: _Inflater
) -> list[tuple[str, str, bool]]:
    """(sheet name, member, shown) in workbook order, from workbook.xml and its
    relationships; ``shown``: a worksheet (not a chart, dialog or macro sheet, as the
    folder of its part says, which is how the reader tells them) whose tab is not hidden."""
    if not {"xl/workbook.xml", "xl/_rels/workbook.xml.rels"} <= names:
        return []
    workbook = b"".join(inflater.stream(archive, "xl/workbook.xml"))
    relations = b"".join(inflater.stream(archive, "xl/_rels/workbook.xml.rels"))
    targets: dict[str, str] = {}
    for tag in _RELATION_TAG.findall(relations):
        attributes = _attributes(tag)
        target = attributes.get("Target", "")
        target = target.lstrip("/") if target.startswith("/") else "xl/" + target
        targets[attributes.get("Id", "")] = target
    sheets: list[tuple[str, str, bool]] = []
    for tag in _SHEET_TAG.findall(workbook):
        attributes = _attributes(tag)
        relation = next((v for k, v in attributes.items() if k.endswith(":id")), "")
        if "name" in attributes and relation in targets:
            member = targets[relation]
            shown = attributes.get("state", "visible") not in (
                "hidden",
                "veryHidden",
            ) and member.split("/")[-2:-1] == ["worksheets"]
            sheets.append((attributes["name"], member, shown))
    return sheets


_TABLE_TAG = re.compile(rb"<(?:[\w.-]+:)?table\s[^>]*>")
_TABLE_REF = re.compile(r"\$?([A-Za-z]{1,3})\$?([0-9]{1,7}):\$?([A-Za-z]{1,3})\$?([0-9]{1,7})")


def _totals_rows(
    archive: zipfile.ZipFile, names: set[str], member: str, inflater: _Inflater
) -> list[TotalsRow]:
    """The totals rows of the tables of the sheet in ``member`` (Excel's "Format as Table"
    with "Total Row" ticked: ``totalsRowCount="1"`` in the table's part), found through the
    sheet's relationships. The reader gives a table's cells as any other: its totals row
    (``Total``, a sum) would be read as a data row."""
    folder, base = posixpath.split(member)
    relations = f"{folder}/_rels/{base}.rels"
    if relations not in names:
        return []
    found: list[TotalsRow] = []
    for tag in _RELATION_TAG.findall(b"".join(inflater.stream(archive, relations))):
        attributes = _attributes(tag)
        if not attributes.get("Type", "").endswith("/table"):
            continue
        if attributes.get("TargetMode", "Internal") != "Internal":
            continue
        target = attributes.get("Target", "")
        part = (
            target.lstrip("/")
            if target.startswith("/")
            else posixpath.normpath(posixpath.join(folder, target))
        )
        if part not in names:
            continue
        table = _table_attributes(archive, part, inflater)
        totals = _count(table.get("totalsRowCount", "0"))
        bounds = _TABLE_REF.fullmatch(table.get("ref", "").strip())
        if not totals or bounds is None:
            continue
        first, top, last, bottom = bounds.groups()
        first_column = _column_number(first.upper().encode())
        last_column = _column_number(last.upper().encode())
        found.extend(
            TotalsRow(
                table.get("displayName") or table.get("name") or part,
                f"{first.upper()}{int(top)}:{last.upper()}{int(bottom)}",
                row,
                min(first_column, last_column),
                max(first_column, last_column),
            )
            for row in range(max(int(top), int(bottom) - totals + 1), int(bottom) + 1)
        )
    return found


def _table_attributes(archive: zipfile.ZipFile, part: str, inflater: _Inflater) -> dict[str, str]:
    """The attributes of the root element of a table's part."""
    for piece in _tags(inflater.stream(archive, part), inflater.file):
        tag = _TABLE_TAG.search(piece)
        if tag is not None:
            return _attributes(tag.group(0))
    return {}


def _count(text: str) -> int:
    """A small count as a table's part writes it; 0 for anything else."""
    text = text.strip()
    return int(text) if text.isdigit() and len(text) <= 3 else 0


def _shown_styles(
    archive: zipfile.ZipFile, inflater: _Inflater, limits: SheetLimits
) -> tuple[dict[int, int], dict[int, int]]:
    """The cell styles of a workbook's ``xl/styles.xml`` whose number format the reader
    does not apply, by their number (``<c s="3">``): those whose format is only zeros
    (``00000``), with the number of digits each shows, and those whose format is a
    percentage (``0%``, ``0.00%``: Excel's own formats 9 and 10, or one written so), with
    the number of decimals each shows.

    The part is read as a stream, never held whole: joined and searched, it took about 3.5
    times its size (1.7 GB for a 486 MB part within ``maxMegabytes``). A second pass, for
    the cell styles, is made only when such a format is found (then outside the bytes
    ``maxMegabytes`` counts, as the sheet's second pass is)."""
    widths: dict[bytes, int] = {}
    decimals: dict[bytes, int] = {}
    for piece in _tags(inflater.stream(archive, _STYLES), inflater.file):
        for tag in _NUMBER_FORMAT_TAG.findall(piece):
            attributes = _attributes(tag)
            code = attributes.get("formatCode", "")
            if "numFmtId" not in attributes:
                continue
            if _ZEROS.fullmatch(code):
                widths[attributes["numFmtId"].encode()] = len(code)
            elif (share := _PERCENT.fullmatch(code)) is not None:
                decimals[attributes["numFmtId"].encode()] = len(share.group(1) or "")
        if not decimals.keys() >= _PERCENT_FORMATS.keys() and _BUILT_IN_PERCENT.search(piece):
            decimals = _PERCENT_FORMATS | decimals
    if not widths and not decimals:
        return {}, {}
    padded: dict[int, int] = {}
    percent: dict[int, int] = {}
    number = 0
    section = _BEFORE
    again = _Inflater(inflater.file, limits)
    for piece in _tags(again.stream(archive, _STYLES), inflater.file):
        if section == _AFTER:
            break
        for tag in _STYLE_TAG.finditer(piece):
            closing, name, inside_tag = tag.groups()
            if name == b"cellXfs":  # the first section only
                if section == _BEFORE and not closing and not inside_tag.endswith(b"/"):
                    section = _INSIDE
                elif section == _INSIDE and closing:
                    section = _AFTER
                    break
            elif section == _INSIDE and not closing:
                found = _FORMAT_ID.search(inside_tag)
                width = widths.get(found.group(1) if found else b"0")
                if width is not None:
                    padded[number] = width
                shown = decimals.get(found.group(1) if found else b"0")
                if shown is not None:
                    percent[number] = shown
                number += 1
    return padded, percent


def _attributes(tag: bytes) -> dict[str, str]:
    return {
        key.decode(errors="replace"): html.unescape(
            (double or single).decode("utf-8", errors="replace")
        )
        for key, double, single in _ATTRIBUTE.findall(tag)
    }


_HUGE = 10**12  # stands for any reference past every limit (and past int()'s digit limit)


def _largest_column(letters: set[bytes]) -> int:
    upper = {text.upper() for text in letters}
    longest = max(map(len, upper))
    if longest > 8:
        return _HUGE
    return _column_number(max(text for text in upper if len(text) == longest))


def _column_number(letters: bytes) -> int:
    number = 0
    for char in letters:
        number = number * 26 + (char - 64)
    return number


def _greater(text: bytes, alphabet: bytes) -> bytes:
    """A pattern matching the words over ``alphabet`` (in its order) that are greater than
    ``text``: longer ones, or as long and greater at the first difference."""
    any_char = b"[" + alphabet[:1] + b"-" + alphabet[-1:] + b"]"
    first = alphabet[1:2] if alphabet[:1] == b"0" else alphabet[:1]  # no leading zeros
    options = [b"[" + first + b"-" + alphabet[-1:] + b"]" + any_char + b"{%d,}" % len(text)]
    for index, char in enumerate(text):
        position = alphabet.index(char)
        if position + 1 < len(alphabet):
            above = alphabet[position + 1 : position + 2] + b"-" + alphabet[-1:]
            rest = len(text) - index - 1
            options.append(
                re.escape(text[:index]) + b"[" + above + b"]" + any_char + b"{%d}" % rest
            )
    return b"|".join(options)


def _largest_number(numbers: set[bytes]) -> int:
    return max(int(text) if len(text.lstrip(b"0")) <= 12 else _HUGE for text in numbers)


def _megabytes(size: int) -> str:
    return f"{size / MEGABYTE:,.1f} MB" if size < 10 * MEGABYTE else f"{size // MEGABYTE:,} MB"
