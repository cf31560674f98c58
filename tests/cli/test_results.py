"""results, apply --annotate-results and status by row, through the CLI on the built-in
local environment (the embedded emulator)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import openpyxl
import pytest
from openpyxl.worksheet.table import Table

from customs_batch.cli.results import RESULTS_FORMATS, ROWS_A_PIECE
from customs_batch.commands.results import ResultsResult
from customs_batch.execution.results import DocumentResult, ResultStatus, RowResult
from tests.cli.conftest import EXAMPLES, run


@pytest.fixture
def sheets(tmp_path: Path) -> Path:
    """The spreadsheet examples, with the first movement's party one the shipment does
    not have (the service refuses it, so the next movement on its HAWB is skipped)."""
    (tmp_path / "manifests").mkdir()
    for name in ("departures-sheet.yaml", "movements-sheet.yaml"):
        shutil.copy(EXAMPLES / "manifests" / name, tmp_path / "manifests" / name)
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    shutil.copytree(EXAMPLES / "data", tmp_path / "data")
    shutil.copy(EXAMPLES / "customs-batch.yaml", tmp_path / "customs-batch.yaml")
    book = openpyxl.load_workbook(tmp_path / "data" / "movements.xlsx")
    book["Movements"]["F3"] = "rpty_nobody"
    book.save(tmp_path / "data" / "movements.xlsx")
    return tmp_path


def test_apply_annotate_results_writes_the_copies_although_rows_failed(
    sheets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "apply", "--auto-approve", "--annotate-results", "results")
    assert code == 1, out + err  # a refused movement, a skipped one
    assert "wrote results/data/movements.xlsx (1 rejected, 1 skipped, 2 done)" in err
    assert "wrote results/data/departures.csv.xlsx (2 pending)" in err
    sheet = openpyxl.load_workbook("results/data/movements.xlsx")["Movements"]
    assert [sheet.cell(n, 13).value for n in (3, 4, 6, 7)] == [
        "rejected",
        "skipped",
        "done",
        "done",
    ]
    assert "rpty_nobody is not a party" in str(sheet.cell(3, 20).value)


def test_results_prints_each_row_by_file_and_sheet(
    sheets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "results")
    assert code == 0 and "not-applied" in out, err
    assert run(capsys, "apply", "--auto-approve", "--wait")[0] == 1

    code, out, err = run(capsys, "results")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "data/departures.csv, sheet 'departures'"
    assert lines[1].startswith("  row 2     done            DepartureDeclaration/dep-sheet-acme-")
    assert "declarationId 700" in lines[1] and "  ready  " in lines[1]
    movements = lines.index("data/movements.xlsx, sheet 'Movements'")
    assert lines[movements + 1].startswith(
        "  row 3     rejected        Movement/sheet-hawb_a2-vah-3"
    )
    assert "mrn 26NLR0000000042028" in lines[movements + 1]
    assert "rpty_nobody is not a party of shipment shp_7Hk2Lm" in lines[movements + 2]
    assert lines[movements + 3].startswith("  row 4     skipped")

    code, out, err = run(capsys, "results", "--format", "json")
    assert code == 0, err
    body = json.loads(out)
    assert body["formatVersion"] == 1 and body["written"] == []
    assert body["summary"] == {"rejected": 1, "skipped": 1, "done": 4}
    row = next(r for r in body["rows"] if r["file"] == "data/movements.xlsx" and r["row"] == 6)
    assert row["sheet"] == "Movements" and row["status"] == "done"
    assert row["documents"][0]["ids"]["movementId"].startswith("mov_")


def test_status_groups_spreadsheet_documents_by_file_sheet_and_row(
    sheets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (sheets / "manifests" / "departures.yaml").write_text(
        (EXAMPLES / "manifests" / "departures.yaml").read_text()
    )
    code, out, err = run(capsys, "apply", "--auto-approve", "--wait")
    assert code == 1, out + err  # the refused movement

    code, out, _ = run(capsys, "status")
    assert code == 0
    lines = out.splitlines()
    header = lines.index("data/departures.csv, sheet 'departures':")
    assert all("dep-sheet" not in line for line in lines[:header])
    assert lines[header + 1].startswith(
        "  row 2     DepartureDeclaration/dep-sheet-acme-2026-0101  "
    )
    assert lines[header + 2].startswith(
        "  row 3     DepartureDeclaration/dep-sheet-acme-2026-0102  "
    )

    code, out, _ = run(capsys, "status", "--format", "json")
    body = json.loads(out)
    places = {d["address"]: (d["file"], d["sheet"], d["row"]) for d in body["declarations"]}
    assert places["DepartureDeclaration/dep-sheet-acme-2026-0102"] == (
        "data/departures.csv",
        "departures",
        3,
    )
    assert places["DepartureDeclaration/dep-rtm-ham-0001"] == (None, None, None)


def test_apply_refuses_a_folder_its_copies_cannot_be_written_in_before_sending(
    sheets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found probing: `apply --annotate-results .` sent every request, recorded them, and
    # only then found that the copy of data/movements.xlsx would replace it (exit 3).
    book = openpyxl.load_workbook(sheets / "data" / "movements.xlsx")
    book["Movements"]["F3"] = "rpty_p2"  # nothing refused this time
    book.save(sheets / "data" / "movements.xlsx")
    before = (sheets / "data" / "movements.xlsx").read_bytes()

    code, out, err = run(capsys, "apply", "--auto-approve", "--annotate-results", ".")
    assert code == 64, out + err
    assert "the annotated copy of data/movements.xlsx would replace the file itself" in err
    assert "hint: pass --annotate-results a folder of its own" in err
    assert "Apply:" not in out
    assert (sheets / "data" / "movements.xlsx").read_bytes() == before
    assert not (sheets / "data" / "departures.csv.xlsx").exists()
    code, out, _ = run(capsys, "results", "--format", "json")
    assert json.loads(out)["summary"] == {"not-applied": 6}

    # The spreadsheet of a document the selection leaves out is copied too: refused as well.
    code, out, err = run(
        capsys,
        "apply",
        "--auto-approve",
        "--target",
        "DepartureDeclaration/dep-sheet-acme-2026-0101",
        "--annotate-results",
        ".",
    )
    assert code == 64, out + err
    assert "the annotated copy of data/movements.xlsx would replace the file itself" in err
    code, out, _ = run(capsys, "results", "--format", "json")
    assert json.loads(out)["summary"] == {"not-applied": 6}

    (sheets / "out" / "data" / "movements.xlsx").mkdir(parents=True)
    code, out, err = run(capsys, "apply", "--auto-approve", "--annotate-results", "out")
    assert code == 64, out + err
    assert "--annotate-results out: cannot write the annotated copy" in err
    assert "a folder is there" in err
    code, out, _ = run(capsys, "results", "--format", "json")
    assert json.loads(out)["summary"] == {"not-applied": 6}


_ROWS_BY_NUMBER = """\
apiVersion: customs-batch/v1
kind: DepartureDeclaration
forEach: {file: ../data/deps.csv}
metadata:
  name: "dep-{{ row_number }}"
