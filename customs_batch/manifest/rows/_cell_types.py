"""Cells as Jinja sees them: the same value whichever export a row came from.

A CSV export writes every cell as text, an XLSX export keeps numbers as numbers; an
expression such as ``row.Packages * 2`` must give the same result over both. So before an
expression sees a cell, text that is plainly a number becomes one (with ``decimalComma``,
``12,5`` too), text with leading zeros (``0150``, ``03054100``) stays text, ``TRUE`` and
``FALSE`` become booleans and empty cells are None. A column the manifest declares in
``forEach.columns`` is converted to that type instead, whatever the cell holds.

Text read from a cell keeps its column (:class:`CellText`), so an expression that mixes it
with a number (``"0150" * 2``) is refused with a message naming the column.
"""

from __future__ import annotations

import enum
import math
import re
from typing import Any

from customs_batch.manifest.rows._cells import (
    AMBIGUOUS_HINT,
    AMBIGUOUS_SAID,
    GROUPED,
    quoted_head,
)
from customs_batch.manifest.spreadsheet.model import BadCell, DateText, ShownNumber
from customs_batch.manifest.yaml._scalars import integer

_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+")
"""No exponents and no plus sign: ``12E45`` and ``+4930123`` are codes, not numbers."""
_COMMA_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]{0,2}(?:\.[0-9]{3})+|[1-9][0-9]*)(?:,[0-9]+)?")
_LOOSE_INTEGER = re.compile(r"[-+]?[0-9]+")
_BOOLEANS = {"true": True, "false": False}
_WORDS = {"true": True, "yes": True, "y": True, "1": True, "false": False, "no": False}
_WORDS |= {"n": False, "0": False}


class ColumnType(enum.Enum):
    """The type a manifest declares for a column (``forEach.columns``)."""

    TEXT = "text"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"


COLUMN_TYPE_WORDS = tuple(member.value for member in ColumnType)


class CellText(str):
    """Text read from a cell, knowing its column (for a message that names it)."""

    __slots__ = ("column",)
    column: str

    def __new__(cls, text: str, column: str) -> CellText:
        made = super().__new__(cls, text)
        made.column = column
        return made

    def _compare(self, operator: str, other: Any) -> None:
        if _is_number(other):
            raise MixedTypes(self.column, str(self), operator, other)

    def __lt__(self, other: Any) -> bool:
        self._compare("<", other)
        return str.__lt__(self, other)

    def __le__(self, other: Any) -> bool:
        self._compare("<=", other)
        return str.__le__(self, other)

    def __gt__(self, other: Any) -> bool:
        self._compare(">", other)
        return str.__gt__(self, other)

    def __ge__(self, other: Any) -> bool:
        self._compare(">=", other)
        return str.__ge__(self, other)


class CellTypeError(Exception):
    """A cell that is not of the type its column declares."""

    hint: str = "Fix the cell, or the column's type in forEach.columns."

    def __init__(self, column: str, value: Any, wanted: ColumnType) -> None:
        super().__init__(column, value, wanted)
        self.column, self.value, self.wanted = column, value, wanted

    def __str__(self) -> str:
        return (
            f"column {self.column!r} is declared {self.wanted.value}, "
            f"but the cell holds {_quoted(self.value)}, which is not {self._wanted_text()}"
        )

    def unquoted(self) -> str:
        """The message without the cell's value, for a sensitive field."""
        return (
            f"column {self.column!r} is declared {self.wanted.value}, "
            f"but the cell is not {self._wanted_text()}"
        )

    def _wanted_text(self) -> str:
        kind = {"text": "text", "number": "a number", "integer": "a whole number"}
        return kind.get(self.wanted.value, "true or false")


class UnusableCell(CellTypeError):
    """A cell the reader could take no value from (an Excel error such as ``#N/A``, a
    formula with no saved result), used by the manifest: an error at that cell, never an
    empty cell that would leave its field out."""

    def __init__(self, column: str, cell: BadCell) -> None:
        Exception.__init__(self, column, cell)
        self.column, self.value, self.cell = column, cell, cell
        self.hint, self.rule = cell.hint, cell.rule

    def __str__(self) -> str:
        return self.cell.message


