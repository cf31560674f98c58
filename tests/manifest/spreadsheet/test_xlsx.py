from __future__ import annotations

import datetime as dt
from pathlib import Path

import openpyxl
import pytest
import xlsxwriter

from customs_batch.manifest.spreadsheet import RowSource, SheetError, read_rows
from tests.manifest.spreadsheet.hostile_xlsx import (
    missing_shared_string_sheet,
    write_with_shared_strings,
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


def test_a_cell_naming_a_shared_string_the_workbook_lacks_is_a_clear_error(
    tmp_path: Path,
) -> None:
    path = write_with_shared_strings(tmp_path / "d.xlsx", missing_shared_string_sheet(), ["x"])
    with pytest.raises(
        SheetError, match=r"cannot read .*d\.xlsx: the workbook is damaged"
    ) as caught:
        list(read_rows(RowSource(path)))
    assert caught.value.hint == "open it in Excel and save it again, or export it as CSV"


def test_duplicate_headers_name_both_columns(tmp_path: Path) -> None:
    path = tmp_path / "d.xlsx"
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["hawb", "qty", "hawb"])
    book.save(path)
    with pytest.raises(SheetError, match="columns A and C"):
        list(read_rows(RowSource(path)))
