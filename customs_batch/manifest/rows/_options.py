"""The ``forEach`` mapping of a document, checked and read into a typed :class:`ForEach`."""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from customs_batch.findings import JsonPath
from customs_batch.manifest.rows._cell_types import COLUMN_TYPE_WORDS, ColumnType
from customs_batch.manifest.rows._range import RowRange
from customs_batch.manifest.spreadsheet.model import SheetLimits, column_name
from customs_batch.manifest.spreadsheet.reader import CSV_SUFFIXES, XLSX_SUFFIXES
from customs_batch.manifest.yaml._tree import Walk

FOR_EACH_KEYS = (
    "file",
    "sheet",
    "header",
    "rows",
    "encoding",
    "delimiter",
    "decimalComma",
    "columns",
    "maxRows",
    "maxCells",
    "maxMegabytes",
)
_DELIMITER_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}
_DELIMITERS = frozenset(";,\t|")
"""What CSV exports use; a quote or a line end would make rows no reader agrees on."""
_YAML_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
"""YAML's null, which the loader keeps as text where the schema allows only text: a key
written so is not given (``sheet: null`` is the first sheet, as without the key)."""


@dataclass(frozen=True)
class ForEach:
    """What a document expands over: a spreadsheet file and how to read it."""

    file: Path
    """Resolved against the manifest's folder."""
    written: str
    """The path as the manifest wrote it."""
    sheet: str | None = None
    header: int = 1
    rows: RowRange | None = None
    encoding: str | None = None
    delimiter: str | None = None
    decimal_comma: bool | None = None
    """``decimalComma`` (None: not given)."""
    columns: Mapping[str, ColumnType] = field(default_factory=dict)
    """Column types the manifest declares (header -> type)."""
    limits: SheetLimits = field(default_factory=SheetLimits)
    """``maxRows``, ``maxCells``, ``maxMegabytes``; the defaults where not given."""


def read_for_each(data: Any, walk: Walk) -> ForEach | None:
    """The document's ``forEach``, or None after recording why in ``walk.findings``."""
    reader = _Reader(walk)
    if not isinstance(data, dict):
        reader.error((), "forEach must be a mapping", "Write 'forEach: {file: data/rows.xlsx}'.")
        return None
    for key in data:
        if key not in FOR_EACH_KEYS:
            hint = "Allowed in forEach: " + ", ".join(FOR_EACH_KEYS) + "."
            reader.error((key,), f"unknown key {key!r} under 'forEach'", hint, key=True)
    file = reader.text(data, "file", required=True)
    sheet = reader.text(data, "sheet")
    header = reader.positive(data, "header")
    rows = reader.rows(data)
    encoding = reader.encoding(data)
    delimiter = reader.delimiter(data)
    decimal_comma = reader.flag(data, "decimalComma") if "decimalComma" in data else None
    columns = reader.columns(data)
    limits = _limits(reader, data)
    suffix = Path(file).suffix.lower() if file is not None else ""
    if file is not None and suffix in CSV_SUFFIXES:
        _not_for_csv(reader, data, file, sheet=sheet)
    if file is not None and suffix in XLSX_SUFFIXES:
        _not_for_workbook(reader, data, file, encoding=encoding, delimiter=delimiter)
    if reader.failed or file is None:
        return None
    path = Path(walk.file).parent / file
    return ForEach(
        path,
        file,
        sheet,
        header or 1,
        rows,
        encoding,
        delimiter,
        decimal_comma,
        columns=columns,
        limits=limits,
    )


