"""Where each value of a document was written, without building a Position per value.

The composer already made a mark (0-based line and column) for every node; the map keeps
those marks by JSON path and makes a :class:`Position` only when someone asks. Layers let a
document's own values win over the values a template gave.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

from customs_batch.findings import JsonPath
from customs_batch.manifest.document import Position


class Mark(Protocol):
    """A YAML mark (PyYAML's C or Python one): 0-based line and column."""

    @property
    def line(self) -> int: ...

    @property
    def column(self) -> int: ...


Marks = Mapping[JsonPath, Mark]
Trace = Callable[[JsonPath, Position], Position]
"""Where a value found in a later layer (a template) really comes from (the manifest's
``values``), given its path and its place in that layer."""


class SourceMap(Mapping[JsonPath, Position]):
    """A read-only map JSON path -> Position over layers of (file, marks); first layer wins.
    Positions of the later layers (a template's) go through ``trace`` when there is one."""

    __slots__ = ("_layers", "_trace")

    def __init__(self, *layers: tuple[str, Marks], trace: Trace | None = None) -> None:
        self._layers = layers
        self._trace = trace

    def __getitem__(self, path: JsonPath) -> Position:
        for index, (file, marks) in enumerate(self._layers):
            mark = marks.get(path)
            if mark is not None:
                position = Position(file, mark.line + 1, mark.column + 1)
                if index and self._trace is not None:
                    return self._trace(path, position)
                return position
        raise KeyError(path)

    def __iter__(self) -> Iterator[JsonPath]:
        seen: set[JsonPath] = set()
        for _, marks in self._layers:
            for path in marks:
                if path not in seen:
                    seen.add(path)
                    yield path

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"SourceMap({', '.join(file for file, _ in self._layers)})"
