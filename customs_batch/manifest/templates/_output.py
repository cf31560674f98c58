"""A template's rendered YAML read like a document's spec: typed by the kind's schema, with
marks into the template file. Documents sharing a template usually render the same text, so
the reading is cached by text (the merge copies what it takes from the cached value)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from yaml.nodes import MappingNode, Node, SequenceNode

from customs_batch.findings import (
    NOT_SHOWN,
    Finding,
    JsonPath,
    Location,
    Severity,
    at_sensitive_value,
)
from customs_batch.kinds import Kind
from customs_batch.manifest.templates._lines import Places
from customs_batch.manifest.templates._render import Rendered
from customs_batch.manifest.yaml._compose import PLAIN, ScalarNode, compose_all
from customs_batch.manifest.yaml._schema_view import spec_view
from customs_batch.manifest.yaml._source_map import Mark, Marks
from customs_batch.manifest.yaml._tree import Walk


@dataclass(frozen=True)
class TemplateOutput:
    """The mapping a template gave (to merge under ``spec``), with what reading it found.

    Marks and paths start with ``"spec"``. Lines and columns are the template's own (the
    output's mapped back through whitespace control, comments, blocks and expressions).
    """

    file: str
    spec: dict[str, Any]
    marks: Marks
    refs: tuple[tuple[JsonPath, str], ...]
    findings: tuple[Finding, ...]
    failed: bool

    def expression(self, path: JsonPath) -> tuple[int, int] | None:
        """The template's 0-based (line, column) of the ``{{ … }}`` that wrote the value at
        ``path`` (None: written as text in the template, or not there)."""
        marks = self.marks
        return marks.expression(path) if isinstance(marks, _MovedMarks) else None


_CACHED_TEXT_CHARS = 100_000


def parse_output(rendered: Rendered, kind: Kind) -> TemplateOutput:
    """Read a template's output against ``kind``'s spec schema."""
    if len(rendered.text) > _CACHED_TEXT_CHARS:  # rare, and not worth the memory
        return _parse(rendered.file, rendered.text, kind, rendered.places)
    return _parse_cached(rendered.file, rendered.text, kind, rendered.places)


def _parse(file: str, text: str, kind: Kind, places: Places) -> TemplateOutput:
    output = _parse_text(file, text, kind)
    if places.same:
        return output
    marks = _MovedMarks(output.marks, places)
    findings = tuple(
        replace(f, location=_moved(f.location, places)) if f.location.file == file else f
        for f in output.findings
    )
    if not output.failed and "#" in text:
        findings += tuple(_comments_in_values(file, text, places, output.marks))
    return replace(output, marks=marks, findings=findings)


COMMENT_IN_VALUE = "template.comment-in-value"


def _comments_in_values(file: str, text: str, places: Places, marks: Marks) -> Iterator[Finding]:
    """A finding for each expression whose unquoted output YAML cut short at a `` #``,
    reading the rest as a comment (``name: {{ values.name }}`` printing ``Acme #1``
    gave the name ``Acme``, without a word). At the field's path; the text is quoted
    unless the field is sensitive (a guarantee's access code)."""
    lines = text.split("\n")
    hashes = [
        (printed, column)
        for printed in places.printed()
        for column in range(printed.start, printed.end)
        if lines[printed.line][column] == "#"
        and (column == 0 or lines[printed.line][column - 1] in " \t")
    ]
    if not hashes:
        return
    nodes, problem = compose_all(text)
    if problem is not None:
        return
    scalars = [node for root in nodes for node in _scalars(root)]
    paths = {(mark.line, mark.column): path for path, mark in marks.items()}
    reported: set[tuple[int, int]] = set()
    for printed, column in hashes:
        if any(_holds(node, printed.line, column) for node in scalars):
            continue  # inside a quoted value or a block scalar: text
        if (printed.line, printed.start) in reported:
            continue
        reported.add((printed.line, printed.start))
        value = next((n for n in scalars if _holds(n, printed.line, printed.start)), None)
        start = (value.start_mark.line, value.start_mark.column) if value else None
        path = paths.get(start, ("template",)) if start else ("template",)
        where = Location(file, printed.template_line + 1, printed.template_column + 1, path)
        if at_sensitive_value(path):
            message = (
                "the expression printed its text unquoted, and YAML reads a ' #' in it as the "
                f"start of a comment: the value would be cut short there; {NOT_SHOWN}"
            )
        else:
            shown = lines[printed.line][printed.start : printed.end].strip()
            kept = "" if value is None else value.value
            message = (
                f"the expression printed {shown!r} unquoted, and YAML reads the ' #' in it as "
                f"the start of a comment: the value would be {kept!r}, the rest of the text "
                "left out"
            )
        hint = (
            "Quote what the expression prints, `{{ values.x | tojson }}`, so that the value is "
            "the text as written."
        )
        sensitive = at_sensitive_value(path)
        yield Finding(COMMENT_IN_VALUE, Severity.ERROR, message, where, hint, sensitive=sensitive)


def _scalars(node: Node) -> Iterator[ScalarNode]:
    if isinstance(node, ScalarNode):
        yield node
    elif isinstance(node, MappingNode):
        for key, value in node.value:
            yield from _scalars(key)
            yield from _scalars(value)
    elif isinstance(node, SequenceNode):
        for item in node.value:
            yield from _scalars(item)


def _holds(node: ScalarNode, line: int, column: int) -> bool:
    start, end = node.start_mark, node.end_mark
    return (start.line, start.column) <= (line, column) < (end.line, end.column)


def _moved(location: Location, places: Places) -> Location:
    """A 1-based location in the output moved to the template (line 0 stays 0: unknown)."""
    if location.line <= 0:
        return location
    line, column = places.place(location.line - 1, max(location.column - 1, 0))
    return replace(location, line=line + 1, column=column + 1)


class _MovedMarks(Mapping[JsonPath, Mark]):
    """The output's marks, each moved to the template only when asked for: most values
    never are (only those with findings, and the few the project-wide checks read)."""

    __slots__ = ("_marks", "_places")

    def __init__(self, marks: Marks, places: Places) -> None:
        self._marks = marks
        self._places = places

    def __getitem__(self, path: JsonPath) -> Mark:
        mark = self._marks[path]
        return _Mark(*self._places.place(mark.line, mark.column))

    def expression(self, path: JsonPath) -> tuple[int, int] | None:
        """The template's 0-based (line, column) of the expression that wrote the value at
        ``path``; None for a value written as text, or not there."""
        mark = self._marks.get(path)
        return None if mark is None else self._places.expression_at(mark.line, mark.column)

    def __iter__(self) -> Iterator[JsonPath]:
        return iter(self._marks)

    def __len__(self) -> int:
        return len(self._marks)


@dataclass(frozen=True, slots=True)
class _Mark:
    """A mark moved to the template's line and column (0-based, like YAML's)."""

    line: int
    column: int


_UNQUOTED_HINT = (
    "Fix the template. A value an expression prints unquoted is read as YAML: text holding "
    "': ' or starting with a quote, '&', '*', '[' or '{' breaks the line; print it with "
    "`{{ values.x | tojson }}`."
)


def _parse_text(file: str, text: str, kind: Kind) -> TemplateOutput:
    nodes, problem = compose_all(text)
    if problem is not None:
        where = Location(file, problem.line, problem.column, ("template",))
        wrong = "" if problem.rule == "yaml.too-large" else " is not valid YAML"
        message = f"the template's output{wrong}: {problem.message}"
        hint = "Fix the template." if problem.rule == "yaml.too-large" else _UNQUOTED_HINT
        finding = Finding(problem.rule, Severity.ERROR, message, where, hint)
        return TemplateOutput(file, {}, {}, (), (finding,), True)
    nodes = [n for n in nodes if not (n.__class__ is ScalarNode and n.tag == PLAIN and not n.value)]
    if not nodes:
        return TemplateOutput(file, {}, {}, (), (), False)
    walk = Walk(file, track_aliases="&" in text)
    value = walk.value(nodes[0], spec_view(kind), ("spec",))
    if len(nodes) > 1 or not isinstance(value, dict):
        walk.report_at(
            "template.not-mapping",
            "a template must render to one mapping of spec fields",
            "Make the template output 'field: value' lines (no '---', no list at the top).",
            ("spec",),
        )
        return TemplateOutput(file, {}, {}, (), tuple(walk.findings), True)
    failed = any(f.severity is Severity.ERROR for f in walk.findings)
    return TemplateOutput(file, value, walk.marks, tuple(walk.refs), tuple(walk.findings), failed)


_parse_cached = lru_cache(maxsize=512)(_parse)
