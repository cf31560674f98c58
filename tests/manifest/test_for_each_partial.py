"""A row with a bad cell or a missing column still has its other findings reported in the
same run: its document is checked without the values left out, and never planned."""

from __future__ import annotations

from pathlib import Path

from customs_batch.manifest import load_file
from customs_batch.validation.batch import render_paths, validate_paths
from tests.manifest.helpers import movement_sheet_manifest, only, write

HEADER = "Shipment,HAWB,Action,Packages,Gross weight,Party\n"
# Row 2: a bad cell (Packages) and a bad party ID; row 3: a bad action only.
ROWS = "shp_7Hk2Lm,hawb_a1,ISL,four,40.5,pty_x\nshp_7Hk2Lm,hawb_a2,XXX,3,40.5,rpty_p1\n"


def _project(manifest: str | None = None, rows: str = ROWS) -> Path:
    write(Path("data/m.csv"), HEADER + rows)
    return write(Path("m.yaml"), manifest or movement_sheet_manifest("data/m.csv"))


def _found(path: Path) -> list[tuple[str, int, str | None]]:
    result = validate_paths([path], jobs=1)
    return [(f.rule, f.location.line, f.location.column_name) for f in result.findings]


def test_a_row_with_a_bad_cell_has_its_other_findings_in_the_same_run() -> None:
    found = _found(_project())
    assert ("row.cell-type", 2, "Packages") in found
    assert ("schema.pattern", 2, "Party") in found  # reported with the bad cell, not after
    assert ("schema.enum", 3, "Action") in found
    # Nothing about the quantity left out (it is not "missing": its cell is bad).
    assert [rule for rule, line, _ in found if line == 2] == ["row.cell-type", "schema.pattern"]


def test_the_document_of_a_row_with_a_bad_cell_is_only_ever_checked() -> None:
    path = _project()
    plain = load_file(path)  # what a plan loads: the row gives its finding, no document
    assert [d.name for d in plain.documents] == ["mov-hawb_a2-3"]
    partial = load_file(path, partial=True)
    assert [(d.name, d.left_out) for d in partial.documents] == [
        ("mov-hawb_a1-2", (("spec", "quantity"),)),
        ("mov-hawb_a2-3", ()),
    ]
    assert "quantity" not in partial.documents[0].spec
    rendered = render_paths([path])
    assert [d["metadata"]["name"] for d in rendered.documents] == ["mov-hawb_a2-3"]
    assert rendered.result.failed()


def test_a_missing_column_is_a_finding_and_the_rows_are_still_checked() -> None:
    manifest = movement_sheet_manifest("data/m.csv").replace("row.Party", "row.Parti")
    path = _project(manifest, rows=ROWS.replace(",four,", ",4,"))
    finding = only(load_file(path), "envelope.for-each")
    assert "no column 'Parti'" in finding.message
    assert "Did you mean row['Party']?" in finding.hint
    found = _found(path)
    assert ("schema.enum", 3, "Action") in found
    # partyId is left out: "ISL movements need partyId" would only repeat the typo.
    assert not any(rule == "movement.party-required" for rule, _, _ in found)
    assert load_file(path).documents == []


def test_a_type_declared_for_a_column_the_sheet_lacks_leaves_the_rows_checked() -> None:
    manifest = movement_sheet_manifest("data/m.csv", ", columns: {Packets: number}")
    path = _project(manifest, rows=ROWS.replace(",four,", ",4,"))
    found = _found(path)
    assert ("envelope.for-each", 3, None) in found
    assert ("schema.pattern", 2, "Party") in found
    assert ("schema.enum", 3, "Action") in found
    assert load_file(path).documents == []


def test_a_missing_column_inside_an_expression_leaves_the_rows_checked() -> None:
    manifest = movement_sheet_manifest("data/m.csv").replace(
        "\"{{ row['Gross weight'] }}\"", "\"{{ row['Gross wieght'] | float }}\""
    )
    path = _project(manifest, rows=ROWS.replace(",four,", ",4,"))
    undefined = only(load_file(path), "template.undefined")  # once, at the manifest
    assert "Gross weight" in undefined.hint
    found = _found(path)
    assert ("schema.pattern", 2, "Party") in found
    assert ("schema.enum", 3, "Action") in found
    assert not any(rule == "schema.required" for rule, _, _ in found)


CANCELLATION = (
    "apiVersion: customs-batch/v1\nkind: ExportCancellation\n"
    "forEach: {file: data/c.csv}\n"
    'metadata: {name: "cancel-{{ row_number }}"}\n'
    "spec:\n  declarationId: {ID}\n"
)


def _cancellations(rows: str, declaration: str = '"{{ row.Id }}"') -> Path:
    write(Path("data/c.csv"), "Id,Note\n" + rows)
    return write(Path("m.yaml"), CANCELLATION.replace("{ID}", declaration))


def test_a_row_whose_only_spec_field_is_left_out_has_its_findings() -> None:
    # An ExportCancellation has one field: the row's spec is left with none.
    empty = _found(_cancellations("501,ok\n,forgot the id\n"))
    assert [found for found in empty if found[1] == 3] == [("schema.required", 3, None)]
    mixed = _found(_cancellations("501,ok\nabc,text\n", '"{{ row.Id + 1 }}"'))
    assert [found for found in mixed if found[1] == 3] == [("row.mixed-types", 3, "Id")]
    rendered = render_paths([_cancellations("501,ok\nabc,text\n", '"{{ row.Id + 1 }}"')])
    assert "row.mixed-types" in [f.rule for f in rendered.result.findings]
