"""Cells of a sheet that the XLSX reader gives otherwise than the spreadsheet shows them.

- A cell that holds no value the reader can give: an Excel error (``#N/A``, ``#DIV/0!``:
  ``<c t="e">``) or a formula with no saved result (``<f>`` without ``<v>``, as a workbook
  written by a program that does not calculate has it). python-calamine gives such a cell as
  an empty string, which would leave its field out without a word (a movement without its
  HAWB is sent at shipment level).
- A whole number shown with leading zeros by a custom number format of zeros (``00000``:
  the postcode 01234 typed as a number and held as 1234, a commodity code 0101210000 held
  as 101210000). python-calamine gives the number, without its format: a text field would be
  sent ``1234``, where the sheet shows, and its CSV export writes, ``01234``. The reader
  gives such a cell as the text shown instead, as a CSV export's text (which
  ``forEach.columns`` converts back to a number where it declares one).
- A number shown as a percentage (``0%``, ``0.00%``: 0.4 shown ``40%``). python-calamine
  gives the number: a text field was sent ``0.4`` where the sheet shows, and its CSV export
  writes, ``40%``. The reader gives such a cell as the text shown, knowing the number it
  holds (:class:`~customs_batch.manifest.spreadsheet.model.ShownNumber`), which a number
  field takes.

- A cell naming a shared string by anything but its number (``<c t="s"><v>-1</v>``,
  ``3.5``), which only a damaged workbook holds: python-calamine reads it as shared string 0
  (the first column's name, most often), without a word. The sheet is refused instead, as
  it is for a number past the last shared string.

- Rows and columns the sheet hides (``<row hidden="1">``, ``<col hidden="1">``), by hand or
  by a filter: read as any other (as a CSV export writes them), each hidden row gives a
  document its user may not have seen; noted, so that a warning names them.

So the sheet's XML, streamed anyway to check what reading it would cost
(``workbook_check``), is searched for them on the way: two regular-expression searches per
megabyte (three where the workbook has a format of zeros), with a little more work for each
such cell found.
"""

from __future__ import annotations

import bisect
import decimal
import re
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

_ERROR_TYPE = re.compile(rb"""t=["']e["']""")
_MAYBE_ERROR = re.compile(rb"""e["']""")
"""Three times quicker to rule a piece out than :data:`_ERROR_TYPE` (``t=`` is in most
cells, ``e"`` ends few attributes)."""
_NO_RESULT = re.compile(rb"(?:</f>|<f\s[^>]*/>)\s*(?:<v\s*/>\s*)?</c>")
"""A formula's end right before its cell's: no ``<v>`` between (the order is f, v, is), or
an empty one closed in itself (``<v />``, as openpyxl writes a formula it did not
calculate; ``<v></v>`` is a result, the empty text)."""
_NO_RESULT_PREFIXED = re.compile(
    rb"(?:</(?:[\w.-]+:)?f>|<(?:[\w.-]+:)?f\s[^>]*/>)\s*(?:<(?:[\w.-]+:)?v\s*/>\s*)?"
    rb"</(?:[\w.-]+:)?c>"
)
"""The same where tags have a namespace prefix (``<x:f>``): five times slower, so only
used for a sheet whose root element has one."""
_CELL_START = re.compile(rb"<(?:[\w.-]+:)?c(?=[\s>])[^>]*>")
_REFERENCE = re.compile(rb"""\sr\s*=\s*["']([A-Za-z]{1,3})([0-9]{1,7})["']""")
_VALUE = re.compile(rb"<(?:[\w.-]+:)?v>([^<]{0,64})</(?:[\w.-]+:)?v>")
_TYPE = re.compile(rb"""\st\s*=\s*["']([^"']*)["']""")
_WHOLE = re.compile(rb"\s*([0-9]{1,15})\s*")
"""A non-negative whole number as a sheet's XML holds it (Excel keeps 15 digits)."""
_BAD_SHARED = re.compile(rb"""t="s"[^>]*>\s*<v>(?![0-9]+</v>|</v>)([^<]{0,32})""")
_BAD_SHARED_SINGLE = re.compile(rb"""t='s'[^>]*>\s*<v>(?![0-9]+</v>|</v>)([^<]{0,32})""")
"""A shared-string cell whose value is not a number (the quicker search, with a literal
start, first; the one for single quotes only where they are used)."""
_LONGEST_CELL = 4 * 1024 * 1024
"""More than any cell a spreadsheet program writes (32,767 characters of text, a formula
of 8,192): the part of the XML carried over to the next piece while a cell is open."""

