"""The analyst's loop, end to end: the examples' spreadsheets bulk loaded into a real
``sandbox serve``, which refuses a movement (a party the shipment does not have), whose
customs reject a departure (a reference starting INVALID), and which, restarted with an
injected fault, drops the connection of a later row's submission; the results come back
into copies of the spreadsheets, and every row of them is checked."""

from __future__ import annotations

import hashlib
import shutil
import stat
import zipfile
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from customs_batch.execution.results import Outcome
from customs_batch.reports.results_workbook import FILLS, RESULT_COLUMNS
from tests.e2e.conftest import EXAMPLES, Project, Sandbox, assert_secret_nowhere
from tests.e2e.gate import GatedProxy

pytestmark = pytest.mark.e2e

SHEET_CODE = "AXS-9931-QZ"
TEMPLATE_CODE = "TPL-4471-QZ"
"""Guarantee access codes, a sheet's and the template's: distinctive, so finding one is a
leak."""
DEPARTURES = "data/departures.csv"
MOVEMENTS = "data/movements.xlsx"
MRN = "26NLR0000000042028"
RED, YELLOW, GREEN = FILLS[Outcome.FAILED], FILLS[Outcome.WAITING], FILLS[Outcome.DONE]
PROCESSING_SECONDS = 2
"""Customs' processing time, on the emulator's manual clock: the departures stay pending
until the test moves it."""


def _spreadsheet_project(project: Project) -> None:
    """The spreadsheet examples: departures with an access-code column and a fourth row
    customs will reject; movements whose first row names a party the service refuses."""
    root = project.root
    (root / "manifests").mkdir()
    for name in ("departures-sheet.yaml", "movements-sheet.yaml"):
        shutil.copy(EXAMPLES / "manifests" / name, root / "manifests" / name)
    shutil.copytree(EXAMPLES / "templates", root / "templates")
    shutil.copytree(EXAMPLES / "data", root / "data")
    project.edit(
        "templates/rotterdam-export.yaml.j2", 'accessCode: "1234"', f'accessCode: "{TEMPLATE_CODE}"'
    )
    manifest = root / "manifests" / "departures-sheet.yaml"
    manifest.write_text(
        manifest.read_text()
        + "  DeclarationGuarantees:\n"
        + '    - guaranteeType: "1"\n'
        + "      guaranteeReferenceNumber: 24NL0000000000017\n"
        + "      guaranteeAmount: 5000\n"
        + "      currencyCode: EUR\n"
        + "      accessCode: \"{{ row['Access code'] }}\"\n"
    )
    csv_path = root / DEPARTURES
    header, *records = csv_path.read_bytes().rstrip(b"\r\n").split(b"\r\n")
    records.append(records[-1].replace(b"ACME-2026-0102", b"INVALID-2026-0103"))
    lines = [header + b";Access code", *(r + f";{SHEET_CODE}".encode() for r in records)]
    csv_path.write_bytes(b"\r\n".join(lines) + b"\r\n")
    book = openpyxl.load_workbook(root / MOVEMENTS)
    book["Movements"]["F3"] = "rpty_nobody"
    book.save(root / MOVEMENTS)


def _add_departure_row(
    project: Project, reference: bytes, old: bytes = b"", new: bytes = b""
) -> None:
    """A row after the others, like the INVALID one but for its reference (and ``old``
    replaced by ``new``)."""
    csv_path = project.root / DEPARTURES
    data = csv_path.read_bytes()
    last = data.rstrip(b"\r\n").split(b"\r\n")[3]  # row 4, the INVALID one
    row = last.replace(b"INVALID-2026-0103", reference).replace(old, new)
    csv_path.write_bytes(data + row + b"\r\n")


def _decide_and_refresh(project: Project) -> dict[str, dict[str, Any]]:
    """Move the emulator's manual clock past the processing time, so customs decides every
    departure, and ``refresh`` once; the records then, none of them processing."""
    project.sandbox.advance_clock(PROCESSING_SECONDS)
    assert project.run("refresh").returncode == 0
    records = project.state()
    assert all(r.get("remoteStatus") != "processing" for r in records.values()), records
    return records


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fill(cell: Any) -> str | None:
    if cell.fill is None or cell.fill.fill_type != "solid":
        return None
    return str(cell.fill.fgColor.rgb)[-6:]


