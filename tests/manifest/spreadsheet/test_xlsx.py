from __future__ import annotations

import datetime as dt
import tempfile
import tracemalloc
import zipfile
from pathlib import Path

import openpyxl
import pytest
import xlsxwriter
from openpyxl.chart import BarChart, Reference
from openpyxl.worksheet.table import Table

from customs_batch.manifest.spreadsheet import RowSource, SheetError, read_rows
from customs_batch.manifest.spreadsheet.cell_scan import NO_RESULT, CellScan
from customs_batch.manifest.spreadsheet.copy import open_copy
from customs_batch.manifest.spreadsheet.model import MEGABYTE, BadCell, SheetLimits
from customs_batch.manifest.spreadsheet.workbook_check import check_workbook
from tests.manifest.helpers import rewrite_cells
from tests.manifest.spreadsheet.hostile_xlsx import (
    inline_cell,
    missing_shared_string_sheet,
    sheet_xml,
    write_with_shared_strings,
    write_xlsx,
)


def _book(path: Path) -> openpyxl.Workbook:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Movements"
    sheet.append(["hawb", "packages", "weight", "commodity", "date", "stamp"])
    sheet.append(
        ["hawb_a1", 10, 12.5, "03054100", dt.date(2026, 3, 1), dt.datetime(2026, 3, 1, 8, 30)]
    )
    sheet.append([None, None, None, None, None, None])  # a blank row in the middle
    sheet.append(["hawb_a2", 4, 40, "0150", None, None])
    return book


def test_cells_keep_their_types(tmp_path: Path) -> None:
    path = tmp_path / "m.xlsx"
    _book(path).save(path)
    rows = list(read_rows(RowSource(path)))
    assert [row.number for row in rows] == [2, 4]
    first = rows[0].values
    assert first == {
        "hawb": "hawb_a1",
        "packages": 10,
        "weight": 12.5,
        "commodity": "03054100",
        "date": "2026-03-01",
        "stamp": "2026-03-01T08:30:00",
    }
    assert isinstance(first["packages"], int)
    assert rows[1].values["commodity"] == "0150" and rows[1].values["date"] is None


def test_formulas_give_their_cached_values(tmp_path: Path) -> None:
    path = tmp_path / "f.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Sheet1")
    sheet.write_row(0, 0, ["a", "b", "total"])
    sheet.write_row(1, 0, [2, 3])
    sheet.write_formula(1, 2, "=A2+B2", None, 5)
    book.close()
    (row,) = read_rows(RowSource(path))
    assert row.values == {"a": 2, "b": 3, "total": 5}


def test_hidden_sheets_are_reachable_by_name_and_a_missing_one_lists_the_others(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.xlsx"
    book = _book(path)
    hidden = book.create_sheet("Secret")
    hidden.sheet_state = "hidden"
    hidden.append(["code"])
    hidden.append(["X1"])
    book.save(path)
    assert [r.values for r in read_rows(RowSource(path, sheet="Secret"))] == [{"code": "X1"}]
    with pytest.raises(SheetError, match="no sheet 'Nope'") as caught:
        list(read_rows(RowSource(path, sheet="Nope")))
    assert "'Movements', 'Secret'" in str(caught.value)


def test_merged_header_cells_and_a_header_below_a_title(tmp_path: Path) -> None:
    path = tmp_path / "m.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["Export of 2026-03-01"])
    sheet.append(["Reference", "Weight", None])
    sheet.append([None, "gross", "net"])
    sheet.merge_cells("A2:A3")  # "Reference" spans the two header rows
    sheet.append(["R-1", 10, 9])
    book.save(path)
    rows = list(read_rows(RowSource(path, header_row=3)))
    assert [(r.number, r.values) for r in rows] == [
        (4, {"Reference": "R-1", "gross": 10, "net": 9})
    ]


def test_a_header_merged_across_columns_is_named_as_merged(tmp_path: Path) -> None:
    # "Weight" over the value and its unit: reported as appearing in B and C with the hint
    # to name each column, where C1 is empty in the sheet; the merge was never said.
    path = tmp_path / "h.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["Ref", "Weight", None, "Hawb"])
    sheet.merge_cells("B1:C1")
    sheet.append(["a1", 1.5, "kg", "hawb_a1"])
    book.save(path)
    with pytest.raises(SheetError) as raised:
        list(read_rows(RowSource(path)))
    assert raised.value.message == (
        "header 'Weight' appears in columns B and C of row 1: C1 is empty, inside the merged "
        "cells B1:C1, whose name each of their columns takes"
    )
    assert raised.value.hint == (
        "unmerge the cells B1:C1 and give each of their columns a name of its own in row 1"
    )


def test_a_title_merged_above_the_header_names_the_header_row(tmp_path: Path) -> None:
    # A title merged across the columns above the header, the usual export layout, read as
    # the header with `header:` left at 1: the hint said to unmerge the title and give each
    # column a name in row 1, when the names are in row 2 and `header: 2` reads them.
    path = tmp_path / "h.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["RTO movements, export of 2026-03-02"])
    sheet.merge_cells("A1:C1")
    sheet.append(["Ref", "Weight", "Hawb"])
    sheet.append(["a1", 1.5, "hawb_a1"])
    book.save(path)
    with pytest.raises(SheetError) as raised:
        list(read_rows(RowSource(path)))
    assert raised.value.hint == (
        "if row 1 is a title above the column names, say which row holds them with `header:` "
        "in forEach (`header: 2` when they are right below it); else unmerge the cells A1:C1 "
        "and give each of their columns a name of its own in row 1"
    )
    (row,) = read_rows(RowSource(path, header_row=2))
    assert row.values == {"Ref": "a1", "Weight": 1.5, "Hawb": "hawb_a1"}


def test_trailing_empty_rows_and_columns_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "t.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["a", "b"])
    sheet.append([1, 2])
    sheet["F20"].number_format = "0.00"  # formatting far away, no value
    sheet["F20"] = None
    book.save(path)
    assert [r.values for r in read_rows(RowSource(path))] == [{"a": 1, "b": 2}]


def test_the_row_range_limits_the_rows(tmp_path: Path) -> None:
    path = tmp_path / "m.xlsx"
    _book(path).save(path)
    assert [r.number for r in read_rows(RowSource(path, first_row=3, last_row=10))] == [4]


def test_a_file_that_is_not_a_workbook_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.xlsx"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SheetError, match=r"cannot read .* as an XLSX workbook"):
        list(read_rows(RowSource(path)))


@pytest.mark.parametrize(
    ("name", "content", "said", "hint"),
    [
        ("m.xlsx", b"", "the file is empty (0 bytes), not a workbook", "export the sheet again"),
        (
            "m.xlsx",
            b"sep=;\r\nRef;Code\r\na1;G1\r\n",
            "it holds text, not a workbook: a CSV (or tab-separated) export named .xlsx",
            "rename it to .csv",
        ),
        (
            "m.xls",
            "\ufeffRef\tCode\r\na1\tG1\r\n".encode("utf-16-le"),
            "it holds text, not a workbook: a CSV (or tab-separated) export named .xls",
            "rename it to .csv",
        ),
        (
            "m.xls",
            b"<html><body><table><tr><td>Ref</td></tr></table></body></html>",
            "it is an HTML page (a web table) named .xls, not a workbook: many systems export "
            "one so that Excel opens it",
            "save it as .xlsx",
        ),
        (
            "m.xlsx",
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600),
            "it is an Excel 97-2003 workbook (.xls), not the .xlsx its name says",
            "rename it to .xls",
        ),
    ],
)
def test_a_file_named_as_a_workbook_says_what_it_is(
    tmp_path: Path, name: str, content: bytes, said: str, hint: str
) -> None:
    # The reader's words were said: "cannot read m.xlsx as an XLSX workbook (invalid Zip
    # archive: Could not find EOCD)" for an empty file or a CSV export renamed, and "(Cfb
    # error: Invalid OLE (signature \x3c\x68... invalid, not an office document?))" for
    # the HTML page an ERP system saves as .xls, with no word of what to do.
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SheetError) as raised:
        list(read_rows(RowSource(path)))
    assert raised.value.message == f"cannot read {path}: {said}"
    assert hint in (raised.value.hint or "")


