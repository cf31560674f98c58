"""OpenDocument sheets (read through python-calamine) whose top rows and left columns are
empty: rows keep the numbers the sheet shows, and the copy `--annotate` writes keeps every
cell where it is."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from customs_batch.manifest.spreadsheet import RowSource, read_rows
from customs_batch.manifest.spreadsheet.copy import open_copy
from customs_batch.manifest.spreadsheet.model import SheetError, SheetLimits
from customs_batch.manifest.spreadsheet.workbook_check import PercentCells

_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
)


def _text(value: str) -> str:
    return (
        f'<table:table-cell office:value-type="string"><text:p>{value}</text:p></table:table-cell>'
    )


def _number(value: int) -> str:
    return (
        f'<table:table-cell office:value-type="float" office:value="{value}">'
        f"<text:p>{value}</text:p></table:table-cell>"
    )


def write_ods(path: Path, tables: str | None = None) -> Path:
    """Rows 1 and 2 empty, column A empty: the header in B3:C3, a row in B4:C4 (or
    ``tables``, the spreadsheet's XML)."""
    empty = "<table:table-cell/>"
    rows = (
        '<table:table-row table:number-rows-repeated="2">'
        '<table:table-cell table:number-columns-repeated="3"/></table:table-row>'
        f"<table:table-row>{empty}{_text('hawb')}{_text('packages')}</table:table-row>"
        f"<table:table-row>{empty}{_text('hawb_a1')}{_number(10)}</table:table-row>"
    )
    if tables is None:
        tables = f'<table:table table:name="Movements">{rows}</table:table>'
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_NS} '
        'office:version="1.2"><office:body><office:spreadsheet>'
        f"{tables}</office:spreadsheet></office:body></office:document-content>"
    )
    media = "application/vnd.oasis.opendocument.spreadsheet"
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest '
        'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" '
        'manifest:version="1.2">'
        f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{media}"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        "</manifest:manifest>"
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", media, compress_type=zipfile.ZIP_STORED)
        archive.writestr("META-INF/manifest.xml", manifest)
        archive.writestr("content.xml", content)
    return path


def test_rows_of_an_ods_sheet_under_empty_rows_keep_their_numbers(tmp_path: Path) -> None:
    path = write_ods(tmp_path / "m.ods")
    rows = list(read_rows(RowSource(path, header_row=3)))
    assert [(r.number, r.values) for r in rows] == [(4, {"hawb": "hawb_a1", "packages": 10})]


def test_the_copy_of_an_ods_sheet_keeps_each_cell_where_it_is(tmp_path: Path) -> None:
    # The empty rows and columns were added twice: 'hawb' of B3 went to C5, so the
    # highlighted cells of --annotate and --annotate-results were not the ones meant.
    sheet = open_copy(write_ods(tmp_path / "m.ods"), "m")["Movements"]
    assert sheet["B3"].value == "hawb" and sheet["C3"].value == "packages"
    assert sheet["B4"].value == "hawb_a1" and sheet["C4"].value == 10
    assert sheet.max_row == 4 and sheet.max_column == 3


def _repeated(rows: int, columns: int, value: str = "x") -> str:
    return (
        f'<table:table-row table:number-rows-repeated="{rows}">'
        f'<table:table-cell office:value-type="string" table:number-columns-repeated="{columns}">'
        f"<text:p>{value}</text:p></table:table-cell></table:table-row>"
    )


def test_an_ods_whose_repeated_cells_claim_too_many_is_refused_before_it_is_read(
    tmp_path: Path,
) -> None:
    # 837 bytes claiming 96 million cells: the reader expanded them and the process was
    # aborted past 3 GB, no finding, no file named.
    header = f"<table:table-row>{_text('Ref')}{_text('Code')}</table:table-row>"
    bomb = f'<table:table table:name="Data">{header}{_repeated(6000, 16_000_000)}</table:table>'
    path = write_ods(tmp_path / "bomb.ods", bomb)
    with pytest.raises(SheetError) as raised:
        list(read_rows(RowSource(path)))
    assert raised.value.rule == "sheet.too-large"
    assert "sheet 'Data' spans 6,001 rows by 16,000,000 columns" in raised.value.message
    assert "(forEach maxCells)" in raised.value.message and str(path) in raised.value.message


def test_the_tables_of_an_ods_count_together_since_the_reader_holds_them_all(
    tmp_path: Path,
) -> None:
    header = f"<table:table-row>{_text('Ref')}{_text('Code')}</table:table-row>"
    one = f'<table:table table:name="One">{header}{_repeated(5499, 2)}</table:table>'
    two = f'<table:table table:name="Two">{_repeated(5000, 2)}</table:table>'
    path = write_ods(tmp_path / "two.ods", one + two)
    enough = SheetLimits(cells=21_000)
    assert len(list(read_rows(RowSource(path, sheet="One", limits=enough)))) == 5499
    with pytest.raises(SheetError, match="its 2 sheets span 21,000 cells in all"):
        list(read_rows(RowSource(path, sheet="One", limits=SheetLimits(cells=20_999))))


