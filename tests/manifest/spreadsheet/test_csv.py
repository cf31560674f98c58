from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from customs_batch.manifest.spreadsheet import RowSource, SheetError, csvfile, read_rows
from customs_batch.manifest.spreadsheet.copy import open_copy
from customs_batch.manifest.spreadsheet.csvfile import detect_delimiter


@pytest.mark.parametrize(
    ("raw", "encoding"),
    [
        ("hawb;packages;note\r\nhawb_a1;10;Café 5€\r\n".encode("utf-8-sig"), "BOM"),
        ("hawb;packages;note\r\nhawb_a1;10;Café 5€\r\n".encode(), "utf-8"),
        ("hawb;packages;note\r\nhawb_a1;10;Café 5€\r\n".encode("cp1252"), "cp1252"),
        ("hawb\tpackages\tnote\nhawb_a1\t10\tCafé 5€\n".encode(), "tabs"),
        # Excel for Mac's "CSV (Macintosh)": lines ended by CR alone, in Mac Roman (read as
        # Windows-1252, Café 5€ was CafŽ 5Û)
        ("hawb;packages;note\rhawb_a1;10;Café 5€\r".encode("mac_roman"), "mac"),
        ('hawb,packages,note\nhawb_a1,10,"Café 5€"\n'.encode(), "commas"),
    ],
)
def test_exports_as_spreadsheet_programs_write_them(
    tmp_path: Path, raw: bytes, encoding: str
) -> None:
    path = tmp_path / "m.csv"
    path.write_bytes(raw)
    (row,) = read_rows(RowSource(path))
    assert row.values == {"hawb": "hawb_a1", "packages": "10", "note": "Café 5€"}, encoding
    assert row.number == 2


