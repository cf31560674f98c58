"""Which template line and column each piece of a template's output came from.

Whitespace control (``{%- … %}``, ``{#- … -#}``), comments spanning lines and ``{% if %}``
blocks that render nothing make the output's lines differ from the template's. The lexer
knows the line of every piece of literal text *after* whitespace control, so an extension
puts a mark carrying that line at the start of each piece and after each of its line ends,
and one before the output of each ``{{ … }}``. The rendered text is then cleaned of the
marks, keeping for each output line where its pieces start (:class:`Places`).

Columns: Jinja's tokens carry a line but no column, so the extension also reads the
template's source (``preprocess``) and finds, in order, its pieces of literal text and its
``{{ … }}`` tags, skipping comments, ``{% raw %}`` blocks and quoted text inside tags; the
n-th expression token is the n-th ``{{`` found. A piece of literal text keeps its columns
(a value written ``REF-{{ n }}`` is at the ``R``); a value an expression gave is at the
expression, the first character after ``{{``. Where the two readings disagree (a
token on another line than its place in the source) columns are dropped for the rest of
the template and the output's own columns are kept.

Text inside ``{% set %}`` blocks, ``{% filter %}`` blocks, macros and ``{% call %}`` blocks
is not marked: filters may transform it (``|trim``, ``|length``) and the marks would change
the result.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from jinja2 import Environment
from jinja2.ext import Extension
from jinja2.lexer import Token, TokenStream

_OPEN, _SEP, _CLOSE = "\ue000", "\ue002", "\ue001"
_MARK = re.compile(f"{_OPEN}([^{_SEP}]*){_SEP}(\\d+),(-?\\d+)(e?){_CLOSE}")
_CAPTURING = {"set", "filter", "macro", "call"}
_NEWLINES = re.compile(r"\r\n|\r|\n")  # Jinja's own newline rule
_OPENERS = re.compile(r"\{\{|\{%|\{#")
_RAW = re.compile(r"\{%[-+]?\s*raw\s*[-+]?%\}")
_ENDRAW = re.compile(r"\{%[-+]?\s*endraw\s*[-+]?%\}")

Piece = tuple[int, int, int, bool]
"""Where a piece of an output line came from: its 0-based column in the output line, its
1-based template line, its 0-based template column (-1: not known) and whether it is the
output of an expression (every character of it is placed at the expression)."""


class Places:
    """The template place of every output position of one render.

    Made from the marked output and worked out when first asked: most renders are never
    asked (a finding or a reference needs a place), and a render with a template per
    spreadsheet row would pay for each row. Equal (and hashed) by the marked text.
    """

    __slots__ = ("_marked", "_name", "_pieces")

    def __init__(self, marked: str = "", name: str = "") -> None:
        self._marked = marked
        self._name = name
        self._pieces: tuple[tuple[Piece, ...], ...] | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Places):
            return NotImplemented
        return (self._marked, self._name) == (other._marked, other._name)

    def __hash__(self) -> int:
        return hash((self._marked, self._name))

    def __repr__(self) -> str:
        return f"Places({self.pieces!r})"

    @property
    def same(self) -> bool:
        """Whether the output's places are the template's (no marks)."""
        return not self._marked

    @property
    def pieces(self) -> tuple[tuple[Piece, ...], ...]:
        """Per output line, where its pieces start (no marks: none)."""
        if self._pieces is None:
            self._pieces = _pieces(self._marked, self._name) if self._marked else ()
        return self._pieces

    def place(self, line: int, column: int) -> tuple[int, int]:
        """The template's 0-based (line, column) of the output's 0-based (line, column)."""
        pieces = self.pieces
        if not pieces or line < 0:
            return line, column
        row = min(line, len(pieces) - 1)
        found = _last_at_or_before(pieces[row], column if row == line else 1 << 30)
        if found is None:  # the output line continues an expression's output
            return self._carried(row, column)
        out_column, template_line, template_column, expression = found
        if template_column < 0:
            return template_line - 1, column
        if expression:
            return template_line - 1, template_column
        return template_line - 1, template_column + column - out_column

    def expression_at(self, line: int, column: int) -> tuple[int, int] | None:
        """The template's 0-based (line, column) of the expression whose output holds the
        output's 0-based (line, column); None for literal text, or when not known."""
        pieces = self.pieces
        if not pieces or line < 0:
            return None
        row = min(line, len(pieces) - 1)
        found = _last_at_or_before(pieces[row], column if row == line else 1 << 30)
        if found is None:  # the output line continues an earlier line's expression
            found = next((p[-1] for p in reversed(pieces[:row]) if p), None)
        if found is None or not found[3] or found[2] < 0:
            return None
        return found[1] - 1, found[2]

    def printed(self) -> Iterator[Printed]:
        """Where each expression of the template printed its output, one line at a time:
        the output's 0-based line, the start and end columns there (the end is where the
        next piece of output starts, of any template, or the line's end), and the
        expression's 0-based template line and column (-1: not known)."""
        if not self._marked:
            return
        clean = _MARK.sub("", self._marked)
        lines = clean.split("\n")
        marks = list(_all_marks(self._marked))
        for index, (line, column, name, template_line, template_column, expression) in enumerate(
            marks
        ):
            if not expression or name != self._name:
                continue
            following = marks[index + 1] if index + 1 < len(marks) else None
            same_line = following is not None and following[0] == line
            end = following[1] if same_line and following is not None else len(lines[line])
            yield Printed(line, column, end, template_line - 1, template_column)

    def _carried(self, row: int, column: int) -> tuple[int, int]:
        pieces = self.pieces
        for earlier in range(row - 1, -1, -1):
            if pieces[earlier]:
                _, template_line, template_column, expression = pieces[earlier][-1]
                if expression and template_column >= 0:
                    return template_line - 1, template_column
                return template_line - 1, column
        return row, column


