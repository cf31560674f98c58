"""validate --format html: every finding (suppressed ones marked) with its file and line or
sheet, row and column, and the documents' graph coloured by their worst finding."""

from __future__ import annotations

from pathlib import Path

from customs_batch.findings import Finding, Location, Severity, Suppression
from customs_batch.validation.batch import (
    DocumentEntry,
    ValidationResult,
    sorted_findings,
    validate_paths,
)
from customs_batch.validation.reporters import make_reporter
from customs_batch.validation.reporters._html import MAX_NODES
from tests.html_page import read_page

CELL = Finding(
    "row.cell-type",
    Severity.ERROR,
    "'zwanzig' is not a number",
    Location("data/d.csv", 2, 14, sheet="d", row=2, column_name="Quantity"),
    hint="write a number, e.g. <20>",
    document="Movement/b",
)
WARNING = Finding(
    "schema.type", Severity.WARNING, "odd", Location("m.yaml", 7, 3), document="Movement/a"
)
QUIET = Finding(
    "code.hs-unknown",
    Severity.WARNING,
    "new code",
    Location("m.yaml", 9, 1),
    suppression=Suppression("checked with the broker", "customs-batch.yaml:4", False),
)


def _result(documents: int = 3) -> ValidationResult:
    entries = tuple(
        DocumentEntry(f"Movement/{chr(97 + i)}", "m.yaml", i + 1) for i in range(documents)
    )
    return ValidationResult(
        sorted_findings([WARNING, CELL]),
        entries,
        ("m.yaml", "data/d.csv"),
        (QUIET,),
        (("Movement/a", "Movement/b", "dependsOn"), ("Movement/a", "Movement/zz", "reference")),
    )


def test_a_row_per_finding_with_where_it_is_and_suppressed_ones_marked() -> None:
    page = read_page(make_reporter("html").render(_result()))
    assert page.headers == ["severity", "where", "rule", "message", "hint"]
    assert page.rows == [
        [
            "error",
            "data/d.csv, sheet 'd', row 2, column N 'Quantity'",
            "row.cell-type",
            "'zwanzig' is not a number",
            "write a number, e.g. <20>",
        ],
        ["warning", "m.yaml:7:3", "schema.type", "odd", ""],
        [
            "warning (suppressed)",
            "m.yaml:9:1",
            "code.hs-unknown",
            "new code\nsuppressed: checked with the broker (customs-batch.yaml:4)",
            "",
        ],
    ]
    assert page.row_classes == ["tone-error", "tone-warning", "tone-neutral"]
    assert page.summary == "1 error, 1 warning, 1 suppressed in 3 documents (2 files)"
    assert page.titles[0] == "customs-batch validate: failed"


def test_the_graph_colours_each_document_by_its_worst_finding() -> None:
    text = make_reporter("html").render(_result())
    page = read_page(text)
    assert page.svg_texts == [
        "Movement/a",
        "1 finding",
        "Movement/b",
        "1 finding",
        "Movement/c",
        "no findings",
    ]
    fills = [attrs["fill"] for tag, attrs in page.tags if tag == "rect"]
    assert fills == ["#fff3bf", "#ffe3e3", "#d3f9d8"]
    # The edge to a document outside the result is not drawn.
    assert page.count("path", "edge") == 1


def test_past_the_limit_the_graph_is_left_out() -> None:
    text = make_reporter("html").render(_result(MAX_NODES + 1))
    assert "<svg" not in text and len(read_page(text).rows) == 3


def test_validate_records_the_documents_references_and_depends_on(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(
        "apiVersion: customs-batch/v1\nkind: ExportCancellation\nmetadata: {name: c1}\n"
        "spec: {declarationId: 501}\n---\n"
        "apiVersion: customs-batch/v1\nkind: ExportCancellation\n"
        "metadata: {name: c2, dependsOn: [ExportCancellation/c1]}\nspec: {declarationId: 502}\n"
    )
    assert validate_paths([tmp_path / "m.yaml"]).edges == ()  # only when a report draws them
    result = validate_paths([tmp_path / "m.yaml"], graph=True)
    assert result.edges == (("ExportCancellation/c1", "ExportCancellation/c2", "dependsOn"),)