_HIDDEN = re.compile(rb"""\shidden\s*=\s*["'](?:1|true)["']""")
_HIDDEN_TAG = re.compile(rb"<(?:[\w.-]+:)?(row|col)\s")
_NUMBER_ATTRIBUTE = re.compile(rb"""\s(r|min|max)\s*=\s*["']([0-9]{1,7})["']""")

PADDED = "0"
"""What :attr:`CellScan.unplaced` starts with for a whole number a format of zeros shows
with leading zeros (``0`` then what the sheet shows, ``001234``)."""

PERCENT = "%"
"""What :attr:`CellScan.unplaced` starts with for a number a percentage format shows (``%``
then what the sheet shows, ``%40%``)."""

NO_RESULT = ""
"""What :attr:`CellScan.found` holds for a formula with no saved result (an error cell
without its value holds ``"#"``)."""


@dataclass(frozen=True)
class TotalsRow:
    """The totals row of a table (a ListObject) of the sheet: row ``row``, columns ``first``
    to ``last`` (1-based), of the table ``name`` that spans ``ref`` (``A1:D10``)."""

    name: str
    ref: str
    row: int
    first: int
    last: int


class CellScan:
    """The bad cells of one sheet's XML, fed in pieces in order that never cut a tag in two.

    Each piece is searched up to the end of its last complete cell, in place (a copy of
    every megabyte would cost as much as the search); the rest joins the start of the
    next piece, up to the end of its first cell.
    """

    def __init__(
        self,
        padded_styles: dict[int, int] | None = None,
        percent_styles: dict[int, int] | None = None,
    ) -> None:
        """``padded_styles``: the widths of the cell styles whose number format is zeros
        (``workbook_check``), by the style's number (``<c s="3">``); ``percent_styles``: the
        decimals of those whose format is a percentage."""
        self.found: dict[int, dict[int, str]] = {}
        """Row -> column (both 1-based) -> the Excel error shown (``#N/A``), or
        :data:`NO_RESULT`."""
        self.unplaced: str | None = None
        """What the first bad cell found without a cell reference shows (None: none): an
        error, :data:`NO_RESULT`, or :data:`PADDED` and the number a format of zeros shows."""
        self.padded: dict[int, dict[int, str]] = {}
        """Row -> column -> the text a format of zeros shows for the whole number there
        (``01234``)."""
        self.sheet: str | None = None
        """The name of the sheet scanned, as the workbook names it (None: the workbook does
        not say): without ``sheet:`` in forEach, the reader reads this one, so the cells
        found are those of the rows it gives."""
        self._rest = b""
        self._codes: dict[bytes, str] = {}
        self._widths = {
            str(style).encode(): width for style, width in (padded_styles or {}).items()
        }
        self._padded = (
            re.compile(rb"""\ss\s*=\s*["'](""" + b"|".join(sorted(self._widths)) + rb""")["']""")
            if self._widths
            else None
        )
        self.percent: dict[int, dict[int, str]] = {}
        """Row -> column -> the text a percentage format shows for the number there
        (``40%``)."""
        self.table_percent: Mapping[str, Any] = {}
        """An ODS workbook's percentage cells, by table (``workbook_check.PercentCells``),
        whose sheet the reader chooses."""
        self._decimals = {
            str(style).encode(): decimals for style, decimals in (percent_styles or {}).items()
        }
        self._percent = (
            re.compile(rb"""\ss\s*=\s*["'](""" + b"|".join(sorted(self._decimals)) + rb""")["']""")
            if self._decimals
            else None
        )
        self._no_result: re.Pattern[bytes] | None = None
        self.member: str | None = None
        """The workbook part scanned (``xl/worksheets/sheet1.xml``), once known."""
        self.bad_shared: tuple[str, str] | None = None
        """The first cell naming a shared string by anything but its number: its reference
        (``?`` when it has none) and what it holds."""
        self._hidden_first = array("q")
        self._hidden_last = array("q")
        """The rows the sheet hides (by hand or by a filter), as ranges (the first and last
        row of each, in two packed arrays): a sheet hiding a million rows keeps a few
        ranges, not a million numbers, and one hiding every other row 16 bytes a range."""
        self._hidden_in_order = True
        self.hidden_columns: set[int] = set()
        """The 1-based columns the sheet hides, up to the last column a sheet has."""
        self.totals: list[TotalsRow] = []
        """The totals rows of the sheet's tables (Excel's "Format as Table" with "Total
        Row" ticked), which are no data (``workbook_check`` finds them)."""

    def scan(self, xml: bytes) -> None:
        """Look at the next piece of the sheet's XML."""
        if b"hidden" in xml:  # a literal search: a piece without it costs nothing more
            self._hidden(xml)
        if self._no_result is None:  # the root element, which the first piece holds
            root = xml.find(b"worksheet", 0, 4096)
            if root >= 0:
                before = xml[root - 1 : root] if root else self._rest[-1:]
                self._no_result = _NO_RESULT_PREFIXED if before == b":" else _NO_RESULT
        cut = after_last_cell(xml)
        if cut == 0:  # no cell ends in this piece
            rest = self._rest + xml
            self._rest = rest if len(rest) <= _LONGEST_CELL else b""
            return
        start = 0
        if self._rest:
            start = _after_first_cell(xml)
            joint = self._rest + xml[:start]
            self._search(joint, 0, len(joint))
        if cut > start:
            self._search(xml, start, cut)
        self._rest = xml[cut:]

    def _hidden(self, xml: bytes) -> None:
        """The hidden rows and columns of a piece (which never cuts a tag in two)."""
        for match in _HIDDEN.finditer(xml):
            start = xml.rfind(b"<", 0, match.start())
            tag = _HIDDEN_TAG.match(xml, start) if start >= 0 else None
            if tag is None:
                continue
            end = xml.find(b">", match.end())
            numbers = {
                name: int(value)
                for name, value in _NUMBER_ATTRIBUTE.findall(
                    xml, start, end if end >= 0 else len(xml)
                )
            }
            if tag.group(1) == b"row" and b"r" in numbers:
                self._hide_row(numbers[b"r"])
            elif tag.group(1) == b"col" and b"min" in numbers:
                first, last = numbers[b"min"], min(numbers.get(b"max", numbers[b"min"]), 16_384)
                self.hidden_columns.update(range(first, last + 1))

    def _hide_row(self, number: int) -> None:
        first, last = self._hidden_first, self._hidden_last
        if last and last[-1] + 1 == number:
            last[-1] = number
            return
        if last and number <= last[-1]:
            self._hidden_in_order = False  # rows out of order: sorted when first asked
        first.append(number)
        last.append(number)

    @property
    def hidden_rows(self) -> list[tuple[int, int]]:
        """The ranges of rows the sheet hides, ``(first, last)``, in order."""
        self._order_hidden()
        return list(zip(self._hidden_first, self._hidden_last, strict=True))

    def row_hidden(self, number: int) -> bool:
        """Whether the sheet hides row ``number``."""
        self._order_hidden()
        at = bisect.bisect_right(self._hidden_first, number) - 1
        return at >= 0 and number <= self._hidden_last[at]

    def _order_hidden(self) -> None:
        if self._hidden_in_order:
            return
        ranges = sorted(zip(self._hidden_first, self._hidden_last, strict=True))
        self._hidden_first, self._hidden_last = array("q"), array("q")
        for first, last in ranges:
            if self._hidden_last and first <= self._hidden_last[-1] + 1:
                self._hidden_last[-1] = max(self._hidden_last[-1], last)
            else:
                self._hidden_first.append(first)
                self._hidden_last.append(last)
        self._hidden_in_order = True

    def _search(self, text: bytes, start: int, end: int) -> None:
        if self.bad_shared is None:
            self._search_bad_shared(text, start, end)
        if self._padded is not None:
            self._search_padded(text, start, end)
        if self._percent is not None:
            self._search_percent(text, start, end)
        maybe = _MAYBE_ERROR.search(text, start, end)
        if maybe is not None:
            for match in _ERROR_TYPE.finditer(text, max(start, maybe.start() - 3), end):
                self._error(text, match.start(), end)
        if self._no_result is _NO_RESULT and not _may_hold_formulas(text, start, end):
            return
        for match in (self._no_result or _NO_RESULT_PREFIXED).finditer(text, start, end):
            self._add(text, match.start(), NO_RESULT)

    def _search_bad_shared(self, text: bytes, start: int, end: int) -> None:
        found = _BAD_SHARED.search(text, start, end)
        if found is None and text.find(b"t='s'", start, end) >= 0:
            found = _BAD_SHARED_SINGLE.search(text, start, end)
        if found is None:
            return
        tag = _CELL_START.match(text, text.rfind(b"<", 0, found.start()))
        if tag is None or not text[found.start() - 1 : found.start()].isspace():
            return  # t="s" on another element, or another attribute
        reference = _REFERENCE.search(tag.group(0))
        where = (reference.group(1) + reference.group(2)).decode() if reference else "?"
        self.bad_shared = (where, found.group(1).decode("utf-8", errors="replace"))

    def _search_padded(self, text: bytes, start: int, end: int) -> None:
        assert self._padded is not None
        for tag, style, value in _number_cells(self._padded, text, start, end):
            whole = _WHOLE.fullmatch(value) if value is not None else None
            if whole is None:
                continue  # a fraction or a negative number: left as the number it is
            shown = whole.group(1).decode().lstrip("0").zfill(self._widths[style])
            # Unplaced, the sheet is refused rather than read with the number alone (01234
            # sent as 1234).
            self._place(tag, PADDED, shown, self.padded)

    def _search_percent(self, text: bytes, start: int, end: int) -> None:
        assert self._percent is not None
        for tag, style, value in _number_cells(self._percent, text, start, end):
            shown = _percent_text(value, self._decimals[style]) if value is not None else None
            if shown is not None:
                self._place(tag, PERCENT, shown, self.percent)

    def _place(self, tag: bytes, what: str, shown: str, table: dict[int, dict[int, str]]) -> None:
        """Note ``shown`` at the cell ``tag`` names in ``table`` (by row, then column); a
        cell whose place is not searched for here is noted ``unplaced`` (the first), and
        the sheet refused."""
        reference = _REFERENCE.search(tag)
        if reference is None:
            if self.unplaced is None:
                self.unplaced = what + shown
            return
        column = _column_number(reference.group(1).upper())
        table.setdefault(int(reference.group(2)), {})[column] = shown

    def _error(self, text: bytes, at: int, end: int) -> None:
        start = text.rfind(b"<", 0, at)
        tag = _CELL_START.match(text, start)
        if tag is None or tag.end() < at or not text[at - 1 : at].isspace():
            return  # t="e" on another element, or another attribute (fmt="e")
        close = text.find(b"c>", tag.end(), end)  # the cell's end tag (none in a formula)
        found = _VALUE.search(text, tag.end(), close if close >= 0 else end)
        raw = found.group(1).strip() if found else b"#"
        code = self._codes.get(raw)
        if code is None:
            code = self._codes.setdefault(raw, raw.decode("utf-8", errors="replace"))
        self._add(text, start, code)

    def _add(self, text: bytes, at: int, code: str) -> None:
        """Record the cell whose start tag is the last one at or before ``at``."""
        tag = _CELL_START.match(text, at)
        while tag is None:
            at = text.rfind(b"<", 0, at)
            if at < 0:
                return
            tag = _CELL_START.match(text, at)
        reference = _REFERENCE.search(tag.group(0))
        if reference is None:
            if self.unplaced is None:
                self.unplaced = code
            return
        column = _column_number(reference.group(1).upper())
        self.found.setdefault(int(reference.group(2)), {})[column] = code