template: rotterdam-export
values: {destination_office: DE004073, destination_country: DE}
spec:
  commercialReference: "{{ row.ref }}"
  totalWeight: "{{ row.weight }}"
  Consignor: {name: Acme Export BV, eoriNo: NL123456789, countryCode: NL}
  Consignee: {name: Globex GmbH, countryCode: DE, city: Hamburg, street: Kai 1, postcode: "20457"}
  DeclarationItems:
    - {description: Steel bolts, commodityCode: "731815", originCountry: NL, quantity: 100,
       grossMass: "{{ row.weight }}", netWeight: 1.0, netPrice: 250, currency: EUR,
       packaging: [{sequenceNumber: 1, typeOfPackages: PX, quantity: 2, shippingMarks: M-1}]}
"""


def test_a_row_whose_name_moved_to_another_declaration_is_not_given_that_declaration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Documents named by their row number: the first row deleted after apply, the row
    below takes its name, whose record is the deleted row's declaration. results gave the
    row that declaration's ID and state, and status listed it under the row."""
    (tmp_path / "manifests").mkdir()
    (tmp_path / "data").mkdir()
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    (tmp_path / "manifests" / "deps.yaml").write_text(_ROWS_BY_NUMBER)
    rows = tmp_path / "data" / "deps.csv"
    rows.write_text("ref,weight\nAAA-0001,100\nBBB-0002,200\nCCC-0003,300\n")
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    code, out, _ = run(capsys, "state", "list")
    ids = {line.split()[0]: line.split("declarationId=")[1].split()[0] for line in out.splitlines()}

    rows.write_text("ref,weight\nBBB-0002,200\nCCC-0003,300\n")  # AAA's row deleted
    code, out, err = run(capsys, "results", "--format", "json")
    assert code == 0, err
    by_row = {r["row"]: r for r in json.loads(out)["rows"]}
    for row, other in ((2, "dep-3"), (3, "dep-4")):
        assert by_row[row]["status"] == "needs-decision"
        assert by_row[row]["documents"][0]["ids"] == {}
        assert (
            f"DepartureDeclaration/{other} ({ids['DepartureDeclaration/' + other]}"
            in (by_row[row]["errors"][0])
        )

    code, out, _ = run(capsys, "status", "--format", "json")
    places = {d["address"]: d["row"] for d in json.loads(out)["declarations"]}
    # Each record under the row that declares it; the deleted row's under none.
    assert places == {
        "DepartureDeclaration/dep-2": None,
        "DepartureDeclaration/dep-3": 2,
        "DepartureDeclaration/dep-4": 3,
    }


