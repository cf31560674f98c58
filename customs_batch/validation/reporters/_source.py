"""Source lines for the text report, read only when a finding needs them.

A line is shown as an excerpt of at most :data:`EXCERPT_CHARS` characters around the column
a finding points at, so a one-line file of hundreds of megabytes prints a short report.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from customs_batch.sensitive import SENSITIVE, sensitive_names
from customs_batch.userfiles import FileRefused, read_user_file

EXCERPT_CHARS = 120
ELLIPSIS = "…"
KEPT_FILES = 64
"""Files whose lines are kept at once, the ones asked for last."""


class SourceLines:
    """A lazy cache of the lines of the files findings point into.

    The report goes file by file, so only the files asked for last are kept: a report of
    91,000 findings in 1,000 files (38 MB) kept them all to its end, 115 MB of lines.
    A file asked for again after :data:`KEPT_FILES` others is read again (a template that
    many findings quote is asked for often, and stays).
    """

    def __init__(self) -> None:
        self._files: dict[str, _Lines | None] = {}
        self._last: tuple[str, _Lines | None] | None = None

    def line(self, file: str, number: int) -> str | None:
        """Line ``number`` (1-based) of ``file``; None when the file is not readable text."""
        if number < 1:
            return None
        last = self._last
        lines = last[1] if last is not None and last[0] == file else self._lines(file)
        found = None if lines is None else lines.line(number)
        return None if found is None else found.decode("utf-8", errors="replace")

    def _lines(self, file: str) -> _Lines | None:
        files = self._files
        if file in files:
            lines = files.pop(file)
        else:
            lines = _read_lines(file)
            if len(files) >= KEPT_FILES:
                del files[next(iter(files))]  # the one asked for longest ago
        files[file] = lines
        self._last = (file, lines)
        return lines

    def excerpt(self, file: str, number: int, column: int) -> tuple[str, int] | None:
        """The part of line ``number`` to show around ``column`` (1-based), and the column
        of the same character in that part; None when there is no such line. A sensitive
        field written on the line (``accessCode: "1234"`` in a guarantee written on one
        line) shows ``(sensitive)`` for its value."""
        line = self.line(file, number)
        if line is None:
            return None
        last = self._last
        if last is not None and last[1] is not None and not last[1].names_sensitive:
            # No sensitive field's name anywhere in the file: no line of it holds a value to
            # hide (most reports; two searches a finding were a third of a big report).
            return excerpt(line, column)
        before = self.line(file, number - 1) if number > 1 else None
        if before is not None and _sensitive_key_at_end().search(before) is not None:
            # ``{accessCode:`` ending the line before (a flow mapping wrapped): the value
            # starts this one.
            line, column = _without_leading_value(line, column)
        line, column = without_sensitive_values(line, column)
        return excerpt(line, column)


@cache
def _sensitive_field() -> re.Pattern[str]:
    """A sensitive field and its value written on a line of YAML or JSON: the name (quoted or
    not), a colon, then a quoted text or a plain value up to the next ``,`` ``}`` ``]`` or
    comment."""
    names = "|".join(re.escape(name) for name in sorted(sensitive_names()))
    return re.compile(
        rf"""((?<![\w-])["']?(?:{names})["']?[ \t]*:[ \t]*)"""
        r"""("(?:[^"\\]|\\.)*"?|'(?:[^']|'')*'?|[^\s,}\]#][^,}\]#]*)"""
    )


@cache
def _sensitive_key_at_end() -> re.Pattern[str]:
    """A sensitive field's name and its colon ending a line, its value on the next."""
    names = "|".join(re.escape(name) for name in sorted(sensitive_names()))
    return re.compile(rf"""(?<![\w-])["']?(?:{names})["']?[ \t]*:[ \t]*(?:#.*)?$""")


@cache
def _sensitive_name_bytes() -> tuple[bytes, ...]:
    """The sensitive fields' names as a file's UTF-8 bytes write them."""
    return tuple(name.encode("utf-8") for name in sorted(sensitive_names()))


_LEADING_VALUE = re.compile(
    r"""^([ \t]*)("(?:[^"\\]|\\.)*"?|'(?:[^']|'')*'?|[^\s,}\]#][^,}\]#]*)"""
)


def _without_leading_value(line: str, column: int) -> tuple[str, int]:
    """``line`` with the value it starts with shown as ``(sensitive)`` (the value of a
    sensitive field named at the end of the line before), and where ``column`` is then."""
    match = _LEADING_VALUE.match(line)
    if match is None or not match.group(2).strip():
        return line, column
    value = match.group(2).rstrip()
    start, end = match.start(2), match.start(2) + len(value)
    if column > end:
        column += len(SENSITIVE) - len(value)
    elif column > start:
        column = start + 1
    return line[:start] + SENSITIVE + line[end:], column


def without_sensitive_values(line: str, column: int) -> tuple[str, int]:
    """``line`` with the value of each sensitive field written on it shown as
    ``(sensitive)``, and where ``column`` (1-based) is then."""
    pattern = _sensitive_field()
    if not sensitive_names() or pattern.search(line) is None:
        return line, column
    out: list[str] = []
    end = 0
    shift = 0
    for match in pattern.finditer(line):
        out.append(line[end : match.start(2)])
        value = match.group(2).rstrip()
        out.append(SENSITIVE)
        end = match.start(2) + len(value)
        if column > end:
            shift += len(SENSITIVE) - len(value)
        elif column > match.start(2):  # inside the value: at its start
            shift -= column - 1 - match.start(2)
    out.append(line[end:])
    return "".join(out), column + shift if column >= 1 else column


def excerpt(line: str, column: int, width: int = EXCERPT_CHARS) -> tuple[str, int]:
    """At most ``width`` characters of ``line`` around ``column`` (1-based; 0 for none),
    with ``…`` where the line goes on, and the column of the same character in the excerpt."""
    if len(line) <= width:
        return line, column
    start = max(0, min(column - 1 - width // 2, len(line) - width)) if column >= 1 else 0
    end = start + width
    text = line[start:end]
    if start:
        text = ELLIPSIS + text
    if end < len(line):
        text += ELLIPSIS
    return text, (column - start + (1 if start else 0)) if column >= 1 else column


_BREAK = re.compile(rb"\r\n|\r|\n")
# Files up to this size are split into lines at once (a copy of the file in small pieces).
_SPLIT_BYTES = 4 * 1024 * 1024


class _Lines:
    """The lines of a file's bytes, as ``bytes.splitlines`` cuts them, found only as far as
    asked: the file's bytes and two offsets per line found, not an object per line (a file
    of millions of lines is quoted at the cost of its own size)."""

    def __init__(self, data: bytes) -> None:
        # A file of ordinary size is cut once, in C: finding its breaks one at a time cost
        # 20 us a finding, most of a report of 90,000 warnings (measured). Its lines are
        # then all that is kept: the whole file besides them would be a second copy.
        self._split = data.splitlines() if len(data) <= _SPLIT_BYTES else None
        # Whether a sensitive field's name is written anywhere in the file: where it is not,
        # no line can hold its value (the patterns below need the name written whole).
        self.names_sensitive = any(name in data for name in _sensitive_name_bytes())
        self._data = data if self._split is None else b""
        self._starts = array("Q", [0])
        self._ends = array("Q")
        self._breaks: Iterator[re.Match[bytes]] | None = (
            _BREAK.finditer(data) if self._split is None else None
        )

    def line(self, number: int) -> bytes | None:
        """Line ``number`` (1-based), without its break; None past the last line."""
        if self._split is not None:
            return self._split[number - 1] if number <= len(self._split) else None
        while len(self._ends) < number and self._breaks is not None:
            found = next(self._breaks, None)
            if found is None:
                self._breaks = None
                if self._starts[-1] < len(self._data):  # a last line without a break
                    self._ends.append(len(self._data))
                break
            self._ends.append(found.start())
            self._starts.append(found.end())
        if number > len(self._ends):
            return None
        return self._data[self._starts[number - 1] : self._ends[number - 1]]


def _read_lines(file: str) -> _Lines | None:
    try:
        data = read_user_file(Path(file))
    except (OSError, FileRefused):
        return None
    if b"\0" in data:  # a binary file: its "lines" would only garble the terminal
        return None
    # Kept as bytes and decoded a line at a time: one copy of the file, not three.
    return _Lines(data)