def _may_hold_formulas(text: bytes, start: int, end: int) -> bool:
    """Whether ``text`` may hold a formula (tags without a prefix): one with content ends in
    ``</f>``, one without is a shared formula's other cell (``<f t="shared" si="0"/>``).
    Twice as quick as the search for the formulas themselves ('<' starts every tag)."""
    return text.find(b"/f>", start, end) >= 0 or text.find(b"f t=", start, end) >= 0


def after_last_cell(text: bytes) -> int:
    """Where the XML after the last cell end tag starts (0: no cell ends in ``text``)."""
    plain = text.rfind(b"</c>")
    cut = plain + 4 if plain >= 0 else 0
    prefixed = text.rfind(b":c>")
    if prefixed + 3 > cut and _ends_a_cell(text, prefixed):
        cut = prefixed + 3
    return cut


def _after_first_cell(text: bytes) -> int:
    """Where the XML after the first cell end tag starts (``text`` holds one)."""
    plain = text.find(b"</c>")
    cut = plain + 4 if plain >= 0 else len(text)
    prefixed = text.find(b":c>", 0, cut)
    if prefixed >= 0 and _ends_a_cell(text, prefixed):
        cut = prefixed + 3
    return cut


def _ends_a_cell(text: bytes, at: int) -> bool:
    """Whether the ``:c>`` at ``at`` ends ``</x:c>`` (not ``<x:c>``)."""
    return text.rfind(b"</", 0, at) > text.rfind(b"<", 0, text.rfind(b"</", 0, at))