def test_the_last_row_of_a_sheet_whose_rows_moved_down_is_not_shown_never_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by an outside probe: a row inserted at the top of a sheet named by row number
    gives the last row a name nothing is recorded under, while what it declares is the
    record of the name above it. results showed that row `not-applied`, as if never sent
    (plan refuses it rightly); it is `needs-decision`, naming the record, as the other
    rows whose names moved."""
    (tmp_path / "manifests").mkdir()
    (tmp_path / "data").mkdir()
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    (tmp_path / "manifests" / "deps.yaml").write_text(_ROWS_BY_NUMBER)
    rows = tmp_path / "data" / "deps.csv"
    rows.write_text("ref,weight\nAAA-0001,100\nBBB-0002,200\n")
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    code, out, _ = run(capsys, "state", "list")
    ids = {line.split()[0]: line.split("declarationId=")[1].split()[0] for line in out.splitlines()}

    rows.write_text("ref,weight\nNEW-0000,50\nAAA-0001,100\nBBB-0002,200\n")
    code, out, err = run(capsys, "results", "--format", "json")
    assert code == 0, err
    by_row = {r["row"]: r for r in json.loads(out)["rows"]}
    assert [by_row[n]["status"] for n in (2, 3, 4)] == ["needs-decision"] * 3
    last = by_row[4]
    assert last["documents"][0]["ids"] == {}
    assert (
        f"recorded as DepartureDeclaration/dep-3 ({ids['DepartureDeclaration/dep-3']} at the "
        "service), a name another row has now"
    ) in last["errors"][0]

    # A second movement asking what the one above it asks is not that one moved.
    (tmp_path / "manifests" / "deps.yaml").unlink()
    (tmp_path / "manifests" / "m.yaml").write_text(
        "apiVersion: customs-batch/v1\nkind: Movement\nforEach: {file: ../data/m.csv}\n"
        'metadata: {name: "mov-{{ row_number }}"}\n'
        "spec: {shipmentId: shp_7Hk2Lm, hawbId: hawb_a1, action: USL, "
        'quantity: "{{ row.qty }}", grossWeightKg: 10.0, customsSupervision: Y, '
        "goodsHandlingCode: N, partyId: rpty_p1}\n"
    )
    (tmp_path / "data" / "m.csv").write_text("qty\n1\n")
    assert run(capsys, "apply", "--auto-approve", "--allow-large-change")[0] == 0
    (tmp_path / "data" / "m.csv").write_text("qty\n1\n1\n")
    code, out, err = run(capsys, "results", "--format", "json")
    assert code == 0, err
    by_row = {r["row"]: r for r in json.loads(out)["rows"]}
    assert [by_row[n]["status"] for n in (2, 3)] == ["done", "not-applied"]


_ROWS_BY_NAME = _ROWS_BY_NUMBER.replace('"dep-{{ row_number }}"', '"dep-{{ row.name }}"') + (
    "---\n"
    "apiVersion: customs-batch/v1\n"
    "kind: TransitPartyUpdate\n"
    "forEach: {file: ../data/deps.csv}\n"
    'metadata: {name: "pu-{{ row.name }}"}\n'
    "spec:\n"
    '  declarationId: "${ref:DepartureDeclaration/dep-{{ row.name }}.declarationId}"\n'
    "  variant: departure\n"
    "  Consignee: {eoriNo: DE123456789012345}\n"
)


def test_a_row_renamed_since_the_last_apply_keeps_its_declaration_in_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by an outside probe: a row's name column edited after apply (plan: `moved`,
    nothing to send) was `not-applied` with no IDs in results, as if never sent, while the
    service held its declaration; status listed that record under no row."""
    (tmp_path / "manifests").mkdir()
    (tmp_path / "data").mkdir()
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    (tmp_path / "manifests" / "deps.yaml").write_text(_ROWS_BY_NAME)
    rows = tmp_path / "data" / "deps.csv"
    rows.write_text("name,ref,weight\nalpha,AAA-0001,100\nbeta,BBB-0002,200\n")
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    code, out, _ = run(capsys, "state", "list")
    ids = {line.split()[0]: line.split("declarationId=")[1].split()[0] for line in out.splitlines()}
    beta = ids["DepartureDeclaration/dep-beta"]

    rows.write_text("name,ref,weight\nalpha,AAA-0001,100\nbeta2,BBB-0002,200\n")
    code, out, err = run(capsys, "plan")
    assert code == 0 and "2 moved" in out, out + err
    code, out, err = run(capsys, "results", "--format", "json")
    assert code == 0, err
    by_row = {r["row"]: r for r in json.loads(out)["rows"]}
    renamed = by_row[3]
    assert renamed["status"] == by_row[2]["status"] != "not-applied", renamed
    departure, update = renamed["documents"]
    assert departure["address"] == "DepartureDeclaration/dep-beta2"
    assert str(departure["ids"]["declarationId"]) == beta
    assert str(update["ids"]["declarationId"]) == beta
    assert "recorded as DepartureDeclaration/dep-beta, a name no document has" in " ".join(
        renamed["errors"]
    )

    code, out, _ = run(capsys, "status", "--format", "json")
    places = {d["address"]: d["row"] for d in json.loads(out)["declarations"]}
    assert places["DepartureDeclaration/dep-beta"] == 3

    # Applied, the record is under the new name, as before.
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    code, out, err = run(capsys, "results", "--format", "json")
    renamed = {r["row"]: r for r in json.loads(out)["rows"]}[3]
    assert str(renamed["documents"][0]["ids"]["declarationId"]) == beta
    assert renamed["errors"] == []