def test_an_xlsx_workbook_named_xls_says_to_rename_it(tmp_path: Path) -> None:
    path = tmp_path / "m.xls"
    _book(path).save(path)
    with pytest.raises(SheetError) as raised:
        list(read_rows(RowSource(path)))
    assert raised.value.message.endswith(
        "it is an Excel workbook (.xlsx), not the .xls its name says"
    )


def test_a_cell_naming_a_shared_string_the_workbook_lacks_is_a_clear_error(
    tmp_path: Path,
) -> None:
    path = write_with_shared_strings(tmp_path / "d.xlsx", missing_shared_string_sheet(), ["x"])
    with pytest.raises(
        SheetError, match=r"cannot read .*d\.xlsx: the workbook is damaged"
    ) as caught:
        list(read_rows(RowSource(path)))
    assert caught.value.hint == "open it in Excel and save it again, or export it as CSV"


@pytest.mark.parametrize("held", ["-1", "3.5", " 1 ", "+1"])
def test_a_cell_naming_a_shared_string_by_no_number_is_a_clear_error(
    tmp_path: Path, held: str
) -> None:
    # The reader took such a cell as shared string 0: the header's name, without a word.
    sheet = sheet_xml(
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>'
        f'<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2" t="s"><v>{held}</v></c></row>'
    )
    path = write_with_shared_strings(tmp_path / "d.xlsx", sheet, ["hawb", "name", "h1"])
    with pytest.raises(SheetError) as caught:
        list(read_rows(RowSource(path)))
    assert caught.value.message == (
        f"cannot read {path}: the workbook is damaged (cell B2 of sheet 'Data' names the "
        f"shared string {held!r}, where a shared string is named by its number)"
    )
    assert caught.value.rule == "sheet.unreadable"


def test_shared_string_cells_of_every_spelling_excel_writes_are_read(tmp_path: Path) -> None:
    sheet = sheet_xml(
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t=\'s\' s="3"><v>1</v></c></row>'
        '<row r="2"><c r="A2" s="1" t="s"><v>2</v></c><c r="B2" t="s"><v></v></c></row>'
    )
    path = write_with_shared_strings(tmp_path / "d.xlsx", sheet, ["hawb", "name", "h1"])
    assert [row.values for row in read_rows(RowSource(path))] == [{"hawb": "h1", "name": None}]


def test_a_workbook_listing_no_sheets_says_so(tmp_path: Path) -> None:
    source = write_xlsx(
        tmp_path / "s.xlsx", sheet_xml('<row r="1">' + inline_cell("A1", "hawb") + "</row>")
    )
    path = tmp_path / "no-workbook.xlsx"
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(path, "w") as new:
        for info in old.infolist():
            if info.filename != "xl/workbook.xml":
                new.writestr(info, old.read(info.filename))
    with pytest.raises(SheetError) as caught:
        list(read_rows(RowSource(path)))
    assert "has no sheet None" not in caught.value.message
    assert caught.value.message == (
        f"cannot read {path}: the workbook lists no sheets (its xl/workbook.xml part is missing "
        "or names none)"
    )


