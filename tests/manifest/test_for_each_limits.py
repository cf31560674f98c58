"""forEach's limits: maxRows, maxCells and maxMegabytes, read from the manifest, and a
spreadsheet over them reported at forEach.file with the key that raises the limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.manifest import load_file
from tests.manifest.helpers import (
    GOOD_ROW,
    movement,
    movement_sheet_manifest,
    only,
    write,
    write_xlsx,
)
from tests.manifest.spreadsheet.hostile_xlsx import far_corner_sheet
from tests.manifest.spreadsheet.hostile_xlsx import write_xlsx as write_raw_xlsx


def test_a_sheet_over_max_cells_is_a_finding_at_forEach_file_naming_the_key() -> None:
    write_raw_xlsx(Path("far.xlsx"), far_corner_sheet())
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("far.xlsx")))
    finding = only(result, "sheet.too-large")
    assert finding.location.path == ("forEach", "file") and finding.location.line == 3
    assert "XFD1048576" in finding.message and "forEach maxCells" in finding.message
    assert "maxCells:" in finding.hint
    assert not result.documents


def test_the_limits_are_raised_in_forEach() -> None:
    write_xlsx(Path("rows.xlsx"), [GOOD_ROW, GOOD_ROW, GOOD_ROW])
    limited = load_file(write(Path("a.yaml"), movement_sheet_manifest("rows.xlsx", ", maxRows: 2")))
    assert "more than 2 data rows" in only(limited, "sheet.too-large").message
    raised = load_file(
        write(
            Path("b.yaml"),
            movement_sheet_manifest("rows.xlsx", ", maxRows: 3, maxCells: 100, maxMegabytes: 1"),
        )
    )
    assert not [f for f in raised.findings if f.rule.startswith("sheet.")]
    assert len(raised.documents) == 3


def test_a_limit_must_be_a_whole_number() -> None:
    write_xlsx(Path("rows.xlsx"), [GOOD_ROW])
    result = load_file(
        write(Path("m.yaml"), movement_sheet_manifest("rows.xlsx", ", maxCells: lots"))
    )
    finding = only(result, "envelope.for-each")
    assert finding.message == "forEach.maxCells must be a whole number (1 or more)"
    assert finding.location.path == ("forEach", "maxCells")


def test_a_long_expression_failing_on_every_row_is_not_quoted_whole_per_row() -> None:
    # Each row's finding quoted the whole expression: a 100 KB expression failing on 5,000
    # rows made 500 MB of JSON report and took 1.6 GB.
    padding = "a" * 50_000
    rows = "".join(f"shp_7Hk2Lm,hawb_a{n},ISL,4,40.5,rpty_p1\n" for n in range(50))
    write(Path("d.csv"), "Shipment,HAWB,Action,Packages,Gross weight,Party\n" + rows)
    text = movement_sheet_manifest("d.csv").replace(
        '"{{ row.HAWB }}"', "\"{{ (row.Packages / 0) ~ '" + padding + "' }}\""
    )
    assert padding in text
    result = load_file(write(Path("m.yaml"), text))
    failed = [f for f in result.findings if f.rule == "row.jinja"]
    assert len(failed) == 50
    for finding in failed:
        assert len(finding.message) < 300, len(finding.message)
        assert "division by zero" in finding.message
        assert "(50," in finding.message and " characters)" in finding.message


def test_a_long_expression_in_a_manifest_is_quoted_by_its_start() -> None:
    text = "{{ (1 / 0) ~ '" + "a" * 50_000 + "' }}"
    spec = f'  shipmentId: "{text}"\n'
    finding = only(load_file(write(Path("m.yaml"), movement(spec))), "template.error")
    assert "division by zero" in finding.message and len(finding.message) < 300


@pytest.mark.parametrize(
    ("quantity", "extra", "rule"),
    [
        ('"{{ row.Packages }}"', "", "row.cell-type"),
        ('"{{ row.Packages }}"', ", columns: {Packages: integer}", "row.cell-type"),
        ('"{{ row.Packages * 2 }}"', "", "row.mixed-types"),
    ],
)
def test_a_long_cell_is_quoted_by_its_start_in_each_row_s_finding(
    quantity: str, extra: str, rule: str
) -> None:
    # Each row's finding quoted the cell whole: 3,000 rows of 100 KB cells made a 600 MB
    # report and took 2 GB.
    cell = "x" * 50_000
    rows = "".join(f"shp_7Hk2Lm,hawb_a{n},ISL,{cell},40.5,rpty_p1\n" for n in range(20))
    write(Path("d.csv"), "Shipment,HAWB,Action,Packages,Gross weight,Party\n" + rows)
    text = movement_sheet_manifest("d.csv", extra).replace('"{{ row.Packages }}"', quantity)
    result = load_file(write(Path("m.yaml"), text))
    found = [f for f in result.findings if f.rule == rule]
    assert len(found) == 20
    for finding in found:
        assert len(finding.message) < 400, finding.message[:200]
        assert "(50,000 characters)" in finding.message


@pytest.mark.parametrize("suffix", [".xls", ".xlsb"])
def test_max_cells_given_for_a_workbook_bounded_by_size_only_is_an_error_at_the_key(
    suffix: str,
) -> None:
    # It was silently ignored: a .xls or .xlsb sheet is not checked before it is read.
    manifest = movement_sheet_manifest(f"rows{suffix}", ", maxCells: 100")
    result = load_file(write(Path("m.yaml"), manifest))
    finding = only(result, "envelope.for-each")
    assert finding.message == (
        f"forEach.maxCells 100: rows{suffix} is a {suffix} workbook, which maxCells does not "
        "bound (only its size is checked)"
    )
    assert finding.location.path == ("forEach", "maxCells")
    assert finding.hint is not None and finding.hint.startswith("Remove 'maxCells'")
