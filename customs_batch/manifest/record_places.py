"""Where the cells of a CSV row are in the file's text: the physical line and the character
column each cell starts at.

A spreadsheet names a cell by its row and column; a CSV file is text, and a quoted cell may
hold line breaks, so the row number is not the line: the row after a cell of two lines starts
one line further down. A finding reported in a text format (``file:line:col``, a GitHub
annotation, a SARIF region) points at the text, so it needs the line and column there.

Each row keeps its record's first line, where each cell starts in the record's text and
where each of the record's later lines starts in it: a few integers a row, packed, worked
out as the row is read (without a character-by-character walk for a record without quotes).
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import accumulate


class RecordPlaces(bytes):
    """The text places of one CSV record (one spreadsheet row), packed in bytes (a
    spreadsheet of 100,000 rows keeps one for each): the physical line (1-based) the record
    starts on, how many lines it spans beyond that one, where each of those starts in the
    record's text (a quoted cell holding line breaks), then how many characters of the text
    each cell takes (its quotes included), from which where each starts follows."""

    __slots__ = ()

    @classmethod
    def of(cls, line: int, widths: Iterable[int], breaks: Sequence[int] = ()) -> RecordPlaces:
        """The places of a record on ``line`` whose cells take ``widths`` characters of its
        text, one delimiter between two, and whose later lines start at ``breaks``."""
        packed = array("I", (line, len(breaks)))
        packed.extend(breaks)
        packed.extend(widths)
        return cls(packed.tobytes())

    @property
    def line(self) -> int:
        """The physical line (1-based) the record starts on."""
        return memoryview(self).cast("I")[0]

    def at(self, column: int) -> tuple[int, int]:
        """The physical line and the 1-based character column of cell ``column`` (1-based);
        ``(line, 0)`` for the whole row (``column`` 0). A cell right of the record's last
        value (a short row) is at the end of the record."""
        packed = memoryview(self).cast("I")
        line, count = packed[0], packed[1]
        if column < 1:
            return line, 0
        widths = packed[2 + count :]
        if column <= len(widths):
            offset = sum(widths[: column - 1]) + column - 1
        else:
            offset = sum(widths) + max(len(widths) - 1, 0)
        if not count:
            return line, offset + 1
        breaks = packed[2 : 2 + count].tolist()
        below = bisect_right(breaks, offset)
        start = breaks[below - 1] if below else 0
        return line + below, offset - start + 1


def record_places(line: int, lines: list[str], record: list[str], delimiter: str) -> RecordPlaces:
    """The places of ``record``, read by the CSV reader from ``lines`` (its physical lines,
    as read), the first of which is line ``line`` of the file."""
    if len(lines) == 1:
        text = lines[0]
        if '"' not in text:  # no quote: each cell is its text, between delimiters
            return RecordPlaces.of(line, map(len, record))
        return RecordPlaces.of(line, _widths(text, len(record), delimiter))
    text = "".join(lines)
    breaks = tuple(accumulate(map(len, lines[:-1])))
    return RecordPlaces.of(line, _widths(text, len(record), delimiter), breaks)


def _widths(text: str, cells: int, delimiter: str) -> Iterable[int]:
    """How many characters of ``text`` each of its first ``cells`` cells takes, read as
    Python's CSV reader reads them (``strict=False``): a cell that starts with a quote runs
    to its closing quote (``""`` inside it is a quote) and on to the next delimiter; a quote
    inside an unquoted cell is text."""
    return map(len, _cell_pattern(delimiter).findall(text)[:cells])


@lru_cache(maxsize=8)
def _cell_pattern(delimiter: str) -> re.Pattern[str]:
    """A cell (the group) and the delimiter after it, if any."""
    d = re.escape(delimiter)
    return re.compile(rf'("[^"]*(?:""[^"]*)*(?:"[^{d}\r\n]*)?|[^{d}\r\n]*){d}?')