class EmptyCell(Exception):
    """An empty cell inside a text made of several parts (``N-{{ row.Loc }}``): the text
    would hold ``None`` where the cell's value goes, so it is an error at the cell."""

    def __init__(self, column: str) -> None:
        super().__init__(column)
        self.column = column


class EmptyCellValue:
    """An empty cell as a template expression meets it (``row.x``): no value. Like null it
    is false, ``is none`` holds for it and ``default(...)`` replaces it, and a lone
    expression that gives it gives null (its field is left out). Whatever would make it
    text or a number (a filter such as ``upper`` or ``int``, ``~``, a longer text, an
    operator) raises :class:`EmptyCell` at its column instead: never the word ``None``
    (``NONE`` after ``upper``, a 0 after ``int``) where the cell held nothing."""

    __slots__ = ("column",)

    def __init__(self, column: str) -> None:
        self.column = column

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return other is None or other.__class__ is EmptyCellValue

    def __hash__(self) -> int:
        return hash(None)

    def __repr__(self) -> str:
        return "none"

    def _needed(self, *_args: object) -> Any:
        raise EmptyCell(self.column)

    __str__ = __format__ = __int__ = __float__ = __index__ = __len__ = __iter__ = _needed
    __lt__ = __le__ = __gt__ = __ge__ = _needed
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _needed
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = _needed
    __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __pos__ = __abs__ = _needed
    __round__ = __getitem__ = _needed


EMPTY_CELL_HINT = (
    "Fill the cell, or give a default where the value is used: values.x | default(...) "
    "(an empty cell leaves a value taken from it out)."
)
EMPTY_IN_TEXT_HINT = (
    "Fill the cell, or give the text a default for it: "
    "{{ row.x | default('', true) }} (an empty cell is no value)."
)


class ValuesOfRow(dict[str, Any]):
    """A mapping of a row's ``values`` that left out entries whose one cell was empty:
    ``emptied`` names each such key's column, so that a template or an expression that
    needs the entry gets an error at that cell, not a manifest-wide ``undefined``."""

    __slots__ = ("emptied",)

    def __init__(self, items: dict[str, Any]) -> None:
        super().__init__(items)
        self.emptied: dict[str, str] = {}


def emptied_column(owner: Any, name: str) -> str | None:
    """The column of the empty cell that left ``name`` out of ``owner`` (a mapping of a
    row's ``values``), or None when it was not left out for an empty cell."""
    if owner.__class__ is ValuesOfRow:
        column: str | None = owner.emptied.get(name)
        return column
    return None


class AmbiguousNumber(CellTypeError):
    """A cell such as ``1.250`` in a sheet that does not say whether a point groups
    thousands or is the decimal point (:data:`~customs_batch.manifest.rows._cells.GROUPED`)."""

    def __init__(self, column: str, value: str) -> None:
        Exception.__init__(self, column, value)
        self.column, self.value = column, value
        self.hint = AMBIGUOUS_HINT

    def __str__(self) -> str:
        return f"column {self.column!r} holds {quoted_head(self.value)}, which {AMBIGUOUS_SAID}"

    def unquoted(self) -> str:
        return f"column {self.column!r} holds a number that {AMBIGUOUS_SAID}"


class MixedTypes(Exception):
    """An expression that mixes text read from a cell with a number."""

    def __init__(self, column: str, text: str, operator: str, other: Any) -> None:
        super().__init__(column, text, operator, other)
        self.column, self.text, self.operator, self.other = column, text, operator, other

    def __str__(self) -> str:
        why = _why_text(self.text)
        return (
            f"column {self.column!r} holds the text {quoted_head(self.text)}{why}, and the expression "
            f"uses it with {self.operator!r} and the number {self.other!r}"
        )

    @property
    def hint(self) -> str:
        """What to do about it."""
        hint = (
            f"Declare the column's type in forEach, e.g. 'columns: {{{self.column}: number}}', "
            f"or treat it as text (join with '~')."
        )
        if re.fullmatch(r"[-+]?[0-9.]*,[0-9]+", self.text.strip()):
            hint += " The cell writes a decimal comma: set 'decimalComma: true' in forEach."
        return hint


def _quoted(value: Any) -> str:
    return quoted_head(value) if isinstance(value, str) else repr(value)


