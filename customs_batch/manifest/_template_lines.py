"""Which template line each line of a template's output came from.

Whitespace control (``{%- … %}``, ``{#- … -#}``), comments spanning lines and ``{% if %}``
blocks that render nothing make the output's lines differ from the template's. The lexer
knows the line of every piece of literal text *after* whitespace control, so an extension
puts a mark carrying that line at the start of each piece and after each of its line ends;
the rendered text is then cleaned of the marks, keeping for each output line the template
line of its first mark (a line without one, from an expression spanning lines, takes the
line of the mark before it).

Text inside ``{% set %}`` blocks, ``{% filter %}`` blocks, macros and ``{% call %}`` blocks
is not marked: filters may transform it (``|trim``, ``|length``) and the marks would change
the result.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from jinja2.ext import Extension
from jinja2.lexer import Token, TokenStream

_OPEN, _SEP, _CLOSE = "\ue000", "\ue002", "\ue001"
_MARK = re.compile(f"{_OPEN}([^{_SEP}]*){_SEP}(\\d+){_CLOSE}")
_CAPTURING = {"set", "filter", "macro", "call"}


class LineMarks(Extension):
    """Marks literal text with its template line (see the module's docstring)."""

    def filter_stream(self, stream: TokenStream) -> Iterator[Token]:
        name = stream.name or ""
        depth = 0
        pending: list[Token] = []  # the tokens of a block tag being read
        for token in stream:
            if pending or token.type == "block_begin":
                pending.append(token)
                if token.type == "block_end":
                    depth += _depth_change(pending)
                    yield from pending
                    pending = []
                continue
            if token.type == "data" and depth == 0:
                yield Token(token.lineno, "data", _marked(token.value, token.lineno, name))
            else:
                yield token
        yield from pending


def _depth_change(tag: list[Token]) -> int:
    """+1 for a tag that opens a capturing block, -1 for one that closes it, else 0."""
    words = [t.value for t in tag if t.type == "name"]
    if not words:
        return 0
    first = words[0]
    if first == "set":
        return 0 if any(t.type == "assign" for t in tag) else 1
    if first in _CAPTURING:
        return 1
    if first.startswith("end") and first[3:] in _CAPTURING:
        return -1
    return 0


def _marked(text: str, line: int, name: str) -> str:
    """``text`` with a mark before each of its lines; not after a final line end, where the
    next output may come from a later line."""
    parts = text.split("\n")
    last = len(parts) - 1
    return "\n".join(
        f"{_OPEN}{name}{_SEP}{line + index}{_CLOSE}{part}" if part or index < last else part
        for index, part in enumerate(parts)
    )


def strip_marks(text: str, name: str) -> tuple[str, tuple[int, ...]]:
    """``text`` without marks, and the template line (1-based) of each of its lines; marks
    of other templates (an include) count as none."""
    if _OPEN not in text:
        return text, ()
    lines: list[int] = []
    clean: list[str] = []
    last = 1
    for output_line in text.split("\n"):
        first = 0
        for match in _MARK.finditer(output_line):
            if match.group(1) == name:
                last = int(match.group(2))
                first = first or last
        lines.append(first or last)
        clean.append(_MARK.sub("", output_line) if _OPEN in output_line else output_line)
    return "\n".join(clean), tuple(lines)