def test_error_values_the_reader_does_not_know_are_bad_cells_not_a_damaged_workbook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # '#GETTING_DATA' (ECMA-376) in a column the manifest does not read made the reader fail
    # the whole workbook as damaged, where such a column may hold errors.
    sheet = sheet_xml(
        '<row r="1">' + "".join(inline_cell(f"{c}1", c.lower()) for c in "ABC") + "</row>"
        '<row r="2">' + inline_cell("A2", "h1") + '<c r="B2" t="e"><v>#GETTING_DATA</v></c>'
        '<c r="C2" t="e"><f>SEQUENCE(3)</f><v>#SPILL!</v></c></row>'
        '<row r="3">' + inline_cell("A3", "h2") + '<c r="B3" t="e"><v>#N/A</v></c>'
        '<c r="C3" t="str"><f>"#SPILL!"</f><v>#SPILL!</v></c></row>',
        dimension="A1:C3",
    )
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temporary"))
    (tmp_path / "temporary").mkdir()
    path = write_xlsx(tmp_path / "e.xlsx", sheet)
    first, second = read_rows(RowSource(path))
    assert first.values["a"] == "h1" and second.values["a"] == "h2"
    bad = first.values["b"]
    assert isinstance(bad, BadCell) and bad.message == "cell B2 holds the Excel error #GETTING_DATA"
    assert isinstance(first.values["c"], BadCell) and first.values["c"].shown == "#SPILL!"
    assert isinstance(second.values["b"], BadCell) and second.values["b"].shown == "#N/A"
    assert second.values["c"] == "#SPILL!"  # a formula's text, not an error: kept as it is
    assert list((tmp_path / "temporary").iterdir()) == []  # the reader's copy is gone


def test_duplicate_headers_name_both_columns(tmp_path: Path) -> None:
    path = tmp_path / "d.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["hawb", "qty", "hawb"])
    book.save(path)
    with pytest.raises(SheetError, match="columns A and C"):
        list(read_rows(RowSource(path)))


def _plain_book(path: Path, rows: list[list[object]]) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def test_excel_errors_and_formulas_without_a_saved_result_are_bad_cells(tmp_path: Path) -> None:
    path = _plain_book(tmp_path / "e.xlsx", [["a", "b", "c", "d"], ["x", 1, 2, 3], ["y", 4, 5]])
    rewrite_cells(
        path,
        {
            "B2": '<c r="B2" t="e"><f>VLOOKUP(1,A1:A2,2,0)</f><v>#N/A</v></c>',
            "C2": '<c r="C2" t="e"><v>#DIV/0!</v></c>',
            "D2": '<c r="D2"><f>B2+C2</f></c>',
            "D3": '<c r="D3" t="str"><f t="shared" ref="D3:D3" si="0"/></c>',
        },
    )
    second, third = read_rows(RowSource(path))
    assert second.values["a"] == "x"
    cells = {name: second.values[name] for name in "bcd"}
    assert all(isinstance(cell, BadCell) for cell in cells.values())
    assert [cell.message for cell in cells.values()] == [
        "cell B2 holds the Excel error #N/A",
        "cell C2 holds the Excel error #DIV/0!",
        "cell D2 holds a formula with no saved result",
    ]
    assert cells["c"].hint.startswith("fix the formula in the workbook")
    assert cells["d"].hint.startswith("open the workbook in Excel or LibreOffice and save it")
    assert isinstance(third.values["d"], BadCell) and third.values["b"] == 4


def test_a_formula_openpyxl_wrote_without_calculating_it_is_a_bad_cell(tmp_path: Path) -> None:
    """openpyxl saves a formula it cannot calculate with an empty value closed in itself
    (``<f>...</f><v />``): no result, not the empty text."""
    path = _plain_book(
        tmp_path / "f.xlsx",
        [["shipment", "hawb", "weight"], ["shp_1", '=CONCATENATE("hawb_","a2")', "=1/0"]],
    )
    with zipfile.ZipFile(path) as book:
        assert b"<v />" in book.read("xl/worksheets/sheet1.xml")  # what openpyxl writes
    (row,) = read_rows(RowSource(path))
    assert row.values["shipment"] == "shp_1"
    assert [getattr(row.values[name], "message", None) for name in ("hawb", "weight")] == [
        "cell B2 holds a formula with no saved result",
        "cell C2 holds a formula with no saved result",
    ]


def test_a_formula_with_an_empty_saved_result_is_an_empty_cell(tmp_path: Path) -> None:
    path = _plain_book(tmp_path / "e.xlsx", [["a", "b"], ["x", 1]])
    rewrite_cells(path, {"B2": '<c r="B2" t="str"><f>IF(A1="","","")</f><v></v></c>'})
    assert [r.values for r in read_rows(RowSource(path))] == [{"a": "x", "b": None}]


def test_a_text_cell_of_only_spaces_is_an_empty_cell_as_in_the_csv_export(tmp_path: Path) -> None:
    # An optional field of spaces was refused from the workbook (schema.enum, min-length)
    # and left out from the same row's CSV export.
    path = _plain_book(tmp_path / "e.xlsx", [["a", "b", "c"], ["x", "   ", "\u00a0"]])
    assert [r.values for r in read_rows(RowSource(path))] == [{"a": "x", "b": None, "c": None}]
    csv = tmp_path / "e.csv"
    csv.write_text("a,b,c\nx,   ,\u00a0\n", encoding="utf-8")
    assert [r.values for r in read_rows(RowSource(csv))] == [{"a": "x", "b": None, "c": None}]


def test_a_bad_cell_in_a_row_the_reader_leaves_out_is_found_too(tmp_path: Path) -> None:
    path = _plain_book(tmp_path / "e.xlsx", [["a", "b"], ["x", 1], [None, None]])
    rewrite_cells(path, {"B3": '<c r="B3"><f>A1</f></c>'})  # the sheet's range ends at row 2
    rows = list(read_rows(RowSource(path)))
    assert [row.number for row in rows] == [2, 3]
    assert isinstance(rows[1].values["b"], BadCell)


