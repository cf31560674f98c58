"""Where a CSV row's cells are in the file's text: the physical line and character column,
also below a quoted cell that holds line breaks."""

from __future__ import annotations

import csv
import pickle
from pathlib import Path

import pytest

from customs_batch.manifest.record_places import RecordPlaces, record_places
from customs_batch.manifest.spreadsheet import RowSource, read_rows


def _places(text: str, delimiter: str = ";", line: int = 1) -> tuple[list[str], RecordPlaces]:
    lines = text.splitlines(keepends=True)
    (record,) = csv.reader(lines, delimiter=delimiter, strict=False)
    return record, record_places(line, lines, record, delimiter)


def _cell_at(text: str, line: int, column: int, first: int = 1) -> str:
    """The text from (line, column) on, as an editor shows it."""
    return text.splitlines()[line - first][column - 1 :]


@pytest.mark.parametrize(
    "text",
    [
        "a;bb;;dddd\r\n",
        'a;"b;b";"";"d""d"\r\n',
        '"Gewürze\r\nin Säcken";090421;"x\ny\r\nz";q\n',
        'x"y;"a"b;c\n',  # a quote inside an unquoted cell is text; text after a closing one
        "only\n",
        '"open only at the end";"two\nlines"\n',
    ],
)
def test_each_cell_is_at_its_first_character_in_the_text(text: str) -> None:
    record, places = _places(text, line=7)
    for number, value in enumerate(record, start=1):
        line, column = places.at(number)
        shown = _cell_at(text, line, column, first=7)
        if value:  # at its first character, or at the quote that opens it
            assert shown.startswith((value[0], f'"{value[0]}')), (number, shown)
        else:  # an empty cell: at the delimiter after it, or at its two quotes
            assert shown[:1] in ("", ";", '"'), (number, shown)
        if number > 1:  # right after the delimiter that ends the cell before
            before = text.splitlines(keepends=True)[line - 7][: column - 1]
            assert before.endswith(";") or column == 1, (number, before)
    assert places.at(0) == (7, 0)  # the whole row: its first line
    assert places.line == 7


def test_a_cell_after_a_quoted_cell_of_two_lines_is_on_the_second_line() -> None:
    record, places = _places('R-1;"two\r\nlines";1\r\n', line=2)
    assert record == ["R-1", "two\r\nlines", "1"]
    assert places.at(1) == (2, 1)
    assert places.at(2) == (2, 5)  # the opening quote
    assert places.at(3) == (3, 8)  # lines";1 -> '1' is the 8th character of line 3
    assert places.at(9) == (3, 9)  # right of the last value: the record's end


def test_places_pickle_as_the_bytes_they_are() -> None:
    _, places = _places('a;"b\nc";d\n', line=40_000)
    again = pickle.loads(pickle.dumps(places))
    assert type(again) is RecordPlaces and again == places and again.at(3) == (40_001, 4)


def test_rows_read_from_a_csv_file_know_their_lines(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_bytes(b'ref;note;qty\r\nR-1;"two\r\nlines";1\r\n\r\nR-2;"say ""hi""";0150\r\n')
    rows = list(read_rows(RowSource(path)))
    assert [r.number for r in rows] == [2, 4]  # the blank line is row 3
    first, second = (r.places for r in rows)
    assert first is not None and second is not None
    assert (first.at(0), first.at(3)) == ((2, 0), (3, 8))
    # Row 4 starts on line 5: row 2's cell spans two lines.
    assert (second.at(1), second.at(2), second.at(3)) == ((5, 1), (5, 5), (5, 18))
