"""YAML text to node trees, with libyaml when available, and YAML errors as problems.

Only composing is done here (no construction): the node tree keeps the line and column of
every value, and scalars keep the text exactly as written so the loader can type them by the
schema. Resolution of plain scalars is switched off (they all get the ``PLAIN`` tag) because
PyYAML resolves by YAML 1.1 rules, and because skipping its regular expressions is faster.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml
from yaml.composer import Composer
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    Event,
    MappingStartEvent,
    ScalarEvent,
    SequenceStartEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import BaseResolver
from yaml.scanner import Scanner

from customs_batch.manifest.yaml._value_bound import max_document_values, too_many_values

PLAIN = "?plain"
"""The tag of a plain scalar without an explicit tag: its type is decided by the loader."""
STR = "tag:yaml.org,2002:str"
SEQ = "tag:yaml.org,2002:seq"
MAP = "tag:yaml.org,2002:map"

# libyaml's composer recurses in C without a depth check and crashes the process somewhere
# past 20,000 levels. Texts that could nest deeper than this are measured first (see below).
SAFE_NESTING = 5000
# After a syntax error composing resumes at the next document, this many times in a file.
MAX_RESUMES = 99


@dataclass(frozen=True)
class YamlProblem:
    """A YAML text that could not be composed, and where (1-based line and column)."""

    rule: str
    message: str
    hint: str
    line: int
    column: int
    opened: YamlProblem | None = None
    """For a bracket or quote left open: the problem at the place it opened."""
    head: tuple[tuple[str, str], ...] = ()
    """For a syntax error: the scalars of the broken document read before it, as pairs of
    dotted key path (``metadata.name``) and text, two levels deep at most."""


class _Resolving:
    """Resolver hooks for both composers: tags only, no YAML 1.1 typing, no path resolvers."""

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            return PLAIN if implicit[0] else STR
        return SEQ if kind is SequenceNode else MAP

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


class _TooManyValues(Exception):
    """A document holds more values than the bound; composing it stopped there."""

    def __init__(self, line: int, column: int, head: tuple[tuple[str, str], ...]) -> None:
        super().__init__(line)
        self.line = line
        self.column = column
        self.head = head


class _Counting(Composer):
    """PyYAML's composer, counting the values of each document as it composes them: past
    ``max_values`` it raises :class:`_TooManyValues` before composing another one, and
    :meth:`skip_document` then reads on to the document's end without building anything.
    An alias is no new value (its node is already counted). The document's ``kind`` and
    ``metadata.name`` are noted as they are composed, to name a document given up."""

    max_values: int | None = None
    if TYPE_CHECKING:  # given by the parser it is mixed with

        def get_event(self) -> Event: ...
        def peek_event(self) -> Event: ...
        def check_event(self, *choices: type[Event]) -> bool: ...

    def compose_document(self) -> Node | None:
        self.get_event()  # the document start
        mark = self.peek_event().start_mark
        self._line, self._column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        self._values = self._depth = 0
        self._head: list[tuple[str, str]] = []
        node = self.compose_node(None, None)
        self.get_event()  # the document end
        self.anchors = {}
        return node

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.max_values is not None and not self.check_event(AliasEvent):
            self._values += 1
            if self._values > self.max_values:
                raise _TooManyValues(self._line, self._column, tuple(self._head))
        self._depth += 1
        node = super().compose_node(parent, index)
        self._depth -= 1
        if self._depth == 1 and index.__class__ is ScalarNode and node is not None:
            self._note_head(index.value, node)  # a value of the top mapping
        return node

    def _note_head(self, key: str, node: Node) -> None:
        if key == "kind" and node.__class__ is ScalarNode:
            self._head.append(("kind", node.value))
        elif key == "metadata" and node.__class__ is MappingNode:
            for name, value in node.value:
                if name.value == "name" and value.__class__ is ScalarNode:
                    self._head.append(("metadata.name", value.value))

    def skip_document(self) -> int:
        """Read on to the end of the document given up, building nothing; the values it
        held after those composed (aliases aside, as :meth:`compose_node` counts them)."""
        more = 0
        while True:
            event = self.get_event()
            if isinstance(event, _VALUE_EVENTS):
                more += 1
            elif isinstance(event, DocumentEndEvent):
                break
        self.anchors = {}
        return more


_VALUE_EVENTS = (ScalarEvent, SequenceStartEvent, MappingStartEvent)
"""The events that start a value :meth:`_Counting.compose_node` counts."""


class _PureComposer(_Resolving, Reader, Scanner, Parser, _Counting, BaseResolver):
    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)
        BaseResolver.__init__(self)


_composer_class: type[Any]
_counting_class: type[Any]
try:
    from yaml._yaml import CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _composer_class = _counting_class = _PureComposer
else:

    class _FastComposer(_Resolving, CParser):
        pass

    class _CountingComposer(_Resolving, _Counting, CParser):
        """libyaml's parser under PyYAML's composer, which can count: 2.5 times the time
        of libyaml's own composer (measured), so only for a text that may need it."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)

    _composer_class, _counting_class = _FastComposer, _CountingComposer

