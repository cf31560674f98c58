"""Where each value of a row's document came from: a cell, or else the row as a whole."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
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
        return self._row.cell(column, header)

    def get(self, path: JsonPath, default: Any = None) -> Any:
        # Asked for every path a check reports at, mostly missing: no KeyError on the way.
        if not path:
            return self._row
        cell = self._cells.get(path)
        if cell is None:
            return default
        return self._row.cell(cell[0], cell[1])

    def __iter__(self) -> Iterator[JsonPath]:
        yield ()
        yield from self._cells

    def __len__(self) -> int:
        return 1 + len(self._cells)

    def __repr__(self) -> str:
        return f"RowPositions({self._row.file}, row {self._row.line})"

    def untraced(self) -> RowPositions:
        """The positions without what only a template's output tells (see
        :class:`TracedRowPositions`): the cells and the row, which every row shares."""
        return self


class TracedRowPositions(RowPositions):
    """A row's positions where a template copied a cell from ``values`` (``values:
    {office: "{{ row.Office }}"}`` and ``{{ values.office }}`` in the template): such a
    value is at its cell, with the template place that used it. ``trace`` is asked only for
    paths that are neither a cell nor the row."""

    __slots__ = ("_trace",)

    def __init__(
        self,
        row: Position,
        sheet: str,
        cells: Mapping[JsonPath, tuple[int, str]],
        trace: Callable[[JsonPath], Position | None],
    ):
        super().__init__(row, sheet, cells)
        self._trace = trace

    def __getitem__(self, path: JsonPath) -> Position:
        found: Position | None = self.get(path)
        if found is None:
            raise KeyError(path)
        return found

    def get(self, path: JsonPath, default: Any = None) -> Any:
        found = super().get(path)
        if found is not None:
            return found
        traced = self._trace(path)
        return default if traced is None else traced

    def untraced(self) -> RowPositions:
        return RowPositions(self._row, self._sheet, self._cells)
