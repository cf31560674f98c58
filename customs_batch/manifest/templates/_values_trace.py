"""Values a template copied from the document's ``values``, traced back to the manifest.

A template line ``departureOffice: {{ values.office | tojson }}`` only passes on what the
document wrote under ``values:``; a finding on that value is fixed in the manifest, so it is
reported there, with the template line that used it. A value is traced when it is (or is inside)
the output of one expression that reads ``values`` through attributes and constant indexes
only, under at most the filters that do not change a value (``tojson``, ``string``,
``default``), and the value in the output equals the one at the same place in ``values``. Anything a template computes (``values.office[:2]``, ``REF-{{ values.n }}``)
stays at the template.

The trace is worked out only when a position is asked for (findings, and the few places the
project-wide checks report at), and the parse of each expression is remembered.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from functools import lru_cache
from typing import Any

from jinja2 import Environment, nodes

from customs_batch.findings import JsonPath
from customs_batch.manifest.document import Position
from customs_batch.manifest.templates._lines import tag_end
from customs_batch.manifest.templates._output import TemplateOutput
from customs_batch.manifest.templates._render import TemplateSource
from customs_batch.manifest.yaml._source_map import Marks

_PASSING_FILTERS = frozenset({"tojson", "string", "default", "d"})
_PARSER = Environment()  # parses only: nothing is rendered with it


class ValuesTrace:
    """For a position in the template: the value in the manifest it was copied from."""

    __slots__ = ("_file", "_marks", "_output", "_spec", "_text", "_values")

    def __init__(
        self,
        file: str,
        marks: Marks,
        values: Mapping[str, Any],
        spec: Mapping[str, Any],
        output: TemplateOutput,
        text: str,
    ) -> None:
        self._file = file
        self._marks = marks
        self._values = values
        self._spec = spec
        self._output = output
        self._text = text

    def __call__(self, path: JsonPath, at: Position) -> Position:
        """The manifest's place of the value at ``path`` (found at ``at`` in the template)
        when the template copied it from ``values``, else ``at``."""
        source = copied_from(self._output, self._text, self._values, self._spec, path, self._marks)
        mark = None if source is None else self._marks.get(source)
        if mark is None:
            return at
        return Position(self._file, mark.line + 1, mark.column + 1, used_at=at)


class CellTrace:
    """Under ``forEach``: for a path of a row's template output, the cell the template
    copied through ``values`` (``values: {office: "{{ row.Office }}"}``), or None."""

    __slots__ = ("_cells", "_output", "_row", "_sheet", "_spec", "_text", "_values")

    def __init__(
        self,
        output: TemplateOutput,
        text: str,
        values: Mapping[str, Any],
        spec: Mapping[str, Any],
        cells: Mapping[JsonPath, tuple[int, str]],
        row: Position,
        sheet: str,
    ) -> None:
        self._output = output
        self._text = text
        self._values = values
        self._spec = spec
        self._cells = cells
        self._row = row
        self._sheet = sheet

    def __call__(self, path: JsonPath) -> Position | None:
        source = copied_from(self._output, self._text, self._values, self._spec, path, self._cells)
        mark = None if source is None else self._output.marks.get(path)
        if source is None or mark is None:
            return None
        column, header = self._cells[source]
        used = Position(self._output.file, mark.line + 1, mark.column + 1)
        return self._row.cell(column, header, used_at=used)


def copied_from(
    output: TemplateOutput,
    text: str,
    values: Mapping[str, Any],
    spec: Mapping[str, Any],
    path: JsonPath,
    known: Container[JsonPath],
) -> JsonPath | None:
    """The path (``("values", …)``) of the value the template's output at ``path`` was
    copied from, when it is one of ``known``; else None."""
    place = output.expression(path)
    if place is None:
        return None
    read = values_path(text, *place)
    if read is None:
        return None
    given = _at(spec, path[1:])
    # Where in the path the expression's output starts is not in the marks (a mapping
    # is marked at its key): the value is the one at the same place under values.
    for root in range(len(path), 1, -1):
        source: JsonPath = ("values", *read, *path[root:])
        if source in known and _same(_at(values, source[1:]), given):
            return source
    return None


def template_text(source: TemplateSource) -> str | None:
    """The source text of a compiled template (None when it cannot be read again)."""
    return _template_text(source)


@lru_cache(maxsize=256)
def _template_text(source: TemplateSource) -> str | None:
    template = source.template
    loader = template.environment.loader
    if loader is None or template.name is None:
        return None
    try:
        return str(loader.get_source(template.environment, template.name)[0])
    except Exception:  # read before, unreadable now: nothing is traced
        return None


@lru_cache(maxsize=4096)
def values_path(text: str, line: int, column: int) -> JsonPath | None:
    """The path under ``values`` that the expression at 0-based ``line`` and ``column`` of
    the template ``text`` passes on unchanged, or None."""
    lines = text.split("\n")
    if line >= len(lines):
        return None
    start = sum(len(before) + 1 for before in lines[:line]) + column
    end = tag_end(text, start, "}}") - 2
    if end <= start:
        return None
    expression = text[start:end].rstrip("-+ \t\n")
    try:
        parsed = _PARSER.parse("{{ " + expression + " }}")
    except Exception:  # not an expression this simple reading understands
        return None
    body = parsed.body
    if len(body) != 1 or not isinstance(body[0], nodes.Output) or len(body[0].nodes) != 1:
        return None
    return _read_path(body[0].nodes[0])


def _read_path(node: nodes.Node) -> JsonPath | None:
    while isinstance(node, nodes.Filter) and node.name in _PASSING_FILTERS:
        if node.node is None:
            return None
        node = node.node
    parts: list[str | int] = []
    while True:
        if isinstance(node, nodes.Getattr):
            parts.append(node.attr)
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            if not isinstance(node.arg.value, str | int) or isinstance(node.arg.value, bool):
                return None
            parts.append(node.arg.value)
        elif isinstance(node, nodes.Name) and node.name == "values" and node.ctx == "load":
            return tuple(reversed(parts))
        else:
            return None
        node = node.node


_MISSING = object()


def _at(container: Any, path: JsonPath) -> Any:
    for part in path:
        container = _child(container, part)
    return container


def _child(container: Any, part: str | int) -> Any:
    if isinstance(container, Mapping):
        return container.get(part, _MISSING)
    if isinstance(container, list) and isinstance(part, int) and 0 <= part < len(container):
        return container[part]
    return _MISSING


def _same(written: Any, given: Any) -> bool:
    """Whether the output's value is the value written (the template's output is typed by
    the schema: a number written may arrive as its text)."""
    if written is _MISSING or given is _MISSING:
        return False
    if written == given and type(written) is type(given):
        return True
    scalars = (str, int, float, bool)
    return (
        isinstance(written, scalars) and isinstance(given, scalars) and str(written) == str(given)
    )