HAS_LIBYAML = _composer_class is not _PureComposer


def compose_all(text: str, max_values: int | None = None) -> tuple[list[Node], YamlProblem | None]:
    """Every document of ``text`` as a node tree, and the problem that stopped composing, if
    any. Documents before a syntax error are kept. An empty document is an empty scalar."""
    nodes: list[Node] = []
    for item in compose_each(text, max_values):
        if isinstance(item, YamlProblem):
            return nodes, item
        nodes.append(item)
    return nodes, None


def compose_each(text: str, max_values: int | None = None) -> Iterator[Node | YamlProblem]:
    """Like :func:`compose_all`, one document at a time (the problem, if any, comes last).

    Loading walks each tree as soon as it is composed and lets it go: holding the trees of a
    whole large file at once makes composing measurably slower. A document of more than
    ``max_values`` values (default: :func:`max_document_values`) is a ``yaml.too-large``
    problem, and composing goes on with the next one.
    """
    limit = max_document_values() if max_values is None else max_values
    if _could_nest_deeper(text, SAFE_NESTING) and _nesting_depth(text) > SAFE_NESTING:
        yield YamlProblem(
            "yaml.too-deep",
            f"the YAML nests more than {SAFE_NESTING} levels deep",
            "Flatten the structure; documents never need more than a few levels.",
            1,
            1,
        )
        return
    counting = not HAS_LIBYAML or _could_hold_more_values(text, limit)
    start = 0
    for _ in range(MAX_RESUMES + 1):
        # After a syntax error, composing resumes at the next document marker, the text
        # before it blanked out so that lines keep their numbers: one broken document does
        # not hide the others of its file.
        chunk = text if not start else "\n" * text.count("\n", 0, start) + text[start:]
        problem = yield from _compose_from(chunk, limit if counting else None)
        if problem is None or problem.rule != "yaml.syntax":
            return
        start = _next_document(text, problem, start)
        if start < 0:
            return
    # Each resumption copies the rest of the text: a file broken everywhere stops here.
    line = text.count("\n", 0, start) + 1
    yield YamlProblem(
        "yaml.syntax",
        f"reading stopped after {MAX_RESUMES + 1} syntax errors: the rest of the file is not read",
        "Fix the errors above and validate again.",
        line,
        1,
    )


def _compose_from(
    text: str, max_values: int | None
) -> Generator[Node | YamlProblem, None, YamlProblem | None]:
    """Compose ``text``'s documents, counting their values when ``max_values`` is given; the
    problem that stopped composing is also returned."""
    if max_values is None:
        composer = _composer_class(text)
    else:
        composer = _counting_class(text)
        composer.max_values = max_values
    problem: YamlProblem | None = None
    composed = 0
    try:
        while composer.check_node():
            try:
                node = composer.get_node()
            except _TooManyValues as too_many:
                try:
                    held = (max_values or 0) + composer.skip_document()
                except yaml.YAMLError:
                    yield _too_large(too_many, max_values or 0, None)  # the syntax error next
                    raise
                yield _too_large(too_many, max_values or 0, held)
            else:
                yield node
            composed += 1
    except yaml.YAMLError as error:
        problem = _problem(error, text)
        if problem.rule == "yaml.syntax":
            problem = dataclasses.replace(problem, head=_head(text, composed))
    except RecursionError:
        problem = YamlProblem(
            "yaml.too-deep", "the YAML nests too deep to read", "Flatten the structure.", 1, 1
        )
    finally:
        composer.dispose()
    if problem is not None:
        yield problem
    return problem


def _too_large(too_many: _TooManyValues, limit: int, held: int | None) -> YamlProblem:
    message, hint = too_many_values(too_many.line, limit, held)
    where = (too_many.line, too_many.column)
    return YamlProblem("yaml.too-large", message, hint, *where, head=too_many.head)


def _head(text: str, index: int) -> tuple[tuple[str, str], ...]:
    """The scalars of document ``index`` of ``text`` read before its syntax error, so that a
    broken document can still be named (its kind and name usually come first)."""
    found: list[tuple[str, str]] = []
    # One frame per open collection: None for a list, else the key whose value comes next
    # ("" while a key is expected).
    frames: list[str | None] = []
    documents = -1
    loader = yaml.CSafeLoader if HAS_LIBYAML else yaml.SafeLoader
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
            elif documents == index:
                _head_event(event, frames, found)
            elif documents > index:
                break
    except yaml.YAMLError:
        pass
    return tuple(found)


