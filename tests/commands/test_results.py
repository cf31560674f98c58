"""results as a function: every spreadsheet row joined with its document's record, and the
results written into copies of the spreadsheets (``results --annotate``)."""

from __future__ import annotations

import hashlib
import shutil
import stat
import zipfile
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from customs_batch.commands import Inputs
from customs_batch.commands.results import ResultsOptions, ResultsResult, collect_results
from customs_batch.errors import CustomsBatchError
from customs_batch.execution.results import Outcome, ResultStatus, RowResult
from customs_batch.kinds.model import ServiceId
from customs_batch.reports.results_workbook import FILLS, RESULT_COLUMNS, UNREAD_ROW
from customs_batch.state.model import RecordStatus, ResourceRecord, ServiceFailure

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEPARTURES = "data/departures.csv"
MOVEMENTS = "data/movements.xlsx"
ACCESS_CODE = "AXS-9931-QZ"
"""A guarantee access code a sheet column gives: distinctive, so finding it is a leak."""
WHEN = "2026-03-02T10:00:00.000Z"
MRN = "26NLR0000000042028"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The spreadsheet examples alone: their manifests, template and data, and the
    departures sheet with a column that gives the guarantee's access code."""
    (tmp_path / "manifests").mkdir()
    for name in ("departures-sheet.yaml", "movements-sheet.yaml"):
        shutil.copy(EXAMPLES / "manifests" / name, tmp_path / "manifests" / name)
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    shutil.copytree(EXAMPLES / "data", tmp_path / "data")
    shutil.copy(EXAMPLES / "customs-batch.yaml", tmp_path / "customs-batch.yaml")
    _add_access_code_column(tmp_path)
    return tmp_path


def _add_access_code_column(project: Path) -> None:
    csv_path = project / DEPARTURES
    # CRLF ends a record; the first record's Goods holds a line break of its own (LF).
    header, *records = csv_path.read_bytes().rstrip(b"\r\n").split(b"\r\n")
    out = [header + b";Access code", *(record + f";{ACCESS_CODE}".encode() for record in records)]
    csv_path.write_bytes(b"\r\n".join(out) + b"\r\n")
    manifest = project / "manifests" / "departures-sheet.yaml"
    manifest.write_text(
        manifest.read_text()
        + "  DeclarationGuarantees:\n"
        + '    - guaranteeType: "1"\n'
        + "      guaranteeReferenceNumber: 24NL0000000000017\n"
        + "      guaranteeAmount: 5000\n"
        + "      currencyCode: EUR\n"
        + "      accessCode: \"{{ row['Access code'] }}\"\n"
    )


def _record(address: str, status: RecordStatus, **fields: Any) -> ResourceRecord:
    spec = fields.pop("spec", {})
    return ResourceRecord(address, status, "create", spec, updated_at=WHEN, **fields)


def _write_state(*records: ResourceRecord) -> None:
    inputs = Inputs()
    backend = inputs.backend(inputs.chosen_environment())
    with backend.open("test") as session:
        for record in records:
            session.record(record)


def _applied_state() -> None:
    """Departure row 2 still processing, row 3 rejected by customs; movement row 3 refused
    (so row 4, after it on the same HAWB, was skipped), row 6 done, row 7's outcome
    unknown."""
    _write_state(
        _record(
            "DepartureDeclaration/dep-sheet-acme-2026-0101",
            RecordStatus.APPLIED,
            outputs={"declarationId": 7003, "status": "processing"},
            remote_status="processing",
        ),
        _record(
            "DepartureDeclaration/dep-sheet-acme-2026-0102",
            RecordStatus.APPLIED,
            outputs={"declarationId": 7004, "status": "invalid"},
            remote_status="invalid",
            remote_errors=({"code": "BAD_OFFICE", "field": "destinationOffice", "message": "no"},),
        ),
        _record(
            "Movement/sheet-hawb_a2-vah-3",
            RecordStatus.FAILED,
            spec={"customsDeclaration": {"declarationNumber": MRN}},
            error=ServiceFailure(400, "partyId: rpty_p2 is not a party of shipment shp_7Hk2Lm"),
        ),
        _record(
            "Movement/sheet-hawb_b1-isl-6",
            RecordStatus.APPLIED,
            outputs={"movementId": "mov_00000001", "status": "QUEUED"},
        ),
        _record("Movement/sheet-hawb_b1-isc-7", RecordStatus.UNKNOWN),
    )


def _rows(result: ResultsResult) -> dict[tuple[str, int], RowResult]:
    return {(row.file, row.row): row for row in result.rows}


