from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.manifest.spreadsheet import RowSource, SheetError, read_rows
from customs_batch.manifest.spreadsheet.csvfile import detect_delimiter


@pytest.mark.parametrize(
    ("raw", "encoding"),
    [
        ("hawb;packages;note\r\nhawb_a1;10;Café 5€\r\n".encode("utf-8-sig"), "BOM"),
        ("hawb;packages;note\r\nhawb_a1;10;Café 5€\r\n".encode(), "utf-8"),
        ("hawb;packages;note\r\nhawb_a1;10;Café 5€\r\n".encode("cp1252"), "cp1252"),
        ("hawb\tpackages\tnote\nhawb_a1\t10\tCafé 5€\n".encode(), "tabs"),
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
    assert rows[0].values["note"] == "two\r\nlines"
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
    with pytest.raises(SheetError, match="no row 1"):
        list(read_rows(RowSource(tmp_path / "e.csv")))


def test_the_delimiter_is_the_one_splitting_the_header_outside_quotes() -> None:
    assert detect_delimiter('"a;b",c,d\r\n') == ","
    assert detect_delimiter("a;b;c") == ";"
    assert detect_delimiter("single") == ","