SAME_PLACES = Places()
"""The places of a render without marks: the output's own."""


def _last_at_or_before(pieces: tuple[Piece, ...], column: int) -> Piece | None:
    found = None
    for piece in pieces:
        if piece[0] > column:
            break
        found = piece
    return found


class LineMarks(Extension):
    """Marks literal text and expressions with their template place (see the docstring)."""

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        self._sources: dict[str | None, _Layout] = {}

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        self._sources[name] = _Layout.of("\n".join(_NEWLINES.split(source)))
        return source

    def filter_stream(self, stream: TokenStream) -> Iterator[Token]:
        name = stream.name or ""
        layout = self._sources.pop(stream.name, None) or _Layout.of("")
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
            if token.type == "data":
                column = layout.data_column(token)
                if depth == 0:
                    token = Token(token.lineno, "data", _marked(token, column, name))
            elif token.type == "variable_begin":
                line, column = layout.expression_place(token)
                if depth == 0:
                    yield Token(token.lineno, "data", _mark(name, line, column, expression=True))
            yield token
        yield from pending


@dataclass
class _Layout:
    """The pieces of literal text and the expressions of a template's source, in order."""

    source: str
    line_starts: list[int]
    texts: list[tuple[int, str]]  # (offset, text) of each piece of literal text
    expressions: list[tuple[int, int]]  # (offset of the "{{", offset of the expression)
    next_text: int = 0
    next_expression: int = 0
    lost: bool = False  # the source and the tokens disagreed: no columns from here on

    @classmethod
    def of(cls, source: str) -> _Layout:
        starts = [0, *(match.end() for match in re.finditer("\n", source))]
        texts, expressions = _scan(source)
        return cls(source, starts, texts, expressions)

    def line_column(self, offset: int) -> tuple[int, int]:
        """1-based line and 0-based column of a source offset."""
        line = bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1]

    def data_column(self, token: Token) -> int:
        """The 0-based column where a data token's text starts (-1: not known)."""
        while not self.lost and self.next_text < len(self.texts):
            offset, text = self.texts[self.next_text]
            self.next_text += 1
            found = text.find(token.value) if token.value else -1
            if found >= 0:
                line, column = self.line_column(offset + found)
                if line == token.lineno:
                    return column
        self.lost = True
        return -1

    def expression_place(self, token: Token) -> tuple[int, int]:
        """1-based line and 0-based column of the expression a ``{{`` token opens."""
        if not self.lost and self.next_expression < len(self.expressions):
            tag, expression = self.expressions[self.next_expression]
            self.next_expression += 1
            if self.line_column(tag)[0] == token.lineno:
                return self.line_column(expression)
        self.lost = True
        return token.lineno, -1