def test_every_row_says_where_its_document_stands(project: Path) -> None:
    _applied_state()
    result = collect_results(ResultsOptions())
    rows = _rows(result)
    assert sorted(rows) == [
        (DEPARTURES, 2),
        (DEPARTURES, 3),
        *((MOVEMENTS, n) for n in (3, 4, 6, 7)),
    ]
    assert {key: row.status for key, row in rows.items()} == {
        (DEPARTURES, 2): ResultStatus.PENDING,
        (DEPARTURES, 3): ResultStatus.REJECTED,
        (MOVEMENTS, 3): ResultStatus.REJECTED,
        (MOVEMENTS, 4): ResultStatus.SKIPPED,
        (MOVEMENTS, 6): ResultStatus.DONE,
        (MOVEMENTS, 7): ResultStatus.NEEDS_DECISION,
    }
    assert rows[DEPARTURES, 2].ids(ServiceId.DECLARATION) == (7003,)
    assert rows[DEPARTURES, 2].documents[0].service_state == "processing"
    assert rows[DEPARTURES, 3].errors == ("BAD_OFFICE destinationOffice: no",)
    assert rows[DEPARTURES, 3].at == WHEN
    assert rows[MOVEMENTS, 3].ids(ServiceId.MRN) == (MRN,)
    assert rows[MOVEMENTS, 3].errors == ("partyId: rpty_p2 is not a party of shipment shp_7Hk2Lm",)
    assert rows[MOVEMENTS, 4].errors == (
        "not sent: it depends on Movement/sheet-hawb_a2-vah-3, which is rejected",
    )
    assert rows[MOVEMENTS, 6].ids(ServiceId.MOVEMENT) == ("mov_00000001",)
    assert rows[MOVEMENTS, 4].sheet == "Movements" and rows[DEPARTURES, 2].sheet == "departures"
    assert result.manifest_errors == 0
    assert result.counts() == {
        ResultStatus.REJECTED: 2,
        ResultStatus.SKIPPED: 1,
        ResultStatus.NEEDS_DECISION: 1,
        ResultStatus.PENDING: 1,
        ResultStatus.DONE: 1,
    }
    assert ACCESS_CODE not in repr(result) and ACCESS_CODE not in str(
        [row.to_json() for row in result.rows]
    )


def test_rows_without_a_document_new_rows_and_rows_left_out_say_so(project: Path) -> None:
    csv_path = project / DEPARTURES
    data = csv_path.read_bytes()
    last = data.rstrip(b"\r\n").split(b"\r\n")[-1]
    bad = last.replace(b"ACME-2026-0102", b"ACME-2026-0104").replace(b";100;4;", b";hundert;4;")
    csv_path.write_bytes(data + last.replace(b"0102", b"0103") + b"\r\n" + bad + b"\r\n")
    _applied_state()

    options = ResultsOptions(Inputs(excluded=("Movement/sheet-hawb_b1-isl-6",)))
    rows = _rows(collect_results(options))

    assert rows[DEPARTURES, 4].status is ResultStatus.NOT_APPLIED
    assert rows[DEPARTURES, 5].status is ResultStatus.NO_DOCUMENT
    assert rows[DEPARTURES, 5].documents == ()
    (problem,) = rows[DEPARTURES, 5].errors
    assert problem.startswith("[row.cell-type] (column N Quantity)") and "hundert" in problem
    # Left out with what depends on it: a recorded row keeps its record's status.
    assert rows[MOVEMENTS, 6].status is ResultStatus.DONE
    assert rows[MOVEMENTS, 7].status is ResultStatus.NEEDS_DECISION

    chosen = Inputs(paths=(Path("manifests"),), targets=("Movement/sheet-hawb_b1-isc-7",))
    statuses = {k: row.status for k, row in _rows(collect_results(ResultsOptions(chosen))).items()}
    assert statuses[DEPARTURES, 4] is ResultStatus.NOT_SELECTED
    assert statuses[DEPARTURES, 2] is ResultStatus.PENDING
    assert statuses[MOVEMENTS, 7] is ResultStatus.NEEDS_DECISION


def _fill(cell: Any) -> str | None:
    if cell.fill is None or cell.fill.fill_type != "solid":
        return None
    return str(cell.fill.fgColor.rgb)[-6:]