def test_a_bad_cell_in_the_header_is_an_error_at_the_header(tmp_path: Path) -> None:
    path = _plain_book(tmp_path / "e.xlsx", [["a", "b"], ["x", 1]])
    rewrite_cells(path, {"B1": '<c r="B1" t="e"><v>#REF!</v></c>'})
    with pytest.raises(SheetError, match=r"cell B1 holds the Excel error #REF!, in the header"):
        list(read_rows(RowSource(path)))


def test_a_value_right_of_the_header_is_a_problem_of_its_row(tmp_path: Path) -> None:
    path = _plain_book(tmp_path / "e.xlsx", [["a", "b"], ["x", 1, None, "note"], ["y", 2]])
    first, second = read_rows(RowSource(path))
    assert first.problem is not None and second.problem is None
    assert (first.problem.rule, first.problem.column) == ("row.beyond-header", 4)
    assert first.problem.message == (
        "cell D2 holds 'note', but column D has no name in the header (row 1, columns A to B)"
    )


def test_a_value_under_a_blank_header_cell_is_a_problem_of_its_row(tmp_path: Path) -> None:
    rows: list[list[object]] = [["a", None, "b"], ["x", "note", 1], ["y", None, 2]]
    first, second = read_rows(RowSource(_plain_book(tmp_path / "e.xlsx", rows)))
    assert first.problem is not None and second.problem is None
    assert (first.problem.rule, first.problem.column) == ("row.unnamed-column", 2)
    assert first.problem.message.startswith("cell B2 holds 'note', but column B has no name")


@pytest.mark.parametrize("prefix", ["", "x:"])
def test_bad_cells_are_found_whatever_the_pieces_the_xml_comes_in(prefix: str) -> None:
    root = f'<{prefix}worksheet xmlns{prefix and ":"}{prefix.rstrip(":")}="urn:main">'
    xml = (
        f'{root}<{prefix}sheetData><{prefix}row r="7">'
        f'<{prefix}c r="A7" t="e"><{prefix}v>#N/A</{prefix}v></{prefix}c>'
        f'<{prefix}c r="B7" s="1"><{prefix}f>SUM(A1:A6)</{prefix}f></{prefix}c>'
        f'<{prefix}c r="C7"><{prefix}f>A1</{prefix}f><{prefix}v>3</{prefix}v></{prefix}c>'
        f'<{prefix}c r="D7" t="str"><{prefix}f t="shared" si="0"/></{prefix}c>'
        f"</{prefix}row></{prefix}sheetData></{prefix}worksheet>"
    ).encode()
    # Anywhere but inside a tag, as the workbook check cuts the XML.
    for cut in (c for c in range(1, len(xml)) if xml.rfind(b"<", 0, c) < xml.rfind(b">", 0, c) + 1):
        errors = CellScan()
        for piece in (xml[:cut], xml[cut:]):
            errors.scan(piece)
        assert errors.found == {7: {1: "#N/A", 2: NO_RESULT, 4: NO_RESULT}}, cut
    unplaced = CellScan()
    unplaced.scan(b'<row><c t="e"><v>#NAME?</v></c></row>')
    assert (unplaced.found, unplaced.unplaced) == ({}, "#NAME?")


def test_whole_numbers_a_format_of_zeros_pads_read_as_the_text_shown(tmp_path: Path) -> None:
    path = tmp_path / "padded.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["hawb", "postcode", "commodity", "plain", "fraction", "text", "two"])
    sheet.append(["h1", 1234, 101210000, 1234, 12.5, "01234", 5])
    sheet.append(["h2", 98765, 0, 7, -3, "x", 123])
    for row in (2, 3):
        sheet.cell(row, 2).number_format = "00000"
        sheet.cell(row, 3).number_format = "0000000000"
        sheet.cell(row, 5).number_format = "00000"  # not whole, or negative: left as numbers
        sheet.cell(row, 7).number_format = "00"  # wider than its format: shown whole
    sheet.cell(3, 4).number_format = "0.00"  # another format: a number
    book.save(path)
    first, second = (row.values for row in read_rows(RowSource(path)))
    assert first == {
        "hawb": "h1",
        "postcode": "01234",
        "commodity": "0101210000",
        "plain": 1234,
        "fraction": 12.5,
        "text": "01234",
        "two": "05",
    }
    assert (second["postcode"], second["commodity"], second["plain"]) == ("98765", "0000000000", 7)
    assert (second["fraction"], second["two"]) == (-3, "123")


def test_a_large_styles_part_is_read_as_a_stream(tmp_path: Path) -> None:
    # A 150 MB styles part (within maxMegabytes) was joined and searched whole, about 3.5
    # times the part's size in memory: a run short of memory failed on a 5-line manifest.
    source = tmp_path / "source.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["hawb", "postcode"])
    sheet.append(["h1", 1234])
    sheet.cell(2, 2).number_format = "00000"
    book.save(source)
    path = tmp_path / "styled.xlsx"
    extra = b'<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' * 150_000
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            data = old.read(info.filename)
            if info.filename == "xl/styles.xml":
                data = data.replace(b"</cellXfs>", extra + b"</cellXfs>", 1)
                assert len(data) > 8 * MEGABYTE
            new.writestr(info, data)
    tracemalloc.start()
    try:
        with path.open("rb") as handle:
            scan = check_workbook(handle, str(path), None, SheetLimits())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert scan is not None and scan.padded == {2: {2: "01234"}}
    assert peak < 7 * MEGABYTE, peak  # a few 1 MB pieces, whatever the part's size
    assert [row.values for row in read_rows(RowSource(path))] == [
        {"hawb": "h1", "postcode": "01234"}
    ]