def _not_for_csv(reader: _Reader, data: dict[str, Any], file: str, *, sheet: str | None) -> None:
    """The options a CSV file has no use for, each an error at its key: ignored, the file
    would not be read as the manifest says."""
    if sheet is not None:
        # Read anyway, the rows of whatever sheet the CSV was exported from would be sent
        # as the rows of the sheet named.
        message = f"forEach.sheet {sheet!r}: {file} is a CSV file, which has no sheets"
        reader.error(("sheet",), message, _HINTS["sheet-of-csv"])
    cells = data.get("maxCells")
    if type(cells) is int and cells > 0:  # else already an error: not a whole number
        # Read row by row, nothing holds the file's cells together (maxRows and
        # maxMegabytes bound it): the bound asked for would not be the one kept.
        message = (
            f"forEach.maxCells {cells}: {file} is a CSV file, which maxCells does not bound "
            "(it is read row by row)"
        )
        reader.error(("maxCells",), message, _HINTS["maxCells-of-csv"])


def _not_for_workbook(
    reader: _Reader,
    data: dict[str, Any],
    file: str,
    *,
    encoding: str | None,
    delimiter: str | None,
) -> None:
    """``encoding`` or ``delimiter`` given for a workbook, which holds its text in its own
    encoding and its cells apart, or ``maxCells`` for a .xls or .xlsb one, whose sheet is
    not checked before it is read: the option would be ignored, whatever its writer took it
    to do (a ``decimalComma`` is not: it reads the workbook's text cells)."""
    for key, given, what in (
        ("encoding", encoding, "which names its own text encoding"),
        ("delimiter", delimiter and _given(data, "delimiter"), "whose cells have no delimiter"),
    ):
        if given:
            message = f"forEach.{key} {given!r}: {file} is a workbook, {what}"
            reader.error((key,), message, _HINTS[f"{key}-of-workbook"])
    cells = data.get("maxCells")
    suffix = Path(file).suffix.lower()
    if suffix in _SIZE_ONLY and type(cells) is int and cells > 0:
        # Not a zip of XML parts the check reads: only the file's size is bounded.
        message = (
            f"forEach.maxCells {cells}: {file} is a {suffix} workbook, which maxCells does not "
            "bound (only its size is checked)"
        )
        reader.error(("maxCells",), message, _HINTS["maxCells-of-binary"])


_SIZE_ONLY = frozenset({".xls", ".xlsb"})
"""Workbooks bounded by their size only (``maxMegabytes``): their sheets are not XML."""


def _limits(reader: _Reader, data: dict[str, Any]) -> SheetLimits:
    given = {
        field: reader.positive(data, key)
        for field, key in (
            ("rows", "maxRows"),
            ("cells", "maxCells"),
            ("megabytes", "maxMegabytes"),
        )
    }
    return SheetLimits(**{field: value for field, value in given.items() if value is not None})