def _scan(source: str) -> tuple[list[tuple[int, str]], list[tuple[int, int]]]:
    """The literal text and the ``{{ … }}`` tags of a template, as Jinja's lexer splits it."""
    texts: list[tuple[int, str]] = []
    expressions: list[tuple[int, int]] = []
    position = 0
    while position < len(source):
        opener = _OPENERS.search(source, position)
        start = len(source) if opener is None else opener.start()
        if start > position:
            texts.append((position, source[position:start]))
        if opener is None:
            break
        if opener.group() == "{#":
            end = source.find("#}", opener.end())
            position = len(source) if end < 0 else end + 2
        elif opener.group() == "{{":
            expression = opener.end()
            if source[expression : expression + 1] in ("-", "+"):
                expression += 1
            while expression < len(source) and source[expression] in " \t\n":
                expression += 1
            expressions.append((start, expression))
            position = tag_end(source, opener.end(), "}}")
        elif (raw := _RAW.match(source, start)) is not None:
            end_raw = _ENDRAW.search(source, raw.end())
            stop = len(source) if end_raw is None else end_raw.start()
            texts.append((raw.end(), source[raw.end() : stop]))
            position = len(source) if end_raw is None else end_raw.end()
        else:
            position = tag_end(source, opener.end(), "%}")
    return texts, expressions


def tag_end(source: str, position: int, closer: str) -> int:
    """The offset after a tag's ``closer``, skipping quoted text (``{{ "}}" }}``)."""
    quote = ""
    index = position
    while index < len(source):
        char = source[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif source.startswith(closer, index):
            return index + len(closer)
        index += 1
    return len(source)


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


def _mark(name: str, line: int, column: int, *, expression: bool = False) -> str:
    return f"{_OPEN}{name}{_SEP}{line},{column}{'e' if expression else ''}{_CLOSE}"


def _marked(token: Token, column: int, name: str) -> str:
    """The token's text with a mark before each of its lines; not after a final line end,
    where the next output may come from a later line. Lines after the first start at
    column 0."""
    parts = token.value.split("\n")
    last = len(parts) - 1
    return "\n".join(
        _mark(name, token.lineno + index, column if index == 0 else 0) + part
        if part or index < last
        else part
        for index, part in enumerate(parts)
    )


def strip_marks(text: str, name: str) -> tuple[str, Places]:
    """``text`` without marks, and the template place of its pieces; marks of other
    templates (an include) count as none."""
    if _OPEN not in text:
        return text, SAME_PLACES
    return _MARK.sub("", text), Places(text, name)


def mark_chars(text: str) -> int:
    """How many characters of ``text`` are marks (a render's chunk holds whole marks)."""
    if _OPEN not in text:
        return 0
    return sum(match.end() - match.start() for match in _MARK.finditer(text))


@dataclass(frozen=True, slots=True)
class Printed:
    """What one expression printed on one output line (see :meth:`Places.printed`)."""

    line: int
    start: int
    end: int
    template_line: int
    template_column: int


def _all_marks(text: str) -> Iterator[tuple[int, int, str, int, int, bool]]:
    """Every mark of ``text``, of any template: its 0-based line and column in the text
    without marks, the template's name, line (1-based) and column, and whether it stands
    before an expression's output."""
    line = 0
    line_start = 0  # where the current output line starts, in the text without marks
    clean_length = 0
    previous = 0
    for match in _MARK.finditer(text):
        start = match.start()
        breaks = text.count("\n", previous, start)
        if breaks:
            line += breaks
            line_start = clean_length + text.rfind("\n", previous, start) + 1 - previous
        clean_length += start - previous
        previous = match.end()
        name, template_line, template_column, expression = match.group(1, 2, 3, 4)
        column = clean_length - line_start
        yield line, column, name, int(template_line), int(template_column), bool(expression)


def _pieces(text: str, name: str) -> tuple[tuple[Piece, ...], ...]:
    """Per line of the output without marks, where its pieces start."""
    found: dict[int, list[Piece]] = {}
    for line, column, mark_name, template_line, template_column, expression in _all_marks(text):
        if mark_name == name:
            found.setdefault(line, []).append((column, template_line, template_column, expression))
    return tuple(tuple(found.get(index, ())) for index in range(text.count("\n") + 1))