def test_padded_numbers_are_found_whatever_the_pieces_the_xml_comes_in() -> None:
    xml = (
        b'<worksheet xmlns="urn:main"><sheetData><row r="2">'
        b'<c r="A2" s="1"><v>42</v></c><c r="B2" s="2"><v>42</v></c>'
        b'<c r="C2" s="1" t="s"><v>0</v></c><c r="D2" s="1" t="n"><v>7</v></c>'
        b'<c r="E2" s="1"><f>A2*2</f><v>84</v></c><c r="F2" s="1"><v>4.5</v></c>'
        b"</row></sheetData></worksheet>"
    )
    for cut in (c for c in range(1, len(xml)) if xml.rfind(b"<", 0, c) < xml.rfind(b">", 0, c) + 1):
        cells = CellScan({1: 4})
        for piece in (xml[:cut], xml[cut:]):
            cells.scan(piece)
        assert cells.padded == {2: {1: "0042", 4: "0007", 5: "0084"}}, cut
        assert cells.found == {}, cut


@pytest.mark.parametrize("writer", ["openpyxl", "xlsxwriter"])
def test_rows_below_empty_top_rows_keep_the_numbers_the_sheet_shows(
    tmp_path: Path, writer: str
) -> None:
    # The reader yields the empty rows above the used range too: counting from the range's
    # first row put the header of `header: 3` at an empty row ("row 3 has no header names")
    # and every finding rows too low.
    path = tmp_path / "top.xlsx"
    cells: list[tuple[int, list[str | int]]] = [
        (3, ["hawb", "packages"]),
        (4, ["hawb_a1", 10]),
        (6, ["hawb_a2", 4]),
    ]
    if writer == "openpyxl":
        book = openpyxl.Workbook()
        sheet = book.active
        assert sheet is not None
        for row, values in cells:
            for column, value in enumerate(values, start=1):
                sheet.cell(row, column, value)
        book.save(path)
    else:
        with xlsxwriter.Workbook(str(path)) as written:
            page = written.add_worksheet()
            for row, values in cells:
                page.write_row(row - 1, 0, values)
    rows = list(read_rows(RowSource(path, header_row=3)))
    assert [(r.number, r.values) for r in rows] == [
        (4, {"hawb": "hawb_a1", "packages": 10}),
        (6, {"hawb": "hawb_a2", "packages": 4}),
    ]
    with pytest.raises(SheetError, match="row 1 has no header names"):
        list(read_rows(RowSource(path)))


def test_a_header_error_names_the_first_sheet_when_forEach_names_none(tmp_path: Path) -> None:
    # It named the file's stem, as for a CSV file: sheet 'dup' of a workbook whose one
    # sheet is 'Movements'.
    path = tmp_path / "dup.xlsx"
    book = _book(path)
    book.active.cell(1, 7, "packages")  # type: ignore[union-attr]
    book.save(path)
    with pytest.raises(SheetError, match="appears in columns B and G") as caught:
        list(read_rows(RowSource(path)))
    assert caught.value.sheet == "Movements"


def test_without_a_sheet_named_the_first_visible_worksheet_is_read(tmp_path: Path) -> None:
    """A hidden tab before the visible one (an old copy left in the workbook) is what its
    user does not see: not the default."""
    path = tmp_path / "h.xlsx"
    book = openpyxl.Workbook()
    old = book.active
    assert old is not None
    old.title = "Movements (old)"
    old.append(["hawb", "quantity"])
    old.append(["hawb_OLD", 99])
    old.sheet_state = "hidden"
    shown = book.create_sheet("Movements")
    shown.append(["hawb", "quantity"])
    shown.append(["hawb_a1", 10])
    book.active = 1
    book.save(path)
    (row,) = read_rows(RowSource(path))
    assert (row.sheet, row.values) == ("Movements", {"hawb": "hawb_a1", "quantity": 10})
    (old_row,) = read_rows(RowSource(path, sheet="Movements (old)"))  # by name it is read
    assert old_row.values["hawb"] == "hawb_OLD"


@pytest.mark.parametrize("first", ["hidden", "chart"])
def test_the_bad_cells_found_are_those_of_the_sheet_read_when_forEach_names_none(
    tmp_path: Path, first: str
) -> None:
    """The rows came from the first visible worksheet, but the cells holding an error were
    looked for in the workbook's first sheet (a hidden tab, a chart sheet): #N/A in the HAWB
    column was read as an empty cell (a movement of the master AWB), a number a format of
    zeros pads lost its zeros, and an error of the hidden tab was reported at the sheet read."""
    path = tmp_path / f"{first}.xlsx"
    book = openpyxl.Workbook()
    data = book.active
    assert data is not None
    data.title = "Data"
    data.append(["ref", "hawb", "post"])
    data.append(["a1", "#N/A", 1234])
    data.append(["a2", "hawb_a2", 1234])
    data["C2"].number_format = "00000"
    if first == "hidden":
        old = book.create_sheet("old", 0)
        old.sheet_state = "hidden"
        old.append(["ref", "hawb", "post"])
        old.append(["z1", "hawb_z1", 5])
        old.append(["z2", "#REF!", 6])  # a cell of the hidden tab only
    else:
        chart = BarChart()
        chart.add_data(Reference(data, min_col=3, min_row=1, max_row=3), titles_from_data=True)
        book.create_chartsheet("Chart1", 0).add_chart(chart)
    book.save(path)
    second, third = read_rows(RowSource(path))
    assert (second.sheet, second.values["ref"], second.values["post"]) == ("Data", "a1", "01234")
    assert getattr(second.values["hawb"], "message", None) == "cell B2 holds the Excel error #N/A"
    assert third.values == {"ref": "a2", "hawb": "hawb_a2", "post": 1234}
    if first == "hidden":
        (_, hidden_third) = read_rows(RowSource(path, sheet="old"))  # by name, its own cells
        assert getattr(hidden_third.values["hawb"], "message", None) == (
            "cell B3 holds the Excel error #REF!"
        )