def _head_event(event: yaml.Event, frames: list[str | None], found: list[tuple[str, str]]) -> None:
    if isinstance(event, yaml.MappingStartEvent):
        frames.append("")
    elif isinstance(event, yaml.SequenceStartEvent):
        frames.append(None)
    elif isinstance(event, yaml.CollectionEndEvent):
        frames.pop()
        _value_done(frames)
    elif isinstance(event, yaml.ScalarEvent) and frames and frames[-1] == "":
        frames[-1] = event.value  # a key: its value comes next
    elif isinstance(event, yaml.ScalarEvent | yaml.AliasEvent):
        if isinstance(event, yaml.ScalarEvent) and len(frames) <= 2 and all(frames):
            found.append((".".join(str(key) for key in frames), event.value))
        _value_done(frames)


def _value_done(frames: list[str | None]) -> None:
    if frames and frames[-1] is not None:
        frames[-1] = ""  # the key's value is complete: the next scalar is a key


def _next_document(text: str, problem: YamlProblem, start: int) -> int:
    """The offset of the first document marker at or after the problem's line and past
    ``start``; -1 when there is none."""
    line_start = 0
    for _ in range(problem.line - 1):
        line_start = text.find("\n", line_start) + 1
        if line_start == 0:
            return -1
    for match in _DOCUMENT_START.finditer(text, max(line_start, start + 1)):
        return match.start()
    return -1


_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.MULTILINE)
_DOCUMENT_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.MULTILINE)
# The parser's words for a bracket or a quote it was still inside when it gave up.
_OPENED = {
    "while parsing a flow mapping": ("flow mapping '{'", "'}'"),
    "while parsing a flow sequence": ("flow sequence '['", "']'"),
    "while scanning a quoted scalar": ("quoted text", "the same quote character"),
}


def _could_hold_more_values(text: str, limit: int) -> bool:
    """Whether a document of ``text`` could hold more than ``limit`` values, and so must be
    composed counting them (see :class:`_Counting`).

    No value takes less than a character (``? `` is two values in two; ``[1,1,1]`` one in
    two), so a text of fewer than ``limit / 2`` characters cannot. A longer one is measured
    document by document (a marker at the start of a line always ends a document) by
    libyaml's parser, which counts its events without building any (every value is at
    least one event): about 15 ms a megabyte, a fifth of composing it.
    """
    if 2 * len(text) < limit:
        return False
    starts = [match.start() for match in _DOCUMENT_START.finditer(text)]
    for start, end in zip([0, *starts], [*starts, len(text)], strict=True):
        if 2 * (end - start) >= limit and _events(text[start:end], limit) > limit:
            return True
    return False


def _events(text: str, limit: int) -> int:
    """How many parsing events ``text`` makes (up to its first syntax error, then at most
    ``limit + 1``), building no value."""
    try:
        return int(CParser(text).raw_parse())
    except yaml.YAMLError:
        pass
    # Up to the error, as a composer would go: one event at a time, each let go at once.
    parser, count = CParser(text), 0
    try:
        while count <= limit and parser.check_event():
            parser.get_event()
            count += 1
    except yaml.YAMLError:
        pass
    return count


