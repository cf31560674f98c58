"""Rows, headers and where a cell is, as a spreadsheet program shows it."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from customs_batch.errors import ManifestError
from customs_batch.findings import column_letter
from customs_batch.manifest.record_places import RecordPlaces

MEGABYTE = 1024 * 1024

Cell = Any
"""A cell value: str, int, float, bool, an ISO 8601 date string (:class:`DateText`), a
percentage as shown (:class:`ShownNumber`), or None when empty."""


class DateText(str):
    """A workbook cell that holds a date, a date and time or a time, as ISO 8601 text
    (``2026-01-02``). It is text to every expression; it stays known as a date so that one
    reaching a field is an error at its cell: no field takes a date, and a spreadsheet turns
    text typed into a cell (``1-2``, a code such as ``3/4``) into a date, whose typed text is
    lost (see ``docs/spreadsheets.md``, "Cell values")."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return DateText, (str(self),)

    @property
    def kind(self) -> str:
        """``a date``, ``a date and time`` or ``a time``: what it holds."""
        if "T" in self:
            return "a date and time"
        return "a time" if ":" in self else "a date"


class ShownNumber(str):
    """A workbook cell holding a number its format shows otherwise than the number reads:
    a percentage (0.4 shown ``40%``). It is the text shown, as the sheet's CSV export writes
    it, to every expression and text field; a number field takes :attr:`number`, the
    number the cell holds (see ``docs/spreadsheets.md``, "Cell values")."""

    __slots__ = ("number",)
    number: int | float

    def __new__(cls, shown: str, number: int | float) -> ShownNumber:
        made = super().__new__(cls, shown)
        made.number = number
        return made

    def __reduce__(self) -> tuple[Any, tuple[str, int | float]]:
        return ShownNumber, (str(self), self.number)


class SheetError(ManifestError):
    """A spreadsheet that cannot be read as asked (missing sheet, bad header, bad bytes)."""

    def __init__(
        self,
        message: str,
        *,
        file: str,
        row: int = 0,
        hint: str | None = None,
        rule: str = "sheet.unreadable",
        key: str = "file",
    ):
        super().__init__(message, hint=hint)
        self.file = file
        self.row = row
        self.key = key
        """The forEach key the finding points at, when no row: ``file``, or ``sheet`` for a
        sheet the manifest names that the workbook does not have."""
        self.rule = rule
        """The finding's rule: ``sheet.unreadable``, ``sheet.too-large`` for a limit, or
        ``file.out-of-memory`` when the run ran out of memory reading it."""
        self.sheet: str | None = None
        """The workbook sheet it was found in, once known (None: a CSV file's one sheet)."""


_LINE_BREAK = re.compile(r"\s*[\n\r\v\f\x85\u2028\u2029]\s*")
_OTHER_SPACE = re.compile(r"[^\S \n\r\v\f\x85\u2028\u2029]")
"""A space other than the plain one: a no-break space (``\\xa0``, from a web page or an
ERP's export), a tab, a thin space."""


def column_name(text: str) -> str:
    """The column name a header cell gives: its text without the spaces around it, each
    line break in it (a cell wrapped with Alt+Enter, ``Gross\\nweight``) and the spaces
    around the break one space (``Gross weight``), each other space (a no-break space) a
    plain one, and without the characters that do not show (a zero-width space, a control
    character): the name is one line in a manifest, a template and a finding, written as a
    person reads the cell and types it."""
    text = text.strip()
    if text.isprintable():
        return text
    text = _OTHER_SPACE.sub(" ", _LINE_BREAK.sub(" ", text))
    if not text.isprintable():  # what no one sees: a zero-width space, a stray NUL
        text = "".join(c for c in text if unicodedata.category(c) not in ("Cc", "Cf"))
    return text.strip()