def _results(sheet: Any, first: int, number: int) -> list[Any]:
    return [sheet.cell(number, first + i).value for i in range(len(RESULT_COLUMNS))]


def _check_rows(sheet: Any, first: int, expected: dict[int, dict[str, Any]], header: int) -> None:
    """Every row of ``sheet``: the header's result columns, and for each row exactly the
    expected result cells and fill (none for a row not expected: a title, a blank row)."""
    assert sheet.freeze_panes == f"A{header + 1}"
    assert _results(sheet, first, header) == list(RESULT_COLUMNS)
    for number in range(1, sheet.max_row + 1):
        if number == header:
            continue
        cells = dict(zip(RESULT_COLUMNS, _results(sheet, first, number), strict=True))
        want = expected.get(number)
        if want is None:
            assert set(cells.values()) == {None}, (sheet.title, number, cells)
            continue
        for column, value in want.items():
            if column == "fill":
                fills = {_fill(sheet.cell(number, first + i)) for i in range(len(RESULT_COLUMNS))}
                assert fills == {value}, (sheet.title, number)
            elif column == "Errors contain":
                assert value in str(cells["Errors"]), (sheet.title, number, cells)
            else:
                assert cells[column] == value, (sheet.title, number, column, cells)
    assert set(expected) <= set(range(1, sheet.max_row + 1))


def _check_summary(book: Any, sheet_name: str, expected: dict[int, dict[str, Any]]) -> None:
    summary = book["Summary"]
    assert book.sheetnames[0] == "Summary" and book.active.title == "Summary"
    statuses = [want["Result"] for want in expected.values()]
    counted = {}
    number = 2
    while summary.cell(number, 1).value != "Total":
        counted[summary.cell(number, 1).value] = summary.cell(number, 2).value
        number += 1
    assert counted == {status: statuses.count(status) for status in set(statuses)}
    assert summary.cell(number, 2).value == len(expected)
    listed = {}
    for row in range(number + 3, summary.max_row + 1):
        link = summary.cell(row, 3)
        assert link.hyperlink is not None
        listed[link.value] = (summary.cell(row, 1).value, link.hyperlink.location)
    assert listed == {
        row: (want["Result"], f"'{sheet_name}'!A{row}") for row, want in expected.items()
    }