def _could_nest_deeper(text: str, limit: int) -> bool:
    """A cheap upper bound on the nesting of any one document of ``text``.

    Block nesting needs indentation (or a ``- `` on the line) per level, so it is bounded by
    the longest line; flow nesting needs a bracket per level within one document (a document
    marker at the start of a line always ends the document, even inside a scalar).
    """
    if len(text) <= limit:
        return False
    if _has_long_line(text, limit // 4):
        return True
    if text.count("[") + text.count("{") <= limit // 2:
        return False  # not even the whole text nests that deep
    # Counted between the markers, not on split chunks: splitting would copy the text.
    start = 0
    for marker in _DOCUMENT_MARKER.finditer(text):
        if text.count("[", start, marker.start()) + text.count("{", start, marker.start()) > (
            limit // 2
        ):
            return True
        start = marker.end()
    return text.count("[", start) + text.count("{", start) > limit // 2


def _has_long_line(text: str, limit: int) -> bool:
    """Whether a line of ``text`` is longer than ``limit`` characters: a few C-speed
    searches for the last line break in windows of ``limit + 1`` (a regular expression for
    a run of non-breaks took seconds on a file of a few tens of megabytes, measured)."""
    start, end = 0, len(text)
    while end - start > limit:
        last_break = text.rfind("\n", start, start + limit + 1)
        if last_break < 0:
            return True
        start = last_break + 1
    return False


def _nesting_depth(text: str) -> int:
    """The deepest nesting of collections up to just past ``SAFE_NESTING``, from the event
    stream (which does not recurse). It stops there: libyaml's time grows with the square of
    the flow nesting depth, and a hostile file could otherwise take hours. A syntax error
    ends the count too; composing stops at the same place."""
    depth = deepest = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader if HAS_LIBYAML else yaml.SafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                deepest = max(deepest, depth)
                if deepest > SAFE_NESTING:
                    break
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        pass
    return deepest


def _problem(error: yaml.YAMLError, text: str) -> YamlProblem:
    line = column = 1
    message = str(error)
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        if mark is not None:
            line, column = mark.line + 1, mark.column + 1
        message = " ".join(part for part in (error.context, error.problem) if part)
        if "maximum nesting depth" in (error.problem or ""):
            # libyaml (0.2.6 on) refuses nesting past its own limit, at the level that
            # passes it: the same finding as the project's own depth check, at that line.
            return YamlProblem(
                "yaml.too-deep",
                "the YAML nests deeper than the YAML reader allows (about 1,000 levels)",
                "Flatten the structure; documents never need more than a few levels.",
                line,
                column,
            )
        if error.context and "duplicate anchor" in error.context and error.context_mark:
            message = f"an anchor is defined twice (first at line {error.context_mark.line + 1})"
            hint = "Give every anchor (&name) a different name."
            return YamlProblem("yaml.anchor", message, hint, line, column)
        if (error.problem or "").startswith("found undefined alias") and mark is not None:
            return _undefined_alias(text, mark.index, line, column)
    elif isinstance(error, yaml.reader.ReaderError):
        code = error.character if isinstance(error.character, int) else ord(error.character)
        message = f"character U+{code:04X} is not allowed in YAML ({error.reason})"
        line = text.count("\n", 0, error.position) + 1
        column = error.position - text.rfind("\n", 0, error.position)
        hint = "Remove the control character; is this a binary file or a wrong encoding?"
        return YamlProblem("yaml.syntax", message, hint, line, column)
    problem = YamlProblem("yaml.syntax", message, _syntax_hint(text, line), line, column)
    if isinstance(error, yaml.MarkedYAMLError):
        return _with_opening(error, problem)
    return problem


def _undefined_alias(text: str, index: int, line: int, column: int) -> YamlProblem:
    """An alias (``*defaults``) of no anchor: most often one defined in another document of
    the file, which YAML does not carry across ``---``."""
    found = _ALIAS.match(text, index)
    name = found.group(1) if found else ""
    message = f"the alias *{name} names no anchor &{name} above it in this document"
    hint = (
        f"Define &{name} above it in the same document (an anchor is not known across "
        "'---'), or write the values out; shared defaults of several documents go in a "
        "template (template: NAME)."
    )
    return YamlProblem("yaml.anchor", message, hint, line, column)


_ALIAS = re.compile(r"\*([^\s,\[\]{}]+)")


def _with_opening(error: yaml.MarkedYAMLError, problem: YamlProblem) -> YamlProblem:
    """A bracket or quote left open is reported where it opened as well as where the parser
    gave up, which may be many lines later."""
    what = _OPENED.get(error.context or "")
    mark = error.context_mark
    if what is None or mark is None or mark.line + 1 == problem.line:
        return problem
    thing, closer = what
    line, column = mark.line + 1, mark.column + 1
    opened = YamlProblem(
        "yaml.unclosed",
        f"this {thing} is not closed: the parser gave up at line {problem.line}",
        f"Close it with {closer} where it ends.",
        line,
        column,
    )
    message = f"{problem.message} (the {thing} opened at line {line} is not closed)"
    hint = f"Close the {thing} opened at line {line}, or fix the syntax at this place."
    return dataclasses.replace(problem, message=message, hint=hint, opened=opened)


def _syntax_hint(text: str, line: int) -> str:
    start = 0
    for _ in range(line - 1):  # find the line without copying the text into lines
        start = text.find("\n", start) + 1
        if not start:
            return _FIX_SYNTAX
    end = text.find("\n", start)
    if text.find("\t", start, len(text) if end < 0 else end) >= 0:
        return "YAML does not allow tabs for indentation; indent with spaces."
    return _FIX_SYNTAX


_FIX_SYNTAX = "Fix the YAML syntax at this place (indentation, a missing ':' or an unclosed quote)."


__all__ = ["MAP", "PLAIN", "SEQ", "STR", "MappingNode", "ScalarNode", "SequenceNode", "compose_all"]