def test_a_movement_row_whose_name_moved_is_not_given_the_movement_of_another_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same for movements, named by their row number, known by their request: the
    row of 2 packages was shown done as the movement of 1 package."""
    (tmp_path / "manifests").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "manifests" / "m.yaml").write_text(
        "apiVersion: customs-batch/v1\nkind: Movement\nforEach: {file: ../data/m.csv}\n"
        'metadata: {name: "mov-{{ row_number }}"}\n'
        "spec: {shipmentId: shp_7Hk2Lm, hawbId: hawb_a1, action: ISL, "
        'quantity: "{{ row.qty }}", grossWeightKg: 10.0, customsSupervision: Y, '
        "goodsHandlingCode: N, partyId: rpty_p1}\n"
    )
    rows = tmp_path / "data" / "m.csv"
    rows.write_text("qty\n1\n2\n3\n")
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    rows.write_text("qty\n2\n3\n")  # the first row deleted

    code, out, err = run(capsys, "results", "--format", "json")
    assert code == 0, err
    by_row = {r["row"]: r for r in json.loads(out)["rows"]}
    assert [by_row[n]["status"] for n in (2, 3)] == ["needs-decision", "needs-decision"]
    assert by_row[2]["documents"][0]["ids"] == {}
    assert "recorded as Movement/mov-3 (mov_00000002 at the service)" in by_row[2]["errors"][0]


def test_a_sheet_using_its_last_column_gets_no_result_columns_past_xfd(
    sheets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by an outside probe: a sheet with a column named in XFD, the last a spreadsheet
    # has, got its result columns in XFE to XFM, which Excel drops when it repairs the file.
    book = openpyxl.load_workbook(sheets / "data" / "movements.xlsx")
    book["Movements"].cell(2, 16_384, "Spare")
    book.save(sheets / "data" / "movements.xlsx")

    code, out, err = run(capsys, "results", "--annotate", "out")
    assert code == 3, out + err
    assert "data/movements.xlsx, sheet 'Movements' uses every column up to XFD" in err
    assert "the 9 result columns" in err
    assert not (sheets / "out" / "data" / "movements.xlsx").exists()


def test_rows_left_out_by_for_each_rows_keep_their_place_below_the_header(
    sheets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by an outside probe: with `rows: 6-7`, the copy took data row 4 (the last row
    # with values above row 6) for the header: "Result", "Document", ... were written on
    # that row as if they were its outcome, the panes frozen below it, and rows 3 and 4,
    # which the manifest read nothing of, were not marked.
    manifest = sheets / "manifests" / "movements-sheet.yaml"
    manifest.write_text(manifest.read_text().replace("header: 2}", "header: 2, rows: 6-7}"))

    code, out, err = run(capsys, "results", "--annotate", "out")
    assert code == 0, out + err
    sheet = openpyxl.load_workbook("out/data/movements.xlsx")["Movements"]
    assert sheet.cell(2, 13).value == "Result" and sheet.freeze_panes == "A3"
    assert [sheet.cell(n, 13).value for n in (3, 4, 5, 6, 7)] == [
        "no-document",
        "no-document",
        None,
        "not-applied",
        "not-applied",
    ]


def test_the_totals_row_of_an_excel_table_is_no_row_of_the_results(
    sheets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by an outside probe: the totals row of a table was read as a data row (a
    # movement for HAWB "Total"); left out by the reader now, the results copy must not
    # mark it as a row the manifests made nothing of either.
    book = openpyxl.load_workbook(sheets / "data" / "movements.xlsx")
    sheet = book["Movements"]
    sheet["B8"] = "Total"
    sheet["D8"] = "=SUBTOTAL(109,Moves[Packages])"
    sheet.add_table(Table(displayName="Moves", ref="A2:L8", totalsRowCount=1))
    book.save(sheets / "data" / "movements.xlsx")

    code, out, err = run(capsys, "results", "--annotate", "out")
    assert code == 0, out + err
    assert "row 8" not in out
    copy = openpyxl.load_workbook("out/data/movements.xlsx")["Movements"]
    assert [copy.cell(n, 13).value for n in (3, 4, 5, 6, 7, 8)] == [
        "not-applied",
        "not-applied",
        None,
        "not-applied",
        "not-applied",
        None,
    ]


def test_a_copy_larger_than_its_bound_is_refused_before_it_is_built(
    sheets: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found by an outside probe: the copy is built in memory, about 0.4 KB a cell, with no
    # bound: a CSV export of 950,000 rows (86 MB, within every limit of the reader) took
    # results --annotate past 6 GB and 15 minutes. CUSTOMS_BATCH_MAX_COPY_CELLS bounds it.
    monkeypatch.setenv("CUSTOMS_BATCH_MAX_COPY_CELLS", "60")
    code, out, err = run(capsys, "results", "--annotate", "out")
    assert code == 3, out + err  # the workbook's 85 cells are over 60; the CSV's 51 not
    assert "data/movements.xlsx is too large to copy: its sheets span 85 cells, over the 60" in err
    assert "CUSTOMS_BATCH_MAX_COPY_CELLS=<cells>" in err
    assert (sheets / "out" / "data" / "departures.csv.xlsx").exists()
    assert not (sheets / "out" / "data" / "movements.xlsx").exists()

    monkeypatch.setenv("CUSTOMS_BATCH_MAX_COPY_CELLS", "40")
    code, out, err = run(capsys, "results", "--annotate", "out2")
    assert code == 3, out + err
    assert "data/departures.csv is too large to copy: its first 3 rows hold 51 cells" in err
    assert not (sheets / "out2" / "data" / "departures.csv.xlsx").exists()


def test_the_copies_of_a_csv_read_it_with_the_encoding_and_delimiter_of_its_for_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found probing: a cp1250 file separated by `|`, which forEach says, was copied as
    the copy's own detection read it (Windows-1252, ','): `Łódź` (bytes a3 f3 64 9f) came
    out `£ódŸ`, and every row was one cell, its outcome beside the text of the whole line."""
    (tmp_path / "manifests").mkdir()
    (tmp_path / "data").mkdir()
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    manifest = _ROWS_BY_NUMBER.replace(
        "forEach: {file: ../data/deps.csv}",
        "forEach: {file: ../data/deps.csv, encoding: cp1250, delimiter: '|', decimalComma: true}",
    ).replace("city: Hamburg", 'city: "{{ row.city }}"')
    (tmp_path / "manifests" / "deps.yaml").write_text(manifest)
    text = "ref|weight|city\nAAA-0001|100,5|Łódź\nBBB-0002|200|Kraków\n"
    (tmp_path / "data" / "deps.csv").write_bytes(text.encode("cp1250"))
    assert run(capsys, "apply", "--auto-approve")[0] == 0

    code, _, err = run(capsys, "results", "--annotate", "out")
    assert code == 0, err
    sheet = openpyxl.load_workbook(tmp_path / "out" / "data" / "deps.csv.xlsx")["deps"]
    assert [cell.value for cell in sheet[2]][:4] == ["AAA-0001", "100,5", "Łódź", "pending"]
    assert [cell.value for cell in sheet[3]][:4] == ["BBB-0002", "200", "Kraków", "pending"]

    (tmp_path / "data" / "deps.csv").write_bytes(
        text.replace("200|", "heavy|").encode("cp1250")  # an error at BBB's weight
    )
    code, _, err = run(capsys, "validate", "--annotate", "checked")
    sheet = openpyxl.load_workbook(tmp_path / "checked" / "data" / "deps.csv.xlsx")["deps"]
    assert [cell.value for cell in sheet[3]][:3] == ["BBB-0002", "heavy", "Kraków"]
    assert sheet["B3"].comment is not None