def test_quoted_newlines_blank_rows_and_row_numbers(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_bytes(b'ref;note;qty\r\nR-1;"two\r\nlines";1\r\n;;\r\n\r\nR-2;"say ""hi""";0150\r\n')
    rows = list(read_rows(RowSource(path)))
    assert [(r.number, r.values["ref"]) for r in rows] == [(2, "R-1"), (5, "R-2")]
    assert rows[0].values["note"] == "two\nlines"  # as a workbook cell holds it
    assert rows[1].values == {"ref": "R-2", "note": 'say "hi"', "qty": "0150"}


def test_short_rows_give_none_for_missing_cells(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text("a,b,c\n1\n")
    assert [r.values for r in read_rows(RowSource(path))] == [{"a": "1", "b": None, "c": None}]


def test_an_encoding_that_does_not_fit_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_bytes(b"a\n" + b"x" * 70000 + "\nCafé\n".encode("cp1252"))
    with pytest.raises(SheetError, match="not valid utf-8") as caught:
        list(read_rows(RowSource(path)))
    assert "encoding: cp1252" in str(caught.value)


def test_binary_and_missing_files_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "b.csv").write_bytes(b"\x00\x01\x02")
    with pytest.raises(SheetError, match="not a text file"):
        list(read_rows(RowSource(tmp_path / "b.csv")))
    with pytest.raises(SheetError, match="does not exist"):
        list(read_rows(RowSource(tmp_path / "none.csv")))
    (tmp_path / "e.csv").write_bytes(b"")
    with pytest.raises(SheetError, match="is empty: it holds no text"):
        list(read_rows(RowSource(tmp_path / "e.csv")))


def test_the_delimiter_is_the_one_splitting_the_header_outside_quotes() -> None:
    assert detect_delimiter('"a;b",c,d\r\n') == ","
    assert detect_delimiter("a;b;c") == ";"
    assert detect_delimiter("single") == ","


@pytest.mark.parametrize(
    "title",
    ["Export, week 12, 2026\n", '"Export, week 12,\n2026, all lines"\n', "\ufeffExport, a, b\n"],
)
def test_the_delimiter_is_guessed_from_the_header_row_not_a_title_above(
    tmp_path: Path, title: str
) -> None:
    path = tmp_path / "m.csv"
    path.write_text(title + "Code;Name\nA;Acme, Inc\n", encoding="utf-8")
    (row,) = read_rows(RowSource(path, header_row=2))
    assert row.values == {"Code": "A", "Name": "Acme, Inc"}


def test_a_quote_never_closed_is_an_error_at_the_line_it_opened_on(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text('ref,comment\nR-1,ok\nR-2,"fragile\nR-3,x\nR-4,y\n')
    with pytest.raises(SheetError) as caught:
        list(read_rows(RowSource(path)))
    error = caught.value
    assert error.row == 3
    assert str(error).startswith(
        f"{path}, line 3: the quote that opens column B of row 3 is never closed"
    )
    assert "2 more lines" in str(error)
    assert error.hint is not None and '"""fragile"' in error.hint


def test_an_open_quote_after_quoted_newlines_names_the_line_it_opened_on(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text('ref;note;comment\nR-1;"two\nlines";"open\nR-2;a;b\n')
    with pytest.raises(SheetError, match=r"line 3: the quote that opens column C of row 2"):
        list(read_rows(RowSource(path)))


def test_a_quote_never_closed_on_the_last_line_is_an_error_too(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text('ref,comment\nR-1,"open')
    with pytest.raises(SheetError, match=r"line 2: the quote .* row 2 is never closed"):
        list(read_rows(RowSource(path)))


def test_values_beyond_the_header_stop_their_row_only(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    # Row 3's weight 60,5 was not quoted: the row has one value more than the header.
    path.write_text("ref,weight,party\nR-1,40,p1\nR-2,60,5,p2\nR-3,7,p3,,\n")
    rows = list(read_rows(RowSource(path)))
    assert [(row.number, row.problem is None) for row in rows] == [(2, True), (3, False), (4, True)]
    problem = rows[1].problem
    assert problem is not None
    assert (problem.column, problem.rule) == (4, "row.beyond-header")
    assert problem.message == (
        "row 3 has 4 values where the header (row 1) names 3 columns: 'p2' in column D "
        "has no column name"
    )
    assert "quote a value that holds the delimiter" in problem.hint


def test_a_value_under_a_blank_header_cell_stops_its_row(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text("Ref,,Qty\nr1,6 pallets - fragile,1\nr2,,2\n")
    first, second = read_rows(RowSource(path))
    assert first.values == {"Ref": "r1", "Qty": "1"} and second.problem is None
    assert first.problem is not None
    assert (first.problem.column, first.problem.rule) == (2, "row.unnamed-column")
    assert first.problem.message == (
        "cell B2 holds '6 pallets - fragile', but column B has no name in the header "
        "(row 1): no column name reads it"
    )


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_declared_utf16_or_utf32_encoding_is_read(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "m.csv"
    path.write_bytes("hawb\tnote\r\nhawb_a1\tCafé 5€\r\n".encode(encoding))
    (row,) = read_rows(RowSource(path, encoding=encoding))
    assert row.values == {"hawb": "hawb_a1", "note": "Café 5€"}


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_excel_unicode_text_is_read_by_its_bom(tmp_path: Path, encoding: str) -> None:
    # Excel's "Unicode Text" export: UTF-16 LE with a BOM, tab-delimited.
    bom = {"utf-16": b"", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}[encoding]
    path = tmp_path / "m.txt"
    path.write_bytes(bom + "hawb\tnote\r\nhawb_a1\tCafé 5€\r\n".encode(encoding))
    (row,) = read_rows(RowSource(path))
    assert row.values == {"hawb": "hawb_a1", "note": "Café 5€"}


def test_a_binary_file_is_refused_even_with_an_encoding(tmp_path: Path) -> None:
    path = tmp_path / "b.csv"
    book = openpyxl.Workbook()
    book.save(path)  # a workbook named .csv
    with pytest.raises(SheetError, match="not a text file"):
        list(read_rows(RowSource(path)))
    for encoding in ("utf-8", "utf-16-le"):
        with pytest.raises(SheetError, match="not a text file"):
            list(read_rows(RowSource(path, encoding=encoding)))


@pytest.mark.parametrize(
    "raw",
    [
        b"sep=;\r\nRef;Code\r\na1;G1\r\n",
        "sep=;\nRef;Code\na1;G1\n".encode("utf-8-sig"),
        b"sep=|\nRef|Code\na1|G1\n",
        # Excel reads the line in any case; a program writing it as a row quotes it (it
        # holds the delimiter) or pads it to the header's width; a space may trail it.
        b"SEP=;\r\nRef;Code\r\na1;G1\r\n",
        b'"sep=;"\r\nRef;Code\r\na1;G1\r\n',
        b'"sep=,",\nRef,Code\na1,G1\n',
        b"sep=;;\r\nRef;Code\r\na1;G1\r\n",
        b"Sep=; \nRef;Code\na1;G1\n",
    ],
)
def test_an_excel_sep_line_names_the_delimiter_and_is_not_a_row(tmp_path: Path, raw: bytes) -> None:
    # The line was read as the header: every column 'missing', "The columns are: 'sep='".
    # As in Excel, it is not shown: the header is row 1, the data from row 2.
    path = tmp_path / "m.csv"
    path.write_bytes(raw)
    (row,) = read_rows(RowSource(path))
    assert (row.number, row.values) == (2, {"Ref": "a1", "Code": "G1"})
    assert row.places is not None and row.places.line == 3  # the file's own line


def test_a_header_whose_first_column_is_named_sep_is_a_header(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_bytes(b"sep=;Code\r\na1;G1\r\n")
    (row,) = read_rows(RowSource(path))
    assert (row.number, row.values) == (2, {"sep=": "a1", "Code": "G1"})


def test_lines_after_an_excel_sep_line_are_named_by_the_files_line(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text('sep=,\nref,comment\nR-1,ok\nR-2,"fragile\nR-3,x\n')
    with pytest.raises(SheetError) as caught:
        list(read_rows(RowSource(path)))
    assert caught.value.row == 3
    assert str(caught.value).startswith(f"{path}, line 4: the quote that opens column B of row 3")


def test_the_annotated_copy_of_a_csv_leaves_its_sep_line_out(tmp_path: Path) -> None:
    from customs_batch.manifest.spreadsheet.copy import open_copy

    path = tmp_path / "m.csv"
    path.write_bytes(b'"SEP=;";\r\nRef;Code\r\na1;G1\r\n')
    sheet = open_copy(path, "m")["m"]
    assert [list(row) for row in sheet.iter_rows(values_only=True)] == [
        ["Ref", "Code"],
        ["a1", "G1"],
    ]


def test_the_annotated_copy_leaves_out_a_sep_line_padded_to_a_wide_header(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.csv"
    names = ";".join(f"c{n}" for n in range(100))
    path.write_text(f"sep={';' * 100}\n{names}\n" + "x;" * 99 + "x\n")
    (row,) = read_rows(RowSource(path))
    assert row.number == 2 and row.values["c99"] == "x"
    sheet = open_copy(path, "m")["m"]
    assert [row[0] for row in sheet.iter_rows(values_only=True)] == ["c0", "x"]


def test_a_stray_nul_byte_is_an_error_at_its_cell_not_a_binary_file(tmp_path: Path) -> None:
    # Found by an outside probe: one NUL byte in row 3 (left by the program that wrote the
    # export) made the whole file "not a text file", with no word of where and the hint to
    # use a .xlsx file; the same byte past the first 64 KB was read, an error at its cell.
    path = tmp_path / "m.csv"
    path.write_bytes(b"hawb,packages\nhawb_a1,4\nhawb_a2\x00,5\n")
    rows = list(read_rows(RowSource(path)))
    assert [(row.number, dict(row.values)) for row in rows] == [
        (2, {"hawb": "hawb_a1", "packages": "4"}),
        (3, {"hawb": "hawb_a2\x00", "packages": "5"}),
    ]
    for binary in (b"PK\x03\x04\x00rest", b"a,b\n" + b"\x00" * 17, b"\x00\x01\x02"):
        path.write_bytes(binary)
        with pytest.raises(SheetError, match="not a text file"):
            list(read_rows(RowSource(path)))


def test_a_row_repeating_the_header_is_a_problem_of_its_row(tmp_path: Path) -> None:
    # Found by an outside probe: a second export pasted below the first repeats the header
    # row; read as data, its column names became a document's values (a declaration whose
    # reference is "Reference"), or nine errors at its cells that did not say why.
    path = tmp_path / "m.csv"
    path.write_text("Ref,Packages,Note\nR-1,4,\nRef,Packages, Note\nR-2,5,Ref\nPackages,6,\n")
    rows = {row.number: row for row in read_rows(RowSource(path))}
    assert sorted(rows) == [2, 3, 4, 5]
    problem = rows[3].problem
    assert problem is not None and problem.rule == "row.repeated-header" and problem.column == 1
    assert problem.message.startswith("row 3 repeats the column names of the header (row 1)")
    assert [rows[n].problem for n in (2, 4, 5)] == [None, None, None]


def test_a_row_repeating_the_header_in_another_case_is_one_too(tmp_path: Path) -> None:
    # Found by a probe: a second export with its header in lower case was read as data.
    path = tmp_path / "m.csv"
    path.write_text("Ref,Packages,Note\nR-1,4,\nref,PACKAGES,\nR-2,5,\n")
    rows = {row.number: row for row in read_rows(RowSource(path))}
    problem = rows[3].problem
    assert problem is not None and problem.rule == "row.repeated-header"
    assert [rows[n].problem for n in (2, 4)] == [None, None]


def test_a_copy_splits_a_csv_file_by_the_delimiter_its_header_row_splits_most(
    tmp_path: Path,
) -> None:
    # Found by an outside probe: a title line "Export, week 12, site A" above a
    # tab-separated sheet whose notes held two commas each: as many lines split alike by
    # commas as by tabs, and the title line chose the commas. The annotated copy held each
    # row in one cell (the access code column left in it), its findings on other cells.
    path = tmp_path / "m.csv"
    path.write_text(
        "Export, week 12, site A\nRef\tPackages\tWeight\tNote\nR-1\t4\t40\tfragile, top, dry\n"
        "R-2\tx\t60\twet, left, up\n"
    )
    rows = list(read_rows(RowSource(path, header_row=2)))
    assert rows[1].values == {
        "Ref": "R-2",
        "Packages": "x",
        "Weight": "60",
        "Note": "wet, left, up",
    }
    copy = open_copy(path, csv_sheet="m")
    assert [[cell.value for cell in line] for line in copy["m"].iter_rows(min_row=2)] == [
        ["Ref", "Packages", "Weight", "Note"],
        ["R-1", "4", "40", "fragile, top, dry"],
        ["R-2", "x", "60", "wet, left, up"],
    ]


@pytest.mark.parametrize("block", [1, 2, 3, 7, 1 << 20])
@pytest.mark.parametrize("streak", [1, 2, 64])
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_blank_lines_keep_every_row_and_line_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int, streak: int, encoding: str
) -> None:
    """Blank lines after the header are passed over in blocks, not one by one through the
    CSV reader; each still counts as a row and as a line, whichever line break it ends
    with (a \\r\\n split across two blocks is one line), and a blank line inside a quoted
    cell stays in the cell."""
    monkeypatch.setattr(csvfile, "_BLANK_BLOCK", block)
    monkeypatch.setattr(csvfile, "_BLANK_STREAK", streak)
    text = '\n\rref,note\r\n\r\n\n\rR-1,x\n\r\n\r\r\nR-2,"a\n\n\r\nb"\n\n\n\rR-3,"q"""\r\r\n\n'
    path = tmp_path / "m.csv"
    path.write_bytes(text.encode(encoding))
    rows = list(read_rows(RowSource(path, header_row=3)))
    assert [(r.number, r.values["ref"], r.values["note"]) for r in rows] == [
        (7, "R-1", "x"),
        (11, "R-2", "a\n\n\nb"),  # each line break \n, as a workbook cell holds it
        (15, "R-3", 'q"'),  # a row of three lines above counts once
    ]
    assert [r.places.line for r in rows if r.places is not None] == [7, 11, 18]


def test_blank_lines_do_not_each_go_through_the_csv_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 100 MB file of blank lines took 72 s before "no data rows": each line went
    through the CSV reader and the row loop. The lines the reader is given are counted."""
    given: list[str] = []
    reader = csv.reader

    def counting(lines: Iterable[str], **options: Any) -> Any:
        def seen(line: str) -> str:
            given.append(line)
            return line

        return reader(map(seen, lines), **options)

    monkeypatch.setattr(csv, "reader", counting)
    path = tmp_path / "m.csv"
    path.write_text("ref,note\n" + "\n" * 100_000 + "R-1,x\n" + "\r\n" * 100_000)
    rows = list(read_rows(RowSource(path)))
    assert [(r.number, r.values["ref"]) for r in rows] == [(100_002, "R-1")]
    assert len(given) < 10


def test_the_annotated_copy_of_a_csv_macintosh_export_keeps_its_accents(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_bytes("Ref;Note\rR-1;Müller 5€\r".encode("mac_roman"))
    sheet = open_copy(path, "m")["m"]
    assert [list(row) for row in sheet.iter_rows(values_only=True)][1] == ["R-1", "Müller 5€"]


@pytest.mark.parametrize("stated", [None, "cp1252"])
def test_a_file_windows_1252_cannot_read_names_another_encoding_to_state(
    tmp_path: Path, stated: str | None
) -> None:
    # Byte 81 is no Windows-1252 character: the hint said to state `encoding: cp1252`, the
    # very encoding the file had just failed in.
    path = tmp_path / "m.csv"
    path.write_bytes(b"Ref;Note\r\nR-1;caf\xe9\r\nR-2;\x81\r\n")
    with pytest.raises(SheetError) as caught:
        list(read_rows(RowSource(path, encoding=stated)))
    assert caught.value.message.endswith(
        "line 3: the byte 81 is not valid cp1252 (byte 24 of the file)"
    )
    assert "`encoding: cp1252`" not in (caught.value.hint or "")
    assert "`encoding: mac_roman`" in (caught.value.hint or "")


@pytest.mark.parametrize("content", [b"", b"\xef\xbb\xbf"])
def test_an_empty_csv_file_is_said_to_be_empty(tmp_path: Path, content: bytes) -> None:
    # It said "has no row 1 to take the header from" (check `header:`), for a 0-byte file.
    path = tmp_path / "m.csv"
    path.write_bytes(content)
    with pytest.raises(SheetError) as caught:
        list(read_rows(RowSource(path)))
    assert caught.value.message == f"{path} is empty: it holds no text"
    path.write_bytes(b"Ref;Code\r\n")
    with pytest.raises(SheetError, match="has no row 3 to take the header from"):
        list(read_rows(RowSource(path, header_row=3)))


@pytest.mark.parametrize(
    "content",
    [
        b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body></body></html>\n",
        b"\xef\xbb\xbf <html><body><table><tr><td>Ref</td></tr><tr><td>a1</td></tr></table>",
        b"<table>\r\n<tr><td>Ref</td></tr>\r\n</table>\r\n",
    ],
)
def test_an_html_page_named_csv_is_an_error_not_a_file_without_rows(
    tmp_path: Path, content: bytes
) -> None:
    # A login page a download returned under the export's name read as a CSV of one column
    # named '<!DOCTYPE html>' and no data row: a warning, exit 0, nothing sent, no word why.
    path = tmp_path / "m.csv"
    path.write_bytes(content)
    with pytest.raises(SheetError) as caught:
        list(read_rows(RowSource(path)))
    assert caught.value.message.startswith(f"{path} is an HTML page, not CSV")


def test_a_workbook_named_csv_says_to_rename_it(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    book = openpyxl.Workbook()
    book.save(path)
    with pytest.raises(SheetError) as caught:
        list(read_rows(RowSource(path)))
    assert (caught.value.hint or "").startswith("it is an Excel workbook (.xlsx) named .csv")


def test_text_that_starts_with_a_bracket_is_csv(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_bytes(b"<Ref>;Code\r\na1;G1\r\n")
    (row,) = read_rows(RowSource(path))
    assert row.values == {"<Ref>": "a1", "Code": "G1"}


def test_an_excel_ms_dos_export_is_never_read_as_windows_1252_without_a_word(
    tmp_path: Path,
) -> None:
    # Excel's "CSV (MS-DOS)" export is code page 850, whose ö (byte 94) Windows-1252 reads
    # as ”: with no byte Windows-1252 lacks, Köln was read, and declared, as K”ln.
    path = tmp_path / "m.csv"
    path.write_bytes("Ref;Place\r\nR-1;Hamburg\r\nR-2;Köln\r\n".encode("cp850"))
    with pytest.raises(SheetError) as caught:
        list(read_rows(RowSource(path)))
    assert caught.value.message.endswith(
        "line 3: 'K”ln', as Windows-1252 (the encoding guessed) reads it, has a typographic "
        "quote, dash or sign in the word; in code page 850, the encoding of Excel's "
        "\"CSV (MS-DOS)\" export, it reads 'Köln'"
    )
    assert "`encoding: cp850` if 'Köln' is right" in (caught.value.hint or "")
    assert [r.values["Place"] for r in read_rows(RowSource(path, encoding="cp850"))] == [
        "Hamburg",
        "Köln",
    ]
    # A capital Ö (byte 99) starting a word is ™ in Windows-1252.
    path.write_bytes("Ref;Place\r\nR-1;Österreich\r\n".encode("cp850"))
    with pytest.raises(SheetError, match="'\u2122sterreich', as Windows-1252") as caught:
        list(read_rows(RowSource(path)))
    assert "`encoding: cp850` if 'Österreich' is right" in (caught.value.hint or "")
    path.write_bytes("Ref;Place\r\nR-1;Hamburg\r\nR-2;Köln\r\n".encode("cp850"))
    # Stated, Windows-1252 is read as stated.
    assert [r.values["Place"] for r in read_rows(RowSource(path, encoding="cp1252"))][1] == ("K”ln")


@pytest.mark.parametrize(
    "text",
    [
        "O\u2019Brien\u2019s \u201eZitat\u201c \u2013 5\u20ac",
        "\u201cQuoted\u201d text\u2026",
        "\u0160koda \u0152uvre",
        "10\u201320 kg",
        "Brand\u2122 Cola",
        "M\u00fcller\u2013Smith",  # ü is a Windows-1252 letter, code page 850's ³
    ],
)
def test_windows_1252_punctuation_between_words_is_read_as_written(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "m.csv"
    path.write_bytes(f"Ref;Note\r\nR-1;{text}\r\n".encode("cp1252"))
    assert [r.values["Note"] for r in read_rows(RowSource(path))] == [text]


@pytest.mark.parametrize("stated", ["cp1252", "cp850", "latin-1", "mac_roman"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_a_utf8_file_stated_in_a_one_byte_encoding_is_refused_naming_utf8(
    tmp_path: Path, stated: str, bom: bytes
) -> None:
    # Reported: the export was made "CSV UTF-8", the manifest still said `encoding:
    # cp1252`, and every Köln was declared KÃ¶ln (with a BOM, the first column was named
    # 'ï»¿Ref', and the hint said to write row['ï»¿Ref']).
    path = tmp_path / "m.csv"
    path.write_bytes(bom + ("Ref;Place\r\n" + "R-1;Hamburg\r\n" * 5000 + "R-2;Köln\r\n").encode())
    with pytest.raises(SheetError, match=f"is UTF-8 text, not {stated}") as caught:
        list(read_rows(RowSource(path, encoding=stated)))
    assert "leave `encoding` out of forEach" in (caught.value.hint or "")
    garbled = "Köln".encode().decode(stated)
    assert caught.value.message.endswith(f": read as {stated}, 'Köln' would be '{garbled}'")


def test_a_file_utf8_by_chance_or_in_part_is_read_as_stated(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    # Windows-1252 whose Ú” is a valid UTF-8 sequence (U+0694, no European letter).
    path.write_bytes("Ref;Place\r\nR-1;“PERÚ”\r\n".encode("cp1252"))
    assert [r.values["Place"] for r in read_rows(RowSource(path, encoding="cp1252"))] == ["“PERÚ”"]
    # UTF-8 but for a line of another encoding, far into the file: the user's word is taken.
    path.write_bytes(
        ("Ref;Place\r\n" + "R-1;Köln\r\n" * 10000).encode() + "R-2;Café\r\n".encode("cp1252")
    )
    rows = list(read_rows(RowSource(path, encoding="cp1252")))
    assert rows[-1].values["Place"] == "Café"
    # ASCII, stated: read.
    path.write_bytes(b"Ref;Place\r\nR-1;Hamburg\r\n")
    assert len(list(read_rows(RowSource(path, encoding="cp850")))) == 1


def test_header_names_are_written_as_a_person_reads_and_types_them(tmp_path: Path) -> None:
    # A no-break space (a header copied from a web page), a zero-width space or a stray NUL
    # in a header cell made a name no one could type: the hint said row['Gross\xa0weight'].
    path = tmp_path / "m.csv"
    header = 'Ref;Gross\xa0weight;\u200bPlace;Pa\x00rty;"Net\r\n weight";\u200b'
    path.write_bytes(f"{header}\r\nR-1;1;Köln;p;2;\r\n".encode())
    (row,) = read_rows(RowSource(path))
    assert row.values == {
        "Ref": "R-1",
        "Gross weight": "1",
        "Place": "Köln",
        "Party": "p",
        "Net weight": "2",
    }
