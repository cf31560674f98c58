"""The typed document a manifest holds, after loading and rendering."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from customs_batch.findings import CsvReading, JsonPath, Location
from customs_batch.jsontypes import JSON as JSON
from customs_batch.kinds import Address, Kind
from customs_batch.manifest.record_places import RecordPlaces
from customs_batch.picklable import quick_pickle


@quick_pickle
@dataclass(frozen=True, slots=True)
class Position:
    """A place in a source file; line and column are 1-based."""

    file: str
    line: int
    column: int
    sheet: str | None = None
    """For a spreadsheet cell or row: the sheet; ``line`` is then the row number and
    ``column`` the 1-based column number (0 for a whole row)."""
    column_name: str | None = None
    """For a spreadsheet cell: the column's header."""
    used_at: Position | None = None
    """For a value a template copied from the document's ``values``: where the template
    used it (this position is the value in the manifest)."""
    places: RecordPlaces | None = field(default=None, compare=False)
    """For a CSV file's row or cell: where the row's cells are in the file's text."""
    header: int | None = field(default=None, compare=False)
    """For a spreadsheet row: the row of its column names (``forEach.header``)."""
    reading: CsvReading | None = field(default=None, compare=False)
    """For a CSV file's row or cell: the encoding and delimiter its ``forEach`` states."""

    def cell(
        self, column: int, column_name: str | None, used_at: Position | None = None
    ) -> Position:
        """The position of cell ``column`` (1-based) of this spreadsheet row."""
        return Position(
            self.file,
            self.line,
            column,
            self.sheet,
            column_name,
            used_at,
            self.places,
            reading=self.reading,
        )

    def location(self, path: JsonPath) -> Location:
        """The finding location of a value at ``path`` written here. A CSV file's cell (or
        row) is at its physical line and character column, where a quoted cell of several
        lines above it puts it; a workbook's at its row and column number."""
        used = None if self.used_at is None else self.used_at.location(())
        if self.sheet is None:
            return Location(self.file, self.line, self.column, path, used_at=used)
        line, column = (
            (self.line, self.column) if self.places is None else self.places.at(self.column)
        )
        return Location(
            self.file,
            line,
            column,
            path,
            self.sheet,
            self.line,
            self.column_name,
            used_at=used,
            cell_column=None if self.places is None else self.column,
            reading=self.reading,
        )


@quick_pickle
@dataclass(frozen=True, slots=True)
class Reference:
    """A ``${ref:Kind/name.field}`` found in a document's spec, at ``path``."""

    target: Address
    field: str
    path: JsonPath
    text: str


_NOTHING: Mapping[Any, Any] = {}


def nothing() -> Mapping[Any, Any]:
    """The one empty mapping documents share (never mutated: typed read-only): a bulk load
    of 100,000 documents would otherwise hold an empty dict per field per document."""
    return _NOTHING


@quick_pickle
@dataclass(frozen=True, slots=True)
class Document:
    """One rendered document of the batch.

    ``spec`` is the API request body after the template was merged under it and Jinja
    expressions were rendered. ``positions`` maps a JSON path inside the whole document
    (``("spec", "Principal", "name")``) to where that value was written; values a template
    produced point into the template file.
    """

    kind: Kind
    name: str
    spec: Mapping[str, JSON]
    source: Position
    index: int
    """Order of the document in the batch (files in the order given, documents in file order)."""
    depends_on: tuple[Address, ...] = ()
    labels: Mapping[str, str] = field(default_factory=nothing)
    template: str | None = None
    values: Mapping[str, JSON] = field(default_factory=nothing)
    references: tuple[Reference, ...] = ()
    positions: Mapping[JsonPath, Position] = field(default_factory=nothing)
    row: Mapping[str, JSON] | None = None
    """The spreadsheet row a ``forEach`` document came from, if any."""
    previous_names: tuple[str, ...] = ()
    """``metadata.previousNames``: names the document had before (a declared rename)."""
    left_out: tuple[JsonPath, ...] = ()
    """The values left out of a spreadsheet row's document for a problem already reported
    (a bad cell, a missing column): such a document is incomplete, given only to be checked
    for its other findings (``iter_file(..., partial=True)``), and never planned."""
    annotations: Mapping[str, str] = field(default_factory=nothing)
    """``metadata.annotations``: notes for tools (``customs-batch/suppress``), never sent."""
    sensitive_columns: tuple[tuple[int, str], ...] = ()
    """For a spreadsheet row's document: the columns (number, header) read into a sensitive
    value (a guarantee's access code), however composed (``"AC{{ row.Access }}"``), directly
    or through ``values``: the annotated copies leave them empty."""
    address: Address = field(init=False, repr=False, compare=False)
    """``Kind/name``; made once (the planner asks for it many times a document)."""

    def __post_init__(self) -> None:
        # Slots, not a __dict__: a plan or a bulk load keeps 100,000 of these.
        object.__setattr__(self, "address", Address(self.kind, self.name))

    def locate(self, path: JsonPath) -> Location:
        """The best location for a value at ``path``: the value itself, else its nearest parent."""
        probe = path
        while True:
            pos = self.positions.get(probe)
            if pos is not None:
                return pos.location(path)
            if not probe:
                return self.source.location(path)
            probe = probe[:-1]