def test_every_row_of_the_results_workbooks(tmp_path: Path, sandbox: Sandbox) -> None:
    sandbox.start(processing_seconds=PROCESSING_SECONDS)
    project = Project(tmp_path / "project", sandbox, parallelism=2)
    _spreadsheet_project(project)

    applied = project.run("apply", "--auto-approve", "--annotate-results", "first")
    assert applied.returncode == 1, applied.stdout + applied.stderr
    assert "wrote first/data/departures.csv.xlsx (3 pending)" in applied.stderr
    first = openpyxl.load_workbook(project.root / "first/data/departures.csv.xlsx")["departures"]
    for number in (2, 3, 4):  # submitted, not decided yet: yellow
        assert first.cell(number, 19).value == "pending"
        assert first.cell(number, 25).value == "processing"
        assert _fill(first.cell(number, 19)) == YELLOW

    _decide_and_refresh(project)
    # Row 5 is submitted, and its connection closed while the request waits at a gate (the
    # service never hears of it): its outcome is unknown (a departure is never sent again
    # blindly). apply's reads before it pass the gate.
    _add_departure_row(project, b"ACME-2026-0105")
    with GatedProxy(sandbox.url, hold=1) as gate:
        project.edit("customs-batch.yaml", sandbox.url, gate.url)
        run = project.start(
            "apply", "--auto-approve", "--target", "DepartureDeclaration/dep-sheet-acme-2026-0105"
        )
        assert gate.held.wait(timeout=60), "the apply never sent the submission"
        gate.drop()
        code, out, err = run.finish()
    assert code != 0, out + err
    project.write_config()
    records = project.state()
    assert records["DepartureDeclaration/dep-sheet-acme-2026-0105"]["status"] == "unknown"
    # Then a row not applied yet (6), and a row whose quantity is no number (7).
    _add_departure_row(project, b"ACME-2026-0106")
    _add_departure_row(project, b"ACME-2026-0107", b";100;4;", b";hundert;4;")
    originals = {name: _digest(project.root / name) for name in (DEPARTURES, MOVEMENTS)}

    done = project.run("results", "--annotate", "results")
    assert done.returncode == 0, done.stderr
    assert {name: _digest(project.root / name) for name in originals} == originals

    declarations = {
        address: record["outputs"].get("declarationId")
        for address, record in records.items()
        if address.startswith("DepartureDeclaration/")
    }
    movement_ids = {m["movementId"] for m in sandbox.movements()}
    moved = {
        a: r["outputs"]["movementId"] for a, r in records.items() if "movementId" in r["outputs"]
    }
    assert set(moved.values()) == movement_ids and len(moved) == 2

    def departure(name: str, result: str, fill: str, **more: Any) -> dict[str, Any]:
        address = f"DepartureDeclaration/dep-sheet-{name}"
        ident = declarations.get(address)
        return {
            "Result": result,
            "Document": address,
            "Declaration ID": ident,
            "fill": fill,
            **more,
        }

    expected_departures = {
        2: departure("acme-2026-0101", "done", GREEN, **{"Service state": "ready", "Errors": None}),
        3: departure("acme-2026-0102", "done", GREEN, **{"Service state": "ready"}),
        4: departure(
            "invalid-2026-0103",
            "rejected",
            RED,
            **{"Service state": "invalid", "Errors contain": "SANDBOX_INVALID_REFERENCE"},
        ),
        5: departure(
            "acme-2026-0105",
            "needs-decision",
            YELLOW,
            **{"Errors contain": "the outcome of the last request is unknown"},
        ),
        6: departure("acme-2026-0106", "not-applied", YELLOW, **{"Recorded at": None}),
        7: {
            "Result": "no-document",
            "Document": None,
            "fill": RED,
            "Errors contain": "[row.cell-type] (column N Quantity)",
        },
    }
    book = openpyxl.load_workbook(project.root / "results/data/departures.csv.xlsx")
    sheet = book["departures"]
    _check_rows(sheet, 19, expected_departures, header=1)
    access = next(c.column for c in sheet[1] if c.value == "Access code")
    assert all(sheet.cell(n, access).value is None for n in range(2, 8))
    assert sheet.cell(4, 1).value == "INVALID-2026-0103" and sheet.cell(2, 4).value == "48,5"
    assert all(sheet.cell(n, 27).value for n in (2, 3, 4))  # when: recorded
    _check_summary(book, "departures", expected_departures)

    def movement(name: str, result: str, fill: str, **more: Any) -> dict[str, Any]:
        address = f"Movement/sheet-{name}"
        return {
            "Result": result,
            "Document": address,
            "Movement ID": moved.get(address),
            "fill": fill,
            **more,
        }

    expected_movements = {
        3: movement(
            "hawb_a2-vah-3",
            "rejected",
            RED,
            MRN=MRN,
            **{"Errors contain": "partyId: rpty_nobody is not a party of shipment shp_7Hk2Lm"},
        ),
        4: movement(
            "hawb_a2-isl-4",
            "skipped",
            RED,
            **{"Errors": "not sent: it depends on Movement/sheet-hawb_a2-vah-3, which is rejected"},
        ),
        6: movement("hawb_b1-isl-6", "done", GREEN, **{"Service state": "QUEUED"}),
        7: movement("hawb_b1-isc-7", "done", GREEN, MRN=None),
    }
    book = openpyxl.load_workbook(project.root / "results/data/movements.xlsx")
    assert book.sheetnames == ["Summary", "Movements", "Notes"]
    sheet = book["Movements"]
    _check_rows(sheet, 13, expected_movements, header=2)
    assert sheet.cell(1, 1).value == "RTO movements, export of 2026-03-02"
    _check_summary(book, "Movements", expected_movements)

    for copy in (project.root / "results" / "data").iterdir():
        assert stat.S_IMODE(copy.stat().st_mode) == 0o600, copy
        with zipfile.ZipFile(copy) as parts:
            for part in parts.namelist():
                body = parts.read(part)
                assert SHEET_CODE.encode() not in body and TEMPLATE_CODE.encode() not in body
    assert_secret_nowhere(project)
