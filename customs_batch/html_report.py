"""A report in one HTML file that opens in any browser, offline: a filterable, sortable
table, a summary line and, when given, a graph drawn as inline SVG.

Everything is inside the page (styles, a small script, the picture): no network, no font,
no CDN, so the file can be mailed to someone who never runs customs-batch. Every text from
outside (file names, values, messages) is made printable first (:mod:`customs_batch.escaping`:
a byte of a non-UTF-8 file name becomes ``\\xff``, a control character its escape) and
then HTML-escaped, in text and in attributes alike.

:func:`html_report` is the one entry point; each command turns its result into
:class:`Column` s, :class:`Row` s and, optionally, a :class:`Graph`. A top-level module,
not part of ``reports/``: the validation reporters use it too, and ``reports`` sits above
``validation``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from customs_batch.escaping import printable
from customs_batch.findings import Location

TONES = frozenset(
    {"error", "warning", "info", "create", "update", "refused", "pending", "done", "neutral"}
)
"""The row colours a report may ask for (each a CSS class of the page)."""


@dataclass(frozen=True)
class Column:
    """A table column: its header, and whether it sorts as a number."""

    header: str
    numeric: bool = False


@dataclass(frozen=True)
class Row:
    """A table row: one text per column, where it points (a file and line, or a sheet, row
    and column), and a tone from :data:`TONES` that colours it."""

    cells: tuple[str, ...]
    location: Location | None = None
    tone: str | None = None


@dataclass(frozen=True)
class GraphNode:
    """A box: ``lines`` of text, its fill and border colours (``#rrggbb``)."""

    id: str
    lines: tuple[str, ...]
    fill: str = "#f1f3f5"
    stroke: str = "#868e96"


@dataclass(frozen=True)
class GraphEdge:
    """An arrow from what comes first to what waits for it, with why."""

    source: str
    target: str
    label: str = ""


@dataclass(frozen=True)
class Graph:
    """Boxes and arrows, drawn in layers by dependency depth; ``caption`` says what it shows."""

    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    caption: str = ""


def location_text(location: Location) -> str:
    """``manifests/a.yaml:12:5``, or ``data/m.xlsx, sheet 'Movements', row 12, column E``."""
    cell = location.cell()
    if cell is not None:
        return f"{location.file}, {cell}"
    where = location.file
    if location.line >= 1:
        where += f":{location.line}"
        if location.column >= 1:
            where += f":{location.column}"
    return where


def _location_key(location: Location) -> str:
    # Sorts by file, sheet, then row or line, then column, as numbers (zero-padded).
    line = location.row if location.row is not None else location.line
    return f"{location.file}\t{location.sheet or ''}\t{line:010d}\t{location.column:05d}"


def text(value: str) -> str:
    """``value`` printable and HTML-escaped (quotes too: safe inside an attribute)."""
    return html.escape(printable(value), quote=True)


def lines_text(value: str) -> str:
    """Like :func:`text`, keeping line breaks as ``<br>``: the page shows them, and the
    page's source holds no line a value brought in (a file name with a newline cannot put
    a line of its own at the start of a line of the file)."""
    unified = printable(value, lines=True).replace("\r\n", "\n").replace("\r", "\n")
    return html.escape(unified, quote=True).replace("\n", "<br>")


def html_report(
    title: str,
    columns: Sequence[Column],
    rows: Sequence[Row],
    *,
    summary: str,
    graph: Graph | None = None,
    where_header: str = "where",
) -> str:
    """The whole page. A column ``where_header`` is added after the first one when any row
    has a location."""
    located = any(row.location is not None for row in rows)
    headers = list(columns)
    if located:
        headers.insert(1, Column(where_header))
    head = "".join(
        f'<th scope="col" data-numeric="{"1" if c.numeric else "0"}" aria-sort="none">'
        f'<button type="button">{text(c.header)}</button></th>'
        for c in headers
    )
    body = "\n".join(_row(row, located) for row in rows)
    picture = "" if graph is None else _figure(graph)
    empty = "" if rows else '<p class="empty">Nothing to list.</p>'
    return _PAGE.format(
        title=text(title),
        summary=lines_text(summary),
        style=_STYLE,
        script=_SCRIPT,
        head=head,
        body=body,
        count=len(rows),
        empty=empty,
        picture=picture,
    )


FOLD_LINES = 6
"""A cell of more lines than this shows its first line and opens to the rest (a creation's
declared values): a table of a bulk load stays readable."""


def _cell(value: str) -> str:
    lines = value.split("\n")
    if len(lines) <= FOLD_LINES:
        return f"<td>{lines_text(value)}</td>"
    rest = "\n".join(lines[1:])
    return (
        f"<td><details><summary>{lines_text(lines[0])} (+{len(lines) - 1} more)</summary>"
        f"{lines_text(rest)}</details></td>"
    )


def _row(row: Row, located: bool) -> str:
    cells = [_cell(value) for value in row.cells]
    if located:
        where = row.location
        cells.insert(
            1,
            "<td></td>"
            if where is None
            else f'<td data-key="{text(_location_key(where))}" class="where">'
            f"{text(location_text(where))}</td>",
        )
    tone = f' class="tone-{row.tone}"' if row.tone in TONES else ""
    return f"<tr{tone}>{''.join(cells)}</tr>"


# The picture: one column of boxes per dependency depth (what waits for nothing on the left),
# arrows from the right side of what comes first to the left side of what waits for it.
_CHAR = 7.4
_LINE = 16
_PAD = 8
_GAP_X = 70
_GAP_Y = 16
_MAX_CHARS = 40
_FIRST = ' class="first"'
_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")


def depths(graph: Graph) -> dict[str, int]:
    """Each node's layer: 0 for one that waits for nothing, else one more than the deepest
    node it waits for. An arrow that closes a cycle is not followed."""
    waits_for: dict[str, list[str]] = {node.id: [] for node in graph.nodes}
    for edge in graph.edges:
        if edge.source in waits_for and edge.target in waits_for:
            waits_for[edge.target].append(edge.source)
    found: dict[str, int] = {}
    for start in waits_for:
        # Iterative depth-first walk: a long chain of movements must not hit the recursion limit.
        stack: list[tuple[str, int]] = [(start, 0)]
        open_: set[str] = set()
        while stack:
            node, index = stack.pop()
            if node in found:
                continue
            open_.add(node)
            before = waits_for[node]
            while index < len(before) and (before[index] in found or before[index] in open_):
                index += 1
            if index < len(before):
                stack.append((node, index + 1))
                stack.append((before[index], 0))
                continue
            found[node] = 1 + max((found[b] for b in before if b in found), default=-1)
            open_.discard(node)
    return found


def _cut(line: str) -> str:
    line = printable(line)
    return line if len(line) <= _MAX_CHARS else line[: _MAX_CHARS - 1] + "…"


def svg(graph: Graph) -> str:
    """The graph as an ``<svg>`` element (the text in it escaped; long lines cut, whole in
    the box's tooltip)."""
    layer = depths(graph)
    width = _PAD * 2 + _CHAR * max(
        (len(_cut(line)) for node in graph.nodes for line in node.lines), default=10
    )
    columns: dict[int, list[GraphNode]] = {}
    for node in graph.nodes:
        columns.setdefault(layer[node.id], []).append(node)
    before: dict[str, list[str]] = {node.id: [] for node in graph.nodes}
    has_after: set[str] = set()
    for edge in graph.edges:
        if edge.source in before and edge.target in before:
            before[edge.target].append(edge.source)
            has_after.add(edge.source)
    boxes: dict[str, tuple[float, float, float]] = {}  # id -> x, y, height
    tallest = 0.0
    for depth, members in sorted(columns.items()):
        # Fewer crossings: what others wait for first in the first column; in the next ones,
        # each box near the middle of what it waits for (the barycentre heuristic).
        if depth == 0:
            members.sort(key=lambda node: node.id not in has_after)
        else:
            members.sort(key=lambda node: _middle(node.id, before, boxes))
        y = float(_GAP_Y)
        for node in members:
            height = float(_PAD * 2 + _LINE * max(len(node.lines), 1))
            boxes[node.id] = (_GAP_Y + depth * (width + _GAP_X), y, height)
            y += height + _GAP_Y
        tallest = max(tallest, y)
    total_width = _GAP_Y * 2 + (max(columns, default=0) + 1) * (width + _GAP_X) - _GAP_X
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" '
        f'width="{total_width:.0f}" height="{tallest:.0f}" '
        f'viewBox="0 0 {total_width:.0f} {tallest:.0f}">',
        f"<title>{text(graph.caption or 'dependency graph')}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#495057"/></marker></defs>',
    ]
    for edge in graph.edges:
        if edge.source not in boxes or edge.target not in boxes:
            continue
        sx, sy, sh = boxes[edge.source]
        tx, ty, th = boxes[edge.target]
        x1, y1, x2, y2 = sx + width, sy + sh / 2, tx, ty + th / 2
        bend = max(abs(x2 - x1) / 2, 30)
        label = f"<title>{text(edge.label)}</title>" if edge.label else ""
        parts.append(
            f'<path class="edge" d="M{x1:.1f},{y1:.1f} C{x1 + bend:.1f},{y1:.1f} '
            f'{x2 - bend:.1f},{y2:.1f} {x2:.1f},{y2:.1f}" marker-end="url(#arrow)">{label}</path>'
        )
    for node in graph.nodes:
        x, y, height = boxes[node.id]
        fill = node.fill if _COLOUR.fullmatch(node.fill) else "#f1f3f5"
        stroke = node.stroke if _COLOUR.fullmatch(node.stroke) else "#868e96"
        words = "".join(
            f'<text x="{x + _PAD:.1f}" y="{y + _PAD + _LINE * (number + 1) - 4:.1f}"'
            f"{_FIRST if number == 0 else ''}>{text(_cut(line))}</text>"
            for number, line in enumerate(node.lines)
        )
        parts.append(
            f'<g class="node"><title>{text(" — ".join(node.lines))}</title>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" rx="6" '
            f'fill="{fill}" stroke="{stroke}"/>{words}</g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _middle(
    node: str, before: dict[str, list[str]], boxes: dict[str, tuple[float, float, float]]
) -> float:
    placed = [boxes[b][1] + boxes[b][2] / 2 for b in before[node] if b in boxes]
    return sum(placed) / len(placed) if placed else 0.0


