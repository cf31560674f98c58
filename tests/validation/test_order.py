"""Written order: movements of one HAWB in several files must say which goes first."""

from __future__ import annotations

import dataclasses
from typing import Any

from customs_batch.findings import Finding
from customs_batch.kinds import Kind
from customs_batch.manifest.document import Document, Position
from customs_batch.validation.project import check_project
from tests.validation._documents import line_of, make_document
from tests.validation.samples import sample

RULE = "project.movement-order"


def _movement(name: str, index: int, file: str, *depends_on: str, **changes: Any) -> Document:
    return make_document(
        Kind.MOVEMENT,
        sample(Kind.MOVEMENT, quantity=index + 1, **changes),
        name=name,
        index=index,
        file=file,
        line=1 + 100 * index,
        depends_on=depends_on,
    )


def _unordered(documents: list[Document]) -> list[Finding]:
    return [f for f in check_project(documents) if f.rule == RULE]


def test_movements_of_one_hawb_in_two_files_without_order_are_an_error() -> None:
    arrival = _movement("vah", 0, "manifests/a.yaml")
    storage = _movement("isl", 1, "manifests/b.yaml", action="ISL")
    (finding,) = _unordered([arrival, storage])
    assert finding.document == "Movement/isl"
    assert (finding.location.file, finding.location.line) == (
        "manifests/b.yaml",
        line_of(storage, "metadata", "name"),
    )
    assert "Movement/isl and Movement/vah at manifests/a.yaml:1" in finding.message
    assert "HAWB hawb_a1 of shp_7Hk2Lm" in finding.message
    assert "`dependsOn: [Movement/vah]` under `metadata:` of Movement/isl" in finding.hint


def test_depends_on_states_the_order_either_way() -> None:
    arrival = _movement("vah", 0, "manifests/a.yaml")
    storage = _movement("isl", 1, "manifests/b.yaml", "Movement/vah", action="ISL")
    assert _unordered([arrival, storage]) == []
    # The file named first goes second: what dependsOn says, not the file names.
    storage_first = _movement("isl", 0, "manifests/a.yaml", "Movement/vah", action="ISL")
    arrival_second = _movement("vah", 1, "manifests/b.yaml")
    assert _unordered([storage_first, arrival_second]) == []


def test_within_a_file_document_order_is_the_order() -> None:
    documents = [_movement(f"m{i}", i, "manifests/a.yaml") for i in range(3)]
    assert _unordered(documents) == []
    other_hawb = _movement("b1", 3, "manifests/b.yaml", hawbId="hawb_a2")
    master = _movement("awb", 4, "manifests/c.yaml", hawbId=None)
    assert _unordered([*documents, other_hawb, master]) == []


def test_every_two_movements_of_the_hawb_must_be_ordered() -> None:
    """b1 waits for a1, but nothing orders a2 and b1: either could go first."""
    a1 = _movement("a1", 0, "manifests/a.yaml")
    a2 = _movement("a2", 1, "manifests/a.yaml")
    b1 = _movement("b1", 2, "manifests/b.yaml", "Movement/a1")
    b2 = _movement("b2", 3, "manifests/b.yaml")
    (finding,) = _unordered([a1, a2, b1, b2])
    assert finding.document == "Movement/b1"
    assert "Movement/a2 at manifests/a.yaml" in finding.message
    b1_after_a2 = _movement("b1", 2, "manifests/b.yaml", "Movement/a2")
    assert _unordered([a1, a2, b1_after_a2, b2]) == []


def test_an_order_through_another_document_counts() -> None:
    a1 = _movement("a1", 0, "manifests/a.yaml")
    between = make_document(
        Kind.EXPORT_CANCELLATION,
        sample(Kind.EXPORT_CANCELLATION),
        name="c1",
        index=1,
        file="manifests/c.yaml",
        depends_on=("Movement/a1",),
    )
    b1 = _movement("b1", 2, "manifests/b.yaml", "ExportCancellation/c1")
    assert _unordered([a1, between, b1]) == []


def _row(name: str, index: int, sheet: str) -> Document:
    """A movement from row ``index + 3`` of a sheet of data/movements.xlsx (a forEach)."""
    row = _movement(name, index, "manifests/sheet.yaml")
    return dataclasses.replace(row, source=Position("data/movements.xlsx", index + 3, 0, sheet))


def test_rows_of_one_sheet_are_in_row_order_and_two_sheets_are_not() -> None:
    assert _unordered([_row("r1", 0, "Movements"), _row("r2", 1, "Movements")]) == []
    (finding,) = _unordered([_row("r1", 0, "Monday"), _row("r2", 1, "Tuesday")])
    assert finding.document == "Movement/r2"
