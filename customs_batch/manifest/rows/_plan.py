"""The Jinja strings of a ``forEach`` document, compiled once and rendered per row.

A string that is exactly ``{{ row.x }}`` or ``{{ row['Gross weight'] }}`` is a *cell slot*:
its value is taken from the row without Jinja (the common case, and the fast one), and
findings about it point at that cell. Any other string is compiled once into a Jinja
expression (a lone ``{{ … }}``: keeps its type) or template (text) and rendered per row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from customs_batch.findings import JsonPath
from customs_batch.manifest.document import JSON
from customs_batch.manifest.jinja._engine import _INLINE, _SINGLE_EXPRESSION, start_clock, to_json
from customs_batch.manifest.rows._cell_types import (
    CellText,
    ColumnType,
    EmptyCell,
    EmptyCellValue,
    typed,
)
from customs_batch.manifest.spreadsheet.model import BadCell, DateText, column_name
from customs_batch.manifest.yaml._schema_view import SchemaView

# A bracketed name runs to its closing quote: it holds neither that quote nor a backslash (a
# name written with escapes is left to Jinja). ``.*?`` let a fullmatch run on past the first
# reference: ``{{ row['A'] }}-{{ row['B'] }}`` was one column named ``A'] }}-{{ row['B``.
_NAME = r"(['\"])((?:(?!\2)[^\\\n])*)\2"
_CELL = re.compile(
    r"\{\{-?\s*row\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*" + _NAME + r"\s*\])\s*-?\}\}"
)


_PIECE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_ROW_REF = re.compile(
    r"-?\s*(?:row\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*" + _NAME + r"\s*\])|(row_number))\s*-?"
)


_STRING = frozenset({"string"})


class RowView:
    """A row for Jinja: ``row.x`` and ``row['Gross weight']`` give the cell, typed the same
    whichever export it came from (see ``rows._cell_types``); a missing header is undefined. Not a
    Mapping on purpose: a header named ``items`` or ``values`` must give the cell, not a
    dict method."""

    __slots__ = ("_cells", "_decimal_comma", "_types", "read")

    def __init__(
        self,
        cells: Mapping[str, Any],
        types: Mapping[str, ColumnType] | None = None,
        decimal_comma: bool | None = False,
    ) -> None:
        self._cells = cells
        self._types = types or {}
        self._decimal_comma = decimal_comma
        self.read: set[str] | None = None
        """When a set: the columns read are added to it (what gave a sensitive value)."""

    def __getitem__(self, key: str) -> Any:
        key = self._named(key)
        if self.read is not None:
            self.read.add(key)
        value = typed(self._cells[key], key, self._types.get(key), self._decimal_comma)
        if value is None:
            return EmptyCellValue(key)
        if value.__class__ is str or value.__class__ is DateText:
            return CellText(value, key)  # a date too: text to an expression, as before
        return value

    def value(self, key: str, *, by_schema: bool = False) -> Any:
        """The cell as a field takes it: as written when ``by_schema`` (the field's schema
        converts it) and its column declares no type, else typed like ``row[key]``."""
        key = self._named(key)
        if self.read is not None:
            self.read.add(key)
        raw = self._cells[key]
        if by_schema and key not in self._types and raw.__class__ is not BadCell:
            return raw
        return typed(raw, key, self._types.get(key), self._decimal_comma)

    def _named(self, key: str) -> str:
        """``key`` as the header names its column: ``row['Gross\\nweight']`` is the column
        of the wrapped header cell, whose name is ``Gross weight`` (``column_name``)."""
        if key in self._cells or not isinstance(key, str):
            return key
        return column_name(key)

    def __contains__(self, key: object) -> bool:
        return key in self._cells or (isinstance(key, str) and column_name(key) in self._cells)

    def __iter__(self) -> Iterator[str]:
        return iter(self._cells)

    def __len__(self) -> int:
        return len(self._cells)

    def __repr__(self) -> str:
        return f"RowView({dict(self._cells)!r})"


@dataclass(frozen=True)
class Slot:
    """One Jinja string of the document: where it goes and how it gets its value."""

    path: JsonPath
    text: str
    types: frozenset[str]
    """The scalar types the schema allows at ``path`` (empty: not known)."""
    header: str | None = None
    """For a cell slot: the column it takes."""
    compiled: Any = None
    """Otherwise: the compiled expression (``lone``) or template."""
    lone: bool = False
    string_only: bool = False
    """Whether the schema allows only text here (read per row: a field, not a property)."""
    pieces: tuple[str | tuple[str | None], ...] | None = None
    """For text made of literal parts and plain row references (``mov-{{ row.hawb }}``):
    the parts, a reference being ``(header,)`` or ``(None,)`` for ``row_number``; rendered
    without Jinja, as Jinja would render them."""

    def headers(self) -> list[str]:
        """The columns this slot reads without Jinja (checked once against the header)."""
        if self.header is not None:
            return [self.header]
        return [p[0] for p in self.pieces or () if not isinstance(p, str) and p[0] is not None]

    def render(self, context: Mapping[str, Any]) -> JSON:
        """The value for one row; raises what Jinja raises (see ``jinja._engine.problem_of``)."""
        if self.header is not None:
            return context["row"].value(self.header, by_schema=bool(self.types))
        if self.pieces is not None:
            row = context["row"]
            parts: list[str] = []
            for piece in self.pieces:
                if isinstance(piece, str):
                    parts.append(piece)
                elif piece[0] is None:
                    parts.append(str(context["row_number"]))
                else:
                    value = row.value(piece[0])
                    if value is None:  # never the word None in the text
                        raise EmptyCell(piece[0])
                    parts.append(str(value))
            return "".join(parts)
        start_clock()
        if self.lone:
            value = self.compiled(**context)
            if hasattr(value, "_fail_with_undefined_error"):
                value._fail_with_undefined_error()
            return to_json(value)
        return self.compiled.render(**context)


def make_slot(path: JsonPath, text: str, as_text: bool, view: SchemaView | None) -> Slot:
    """Compile one string; raises TemplateSyntaxError for a string that does not compile."""
    types = _STRING if as_text else view.scalar_types if view is not None else frozenset()
    base = Slot(path, text, types, string_only=types == _STRING)
    cell = _CELL.fullmatch(text.strip())
    if cell is not None:  # text-only places get the cell's text by the conversion
        return replace(base, header=cell.group(1) or cell.group(3))
    whole = _SINGLE_EXPRESSION.fullmatch(text)
    pieces = _plain_pieces(text)
    if pieces is not None and (whole is None or as_text):
        return replace(base, pieces=pieces)
    if whole is not None and not as_text:
        compiled = _INLINE.compile_expression(whole.group(1), undefined_to_none=False)
        return replace(base, compiled=compiled, lone=True)
    return replace(base, compiled=_INLINE.from_string(text))


def _plain_pieces(text: str) -> tuple[str | tuple[str | None], ...] | None:
    """``text`` split into literal parts and row references, or None when it holds anything
    else (filters, statements, other variables, whitespace control)."""
    if "{%" in text or "{#" in text:
        return None
    pieces: list[str | tuple[str | None]] = []
    end = 0
    for match in _PIECE.finditer(text):
        ref = _ROW_REF.fullmatch(match.group(1))
        if ref is None or "-" in match.group(1).strip()[:1] + match.group(1).strip()[-1:]:
            return None
        if match.start() > end:
            pieces.append(text[end : match.start()])
        pieces.append((None,) if ref.group(4) else (ref.group(1) or ref.group(3),))
        end = match.end()
    if end < len(text):
        pieces.append(text[end:])
    return tuple(pieces)


def view_at(view: SchemaView | None, path: JsonPath) -> SchemaView | None:
    """The schema view of the value at ``path`` under ``view`` (None when not known)."""
    for part in path:
        if view is None:
            return None
        view = view.items if isinstance(part, int) else view.child(part)
    return view


SlotTree = dict[str | int, "SlotTree | int"]


def slot_tree(paths: list[JsonPath]) -> SlotTree:
    """Paths (without their first part) as a tree whose leaves are the index of the path."""
    tree: SlotTree = {}
    for index, path in enumerate(paths):
        node = tree
        for part in path[1:-1]:
            child = node.setdefault(part, {})
            assert isinstance(child, dict)
            node = child
        node[path[-1]] = index
    return tree


_DROP = object()
"""A rendered value that leaves its key out (an empty cell)."""


def fill(value: Any, tree: SlotTree, rendered: list[Any]) -> Any:
    """A copy of ``value`` with the slots filled in; only the containers on the way to a
    slot are copied, the rest is shared (documents never change their spec). A field whose
    cell was empty is left out, and so is a mapping or list left empty by that."""
    if isinstance(value, dict):
        out = dict(value)
        for key, sub in tree.items():
            if key in out:
                new = rendered[sub] if isinstance(sub, int) else fill(out[key], sub, rendered)
                if new is _DROP:
                    del out[key]
                else:
                    out[key] = new
        return out if out or not value else _DROP
    if isinstance(value, list):
        items = list(value)
        for key, sub in tree.items():
            if isinstance(key, int) and key < len(items):
                new = rendered[sub] if isinstance(sub, int) else fill(items[key], sub, rendered)
                items[key] = new
        kept = [item for item in items if item is not _DROP]
        return kept if kept or not value else _DROP
    return value


DROP = _DROP
