"""Quoted scalars (``'...'`` and ``"..."``) over the value bound, found in the raw bytes.

As a block scalar does (see ``_long_blocks``), a quoted value may run over millions of
short lines, and libyaml builds it whole, with copies, before the loader can measure it: a
200 MB one took 900 MB. So the stretches where a value over the bound can be (more than the
bound between two lines at column 0) are searched for quotes that open a value (after a
key, a dash or at the start of a line, never in a comment or a block's body), and each
quoted scalar is followed to its closing quote at C speed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

_QUOTE = re.compile(rb"[\"']")
# What stands before a quote that opens a scalar, on its line: indentation, dashes of
# sequence entries, a key and its colon, tags or anchors. No "#": not in a comment.
_OPENER = re.compile(rb" *(?:- +)*(?:[^\n#]*?:[ \t]+)?(?:[!&][^ \t\n#]*[ \t]+)*")
_OPENER_WINDOW = 512
_COLON_MARK = re.compile(rb":[ \t\r\n]")
_HASH_MARK = re.compile(rb"[ \t]#")
_INDICATORS = rb"\s#'\"\[\]{}|>&*!%@`,?:-"
# A line with a key (or a dash) and plain text, and a next line indented with text.
_PLAIN = re.compile(
    rb"^(?P<indent> *)(?P<dashes>(?:- +)*)(?P<key>[^" + _INDICATORS + rb"][^\n]*?:[ \t]+)?"
    rb"(?P<text>[^" + _INDICATORS + rb"])[^\n]*\n(?P<more> +)(?=[^ \r\n#])",
    re.MULTILINE,
)
# The line breaks of a quoted scalar and the blanks around them, which fold away.
_FOLD = re.compile(rb"[ \t]*\r?\n[ \t]*|\A[ \t]+")
_WINDOW = 8 * 1024 * 1024


def long_quoted(
    data: bytes, start: int, end: int, limit: int, bodies: Sequence[tuple[int, int]]
) -> Iterator[tuple[int, int, int, int, int]]:
    """The quoted scalars opening between ``start`` and ``end`` whose value is over
    ``limit`` bytes: the column of the opening quote, the size of the value (at least), the
    offsets of the opening quote and just past the closing one, and the lines between.
    ``bodies`` are the block scalars' bodies (sorted), whose quotes are text."""
    for low, high in gaps(start, end, bodies):
        yield from _long_quoted(data, low, high, limit)


def _long_quoted(
    data: bytes, start: int, end: int, limit: int
) -> Iterator[tuple[int, int, int, int, int]]:
    at = start
    while (match := _QUOTE.search(data, at, end)) is not None:
        quote = match.start()
        # Only the end of the line is looked at: a long line of quotes stays linear.
        line_start = data.rfind(b"\n", max(0, quote - _OPENER_WINDOW - 1), quote) + 1
        if (line_start == 0 and quote > _OPENER_WINDOW) or not _OPENER.fullmatch(
            data, line_start, quote
        ):
            at = quote + 1  # inside a plain scalar (O'Brien) or a comment
            continue
        close = _closing(data, quote)
        if close < 0:
            return  # never closed: the YAML parser says so
        if close - quote > limit:
            # Every blank left out is a count at C speed, and mostly enough; only a value of
            # many blanks is measured exactly (a few seconds for 200 MB).
            size = _without_blanks(data, quote + 1, close)
            if size <= limit:
                size = _folded_size(data, quote + 1, close)
            if size > limit:
                lines = data.count(b"\n", quote, close)
                yield quote - line_start, size, quote, close + 1, lines
        at = close + 1


def long_plain(
    data: bytes, start: int, end: int, limit: int, skips: Sequence[tuple[int, int]]
) -> Iterator[tuple[int, int, int, int, int]]:
    """The same for plain scalars that go on over more lines than their key's: a key (or a
    dash) and text, then lines indented further, up to a line that is not. ``skips`` (sorted)
    are the blocks' bodies and the long quoted values, not searched again."""
    for low, high in gaps(start, end, skips):
        yield from _long_plain(data, low, high, limit)


