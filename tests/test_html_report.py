"""The one-file HTML report: every text escaped, the table's structure, a page that needs
nothing from the network, and the layered drawing of a graph."""

from __future__ import annotations

import os
import re

from customs_batch.findings import Location
from customs_batch.html_report import (
    FOLD_LINES,
    Column,
    Graph,
    GraphEdge,
    GraphNode,
    Row,
    depths,
    html_report,
    location_text,
    svg,
)
from tests.html_page import read_page

HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)>'
# A manifest path with a newline and a byte that is not UTF-8 (as Python decodes file names).
ODD_FILE = os.fsdecode(b'manifests/x\n"><b>y\xff.yaml')

COLUMNS = (Column("severity"), Column("rule"), Column("count", numeric=True))


def _page(*rows: Row, graph: Graph | None = None) -> str:
    return html_report(
        f"report {HOSTILE}", COLUMNS, rows, summary=f"2 errors\n{HOSTILE}", graph=graph
    )


def test_every_text_is_escaped_and_the_page_is_valid_utf_8() -> None:
    text = _page(
        Row(("error", HOSTILE, "3"), Location(ODD_FILE, 12, 5)),
        graph=Graph((GraphNode("a", (HOSTILE, ODD_FILE)),), (), caption=HOSTILE),
    )
    text.encode("utf-8")  # no lone surrogate left
    page = read_page(text)
    # One script (the page's own) and no element a value brought in.
    assert page.count("script") == 1
    assert page.count("img") == 0 and page.count("b") == 0
    assert page.rows == [["error", 'manifests/x\\n"><b>y\\xff.yaml:12:5', HOSTILE, "3"]]
    assert HOSTILE in page.summary and page.summary.startswith("2 errors\n")
    assert HOSTILE in page.titles[0]
    assert page.svg_texts[0].startswith('<script>alert("x")')
    assert 'manifests/x\\n"><b>y\\xff.yaml' in page.svg_texts[1]


def test_a_line_break_in_a_value_shows_but_puts_no_line_in_the_file() -> None:
    text = _page(Row(("error", "see x\nerror[fake]: injected\r\n.yaml", "1")))
    assert not any(line.startswith("error[fake]") for line in text.splitlines())
    assert read_page(text).rows[0][1] == "see x\nerror[fake]: injected\n.yaml"


def test_the_location_column_follows_the_first_and_sorts_by_number() -> None:
    text = _page(
        Row(("error", "a", "1"), Location("m.yaml", 9, 3)),
        Row(
            ("warning", "b", "2"),
            Location("d.xlsx", 12, 5, sheet="Moves", row=12, column_name="Qty"),
        ),
        Row(("info", "c", "3")),
    )
    page = read_page(text)
    assert page.headers == ["severity", "where", "rule", "count"]
    assert [row[1] for row in page.rows] == [
        "m.yaml:9:3",
        "d.xlsx, sheet 'Moves', row 12, column E 'Qty'",
        "",
    ]
    keys = [
        attrs.get("data-key") for tag, attrs in page.tags if tag == "td" and "data-key" in attrs
    ]
    assert keys == ["m.yaml\t\t0000000009\t00003", "d.xlsx\tMoves\t0000000012\t00005"]
    numeric = [attrs["data-numeric"] for tag, attrs in page.tags if tag == "th"]
    assert numeric == ["0", "0", "0", "1"]


def test_without_locations_there_is_no_location_column_and_no_rows_says_so() -> None:
    page = read_page(_page(Row(("error", "a", "1"))))
    assert page.headers == ["severity", "rule", "count"]
    empty = _page()
    assert read_page(empty).rows == [] and "Nothing to list." in empty


def test_only_known_tones_become_a_row_class() -> None:
    page = read_page(
        _page(Row(("a", "b", "1"), tone="error"), Row(("a", "b", "1"), tone='x" onclick="y'))
    )
    assert page.row_classes == ["tone-error", None]


def test_a_long_cell_folds_after_its_first_line() -> None:
    lines = [f"field{number} = {number}" for number in range(FOLD_LINES + 3)]
    text = _page(Row(("create", "\n".join(lines), "1")))
    assert f"<summary>field0 = 0 (+{FOLD_LINES + 2} more)</summary>" in text
    cell = read_page(text).rows[0][1]
    assert cell == f"field0 = 0 (+{FOLD_LINES + 2} more)" + "\n".join(lines[1:])
    short = _page(Row(("create", "\n".join(lines[:FOLD_LINES]), "1")))
    assert "<details>" not in short


def test_the_page_needs_nothing_from_the_network() -> None:
    graph = Graph((GraphNode("a", ("A",)), GraphNode("b", ("B",))), (GraphEdge("a", "b"),))
    text = html_report("t", COLUMNS, [Row(("error", "a", "1"))], summary="", graph=graph)
    # The only URL is the SVG namespace (a name, never fetched); no file is referenced.
    assert re.findall(r"https?://[^\s\"']+", text) == ["http://www.w3.org/2000/svg"]
    assert not any({"src", "href"} & set(attrs) for _, attrs in read_page(text).tags)
    assert "@import" not in text and "@font-face" not in text
    assert re.findall(r"url\(([^)]*)\)", text) == ["#arrow"]
    assert "default-src 'none'" in text


def test_a_graph_is_drawn_in_layers_by_dependency_depth() -> None:
    graph = Graph(
        tuple(GraphNode(name, (name,)) for name in "abcd"),
        (GraphEdge("a", "b"), GraphEdge("b", "c"), GraphEdge("a", "c"), GraphEdge("x", "d")),
    )
    assert depths(graph) == {"a": 0, "b": 1, "c": 2, "d": 0}
    drawing = svg(graph)
    xs = {
        texts: float(x)
        for x, texts in re.findall(r'<text x="([\d.]+)"[^>]*>([a-d])</text>', drawing)
    }
    assert xs["a"] == xs["d"] < xs["b"] < xs["c"]
    # Edges to a node that is not drawn are left out.
    assert drawing.count('class="edge"') == 3


def test_a_cycle_and_a_long_chain_are_drawn_without_recursion() -> None:
    cycle = Graph(
        (GraphNode("a", ("a",)), GraphNode("b", ("b",))),
        (GraphEdge("a", "b"), GraphEdge("b", "a")),
    )
    assert sorted(depths(cycle).values()) == [0, 1]
    count = 5_000
    chain = Graph(
        tuple(GraphNode(f"n{i}", (f"n{i}",)) for i in range(count)),
        tuple(GraphEdge(f"n{i}", f"n{i + 1}") for i in range(count - 1)),
    )
    assert depths(chain)[f"n{count - 1}"] == count - 1


def test_colours_must_be_colours_and_long_lines_are_cut_whole_in_the_tooltip() -> None:
    long = "Movement/" + "x" * 80
    drawing = svg(Graph((GraphNode("a", (long,), fill='red" onclick="x', stroke="#123456"),), ()))
    assert 'fill="#f1f3f5"' in drawing and 'stroke="#123456"' in drawing
    assert "onclick" not in drawing
    assert f"<title>{long}</title>" in drawing
    assert re.search(r">Movement/x+…</text>", drawing)


def test_location_text() -> None:
    assert location_text(Location("m.yaml")) == "m.yaml"
    assert location_text(Location("m.yaml", 3)) == "m.yaml:3"
    cell = Location("d.csv", 4, 0, sheet="d", row=4, column_name="Qty")
    assert location_text(cell) == "d.csv, sheet 'd', row 4, column 'Qty'"