def test_empty_repeated_rows_and_cells_after_the_last_value_do_not_count(tmp_path: Path) -> None:
    # As LibreOffice writes a sheet: one empty row repeated to the sheet's end, each of
    # 1,024 empty cells; the reader does not expand them.
    rows = (
        f"<table:table-row>{_text('Ref')}{_text('Code')}"
        '<table:table-cell table:number-columns-repeated="1022"/></table:table-row>'
        f"<table:table-row>{_text('a1')}{_text('G1')}"
        '<table:table-cell table:number-columns-repeated="1022"/></table:table-row>'
        '<table:table-row table:number-rows-repeated="1048574">'
        '<table:table-cell table:number-columns-repeated="1024"/></table:table-row>'
    )
    path = write_ods(tmp_path / "lo.ods", f'<table:table table:name="Data">{rows}</table:table>')
    rows_read = list(read_rows(RowSource(path, limits=SheetLimits(cells=4))))
    assert [r.values for r in rows_read] == [{"Ref": "a1", "Code": "G1"}]


def test_an_ods_whose_repeated_text_expands_past_max_megabytes_is_refused(tmp_path: Path) -> None:
    # Cells well under maxCells of one 100 KB text: the reader copies it into each (10,000
    # such cells took 1 GB from a small file).
    header = f"<table:table-row>{_text('Ref')}{_text('Code')}</table:table-row>"
    long = "x" * 100_000
    tables = f'<table:table table:name="Data">{header}{_repeated(300, 2, long)}</table:table>'
    path = write_ods(tmp_path / "text.ods", tables)
    with pytest.raises(SheetError) as raised:
        list(read_rows(RowSource(path, limits=SheetLimits(megabytes=50))))
    assert raised.value.rule == "sheet.too-large"
    assert "its cells' text expands to 57 MB once repeated rows and cells" in raised.value.message
    assert "over the limit of 50 MB (forEach maxMegabytes)" in raised.value.message
    # within the limit, the same text read once per cell
    one = f'<table:table table:name="Data">{header}{_repeated(2, 2, long)}</table:table>'
    rows = list(read_rows(RowSource(write_ods(tmp_path / "two.ods", one))))
    assert [row.values for row in rows] == [{"Ref": long, "Code": long}] * 2


def _percent(value: str, shown: str | None, repeated: str = "") -> str:
    cell = f'<table:table-cell office:value-type="percentage" office:value="{value}"{repeated}'
    return f"{cell}/>" if shown is None else f"{cell}><text:p>{shown}</text:p></table:table-cell>"


def test_a_percentage_cell_of_an_ods_sheet_is_the_text_it_shows(tmp_path: Path) -> None:
    # The reader gives the number alone: 40% was sent 0.4 in a text field.
    header = "".join(_text(name) for name in ("hawb", "share", "a", "b"))
    twice = ' table:number-columns-repeated="2"'
    rows = (
        f"<table:table-row>{header}</table:table-row>"
        f"<table:table-row>{_text('h1')}{_percent('0.125', '12.50%')}"
        f"{_percent('0.4', None, twice)}</table:table-row>"
        f'<table:table-row table:number-rows-repeated="2">{_text("h2")}{_percent("0.4", "40%")}'
        "</table:table-row>"
    )
    other = f"<table:table-row>{header}</table:table-row>"
    tables = (
        f'<table:table table:name="Other">{other}{other.replace("hawb", "h9")}</table:table>'
        f'<table:table table:name="Data">{rows}</table:table>'
    )
    path = write_ods(tmp_path / "p.ods", tables)
    read = list(read_rows(RowSource(path, sheet="Data")))
    assert [(r.number, r.values) for r in read] == [
        (2, {"hawb": "h1", "share": "12.50%", "a": "40%", "b": "40%"}),
        (3, {"hawb": "h2", "share": "40%", "a": None, "b": None}),
        (4, {"hawb": "h2", "share": "40%", "a": None, "b": None}),
    ]
    assert [r.values["share"].number for r in read] == [0.125, 0.4, 0.4]
    # Another table's cells at the same places are read as they are.
    (first,) = read_rows(RowSource(path))
    assert first.values["share"] == "share"


def test_the_percentages_of_repeated_rows_are_found_by_row() -> None:
    # Each repeated row was one range that every row read looked through: 50,000 rows
    # repeated twice took 50,000 looks a row.
    cells = PercentCells()
    cells.add(2, 2, 1, 1, "1%")
    for first in range(3, 20_003, 2):
        cells.add(first, first + 1, 2, 2, f"{first}%")
        cells.add(first, first + 1, 4, 5, "9%")  # another cell of the same rows
    assert cells.get(2) == {1: "1%"}
    assert cells.get(4) == {2: "3%", 4: "9%", 5: "9%"}
    assert cells.get(20_002) == {2: "20001%", 4: "9%", 5: "9%"}
    assert cells.get(1) is None and cells.get(20_003) is None