@dataclass(frozen=True)
class Header:
    """The column names of a sheet, by position (1-based column numbers)."""

    names: tuple[str, ...]
    columns: tuple[int, ...]
    """The 1-based column number of each name."""
    row: int = field(default=0, compare=False)
    """The row the names were taken from (0: not from a sheet)."""
    delimiter: str | None = field(default=None, compare=False)
    """The delimiter of a CSV file's cells (None: a workbook's sheet)."""
    hidden: tuple[int, ...] = field(default=(), compare=False)
    """The columns of :attr:`columns` the workbook's sheet hides (read as any other)."""

    def locate(self, name: str) -> tuple[int, str] | None:
        """The column number and letter of ``name`` (written with a line break where the
        header cell has one, too), or None."""
        try:
            column = self.columns[self.names.index(name)]
        except ValueError:
            try:
                column = self.columns[self.names.index(column_name(name))]
            except ValueError:
                return None
        return column, column_letter(column)

    def describe(self, name: str) -> str:
        """``'Gross weight' (column E)``, as a person finds it in the sheet."""
        where = self.locate(name)
        return f"{name!r} (column {where[1]})" if where else repr(name)


@dataclass(frozen=True, slots=True)
class BadCell:
    """A cell the reader could take no value from, and the finding to give for it.

    As a cell value (an XLSX cell holding an Excel error such as ``#N/A``, or a formula with
    no saved result) it is an error wherever the manifest uses the cell, as a cell that does
    not convert is; a column nothing reads may hold one. As :attr:`Row.problem` (a value
    beyond the header's last column) it stops the row: its values cannot be trusted.
    """

    column: int
    """The cell's 1-based column number."""
    message: str
    hint: str
    rule: str = "row.cell-error"
    shown: str = ""
    """What the cell shows in the spreadsheet program (``#N/A``); empty when nothing."""
    text: str | None = None
    """A CSV cell's own text (``#N/A`` as the export wrote an error cell), which a column
    declared ``text`` keeps as written; None: no text a column may keep."""


@dataclass(frozen=True)
class Row:
    """One data row: its number as the spreadsheet shows it, and its values by header.

    ``header`` and ``sheet`` (the sheet read; None for a CSV file) are the same objects for
    every row of a read.
    """

    number: int
    values: Mapping[str, Cell]
    header: Header | None = field(default=None, compare=False)
    sheet: str | None = field(default=None, compare=False)
    problem: BadCell | None = field(default=None, compare=False)
    """Why the row gives no document, found while reading it (a value beyond the header)."""
    places: RecordPlaces | None = field(default=None, compare=False)
    """Where its cells are in a CSV file's text (lines and columns); None in a workbook."""
    hidden: bool = field(default=False, compare=False)
    """Whether the workbook's sheet hides the row (by hand or by a filter): read as any
    other, as a CSV export of the sheet writes it."""


@dataclass(frozen=True)
class SheetLimits:
    """The most one ``forEach`` reads; the defaults fit a machine with a few GB of memory."""

    rows: int = 1_000_000
    """Data rows (each expanded row keeps about 2 KB for the project-wide checks)."""
    cells: int = 10_000_000
    """Cells of an XLSX sheet's used range, rows times columns (about 320 MB); of an ODS
    workbook's sheets together, repeated rows and cells expanded."""
    megabytes: int = 512
    """A CSV file's size; an XLSX workbook's size once uncompressed."""

    @property
    def bytes(self) -> int:
        """``megabytes`` in bytes."""
        return self.megabytes * MEGABYTE


@dataclass(frozen=True)
class RowSource:
    """What ``forEach`` asks for: a file, and how to read it."""

    path: Path
    sheet: str | None = None
    header_row: int = 1
    encoding: str | None = None
    delimiter: str | None = None
    first_row: int | None = None
    last_row: int | None = None
    limits: SheetLimits = SheetLimits()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def wants(self, number: int) -> bool:
        """Whether row ``number`` is inside the ``rows`` range asked for."""
        if self.first_row is not None and number < self.first_row:
            return False
        return self.last_row is None or number <= self.last_row