@pytest.mark.parametrize(
    ("typed", "exact"),
    [(123456789012345678, False), (1234567890123456, False), (999999999999999, True)],
)
def test_a_number_of_more_digits_than_a_cell_keeps_is_a_bad_cell(
    tmp_path: Path, typed: int, exact: bool
) -> None:
    """Excel keeps 15 significant digits: the digits after those are not what was typed,
    and int() of the double would invent them (123456789012344992)."""
    path = tmp_path / "n.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet()
    sheet.write_row(0, 0, ["ref", "mrn"])
    sheet.write_row(1, 0, ["A", float(typed)])
    book.close()
    (row,) = read_rows(RowSource(path))
    if exact:
        assert row.values["mrn"] == typed
        return
    cell = row.values["mrn"]
    assert isinstance(cell, BadCell), cell
    assert cell.message.startswith("cell B2 holds the number ")
    assert "too long for a spreadsheet to keep every digit" in cell.message
    assert "format the column as Text" in cell.hint
    assert row.values["ref"] == "A"


@pytest.mark.parametrize(
    ("typed", "shown", "digits"), [(1e300, "1E+300", "301"), (12e20, "1.2E+21", "22")]
)
def test_a_large_number_of_few_digits_is_not_said_to_have_lost_digits(
    tmp_path: Path, typed: float, shown: str, digits: str
) -> None:
    """Found probing: a cell holding 1E+300 (or a code such as 12E20 that a spreadsheet
    took for a number) was "too long for a spreadsheet to keep every digit ... the digits
    typed after those are lost": nothing typed was lost, the number is too large to be
    read as an exact whole number."""
    path = tmp_path / "n.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet()
    sheet.write_row(0, 0, ["ref", "code"])
    sheet.write_row(1, 0, ["A", typed])
    book.close()
    (row,) = read_rows(RowSource(path))
    cell = row.values["code"]
    assert isinstance(cell, BadCell), cell
    assert cell.message.startswith(
        f"cell B2 holds the number {shown}, a whole number of {digits} digits: past 15 digits"
    )
    assert "lost" not in cell.message
    assert "if the cell holds a code or a reference, format the column as Text" in cell.hint


def test_a_data_cell_inside_merged_cells_is_a_bad_cell_not_an_empty_one(tmp_path: Path) -> None:
    """The HAWB merged over three rows shows on each, but only the first cell holds it: the
    others read as empty would send two movements at shipment level."""
    path = tmp_path / "m.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["shipment", "hawb", "quantity", "note"])
    for number in range(3):
        sheet.append(["shp_1", "hawb_a1" if number == 0 else None, number + 1, None])
    sheet.merge_cells("B2:B4")
    sheet["D2"] = "fragile"
    sheet.merge_cells("D2:D3")
    book.save(path)
    rows = list(read_rows(RowSource(path)))
    assert rows[0].values["hawb"] == "hawb_a1"
    for row, number in zip(rows[1:], (3, 4), strict=True):
        cell = row.values["hawb"]
        assert isinstance(cell, BadCell), cell
        assert cell.message == (
            f"cell B{number} is inside the merged cells B2:B4, whose value is in B2 only"
        )
        assert cell.hint.startswith("unmerge the cells")
    assert isinstance(rows[1].values["note"], BadCell)
    assert rows[2].values["note"] is None  # below the D2:D3 range: an ordinary empty cell
    assert [row.values["quantity"] for row in rows] == [1, 2, 3]


def test_a_padded_number_in_a_cell_without_a_reference_refuses_the_sheet() -> None:
    # Found by an outside probe: such a cell was passed over, and the reader's number went
    # out without its leading zero (hawb_1234 where the sheet shows 01234).
    cells = CellScan({1: 5})
    cells.scan(b'<worksheet><sheetData><row r="3"><c s="1"><v>1234</v></c></row></sheetData>')
    assert cells.padded == {} and cells.unplaced is not None
    assert cells.unplaced.endswith("01234")


def test_hidden_rows_and_columns_are_read_and_marked(tmp_path: Path) -> None:
    rows: list[list[object]] = [["a", "b", "c"], *([f"x{i}", i, i] for i in range(2, 12))]
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    for number in (3, 4, 5, 9):
        sheet.row_dimensions[number].hidden = True
    sheet.column_dimensions["C"].hidden = True
    book.save(tmp_path / "h.xlsx")
    read = list(read_rows(RowSource(tmp_path / "h.xlsx")))
    assert [row.number for row in read] == list(range(2, 12))
    assert [row.number for row in read if row.hidden] == [3, 4, 5, 9]
    assert read[0].header is not None and read[0].header.hidden == (3,)


def test_a_cell_scan_keeps_hidden_rows_as_ranges() -> None:
    scan = CellScan()
    rows = "".join(
        f'<row r="{n}" hidden="1"><c r="A{n}"><v>1</v></c></row>' for n in range(5, 1005)
    )
    scan.scan(f'<worksheet><sheetData>{rows}<row r="2000" hidden="true"/></sheetData>'.encode())
    assert scan.hidden_rows == [(5, 1004), (2000, 2000)]
    assert [n for n in (4, 5, 1004, 1005, 2000) if scan.row_hidden(n)] == [5, 1004, 2000]


def test_a_cell_scan_orders_hidden_rows_written_out_of_order() -> None:
    scan = CellScan()
    rows = "".join(f'<row r="{n}" hidden="1"/>' for n in (9, 10, 3, 4, 11, 1))
    scan.scan(f"<worksheet><sheetData>{rows}</sheetData>".encode())
    assert scan.hidden_rows == [(1, 1), (3, 4), (9, 11)]
    assert [n for n in range(13) if scan.row_hidden(n)] == [1, 3, 4, 9, 10, 11]


