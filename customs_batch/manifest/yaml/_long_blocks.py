"""Block scalars (``|`` and ``>``) over the value bound, found in the raw bytes.

A value of hundreds of megabytes written as a block over many short lines passes the line
bound, and libyaml would build it whole (the text, then a copy as a Python string) before
the loader could measure it. So the bytes are searched for block headers first: each
block's body ends at the first line indented less than its content, which a few C-speed
searches find without splitting the text into lines. The body of a block over the bound
is replaced by as many empty lines (the line numbers of everything after it stay true),
and the loader reports the value where the emptied block stands, abandoning its document
only, as it does for any other value over the bound.

Only well-formed headers after a key (``key: |``), a dash (``- >-``) or a document marker
(``--- |``) are measured; anything else is left to the loader's own check of the value.
Quoted values and plain ones over several lines are found the same way (``_long_quoted``)
and emptied to ``""``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from customs_batch.manifest.yaml._long_quoted import long_plain, long_quoted

_HEADER = re.compile(rb"[|>](?:[1-9][-+]?|[-+][1-9]?)?[ \t]*(?:#[^\n]*)?\r?\n")
# Between a key, a dash or a document marker and the indicator: blanks, maybe a tag or anchor.
_PROPERTIES = re.compile(rb"(?:[ \t]+[!&][^ \t]*)*[ \t]+\Z")
PROPERTIES_WINDOW = 512
_DASHES = re.compile(rb" *(?:- +)*-")
_DOCUMENT = re.compile(rb"\n(?:---|\.\.\.)(?:[ \t\r\n]|\Z)")
_NOT_BLANK = re.compile(rb"[^ \r\n]")
_TOP = re.compile(rb"\n[^ \r\n]")
_ROOT_HEADER = rb"---[ \t]+(?:[!&][^ \t\r\n]*[ \t]+)*[|>]"
# A literal first: the search then skips from one "\n---" to the next at C speed.
_ROOT = re.compile(rb"\n" + _ROOT_HEADER)
_ROOT_FIRST = re.compile(_ROOT_HEADER)


@dataclass(frozen=True)
class LongBlock:
    """A block scalar over the bound: where its header stands and what its body spans."""

    line: int
    """0-based line of the header (the line the loader sees the emptied value on)."""
    column: int
    """0-based column of the ``|`` or ``>``."""
    size: int
    """At least this many bytes of value (the body less its indentation)."""
    start: int
    """Offset of the body's first byte."""
    end: int
    """Offset just past the body's last line break."""
    lines: int
    """Lines in the body."""
    replacement: bytes = b""
    """What stands where the body was, before its line breaks: nothing for a block (its
    header stays), ``""`` for a quoted scalar, whose quotes go with its text."""


def long_blocks(data: bytes, limit: int) -> list[LongBlock]:
    """The block scalars of ``data`` whose value is over ``limit`` bytes, in file order."""
    if len(data) <= limit:
        return []
    wide = list(_wide_spans(data, limit))
    spans = sorted([*wide, *_root_headers(data)])
    found: list[LongBlock] = []
    counted = line = 0  # line is the number of the line holding offset ``counted``
    bodies: list[tuple[int, int]] = []
    for start, end in spans:
        for indicator, body, line_start, indent, block_end in _blocks(data, start, end):
            bodies.append((body, block_end))
            lines = data.count(b"\n", body, block_end)
            size = block_end - body - lines * (indent + 1)
            if size > limit and (not found or found[-1].end <= indicator):
                line += data.count(b"\n", counted, indicator)
                counted = indicator
                found.append(LongBlock(line, indicator - line_start, size, body, block_end, lines))
    bodies.sort()
    quoted = [
        LongBlock(0, column, size, first, last, lines, replacement=b'""')
        for start, end in wide
        for column, size, first, last, lines in long_quoted(data, start, end, limit, bodies)
    ]
    skips = sorted([*bodies, *((block.start, block.end) for block in quoted)])
    quoted += [
        LongBlock(0, column, size, first, last, lines, replacement=b'""')
        for start, end in wide
        for column, size, first, last, lines in long_plain(data, start, end, limit, skips)
    ]
    if not quoted:
        return found
    return _numbered(data, sorted([*found, *quoted], key=lambda block: block.start))