class _Reader:
    def __init__(self, walk: Walk) -> None:
        self.walk = walk
        self.failed = False

    def error(self, at: JsonPath, message: str, hint: str, *, key: bool = False) -> None:
        self.failed = True
        path = ("forEach", *at)
        if key:
            self.walk.report_key("envelope.for-each", message, hint, path)
        else:
            self.walk.report_at("envelope.for-each", message, hint, path)

    def text(self, data: dict[str, Any], key: str, *, required: bool = False) -> str | None:
        value = _given(data, key)
        if isinstance(value, str) and value.strip():
            return value
        if value is None and not required:
            return None
        said = "is missing" if key not in data else "must be a non-empty text"
        self.error((key,), f"forEach.{key} {said}", _HINTS[key])
        return None

    def positive(self, data: dict[str, Any], key: str) -> int | None:
        value = data.get(key)
        if value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            return value
        what = "a row number" if key == "header" else "a whole number"
        self.error((key,), f"forEach.{key} must be {what} (1 or more)", _HINTS[key])
        return None

    def rows(self, data: dict[str, Any]) -> RowRange | None:
        value = data.get("rows")
        if value is None:
            return None
        parsed = RowRange.parse(str(value)) if isinstance(value, str | int) else None
        if parsed is None:
            self.error(("rows",), f"forEach.rows {value!r} is not a row range", _HINTS["rows"])
        return parsed

    def encoding(self, data: dict[str, Any]) -> str | None:
        value = self.text(data, "encoding")
        if value is None:
            return None
        try:
            info = codecs.lookup(value)
        except LookupError:
            self.error(("encoding",), f"unknown encoding {value!r}", _HINTS["encoding"])
            return None
        # rot13, hex, base64, zlib... turn bytes into bytes: not a way text is saved
        if not getattr(info, "_is_text_encoding", True) or info.name == "undefined":
            message = f"{value!r} is not a text encoding"
            self.error(("encoding",), message, _HINTS["encoding"])
            return None
        return value

    def delimiter(self, data: dict[str, Any]) -> str | None:
        value = _given(data, "delimiter")
        if value is None:
            return None
        if isinstance(value, str):
            value = _DELIMITER_NAMES.get(value.lower(), value)
            if value in _DELIMITERS:
                return value
        message = f"forEach.delimiter {value!r} is not one of ';', ',', tab or '|'"
        self.error(("delimiter",), message, _HINTS["delimiter"])
        return None

    def columns(self, data: dict[str, Any]) -> dict[str, ColumnType]:
        value = data.get("columns")
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.error(("columns",), "forEach.columns must be a mapping", _HINTS["columns"])
            return {}
        columns: dict[str, ColumnType] = {}
        for name, word in value.items():
            try:
                columns[column_name(str(name))] = ColumnType(word)
            except ValueError:
                message = f"{word!r} is not a column type (column {name!r})"
                hint = "A column type is one of: " + ", ".join(COLUMN_TYPE_WORDS) + "."
                self.error(("columns", name), message, hint)
        return columns

    def flag(self, data: dict[str, Any], key: str) -> bool:
        value = data.get(key, False)
        if isinstance(value, bool):
            return value
        self.error((key,), f"forEach.{key} must be true or false", _HINTS[key])
        return False


def _given(data: dict[str, Any], key: str) -> Any:
    """The value of ``key``; None when it is missing or YAML's null."""
    value = data.get(key)
    return None if isinstance(value, str) and value in _YAML_NULLS else value


_HINTS = {
    "file": "Name the CSV or XLSX file, relative to this manifest: 'file: ../data/rows.xlsx'.",
    "sheet": "Name the sheet as its tab shows it: 'sheet: Movements'.",
    "sheet-of-csv": (
        "Remove 'sheet' (a CSV file holds one table: the sheet it was exported from), or "
        "name the workbook (.xlsx or .ods) that holds the sheet."
    ),
    "encoding-of-workbook": (
        "Remove 'encoding' (only a CSV file's text needs one), or name the CSV file "
        "exported from the workbook."
    ),
    "delimiter-of-workbook": (
        "Remove 'delimiter' (only a CSV file's cells are separated by one), or name the CSV "
        "file exported from the workbook."
    ),
    "maxCells-of-csv": (
        "Remove 'maxCells' (a CSV file is bounded by maxRows and maxMegabytes), or name the "
        "workbook (.xlsx or .ods) whose sheet it bounds."
    ),
    "maxCells-of-binary": (
        "Remove 'maxCells' (a .xls or .xlsb workbook is bounded by maxMegabytes only), or "
        "save the workbook as .xlsx, whose sheet it bounds."
    ),
    "header": "Give the number of the row holding the column names: 'header: 1'.",
    "rows": (
        "Write a range of spreadsheet rows, numbered from 1: 'rows: 10-20' (or '10-', '-20', '15')."
    ),
    "encoding": "Use a Python encoding name, e.g. 'utf-8' or 'cp1252'.",
    "delimiter": "Write ';', ',', 'tab' or '|'.",
    "decimalComma": "Write 'decimalComma: true' when numbers are written 12,5.",
    "columns": "Give a type per column: 'columns: {Packages: number, Office: text}'.",
    "maxRows": "Give the most data rows to read, e.g. 'maxRows: 2000000'.",
    "maxCells": "Give the most cells of the sheet's used range, e.g. 'maxCells: 20000000'.",
    "maxMegabytes": "Give the most megabytes to read, e.g. 'maxMegabytes: 1024'.",
}