def _link(cell: Any) -> str:
    assert cell.hyperlink is not None, cell.coordinate
    return str(cell.hyperlink.location)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_annotate_writes_a_results_copy_of_every_spreadsheet(project: Path) -> None:
    _applied_state()
    originals = {name: _digest(project / name) for name in (DEPARTURES, MOVEMENTS)}

    result = collect_results(ResultsOptions(annotate=Path("results")))

    assert [(f.source, f.written) for f in result.written] == [
        (DEPARTURES, Path("results/data/departures.csv.xlsx")),
        (MOVEMENTS, Path("results/data/movements.xlsx")),
    ]
    assert {name: _digest(project / name) for name in originals} == originals
    for file in result.written:
        assert stat.S_IMODE(file.written.stat().st_mode) == 0o600
        with zipfile.ZipFile(file.written) as parts:
            for name in parts.namelist():
                assert ACCESS_CODE.encode() not in parts.read(name), name

    book = openpyxl.load_workbook("results/data/movements.xlsx")
    assert book.sheetnames == ["Summary", "Movements", "Notes"]
    sheet = book["Movements"]
    assert sheet.freeze_panes == "A3"
    first = 13  # after the twelve columns of the export
    assert [sheet.cell(2, first + i).value for i in range(len(RESULT_COLUMNS))] == list(
        RESULT_COLUMNS
    )
    assert all(sheet.cell(2, first + i).font.bold for i in range(len(RESULT_COLUMNS)))
    assert sheet.cell(1, first).value is None  # the title row is left alone
    assert sheet.cell(5, first).value is None  # a blank row stays blank
    expected = {
        3: ("rejected", FILLS[Outcome.FAILED]),
        4: ("skipped", FILLS[Outcome.FAILED]),
        6: ("done", FILLS[Outcome.DONE]),
        7: ("needs-decision", FILLS[Outcome.WAITING]),
    }
    for number, (word, colour) in expected.items():
        assert sheet.cell(number, first).value == word
        assert {_fill(sheet.cell(number, first + i)) for i in range(len(RESULT_COLUMNS))} == {
            colour
        }
    assert sheet.cell(3, first + 3).value == MRN
    assert sheet.cell(6, first + 4).value == "mov_00000001"
    assert sheet.cell(6, first + 1).value == "Movement/sheet-hawb_b1-isl-6"

    summary = book["Summary"]
    assert book.active is not None and book.active.title == "Summary"
    counts = {summary.cell(n, 1).value: summary.cell(n, 2).value for n in range(2, 6)}
    assert counts == {"rejected": 1, "skipped": 1, "needs-decision": 1, "done": 1}
    assert summary.cell(6, 1).value == "Total" and summary.cell(6, 2).value == 4
    links = {}
    for number in range(9, summary.max_row + 1):
        cell = summary.cell(number, 3)
        links[cell.value] = (summary.cell(number, 1).value, _link(cell))
    assert links == {
        3: ("rejected", "'Movements'!A3"),
        4: ("skipped", "'Movements'!A4"),
        7: ("needs-decision", "'Movements'!A7"),
        6: ("done", "'Movements'!A6"),
    }
    for number in range(2, 6):  # each count links to its first row in the list
        row = int(_link(summary.cell(number, 2)).rsplit("A", 1)[1])
        assert summary.cell(row, 1).value == summary.cell(number, 1).value

    departures = openpyxl.load_workbook("results/data/departures.csv.xlsx")["departures"]
    access = next(c.column for c in departures[1] if c.value == "Access code")
    assert departures.freeze_panes == "A2"
    assert departures.cell(2, access).value is None and departures.cell(3, access).value is None
    assert departures.cell(2, 1).value == "ACME-2026-0101"  # the other cells are kept
    assert departures.cell(2, access + 1).value == "pending"
    assert departures.cell(2, access + 3).value == 7003


def test_a_row_the_manifests_made_nothing_of_is_marked_in_the_copy(project: Path) -> None:
    # A row outside forEach.rows holds values but gives no document.
    manifest = project / "manifests" / "movements-sheet.yaml"
    manifest.write_text(manifest.read_text().replace("header: 2}", "header: 2, rows: 3-6}"))
    _applied_state()
    result = collect_results(ResultsOptions(annotate=Path("out")))
    counts = {f.source: f.counts for f in result.written}
    assert counts[MOVEMENTS][ResultStatus.NO_DOCUMENT] == 1
    sheet = openpyxl.load_workbook("out/data/movements.xlsx")["Movements"]
    assert sheet.cell(7, 13).value == "no-document"
    assert sheet.cell(7, 13 + 7).value == UNREAD_ROW


def test_a_copy_that_would_replace_its_original_is_refused(project: Path) -> None:
    _applied_state()
    before = _digest(project / MOVEMENTS)
    with pytest.raises(CustomsBatchError, match="would replace the file itself") as caught:
        collect_results(ResultsOptions(annotate=Path(".")))
    assert "--annotate annotated/" in (caught.value.hint or "")
    assert _digest(project / MOVEMENTS) == before