def _many_rows(count: int) -> ResultsResult:
    status = ResultStatus.NOT_APPLIED
    rows = tuple(
        RowResult(
            f"data/{number // 400}.csv",
            "s",
            number + 2,
            (DocumentResult(f"DepartureDeclaration/d{number}", status),) if number % 3 else (),
            ("a problem: run `customs-batch validate`",) if number % 7 == 0 else (),
        )
        for number in range(count)
    )
    return ResultsResult("local", rows)


@pytest.mark.parametrize("count", [0, 1, ROWS_A_PIECE, 3 * ROWS_A_PIECE + 5])
def test_results_are_written_a_few_rows_at_a_time_as_they_were_whole(count: int) -> None:
    # The report of 100,000 rows was built whole (and json's as a second copy of the rows)
    # before a byte was written; now a piece at a time, each of at most ROWS_A_PIECE rows.
    result = _many_rows(count)
    text = list(RESULTS_FORMATS.get("text")(result))
    assert len(text) == -(-count // ROWS_A_PIECE)
    assert all(piece.endswith("\n") for piece in text)
    assert all(piece.count("  row ") <= ROWS_A_PIECE for piece in text)
    json_pieces = list(RESULTS_FORMATS.get("json")(result))
    assert len(json_pieces) == max(1, -(-count // ROWS_A_PIECE) + (count % ROWS_A_PIECE == 0))
    body = json.loads("".join(json_pieces))
    whole = json.dumps(body, indent=2, sort_keys=True) + "\n"
    assert "".join(json_pieces) == whole
    assert body["rows"] == [row.to_json() for row in result.rows]
