"""Findings of spreadsheet rows in every report format: the file, sheet, row and column."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from customs_batch.cli.main import invoke
from tests.manifest.helpers import GOOD_ROW, movement_sheet_manifest, write, write_xlsx

BAD_ROW: list[object] = ["shp_7Hk2Lm", "hawb_a2", "ISL", "four", 40.5, "rpty_p1"]


def _validate(*args: str) -> tuple[int, str]:
    with CliRunner().isolation() as (out, _, _):
        code = invoke(["validate", *args])
    return code, out.getvalue().decode()


def _project(rows: list[list[object]]) -> None:
    write_xlsx(Path("data/m.xlsx"), rows)
    write(Path("manifests/m.yaml"), movement_sheet_manifest("../data/m.xlsx"))


def test_text_names_the_cell() -> None:
    _project([GOOD_ROW, BAD_ROW])
    code, out = _validate(".")
    assert code == 1
    assert out.splitlines()[:4] == [
        "data/m.xlsx:3:4: error[row.cell-type]: 'four' is not a whole number",
        "  cell: sheet 'Movements', row 3, column D 'Packages'",
        "  path: $.spec.quantity",
        "  hint: Write digits only, e.g. 12.",
    ]


def test_json_names_the_cell() -> None:
    _project([GOOD_ROW, BAD_ROW])
    _, out = _validate(".", "--format", "json")
    (finding,) = json.loads(out)["findings"]
    assert {key: finding[key] for key in ("file", "line", "column", "cell", "document")} == {
        "file": "data/m.xlsx",
        "line": 3,
        "column": 4,
        "cell": {"sheet": "Movements", "row": 3, "column": "Packages"},
        "document": "Movement/mov-hawb_a2-3",
    }


def test_github_annotates_the_spreadsheet_at_the_row() -> None:
    _project([GOOD_ROW, BAD_ROW])
    _, out = _validate(".", "--format", "github")
    assert out.splitlines()[0] == (
        "::error file=data/m.xlsx,line=3,col=4,title=row.cell-type::'four' is not a whole "
        "number (sheet 'Movements', row 3, column D 'Packages')%0Ahint: Write digits only, e.g. 12."
    )


def test_sarif_locates_the_spreadsheet_with_the_row_as_line() -> None:
    _project([GOOD_ROW, BAD_ROW])
    _, out = _validate(".", "--format", "sarif")
    (result,) = json.loads(out)["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical == {
        "artifactLocation": {"uri": "data/m.xlsx"},
        "region": {"startLine": 3, "startColumn": 4},
    }
    assert "(sheet 'Movements', row 3, column D 'Packages')" in result["message"]["text"]


def test_a_thousand_bad_rows_are_grouped_in_text_and_all_kept_in_json() -> None:
    _project([GOOD_ROW] + [[*BAD_ROW[:1], f"hawb_{n}", *BAD_ROW[2:]] for n in range(1000)])
    code, text = _validate(".")
    assert code == 1
    lines = text.splitlines()
    assert sum(1 for line in lines if "error[row.cell-type]" in line) == 5
    elided = next(line for line in lines if line.startswith("… and"))
    assert elided.startswith("… and 995 more [row.cell-type] in data/m.xlsx at rows 8, 9, 10,")
    assert "per rule: row.cell-type 1000" in lines
    # Every row is checked, those with a bad cell too (without the cell).
    assert lines[-1] == "1000 errors, 0 warnings in 1001 documents (1 file)"
    _, report = _validate(".", "--format", "json")
    rows = [finding["cell"]["row"] for finding in json.loads(report)["findings"]]
    assert rows == list(range(3, 1003))