def test_a_service_error_stays_text_in_the_copy(project: Path) -> None:
    hostile = '=HYPERLINK("http://x.invalid","click")\x00\x1b[31m'
    _write_state(
        _record(
            "Movement/sheet-hawb_a2-vah-3", RecordStatus.FAILED, error=ServiceFailure(400, hostile)
        )
    )
    collect_results(ResultsOptions(annotate=Path("out")))
    book = openpyxl.load_workbook("out/data/movements.xlsx")
    cell = book["Movements"].cell(3, 13 + 7)
    assert cell.data_type == "s"
    assert cell.value == '=HYPERLINK("http://x.invalid","click")\\x00\\x1b[31m'
    summary = book["Summary"]
    address = "Movement/sheet-hawb_a2-vah-3"
    (row,) = [n for n in range(1, summary.max_row + 1) if summary.cell(n, 4).value == address]
    listed = summary.cell(row, 5)
    assert listed.data_type == "s" and str(listed.value).startswith("=HYPERLINK")


def test_two_spreadsheets_that_would_share_a_copy_are_refused(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = (project / "manifests" / "movements-sheet.yaml").read_text()
    for folder in ("a", "b"):
        (project / "data" / folder).mkdir()
        shutil.copy(project / MOVEMENTS, project / "data" / folder / "movements.xlsx")
        text = manifest.replace("../data/movements.xlsx", f"../data/{folder}/movements.xlsx")
        text = text.replace('name: "sheet-', f'name: "{folder}-')
        (project / "manifests" / f"{folder}.yaml").write_text(text)
    monkeypatch.chdir(project / "manifests")  # the spreadsheets are outside: copied by name

    options = ResultsOptions(Inputs(paths=(Path("a.yaml"), Path("b.yaml"))), annotate=Path("out"))
    with pytest.raises(CustomsBatchError, match=r"would both be copied to out/movements\.xlsx"):
        collect_results(options)
    assert not Path("out").exists()


def test_a_column_read_into_the_access_code_with_other_text_is_emptied_in_the_copy(
    project: Path,
) -> None:
    # Only a cell holding the whole code was found: "AC" + the cell kept the cell.
    manifest = project / "manifests" / "departures-sheet.yaml"
    manifest.write_text(
        manifest.read_text().replace(
            "accessCode: \"{{ row['Access code'] }}\"", "accessCode: \"AC{{ row['Access code'] }}\""
        )
    )
    _applied_state()
    [written, _] = collect_results(ResultsOptions(annotate=Path("results"))).written
    with zipfile.ZipFile(written.written) as parts:
        for name in parts.namelist():
            assert ACCESS_CODE.encode() not in parts.read(name), name
    departures = openpyxl.load_workbook(written.written)["departures"]
    access = next(c.column for c in departures[1] if c.value == "Access code")
    assert departures.cell(2, access).value is None and departures.cell(3, access).value is None
    assert departures.cell(2, 1).value == "ACME-2026-0101"


_MOVEMENTS_CSV = """\
apiVersion: customs-batch/v1
kind: Movement
forEach: {file: data/many.csv}
metadata:
  name: "mov-{{ row_number }}"
spec:
  shipmentId: "{{ row.Shipment }}"
  hawbId: "{{ row.HAWB }}"
  action: ISL
  quantity: 1
  grossWeightKg: 1.5
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: rpty_1
"""


def test_the_rows_kept_for_the_report_take_little_memory_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found probing: results on a CSV of 950,000 rows took 2.6 GB. Each row kept for the
    report had an empty set of 216 bytes twice, an empty dict of IDs and an attribute dict
    of its own; kept rows now share the empty ones and have none."""
    import tracemalloc

    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "many.yaml").write_text(_MOVEMENTS_CSV)
    count = 3000
    (tmp_path / "data" / "many.csv").write_text(
        "Shipment,HAWB\n" + "".join(f"shp_{n % 97:05d},hawb_{n:07d}\n" for n in range(count))
    )
    collect_results(ResultsOptions(Inputs(cache=False)))  # imports and caches warmed
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = collect_results(ResultsOptions(Inputs(cache=False)))
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(result.rows) == count
    first, second = result.rows[:2]
    assert not hasattr(first, "__dict__") and not hasattr(first.documents[0], "__dict__")
    assert first.withheld is second.withheld and first.documents[0].ids is second.documents[0].ids
    assert kept / count < 600, f"{kept / count:.0f} bytes a row"