@pytest.mark.parametrize(
    ("held", "said"),
    [
        ("inf", "infinity (inf)"),
        ("-inf", "minus infinity (-inf)"),
        ("1e999", "infinity (inf)"),
        ("nan", "NaN ('not a number')"),
    ],
)
def test_a_number_that_is_not_finite_is_a_bad_cell(tmp_path: Path, held: str, said: str) -> None:
    """No spreadsheet program types inf or nan, but a program writing the workbook can: the
    reader gives it as a float, which no field takes (a text field got 'inf', an expression
    a value JSON cannot hold); it is an error at its cell."""
    rows = (
        f'<row r="1">{inline_cell("A1", "ref")}{inline_cell("B1", "weight")}</row>'
        f'<row r="2">{inline_cell("A2", "x")}<c r="B2"><v>{held}</v></c></row>'
    )
    path = write_xlsx(tmp_path / "n.xlsx", sheet_xml(rows))
    (row,) = read_rows(RowSource(path))
    cell = row.values["weight"]
    assert isinstance(cell, BadCell), cell
    assert cell.column == 2 and cell.rule == "row.cell-type"
    assert cell.message.startswith(f"cell B2 holds {said}, which is no value")
    assert "the program that wrote the workbook" in cell.hint
    assert row.values["ref"] == "x"


def _table_book(path: Path, *, writer: str, notes: bool = False) -> Path:
    """Two movements in an Excel table (A1:B4, "Total Row" ticked: a label and a sum in
    row 4), a row below it; with ``notes``, a column C beside the table, outside it."""
    header: list[object] = ["HAWB", "Packages", *(["Notes"] if notes else [])]
    rows: list[list[object]] = [["h1", 3], ["h2", 4]]
    if writer == "xlsxwriter":
        book = xlsxwriter.Workbook(str(path))
        sheet = book.add_worksheet("Moves")
        sheet.add_table(
            0,
            0,
            3,
            1,
            {
                "data": rows,
                "total_row": True,
                "columns": [
                    {"header": "HAWB", "total_string": "Total"},
                    {"header": "Packages", "total_function": "sum", "total_value": 7},
                ],
            },
        )
        if notes:
            sheet.write_column(0, 2, ["Notes", "n1", "n2", "beside the totals"])
        sheet.write_row(5, 0, ["h3", 5])
        book.close()
        return path
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Moves"
    for row in [header, *rows]:
        sheet.append(row)
    sheet.append(["Total", "=SUBTOTAL(109,Table1[Packages])"])  # no saved result
    if notes:
        for number, note in ((2, "n1"), (3, "n2"), (4, "beside the totals")):
            sheet.cell(number, 3, note)
    sheet.append([])
    sheet.append(["h3", 5])
    sheet.add_table(Table(displayName="Table1", ref="A1:B4", totalsRowCount=1))
    workbook.save(path)
    return path


@pytest.mark.parametrize("writer", ["openpyxl", "xlsxwriter"])
def test_the_totals_row_of_an_excel_table_is_not_a_data_row(tmp_path: Path, writer: str) -> None:
    # Found by an outside probe: a table's totals row ("Total" under HAWB, a SUBTOTAL under
    # Packages) was read as a row of data: a movement for HAWB "Total", or an error at its
    # formula; `rows:` was the only way out. It is left out, as a blank row is.
    path = _table_book(tmp_path / "t.xlsx", writer=writer)
    read = list(read_rows(RowSource(path)))
    assert [(row.number, dict(row.values)) for row in read] == [
        (2, {"HAWB": "h1", "Packages": 3}),
        (3, {"HAWB": "h2", "Packages": 4}),
        (6, {"HAWB": "h3", "Packages": 5}),
    ]
    assert all(row.problem is None for row in read)


@pytest.mark.parametrize("writer", ["openpyxl", "xlsxwriter"])
def test_a_value_beside_a_tables_totals_row_stops_that_row(tmp_path: Path, writer: str) -> None:
    """A table narrower than the sheet's columns: the totals row's cells outside the table
    are no totals, yet no data row either (its HAWB cell is the label "Total")."""
    path = _table_book(tmp_path / "t.xlsx", writer=writer, notes=True)
    read = {row.number: row for row in read_rows(RowSource(path))}
    assert sorted(read) == [2, 3, 4, 6]
    assert read[3].values == {"HAWB": "h2", "Packages": 4, "Notes": "n2"}
    problem = read[4].problem
    assert problem is not None and problem.rule == "row.totals-row" and problem.column == 3
    assert problem.message == (
        "cell C4 holds 'beside the totals', but row 4 is the totals row of the table "
        "'Table1' (A1:B4, columns A to B), which is not data: the row is not read"
    )
    assert "`rows:`" in problem.hint


