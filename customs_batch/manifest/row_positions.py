"""Where each value of a row's document came from: a cell, or else the row as a whole."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from customs_batch.findings import JsonPath
from customs_batch.manifest.document import Position


class RowPositions(Mapping[JsonPath, Position]):
    """JSON path -> Position for one row: the cell for a value taken from one cell, the row
    for the document itself (``()``). Positions are made only when asked for; ``cells`` is
    shared by every row of a document."""

    __slots__ = ("_cells", "_row", "_sheet")

    def __init__(self, row: Position, sheet: str, cells: Mapping[JsonPath, tuple[int, str]]):
        self._row = row
        self._sheet = sheet
        self._cells = cells

    def __getitem__(self, path: JsonPath) -> Position:
        if not path:
            return self._row
        column, header = self._cells[path]
        return Position(self._row.file, self._row.line, column, self._sheet, header)

    def get(self, path: JsonPath, default: Any = None) -> Any:
        # Asked for every path a check reports at, mostly missing: no KeyError on the way.
        if not path:
            return self._row
        cell = self._cells.get(path)
        if cell is None:
            return default
        return Position(self._row.file, self._row.line, cell[0], self._sheet, cell[1])

    def __iter__(self) -> Iterator[JsonPath]:
        yield ()
        yield from self._cells

    def __len__(self) -> int:
        return 1 + len(self._cells)

    def __repr__(self) -> str:
        return f"RowPositions({self._row.file}, row {self._row.line})"