def gaps(start: int, end: int, skips: Sequence[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The stretches of ``start`` to ``end`` outside ``skips`` (sorted by start)."""
    at = start
    for low, high in skips:
        if high <= at:
            continue
        if low >= end:
            break
        if low > at:
            yield at, low
        at = high
    if at < end:
        yield at, end


def _long_plain(
    data: bytes, start: int, end: int, limit: int
) -> Iterator[tuple[int, int, int, int, int]]:
    if _without_blanks(data, start, end) <= limit:
        # No value here can be over the bound, which is measured without blanks: not
        # searched line by line (100 MB of line breaks took 8 seconds, 80 ns a line).
        return
    at = start
    while (match := _PLAIN.search(data, at, end)) is not None:
        at = match.start("more")  # the next line may start a value itself
        first = match.start("text")
        parent = len(match["indent"]) + len(match["dashes"])
        if match["key"] is None:
            if not match["dashes"]:
                continue  # text alone on a line: a line of some value, not its start
            parent -= 2  # the dash of the entry the text is
        if len(match["more"]) <= parent:
            continue
        after = _less_indented_line(parent).search(data, match.end())
        stop = after.start() if after else len(data)
        # A ": " or " #" ends a plain scalar (or is an error): the value stops at the line
        # before it. On the first line, the text is a key or a comment: no value to follow.
        found = _first_mark(data, first, stop)
        if found >= 0:
            stop = data.rfind(b"\n", first, found)
            if stop < 0:
                continue
        at = max(at, stop)  # the lines of this value start nothing
        if stop - first > limit:
            size = _without_blanks(data, first, stop)
            if size > limit:
                line_start = data.rfind(b"\n", 0, first) + 1
                yield first - line_start, size, first, stop, data.count(b"\n", first, stop)


def _first_mark(data: bytes, start: int, end: int) -> int:
    """Where the first ``: ``, ``:`` at a line's end or `` #`` is, or -1: a single-byte find
    first, at memchr speed (a value without either is searched no further), then a regular
    expression from the first ``:`` or ``#`` that is not a mark."""
    colon = data.find(b":", start, end)
    if colon >= 0 and data[colon + 1 : colon + 2] not in (b" ", b"\t", b"\n", b"\r"):
        match = _COLON_MARK.search(data, colon + 1, end)
        colon = match.start() if match else -1
    hash_ = data.find(b"#", start, end)
    if hash_ > start and data[hash_ - 1 : hash_] not in (b" ", b"\t"):
        match = _HASH_MARK.search(data, hash_ + 1, end)
        hash_ = match.start() + 1 if match else -1
    found = [at for at in (colon, hash_) if at >= 0]
    return min(found) if found else -1


def _less_indented_line(parent: int) -> re.Pattern[bytes]:
    """A line break followed by a line holding text at column ``parent`` or less."""
    return re.compile(rb"\n {0,%d}[^ \r\n]" % max(parent, 0))


def _closing(data: bytes, quote: int) -> int:
    """The offset of the quote closing the scalar that opens at ``quote``, or -1."""
    mark = data[quote : quote + 1]
    at = quote + 1
    while (found := data.find(mark, at)) >= 0:
        if mark == b"'":
            if data[found + 1 : found + 2] != b"'":
                return found
            at = found + 2  # '' is a quote inside the text
            continue
        escapes = found
        while data[escapes - 1] == 0x5C:  # backslashes before the quote
            escapes -= 1
        if (found - escapes) % 2 == 0:
            return found
        at = found + 1
    return -1


def _without_blanks(data: bytes, start: int, end: int) -> int:
    """The bytes of ``data[start:end]`` that are not blanks or line breaks: at most what the
    value holds, which keeps blanks between words."""
    blanks = sum(data.count(char, start, end) for char in (b" ", b"\t", b"\n", b"\r"))
    return end - start - blanks


def _folded_size(data: bytes, start: int, end: int) -> int:
    """The bytes of ``data[start:end]`` less its line breaks and the blanks around them: at
    most what the value holds. Measured a window at a time, never a copy of it all."""
    size = 0
    while start < end:
        stop = data.find(b"\n", min(start + _WINDOW, end), end) + 1 or end
        size += len(_FOLD.sub(b"", data[start:stop]))
        start = stop
    return size