def test_a_table_without_a_totals_row_keeps_its_last_row(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in (["HAWB", "Packages"], ["h1", 3], ["h2", 4]):
        sheet.append(row)
    sheet.add_table(Table(displayName="Plain", ref="A1:B3", totalsRowShown=False))
    workbook.save(tmp_path / "p.xlsx")
    assert [row.number for row in read_rows(RowSource(tmp_path / "p.xlsx"))] == [2, 3]


def test_a_workbook_openpyxl_cannot_load_is_copied_from_the_values_read(tmp_path: Path) -> None:
    # Found by an outside probe: a workbook whose shared strings are not named in its
    # relationships (python-calamine finds them by their path, openpyxl does not) was read,
    # but validate --annotate and results --annotate ended in "internal error: IndexError".
    cells = "".join(f'<c r="{ref}" t="s"><v>{n}</v></c>' for n, ref in enumerate(["A1", "B1"]))
    row = '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><v>4</v></c></row>'
    path = write_with_shared_strings(
        tmp_path / "s.xlsx", sheet_xml(f'<row r="1">{cells}</row>{row}'), ["hawb", "n", "h1"]
    )
    (read,) = read_rows(RowSource(path))
    assert read.values == {"hawb": "h1", "n": 4}
    copy = open_copy(path, csv_sheet="unused")
    assert [[cell.value for cell in line] for line in copy["Data"].iter_rows()] == [
        ["hawb", "n"],
        ["h1", 4],
    ]


def test_a_row_repeating_the_header_of_a_workbook_is_a_problem_of_its_row(tmp_path: Path) -> None:
    path = _plain_book(tmp_path / "r.xlsx", [["Ref", 2026], ["R-1", 4], ["Ref", 2026], ["R-2", 5]])
    rows = {row.number: row for row in read_rows(RowSource(path))}
    problem = rows[3].problem
    assert problem is not None and problem.rule == "row.repeated-header"
    assert rows[2].problem is None and rows[4].problem is None


@pytest.mark.parametrize("reader", ["check_workbook", "workbook_cells"])
def test_a_damaged_member_of_the_zip_is_a_sheet_error_naming_the_file(
    tmp_path: Path, reader: str
) -> None:
    # A worksheet whose bytes no longer match their CRC (a download cut and patched, a
    # disk error): both readers of the zip say the workbook is damaged, never a traceback.
    from customs_batch.manifest.spreadsheet.workbook_check import workbook_cells

    good = tmp_path / "good.xlsx"
    book = xlsxwriter.Workbook(str(good))
    book.add_worksheet("Data").write_row(0, 0, ["a", "b"])
    book.close()
    bad = tmp_path / "bad.xlsx"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(bad, "w") as target:
        for info in source.infolist():
            target.writestr(info.filename, source.read(info), zipfile.ZIP_STORED)
    data = bytearray(bad.read_bytes())
    at = data.index(b"<sheetData>")
    data[at + 1 : at + 10] = b"XXXXXXXXX"  # stored: the member's CRC no longer matches
    bad.write_bytes(bytes(data))
    with open(bad, "rb") as handle, pytest.raises(SheetError) as raised:
        if reader == "check_workbook":
            check_workbook(handle, "bad.xlsx", None, SheetLimits())
        else:
            workbook_cells(handle, "bad.xlsx", SheetLimits())
    assert "cannot read bad.xlsx as an XLSX workbook (the zip is damaged: " in str(raised.value)


def test_an_empty_sheet_is_said_to_be_empty(tmp_path: Path) -> None:
    # It said "has no row 1 to take the header from" (check `header:`) for a workbook saved
    # with no value in it, where no `header:` mends anything.
    path = tmp_path / "m.xlsx"
    book = openpyxl.Workbook()
    book.create_sheet("Data")
    book.save(path)
    with pytest.raises(SheetError) as caught:
        list(read_rows(RowSource(path, sheet="Data")))
    assert (
        caught.value.message == f"sheet 'Data' of {path} is empty: none of its cells holds a value"
    )
    assert "`sheet:`" in (caught.value.hint or "")


def test_a_duration_cell_is_a_time_not_its_seconds(tmp_path: Path) -> None:
    # 36:30 typed into a cell makes a duration ([h]:mm): it was read as its seconds,
    # 131400.0, and sent so as a weight, a number nobody typed and the sheet neither shows
    # nor holds. It is now a time, which a field refuses (row.cell-type at the cell), and
    # its text as the sheet shows it in an expression.
    path = tmp_path / "d.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["ref", "weight"])
    sheet.append(["a1", dt.timedelta(hours=36, minutes=30)])
    sheet["B2"].number_format = "[h]:mm"
    sheet.append(["a2", dt.timedelta(seconds=-3600)])
    sheet["B3"].number_format = "[h]:mm:ss"
    book.save(path)
    rows = list(read_rows(RowSource(path)))
    assert [row.values["weight"] for row in rows] == ["36:30:00", "-1:00:00"]
    assert all(row.values["weight"].kind == "a time" for row in rows)


def test_percentages_are_found_with_the_text_the_sheet_shows() -> None:
    xml = (
        b'<worksheet xmlns="urn:main"><sheetData><row r="2">'
        b'<c r="A2" s="1"><v>0.4</v></c><c r="B2" s="2"><v>0.125</v></c>'
        b'<c r="C2" s="1" t="s"><v>0</v></c><c r="D2" s="1"><f>A2*2</f><v>0.8</v></c>'
        b'<c r="E2" s="3"><v>0.4</v></c><c r="F2" s="2"><v>-0.00001</v></c>'
        b"</row></sheetData></worksheet>"
    )
    cells = CellScan(None, {1: 0, 2: 2})
    cells.scan(xml)
    assert cells.percent == {2: {1: "40%", 2: "12.50%", 4: "80%", 6: "0.00%"}}
    unplaced = CellScan(None, {1: 1})
    unplaced.scan(b'<worksheet><sheetData><row r="3"><c s="1"><v>0.4</v></c></row></sheetData>')
    assert unplaced.percent == {} and unplaced.unplaced is not None
    assert unplaced.unplaced.endswith("40.0%")


def test_excel_s_own_percentage_formats_are_read_as_shown(tmp_path: Path) -> None:
    # Formats 9 (0%) and 10 (0.00%) are Excel's own: styles.xml uses them without writing
    # them out.
    path = tmp_path / "p.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Data")
    sheet.write_row(0, 0, ["code", "share", "exact"])
    sheet.write_row(1, 0, ["A", 0.4, 0.4], None)
    sheet.write_number(1, 1, 0.4, book.add_format({"num_format": 9}))
    sheet.write_number(1, 2, 0.4, book.add_format({"num_format": 10}))
    book.close()
    (row,) = read_rows(RowSource(path))
    assert row.values == {"code": "A", "share": "40%", "exact": "40.00%"}
    assert row.values["share"].number == 0.4


def test_a_boolean_header_cell_names_its_column_as_the_sheet_shows_it(tmp_path: Path) -> None:
    # A header cell TRUE (a boolean to the workbook) named its column 'True': row.TRUE, as
    # the sheet and its CSV export write it, was no column.
    path = tmp_path / "b.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["hawb", True, False])
    sheet.append(["h1", "x", "y"])
    book.save(path)
    (row,) = read_rows(RowSource(path))
    assert row.values == {"hawb": "h1", "TRUE": "x", "FALSE": "y"}
