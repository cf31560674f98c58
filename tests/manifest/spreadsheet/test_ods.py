"""OpenDocument sheets (read through python-calamine) whose top rows and left columns are
empty: rows keep the numbers the sheet shows, and the copy `--annotate` writes keeps every
cell where it is."""

from __future__ import annotations

import zipfile
from pathlib import Path

from customs_batch.manifest.spreadsheet import RowSource, read_rows
from customs_batch.manifest.spreadsheet.copy import open_copy

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


def write_ods(path: Path) -> Path:
    """Rows 1 and 2 empty, column A empty: the header in B3:C3, a row in B4:C4."""
    empty = "<table:table-cell/>"
    rows = (
        '<table:table-row table:number-rows-repeated="2">'
        '<table:table-cell table:number-columns-repeated="3"/></table:table-row>'
        f"<table:table-row>{empty}{_text('hawb')}{_text('packages')}</table:table-row>"
        f"<table:table-row>{empty}{_text('hawb_a1')}{_number(10)}</table:table-row>"
    )
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_NS} '
        'office:version="1.2"><office:body><office:spreadsheet>'
        f'<table:table table:name="Movements">{rows}</table:table>'
        "</office:spreadsheet></office:body></office:document-content>"
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
