"""Cell values converted by the schema of the field they fill.

Everything in a CSV file is text, and XLSX cells typed as text hold numbers too. Where the
field's schema wants an integer, a number or a boolean (and not a string), the text is
converted; where it wants only a string, a number becomes its text (a code typed as a number).
A cell that does not convert gives a :class:`CellProblem`, which the caller reports at the cell.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from customs_batch.escaping import quoted_head as quoted_head
from customs_batch.manifest.document import JSON
from customs_batch.manifest.spreadsheet.model import ShownNumber
from customs_batch.manifest.yaml._scalars import integer
from customs_batch.manifest.yaml._schema_view import REFERENCE, TEXT_TYPES

_TRUE = frozenset({"true", "yes", "y", "1", "x"})
_FALSE = frozenset({"false", "no", "n", "0"})
_INTEGER = re.compile(r"[-+]?[0-9]+")
_POINT_ZEROS = re.compile(r"([-+]?[0-9]+)\.0+")
"""A whole number written with a decimal point and zeros after it (``2.0``)."""
_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_COMMA_NUMBER = re.compile(r"[-+]?(?:[1-9][0-9]{0,2}(?:\.[0-9]{3})+|[0-9]+)(?:,[0-9]+)?")
"""Thousands grouped by points only from a first group without a leading zero: ``0.500``
and ``00.123`` are decimal points, not 500 and 123."""
GROUPED = re.compile(r"[-+]?[1-9][0-9]{0,2}(?:\.[0-9]{3})+")
"""A number that reads two ways: ``1.250`` is 1250 where a point groups thousands (a
decimal-comma export) and 1.25 where it is the decimal point."""
AMBIGUOUS_SAID = (
    "reads two ways: with its points grouping thousands (as a decimal-comma locale writes "
    "1.250 for 1250, in a workbook's text cells and its ';'-separated export) or as a "
    "decimal point (1.25)"
)
AMBIGUOUS_HINT = (
    "Say which in forEach: 'decimalComma: true' (points group thousands, a comma is the "
    "decimal mark) or 'decimalComma: false' (a point is the decimal mark)."
)


_OTHER_DIGITS = "Write it in the digits 0-9, as a YAML manifest must, e.g. "
"""A number written in the digits of another script (``٣``, Arabic-Indic 3) is not one,
in a cell as in a YAML manifest: the hint says which digits are."""


def _other_digits(text: str) -> bool:
    return any(character.isdigit() and not character.isascii() for character in text)


@dataclass(frozen=True)
class CellProblem:
    """Why a cell's value does not fit its field: ``quoted`` (the value as a message shows
    it) ``said`` (what is wrong with it)."""

    quoted: str
    said: str
    hint: str

    @property
    def message(self) -> str:
        """``'12x' is not a number``."""
        return f"{self.quoted} {self.said}"

    @property
    def unquoted(self) -> str:
        """The message without the value, for a sensitive field: ``the cell is not a number``."""
        return f"the cell {self.said}"


def convert(
    value: JSON, types: frozenset[str], *, decimal_comma: bool | None
) -> JSON | CellProblem:
    """``value`` as the field's scalar ``types`` want it (unchanged when they do not say).
    ``decimal_comma``: None when the sheet does not say and a ``1.250`` reads two ways (a
    ';'-separated CSV without ``decimalComma``): such a cell is then a problem."""
    if value is None or not types:
        return str(value) if value.__class__ is ShownNumber else value
    if value.__class__ is ShownNumber:
        return _shown_number(value, types)
    if isinstance(value, str):
        return _from_text(value, types, decimal_comma)
    if types <= TEXT_TYPES and isinstance(value, bool):
        return "TRUE" if value else "FALSE"  # as the sheet shows it, and its CSV export
    if types <= TEXT_TYPES and isinstance(value, int | float):
        return str(value)
    return value


def _shown_number(value: ShownNumber, types: frozenset[str]) -> JSON | CellProblem:
    """A workbook's number shown as a percentage: the text shown (``40%``, as its CSV export
    writes it) for a text field, the number held (0.4) for a number field."""
    if "string" in types or not types & {"number", "integer"}:
        return str(value)
    number = value.number
    if "number" in types:
        return number
    if float(number).is_integer():
        return int(number)
    return CellProblem(
        f"{quoted_head(value)} (the number {number!r} shown as a percentage)",
        "is not a whole number",
        "Check the cell, or write the whole number in a cell without the percentage format.",
    )


def _from_text(text: str, types: frozenset[str], decimal_comma: bool | None) -> JSON | CellProblem:
    if "string" in types or (REFERENCE in types and "${ref:" in text):
        return text
    stripped = text.strip()
    if decimal_comma is None:
        if ("number" in types or "integer" in types) and GROUPED.fullmatch(stripped):
            return CellProblem(quoted_head(text), AMBIGUOUS_SAID, AMBIGUOUS_HINT)
        if "number" in types and "," in stripped and _COMMA_NUMBER.fullmatch(stripped):
            # 12,5 or 1.234,5 in a ';'-separated export: the export is right, the manifest
            # has not said how it writes numbers.
            return CellProblem(quoted_head(text), "is not a number", _SAY_DECIMAL_COMMA)
        decimal_comma = False
    if "integer" in types and _INTEGER.fullmatch(stripped):
        whole = integer(stripped)
        if whole is None:
            return CellProblem(quoted_head(text), "has too many digits", "Check the cell.")
        return whole
    if "number" in types:
        return _number(stripped, decimal_comma)
    point = _POINT_ZEROS.fullmatch(stripped) if "integer" in types and not decimal_comma else None
    if point is not None and not GROUPED.fullmatch(stripped):
        # 2.0, as pandas and many exporters write a whole number (and as the XLSX cell 2.0
        # and the expression {{ row.x * 1 }} read it): the integer. Not 1.000, which in a
        # whole-number field is more likely a thousand with its points grouping than 1.
        whole = integer(point.group(1))
        if whole is None:
            return CellProblem(quoted_head(text), "has too many digits", "Check the cell.")
        return whole
    if "integer" in types and decimal_comma and _COMMA_NUMBER.fullmatch(stripped):
        # 1.000 (and 1.000,00) as a decimal-comma export writes a thousand
        grouped = _plain_number(stripped.replace(".", "").replace(",", "."))
        if isinstance(grouped, float) and grouped.is_integer():
            return int(grouped)
        if not isinstance(grouped, float):
            return grouped
    if "integer" in types:
        hint = _OTHER_DIGITS + "12" if _other_digits(stripped) else "Write digits only, e.g. 12"
        if _COMMA_GROUPED.fullmatch(stripped) and "." not in stripped:
            hint = "Write the number without the commas that group thousands, e.g. 1000"
        if REFERENCE in types:
            hint += ", or a reference to another document's outcome: ${ref:Kind/name.field}"
        return CellProblem(quoted_head(text), "is not a whole number", hint + ".")
    if "boolean" in types:
        lowered = stripped.lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        return CellProblem(
            quoted_head(text), "is not yes or no", "Write true or false (or yes or no)."
        )
    return text


def _number(text: str, decimal_comma: bool) -> JSON | CellProblem:
    if decimal_comma:
        if _COMMA_NUMBER.fullmatch(text):
            return _plain_number(text.replace(".", "").replace(",", "."))
        hint = "This document reads numbers with a decimal comma (decimalComma: true): 12,5."
        if _other_digits(text):
            hint = _OTHER_DIGITS + "12,5 (decimalComma: true)."
        if re.fullmatch(r"[-+]?[0-9]+\.[0-9]+", text):
            hint += " This cell writes a decimal point: write it with a comma, or check the export."
        formatted = _formatted(text)
        if formatted:
            hint = formatted + " " + hint
        return CellProblem(quoted_head(text), "is not a number", hint)
    if _NUMBER.fullmatch(text):
        return _plain_number(text)
    hint = "Write the number with a decimal point, e.g. 12.5"
    formatted = _formatted(text)
    if formatted:
        hint = formatted + " " + hint
    if _other_digits(text):
        hint = _OTHER_DIGITS + "12.5"
    if re.fullmatch(r"[-+]?[0-9.]*,[0-9]+", text):
        hint += ", or set 'decimalComma: true' in forEach when the export writes 12,5"
    if _COMMA_GROUPED.fullmatch(text) and "." in text:
        # 1,234.50: an English export of a column formatted with a thousands separator
        hint = (
            "The commas group thousands: write the number without them, e.g. 1234.5 (format "
            "the column without a thousands separator before exporting)"
        )
    return CellProblem(quoted_head(text), "is not a number", hint + ".")


_UNIT = re.compile(r"(?:[^\d\s.,()+-]+\s?)?[-+]?[\d.,]+(?:\s?[^\d\s.,()+-]+)?")
_ACCOUNTING = re.compile(r"\(\s?[\d.,]+\s?\)|[\d.,]+-")
_SPACED = re.compile(r"[1-9][0-9]{0,2}(?:[ \u00a0\u202f][0-9]{3})+(?:[.,][0-9]+)?")


def _formatted(text: str) -> str:
    """What a number format of the sheet wrote into the exported text, said as the start of
    a hint: a currency or a unit (``310,50 €``, ``48,5 kg``), an accounting format's
    negative number (``123,45-``, ``(123,45)``), thousands grouped by spaces (``1 250,00``);
    empty when none is."""
    if _SPACED.fullmatch(text):
        return (
            "Spaces group its thousands, as a number format writes them: write the number "
            "without them (format the column without a thousands separator before exporting)."
        )
    if _ACCOUNTING.fullmatch(text):
        return (
            "It is a negative number as an accounting format writes it: write it with a "
            "leading minus, -123.45, or format the column as Number before exporting."
        )
    if _UNIT.fullmatch(text) and any(c.isdigit() for c in text):
        return (
            "A currency, a unit or a percent sign was exported with the number: write the "
            "number alone (format the column as Number, without them, before exporting)."
        )
    return ""


_SAY_DECIMAL_COMMA = (
    "This export writes decimal commas, as a decimal-comma locale does: set "
    "'decimalComma: true' in forEach to read 12,5 and 1.234,5 as numbers."
)
_COMMA_GROUPED = re.compile(r"[-+]?[1-9][0-9]{0,2}(?:,[0-9]{3})+(?:\.[0-9]+)?")
"""A number whose commas group thousands: ``1,234.50``, ``1,000``."""


def _plain_number(text: str) -> JSON | CellProblem:
    if _INTEGER.fullmatch(text):
        whole = integer(text)
        if whole is None:
            return CellProblem(quoted_head(text), "has too many digits", "Check the cell.")
        return whole
    number = float(text)
    if math.isfinite(number):
        return number
    return CellProblem(quoted_head(text), "is too large a number", "Check the cell.")