def _number_cells(
    styles: re.Pattern[bytes], text: bytes, start: int, end: int
) -> Iterator[tuple[bytes, bytes, bytes | None]]:
    """Each number cell of ``text[start:end]`` under one of the styles ``styles`` finds
    (its ``s="N"``): the cell's start tag, the style's number, and the value it holds (None:
    none). A cell of text, a boolean, an error or a date is shown as it is held: left out."""
    for match in styles.finditer(text, start, end):
        tag = _CELL_START.match(text, text.rfind(b"<", 0, match.start()))
        if tag is None or tag.end() < match.end():
            continue  # s="3" on another element
        kind = _TYPE.search(tag.group(0))
        if kind is not None and kind.group(1) != b"n":
            continue
        close = text.find(b"c>", tag.end(), end)
        found = _VALUE.search(text, tag.end(), close if close >= 0 else end)
        yield tag.group(0), match.group(1), found.group(1) if found is not None else None


def _column_number(letters: bytes) -> int:
    number = 0
    for char in letters:
        number = number * 26 + (char - 64)
    return number


def _percent_text(held: bytes, decimals: int) -> str | None:
    """``40%``: the number ``held`` (as the sheet's XML writes it, ``0.4``) as a percentage
    format of ``decimals`` decimals shows it, rounded half away from zero as Excel rounds;
    None for anything but a finite number."""
    try:
        number = decimal.Decimal(held.decode("ascii").strip())
        if not number.is_finite():
            return None
        shown = (number * 100).quantize(
            decimal.Decimal(1).scaleb(-decimals), rounding=decimal.ROUND_HALF_UP
        )
    except (UnicodeDecodeError, decimal.InvalidOperation):
        return None  # not a number, or more digits than a quantity of 28 (1E+30)
    return f"{abs(shown) if shown == 0 else shown:f}%"
