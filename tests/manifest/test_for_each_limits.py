"""forEach's limits: maxRows, maxCells and maxMegabytes, read from the manifest, and a
spreadsheet over them reported at forEach.file with the key that raises the limit."""

from __future__ import annotations

from pathlib import Path

from customs_batch.manifest import load_file
from tests.manifest.helpers import GOOD_ROW, movement_sheet_manifest, only, write, write_xlsx
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