def _blocks(data: bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int, int]]:
    """Each block scalar whose header is between ``start`` and ``end``: the offsets of its
    indicator and body, the start of its header's line, its indentation, its body's end."""
    match = _HEADER.search(data, start, end)
    while match is not None:
        indicator, body = match.start(), match.end()
        block = _measure(data, indicator, body)
        if block is None:
            match = _HEADER.search(data, body, end)
            continue
        line_start, indent, block_end = block
        yield indicator, body, line_start, indent, block_end
        match = _HEADER.search(data, block_end, end)  # a body holds no headers


def _numbered(data: bytes, blocks: list[LongBlock]) -> list[LongBlock]:
    """``blocks`` without overlaps, their lines counted again in file order."""
    out: list[LongBlock] = []
    counted = line = 0
    for block in blocks:
        head = block.start if block.replacement else data.rfind(b"\n", 0, block.start - 1) + 1
        if out and out[-1].end > head:
            continue
        line += data.count(b"\n", counted, head)
        counted = head
        out.append(dataclasses.replace(block, line=line))
    return out


def _wide_spans(data: bytes, limit: int) -> Iterator[tuple[int, int]]:
    """The stretches of more than ``limit`` bytes between two lines that start at column 0.

    A block below the top level ends at the first line with text at column 0, so only such
    a stretch can hold one over the bound. Each search starts half the bound further on, so
    a file of many small documents costs a few hundred C-speed searches, not one per line.
    """
    size, half = len(data), limit // 2
    at = 0
    while size - at > limit:
        following = _TOP.search(data, at + half)
        stop = following.start() + 1 if following else size
        if stop - at > limit:
            last = at
            for top in _TOP.finditer(data, at, stop):
                if top.start() + 1 - last > limit:
                    yield last, top.start() + 1
                last = top.start() + 1
            if stop - last > limit:
                yield last, stop
        at = stop


def _root_headers(data: bytes) -> Iterator[tuple[int, int]]:
    """The header lines of blocks that are a whole document (``--- |``), whose content may
    start at column 0."""
    starts = [0] if _ROOT_FIRST.match(data) else []
    starts += [found.start() + 1 for found in _ROOT.finditer(data)]
    for start in starts:
        yield start, data.find(b"\n", start) + 1 or len(data)


def _measure(data: bytes, indicator: int, body: int) -> tuple[int, int, int] | None:
    """For a block header whose ``|`` or ``>`` is at ``indicator``: the start of its line,
    the indentation of its content and the end of its body; None if it is no header, or
    its block is empty."""
    line_start = data.rfind(b"\n", 0, indicator) + 1
    before = data[line_start:indicator]
    # Tags and anchors are short: looking at the end of the line only keeps the search
    # linear on a long line of "!a !a !a ...".
    window = max(0, len(before) - PROPERTIES_WINDOW)
    properties = _PROPERTIES.search(before, window)
    if properties is None or (window and properties.start() == window):
        return None  # e.g. "key:|", a plain scalar; or properties too long to be real
    head = before[: properties.start()]
    if head.lstrip(b" ").startswith(b"#") or b" #" in head:
        return None  # in a comment
    if head == b"---":
        parent = -1
    elif _DASHES.fullmatch(head):
        parent = len(head) - 1  # the entry's dash
    elif head.endswith(b":"):
        parent = len(head) - len(head.lstrip(b" -"))  # the key's column, past any dashes
    else:
        return None
    first = _NOT_BLANK.search(data, body)
    if first is None:
        return None
    first_indent = first.start() - (data.rfind(b"\n", 0, first.start()) + 1)
    digit = next((c - 48 for c in data[indicator + 1 : indicator + 3] if 49 <= c <= 57), 0)
    indent = parent + digit if digit else first_indent
    if indent <= parent or first_indent < indent:
        return None  # an empty block: the next line that holds text is not in it
    ends = (_DOCUMENT if parent < 0 else _less_indented(indent)).search(data, body - 1)
    return line_start, indent, ends.start() + 1 if ends else len(data)


@cache
def _less_indented(indent: int) -> re.Pattern[bytes]:
    """A line break followed by a line that holds text at a column below ``indent``."""
    return re.compile(rb"\n {0,%d}[^ \r\n]" % (indent - 1))


def blank(data: bytes, blocks: list[LongBlock]) -> bytes:
    """``data`` with the body of each of ``blocks`` replaced by its line breaks alone."""
    pieces: list[bytes] = []
    at = 0
    for block in blocks:
        pieces += [data[at : block.start], block.replacement + b"\n" * block.lines]
        at = block.end
    pieces.append(data[at:])
    return b"".join(pieces)