def _figure(graph: Graph) -> str:
    caption = text(graph.caption) if graph.caption else "Dependency graph"
    drawn = svg(graph) if graph.nodes else '<p class="empty">No documents.</p>'
    return (
        f'<details class="figure" open><summary>{caption}</summary>'
        f'<div class="scroll">{drawn}</div></details>'
    )


_STYLE = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em;color:#212529}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:1.2em 0 .4em}
.summary{white-space:pre-wrap;margin:0 0 1em;font-weight:600}
.tools{display:flex;gap:1em;align-items:center;margin-bottom:.5em}
#filter{padding:.35em .5em;width:24em;max-width:100%;font:inherit}
table{border-collapse:collapse;width:100%}
th,td{border:1px solid #dee2e6;padding:.3em .5em;text-align:left;vertical-align:top}
td{white-space:pre-wrap;overflow-wrap:break-word}
summary{cursor:pointer}
td:first-child{white-space:nowrap}
th{background:#f1f3f5;position:sticky;top:0}
th button{all:unset;cursor:pointer;font-weight:600}
th[aria-sort=ascending] button::after{content:" \\25B2"}
th[aria-sort=descending] button::after{content:" \\25BC"}
td.where{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;min-width:14em}
tr.tone-error td:first-child,tr.tone-refused td:first-child{border-left:4px solid #c92a2a}
tr.tone-warning td:first-child,tr.tone-update td:first-child,tr.tone-pending td:first-child{border-left:4px solid #e67700}
tr.tone-info td:first-child,tr.tone-neutral td:first-child{border-left:4px solid #868e96}
tr.tone-create td:first-child,tr.tone-done td:first-child{border-left:4px solid #2b8a3e}
.figure .scroll{overflow:auto;max-height:32em;border:1px solid #dee2e6;padding:.5em}
.figure summary{font-weight:600;margin:.4em 0}
svg.graph text{font:12px system-ui,sans-serif;fill:#212529}
svg.graph text.first{font-weight:600}
svg.graph path.edge{fill:none;stroke:#495057;stroke-width:1.3}
.empty{color:#868e96}
"""

_SCRIPT = """
(function(){
  var table=document.getElementById('rows'),body=table.tBodies[0];
  var all=Array.prototype.slice.call(body.rows),box=document.getElementById('filter');
  var shown=document.getElementById('shown');
  box.addEventListener('input',function(){
    var q=box.value.toLowerCase(),n=0;
    all.forEach(function(r){var hit=r.textContent.toLowerCase().indexOf(q)>=0;r.hidden=!hit;if(hit)n++;});
    shown.textContent=n+' of '+all.length+' rows';
  });
  function key(r,i,numeric){
    var c=r.cells[i];if(!c)return '';
    var k=c.hasAttribute('data-key')?c.getAttribute('data-key'):c.textContent;
    if(numeric){var f=parseFloat(k);return isNaN(f)?-Infinity:f;}
    return k.toLowerCase();
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
    th.querySelector('button').addEventListener('click',function(){
      var up=th.getAttribute('aria-sort')!=='ascending',numeric=th.getAttribute('data-numeric')==='1';
      Array.prototype.forEach.call(table.tHead.rows[0].cells,function(o){o.setAttribute('aria-sort','none');});
      th.setAttribute('aria-sort',up?'ascending':'descending');
      var rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){var x=key(a,i,numeric),y=key(b,i,numeric);return (x<y?-1:x>y?1:0)*(up?1:-1);});
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>{title}</title>
<style>{style}</style>
</head>
<body>
<h1>{title}</h1>
<p class="summary" id="summary">{summary}</p>
{picture}
<div class="tools"><label>Filter <input id="filter" type="search" autocomplete="off" placeholder="text in any column"></label>
<span id="shown">{count} of {count} rows</span></div>
<table id="rows"><thead><tr>{head}</tr></thead>
<tbody>
{body}
</tbody></table>
{empty}
<script>{script}</script>
</body>
</html>
"""
