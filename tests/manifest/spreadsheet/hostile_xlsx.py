"""Hand-written minimal XLSX files: a few hundred bytes that claim a huge sheet or expand to
one, to check that the reader refuses them before anything allocates the sheet."""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path

from customs_batch.findings import column_letter

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
_ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
    "</Relationships>"
)
_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
    "</Relationships>"
)
_SHEET_START = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
)


def inline_cell(ref: str, text: str) -> str:
    """One cell holding ``text`` (an inline string, so no shared-strings part is needed)."""
    return f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>'


def sheet_xml(rows: str, dimension: str = "A1:B2") -> str:
    """A worksheet whose sheetData is ``rows`` (``<row>`` elements)."""
    return f'{_SHEET_START}<dimension ref="{dimension}"/><sheetData>{rows}</sheetData></worksheet>'


def write_xlsx(path: Path, sheet: str | bytes) -> Path:
    """A workbook with one sheet named Data whose XML is ``sheet``, deflated."""
    with _workbook(path) as book:
        book.writestr("xl/worksheets/sheet1.xml", sheet)
    return path


def write_with_shared_strings(path: Path, sheet: str, strings: Sequence[str]) -> Path:
    """A workbook whose sheet is ``sheet`` and whose shared-strings part holds ``strings``."""
    items = "".join(f"<si><t>{text}</t></si>" for text in strings)
    with _workbook(path) as book:
        book.writestr("xl/worksheets/sheet1.xml", sheet)
        book.writestr(
            "xl/sharedStrings.xml",
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
            f'count="{len(strings)}" uniqueCount="{len(strings)}">{items}</sst>',
        )
    return path


def write_shared_strings_bomb(path: Path, strings: int, headers: Sequence[str]) -> Path:
    """A row of ``headers``, and a shared-strings part of ``strings`` empty strings (five
    bytes each uncompressed; a reader keeps every one)."""
    header = "".join(inline_cell(f"{column_letter(n)}1", h) for n, h in enumerate(headers, 1))
    start = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    with _workbook(path, level=1) as book:
        book.writestr("xl/worksheets/sheet1.xml", sheet_xml(f'<row r="1">{header}</row>'))
        with book.open("xl/sharedStrings.xml", "w") as part:
            part.write(start.encode())
            block = b"<si/>" * 1_000_000
            for _ in range(strings // 1_000_000):
                part.write(block)
            part.write(b"<si/>" * (strings % 1_000_000) + b"</sst>")
    return path


def missing_shared_string_sheet() -> str:
    """A header row, and a data row whose cell names shared string 7 (of one)."""
    return sheet_xml(
        '<row r="1">' + inline_cell("A1", "hawb") + "</row>"
        '<row r="2"><c r="A2" t="s"><v>7</v></c></row>'
    )


def write_bomb(path: Path, megabytes: int, headers: Sequence[str] = ("hawb",)) -> Path:
    """A zip bomb: a row of ``headers``, then ``megabytes`` MB of empty rows, which deflate
    about two hundred to one (fast to write: about 450 KB per 100 MB)."""
    header = "".join(inline_cell(f"{column_letter(n)}1", h) for n, h in enumerate(headers, 1))
    start, end = sheet_xml(f'<row r="1">{header}</row>').split("</sheetData>")
    block = b"<row/>" * (1024 * 1024 // 6)
    with _workbook(path, level=1) as book, book.open("xl/worksheets/sheet1.xml", "w") as sheet:
        sheet.write(start.encode())
        for _ in range(megabytes):
            sheet.write(block)
        sheet.write(f"</sheetData>{end}".encode())
    return path


def _workbook(path: Path, level: int = 9) -> zipfile.ZipFile:
    book = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=level)
    book.writestr("[Content_Types].xml", _CONTENT_TYPES)
    book.writestr("_rels/.rels", _ROOT_RELS)
    book.writestr("xl/workbook.xml", _WORKBOOK)
    book.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
    return book


def small_sheet() -> str:
    """A header row and one data row."""
    return sheet_xml(
        '<row r="1">' + inline_cell("A1", "hawb") + inline_cell("B1", "packages") + "</row>"
        '<row r="2">' + inline_cell("A2", "h1") + '<c r="B2"><v>4</v></c></row>'
    )


def far_corner_sheet() -> str:
    """A header in A1 and one cell at XFD1048576, the last cell a sheet can have: the used
    range is every cell of the sheet (17 billion)."""
    return sheet_xml(
        '<row r="1">' + inline_cell("A1", "hawb") + "</row>"
        '<row r="1048576">' + inline_cell("XFD1048576", "x") + "</row>",
        dimension="A1:XFD1048576",
    )


def understate_sheet_size(path: Path, size: int) -> None:
    """Make the zip's central directory claim the sheet holds ``size`` bytes, as a forged
    zip bomb does (the data and its checksum stay as they are)."""
    data = bytearray(path.read_bytes())
    name = b"xl/worksheets/sheet1.xml"
    at = 0
    while True:
        at = data.index(b"PK\x01\x02", at)
        name_length = int.from_bytes(data[at + 28 : at + 30], "little")
        if data[at + 46 : at + 46 + name_length] == name:
            data[at + 24 : at + 28] = size.to_bytes(4, "little")
            break
        at += 4
    path.write_bytes(bytes(data))