def _why_text(text: str) -> str:
    stripped = text.strip()
    if _LOOSE_INTEGER.fullmatch(stripped) and stripped.lstrip("+-").startswith("0"):
        return " (a code with a leading zero)"
    if re.fullmatch(r"[-+]?[0-9.]*,[0-9]+", stripped):
        return " (a decimal comma)"
    return ""


def typed(value: Any, column: str, declared: ColumnType | None, decimal_comma: bool | None) -> Any:
    """``value`` of ``column`` as an expression sees it (raises CellTypeError for a cell
    that is not of its declared type). ``decimal_comma``: None when the sheet does not say
    and a ``1.250`` reads two ways (a ';'-separated CSV without ``decimalComma``): such a
    cell is then an error unless its column is declared text."""
    if value is None:
        return None
    if value.__class__ is BadCell:
        if value.text is not None and declared is ColumnType.TEXT:
            return value.text  # the manifest says the column is text: as written
        raise UnusableCell(column, value)
    if value.__class__ is ShownNumber:
        # A percentage: the text shown (40%), as the CSV export of the sheet gives it; the
        # number held (0.4) where the column is declared a number.
        if declared is ColumnType.NUMBER or declared is ColumnType.INTEGER:
            return _declared(value.number, column, declared, False)
        value = str(value)
        if declared is None:
            return value
    if decimal_comma is None:
        if (
            value.__class__ is str
            and declared is not ColumnType.TEXT
            and GROUPED.fullmatch(value.strip())
        ):
            raise AmbiguousNumber(column, value)
        decimal_comma = False
    if declared is not None:
        return _declared(value, column, declared, decimal_comma)
    if value.__class__ is str:
        return _inferred(value, decimal_comma)
    return value


def _inferred(text: str, decimal_comma: bool) -> Any:
    stripped = text.strip()
    if _INTEGER.fullmatch(stripped):
        # Too many digits to print: the text, which the schema reports.
        whole = integer(stripped)
        return text if whole is None else whole
    number = _decimal(stripped, decimal_comma)
    if number is not None:
        return number
    return _BOOLEANS.get(stripped.lower(), text)


def _decimal(text: str, decimal_comma: bool) -> float | int | None:
    if decimal_comma:
        if not _COMMA_DECIMAL.fullmatch(text):
            return None
        text = text.replace(".", "").replace(",", ".")
        if "." not in text:
            return integer(text)
    elif not _DECIMAL.fullmatch(text):
        return None
    number = float(text)
    if not math.isfinite(number):
        return None
    return int(number) if number.is_integer() else number  # as XLSX gives 2.0


def _declared(value: Any, column: str, declared: ColumnType, decimal_comma: bool) -> Any:
    if declared is ColumnType.TEXT:
        return _as_text(value)
    if declared is ColumnType.BOOLEAN:
        if isinstance(value, bool):
            return value
        word = _WORDS.get(str(value).strip().lower())
        if word is None:
            raise CellTypeError(column, value, declared)
        return word
    number: Any = value
    if isinstance(value, str):
        stripped = value.strip()
        number = _decimal(stripped, decimal_comma)
        if number is None and _LOOSE_INTEGER.fullmatch(stripped):
            number = integer(stripped)  # a declared number: leading zeros go
    if isinstance(number, bool) or not isinstance(number, int | float):
        raise CellTypeError(column, value, declared)
    if declared is ColumnType.INTEGER:
        if isinstance(number, float) and not number.is_integer():
            raise CellTypeError(column, value, declared)
        return int(number)
    return number


def _as_text(value: Any) -> str:
    if value.__class__ is DateText:
        return value  # still a date, which a field refuses (the text typed is lost)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


_NEVER_TEXT = frozenset({"+", "-", "/", "//", "**"})
ARITHMETIC = frozenset({"+", "-", "*", "/", "//", "%", "**"})


def check_mix(operator: str, left: Any, right: Any) -> None:
    """Raise MixedTypes when an arithmetic operator mixes a cell's text with a number."""
    for text, other in ((left, right), (right, left)):
        if text.__class__ is CellText and _is_number(other):
            raise MixedTypes(text.column, str(text), operator, other)
        if operator in _NEVER_TEXT and isinstance(text, str) and _is_number(other):
            raise TypeError(
                f"the text {quoted_head(str(text))} and the number {other!r} do not go together with "
                f"{operator!r}: convert the text with |int or |float, or join texts with '~'"
            )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
