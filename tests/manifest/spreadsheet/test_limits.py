"""A spreadsheet that would cost more than its limits is refused before the XLSX reader
allocates its used range: the error says which limit and how to raise it."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from customs_batch.manifest.spreadsheet import RowSource, SheetError, read_rows
from customs_batch.manifest.spreadsheet.model import SheetLimits
from customs_batch.manifest.spreadsheet.workbook_check import check_workbook
from tests.manifest.spreadsheet.hostile_xlsx import (
    far_corner_sheet,
    inline_cell,
    sheet_xml,
    small_sheet,
    understate_sheet_size,
    write_bomb,
    write_with_shared_strings,
    write_xlsx,
)
from tests.test_userfiles import within_seconds


def _refusal(path: Path, limits: SheetLimits | None = None) -> SheetError:
    with pytest.raises(SheetError) as caught:
        list(read_rows(RowSource(path, limits=limits or SheetLimits())))
    return caught.value


def _corner_sheet(corner: str, *, dimension: str | None = None) -> str:
    """A header in A1, and a row with a value in column A and one at ``corner``."""
    row = "".join(ch for ch in corner if ch.isdigit())
    return sheet_xml(
        '<row r="1">' + inline_cell("A1", "hawb") + "</row>"
        f'<row r="{row}">' + inline_cell(f"A{row}", "h") + inline_cell(corner, "x") + "</row>",
        dimension=dimension or f"A1:{corner}",
    )


def test_a_cell_at_xfd1048576_is_refused_from_the_zip_alone(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "far.xlsx", far_corner_sheet())
    with pytest.raises(SheetError) as caught, path.open("rb") as handle:
        check_workbook(handle, str(path), None, SheetLimits())
    error = caught.value
    assert error.rule == "sheet.too-large"
    assert "1,048,576 rows by 16,384 columns (A1:XFD1048576)" in error.message
    assert "forEach maxCells" in error.message and "maxCells:" in (error.hint or "")


def test_a_used_range_over_max_cells_is_refused_and_raising_the_limit_reads_it(
    tmp_path: Path,
) -> None:
    path = write_xlsx(tmp_path / "wide.xlsx", _corner_sheet("J1000"))  # 10,000 cells
    error = _refusal(path, SheetLimits(cells=5_000))
    assert "1,000 rows by 10 columns" in error.message and "maxCells" in error.message
    rows = list(read_rows(RowSource(path, limits=SheetLimits(cells=10_000))))
    assert [row.number for row in rows] == [1000]


@pytest.mark.parametrize(
    "sheet",
    [
        # no <dimension>: every reference is read
        _corner_sheet("J1000").replace('<dimension ref="A1:J1000"/>', ""),
        # a <dimension> that understates the range
        _corner_sheet("J1000", dimension="A1:B2"),
        # references the quick search does not read: a tab, single quotes, lowercase
        _corner_sheet("J1000", dimension="A1:B2").replace('<c r="J1000"', "<c\tr='j1000'"),
        # cells without a reference, placed one after another by the reader
        sheet_xml(
            '<row r="1"><c t="inlineStr"><is><t>hawb</t></is></c></row><row r="1000">'
            + "<c><v>1</v></c>" * 10
            + "</row>",
            dimension="A1:B2",
        ),
    ],
    ids=["no-dimension", "understated", "odd-spelling", "implicit-positions"],
)
def test_the_used_range_is_found_however_the_sheet_is_written(tmp_path: Path, sheet: str) -> None:
    path = write_xlsx(tmp_path / "odd.xlsx", sheet)
    error = _refusal(path, SheetLimits(cells=5_000))
    # Cells without a reference are counted after the furthest one: never fewer than the
    # reader places, here one more (the header cell).
    assert error.rule == "sheet.too-large" and "spans 1,000 rows by 1" in error.message


def test_an_overstated_dimension_or_an_empty_styled_cell_far_away_is_no_reason_to_refuse(
    tmp_path: Path,
) -> None:
    overstated = sheet_xml(
        small_sheet().split("<sheetData>")[1].split("</sheetData>")[0], dimension="A1:XFD1048576"
    )
    styled = sheet_xml(
        small_sheet().split("<sheetData>")[1].split("</sheetData>")[0]
        + '<row r="1048576"><c r="XFD1048576" s="1"/></row>'
    )
    for name, sheet in (("overstated", overstated), ("styled", styled)):
        path = write_xlsx(tmp_path / f"{name}.xlsx", sheet)
        rows = list(read_rows(RowSource(path)))
        assert [row.values for row in rows] == [{"hawb": "h1", "packages": 4}]


def test_a_zip_bomb_is_refused_by_the_sizes_the_zip_states(tmp_path: Path) -> None:
    path = write_bomb(tmp_path / "bomb.xlsx", 3)
    assert path.stat().st_size < 100_000
    error = _refusal(path, SheetLimits(megabytes=2))
    assert error.rule == "sheet.too-large"
    assert "expands to 3.0 MB when uncompressed, over the limit of 2 MB" in error.message
    assert "maxMegabytes: 4" in (error.hint or "")


def test_a_zip_that_understates_its_sizes_is_stopped_by_what_it_inflates_to(
    tmp_path: Path,
) -> None:
    path = write_bomb(tmp_path / "forged.xlsx", 3)
    understate_sheet_size(path, 1_000)
    error = _refusal(path, SheetLimits(megabytes=2))
    assert "expands to more than its stated size" in error.message
    assert "maxMegabytes" in error.message


def test_rows_past_max_rows_are_an_error_naming_the_limit(tmp_path: Path) -> None:
    rows = "".join(f'<row r="{n}">' + inline_cell(f"A{n}", f"h{n}") + "</row>" for n in range(2, 6))
    sheet = sheet_xml('<row r="1">' + inline_cell("A1", "hawb") + "</row>" + rows, "A1:A5")
    path = write_xlsx(tmp_path / "rows.xlsx", sheet)
    csv = tmp_path / "rows.csv"
    csv.write_text("hawb\n" + "".join(f"h{n}\n" for n in range(2, 6)), encoding="utf-8")
    for file in (path, csv):
        read: list[int] = []
        with pytest.raises(SheetError) as caught:
            for row in read_rows(RowSource(file, limits=SheetLimits(rows=3))):
                read.append(row.number)
        assert read == [2, 3, 4]
        assert "more than 3 data rows (row 5 is one too many)" in caught.value.message
        assert "maxRows: 6" in (caught.value.hint or "")


def test_a_csv_over_max_megabytes_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    path.write_bytes(b"hawb\n" + b"h1\n" * 400_000)
    error = _refusal(path, SheetLimits(megabytes=1))
    assert error.rule == "sheet.too-large"
    assert "forEach maxMegabytes" in error.message and "maxMegabytes: 2" in (error.hint or "")


@pytest.mark.parametrize("name", ["rows.csv", "rows.xlsx"])
def test_a_pipe_or_a_device_is_refused_at_once(tmp_path: Path, name: str) -> None:
    pipe = tmp_path / name
    os.mkfifo(pipe)
    with pytest.raises(SheetError) as caught:
        within_seconds(lambda: list(read_rows(RowSource(pipe))))
    assert "named pipe" in caught.value.message and str(pipe) in caught.value.message
    zero = tmp_path / f"zero-{name}"
    zero.symlink_to("/dev/zero")
    with pytest.raises(SheetError, match="character device"):
        within_seconds(lambda: list(read_rows(RowSource(zero))))


def test_a_zip_with_two_sheets_of_one_name_is_refused(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "twice.xlsx", far_corner_sheet())
    with (
        pytest.warns(UserWarning, match="Duplicate name"),
        zipfile.ZipFile(path, "a") as book,
    ):
        book.writestr("xl/worksheets/sheet1.xml", small_sheet())
    error = _refusal(path)
    assert "two parts of one name" in error.message


def test_a_csv_line_over_the_line_bound_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 500 MB field or header was read whole (1 GB and more) before the CSV reader's own
    # 128 KB field limit saw it.
    path = tmp_path / "long.csv"
    path.write_text("hawb,note\nh1," + "n" * 1_500_000 + "\nh2,short\n", encoding="utf-8")
    error = _refusal(path)
    assert error.rule == "sheet.too-large"
    assert error.message == f"{path}: line 2 is longer than 1.0 MB; the file is not read further"
    assert "CUSTOMS_BATCH_MAX_LINE_MB=2" in (error.hint or "")
    monkeypatch.setenv("CUSTOMS_BATCH_MAX_LINE_MB", "2")
    refused = _refusal(path)
    assert refused.message == (
        f"{path}, row 2 (from line 2): a cell holds more than 131,072 characters, where a "
        "spreadsheet cell holds at most 32,767"
    )
    assert "a quote that is never closed" in (refused.hint or "")


def test_a_csv_row_of_more_columns_than_a_spreadsheet_has_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{n}" for n in range(20_000)) + "\n1\n", encoding="utf-8")
    error = _refusal(path)
    assert error.rule == "sheet.too-large"
    assert "row 1 has 20,000 columns, more than a spreadsheet can have (16,384" in error.message


def test_shared_strings_over_max_cells_are_refused_before_the_reader_keeps_them(
    tmp_path: Path,
) -> None:
    path = write_with_shared_strings(tmp_path / "s.xlsx", small_sheet(), ["s"] * 11)
    error = _refusal(path, SheetLimits(cells=10))
    assert error.rule == "sheet.too-large"
    assert error.message == (
        f"{path}: its shared-strings part holds more strings than the sheet may have cells, "
        "over the limit of 10 (forEach maxCells)"
    )
    assert [row.number for row in read_rows(RowSource(path, limits=SheetLimits(cells=11)))]


def test_a_value_over_the_line_bound_is_refused_before_the_reader_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found by an outside probe: a 400 KB workbook whose one cell held 400 MB took 3-4 GB
    # to validate (and the process aborted under a memory limit, with no finding).
    huge = "x" * (3 * 1024 * 1024)
    inline = write_xlsx(
        tmp_path / "inline.xlsx",
        sheet_xml(
            '<row r="1">'
            + inline_cell("A1", "hawb")
            + '</row><row r="2">'
            + inline_cell("A2", huge)
            + "</row>"
        ),
    )
    shared = write_with_shared_strings(
        tmp_path / "shared.xlsx",
        sheet_xml(
            '<row r="1"><c r="A1" t="s"><v>0</v></c></row>'
            '<row r="2"><c r="A2" t="s"><v>1</v></c></row>'
        ),
        ["hawb", huge],
    )
    for path in (inline, shared):
        error = _refusal(path)
        assert error.rule == "sheet.too-large", error.message
        assert "longer than 1 MB" in error.message
        assert "CUSTOMS_BATCH_MAX_LINE_MB" in (error.hint or "")
    monkeypatch.setenv("CUSTOMS_BATCH_MAX_LINE_MB", "4")
    for path in (inline, shared):
        [row] = read_rows(RowSource(path))
        assert len(row.values["hawb"]) == len(huge)


def test_cells_without_references_are_placed_within_their_row(tmp_path: Path) -> None:
    # Found by an outside probe: a sheet of 5,000 rows of 2 cells, none with a reference
    # (the format allows it), was refused as 5,001 rows by 10,002 columns.
    rows = "".join(
        f'<row><c t="inlineStr"><is><t>{a}</t></is></c><c t="inlineStr"><is><t>{b}</t></is></c></row>'
        for a, b in [("hawb", "shipment"), *((f"h{i}", f"s{i}") for i in range(5_000))]
    )
    path = write_xlsx(tmp_path / "plain.xlsx", sheet_xml(rows, dimension="A1"))
    read = list(read_rows(RowSource(path, limits=SheetLimits(cells=20_000))))
    assert len(read) == 5_000 and read[-1].values == {"hawb": "h4999", "shipment": "s4999"}


@pytest.mark.parametrize(
    "below",
    [
        # Excel, or xlsxwriter's set_row, formatting every row to the sheet's end
        "".join(f'<row r="{n}" s="1" customFormat="1"/>' for n in (3, 4, 1_048_575, 1_048_576)),
        # a styled cell without a value in the last row
        '<row r="1048576"><c r="A1048576" s="1"/></row>',
    ],
    ids=["formatted-rows", "styled-cell"],
)
def test_rows_formatted_to_the_sheet_end_without_values_are_no_reason_to_refuse(
    tmp_path: Path, below: str
) -> None:
    # Found by an outside probe: a 12-column sheet with its empty rows formatted down to
    # row 1,048,576 was refused as "1,048,576 rows by 12 columns", over maxCells, though
    # the reader holds 2 rows of it: only cells holding a value make the used range.
    header = "".join(inline_cell(f"{chr(65 + i)}1", f"c{i}") for i in range(12))
    row = "".join(inline_cell(f"{chr(65 + i)}2", f"v{i}") for i in range(12))
    sheet = sheet_xml(
        f'<row r="1">{header}</row><row r="2">{row}</row>{below}', dimension="A1:L1048576"
    )
    path = write_xlsx(tmp_path / "formatted.xlsx", sheet)
    [read] = read_rows(RowSource(path))
    assert read.number == 2 and read.values["c11"] == "v11"
