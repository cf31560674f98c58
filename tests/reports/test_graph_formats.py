"""plan --format mermaid and dot: the dependency graph, coloured by action, edges by reason."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pydot
import pytest

from customs_batch.kinds import Kind
from customs_batch.planning.graph import dependency_edges
from customs_batch.planning.model import Action
from customs_batch.reports import PlanView, render_plan
from customs_batch.reports._picture import COLOURS
from tests.planning.helpers import doc, movement

from .plans import big_view, change, view

# pydot's parser still calls pyparsing's old names, which pyparsing 3.3 warns about.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:pydot.dot_parser")

_NODE = re.compile(r'^  ([ng]\d+)\["((?:[^"<>]|<br/>)*)"\]:::(\w+)$')
_EDGE = re.compile(r'^  ([ng]\d+) -->(?:\|"([^"<>|]*)"\|)? ([ng]\d+)$')
_CLASS = re.compile(r"^  classDef (\w+) fill:#[0-9a-f]{6},stroke:#[0-9a-f]{6},color:#000$")


@dataclass
class Flowchart:
    labels: dict[str, list[str]] = field(default_factory=dict)
    classes: dict[str, str] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    defined: set[str] = field(default_factory=set)


def parse_mermaid(text: str) -> Flowchart:
    """Check the flowchart line by line against the Mermaid syntax it uses, and read it."""
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    chart = Flowchart()
    for line in lines[1:]:
        if line.startswith("  %% "):
            continue
        if node := _NODE.match(line):
            assert node[1] not in chart.labels, f"node declared twice: {line}"
            chart.labels[node[1]] = node[2].split("<br/>")
            chart.classes[node[1]] = node[3]
        elif edge := _EDGE.match(line):
            assert edge[1] in chart.labels and edge[3] in chart.labels, line
            chart.edges.append((edge[1], edge[3], edge[2] or ""))
        elif style := _CLASS.match(line):
            chart.defined.add(style[1])
        else:
            pytest.fail(f"not a Mermaid flowchart line: {line!r}")
    assert set(chart.classes.values()) <= chart.defined
    return chart


def _by_label(chart: Flowchart) -> dict[str, str]:
    return {lines[0]: node for node, lines in chart.labels.items()}


def _dot(text: str) -> pydot.Dot:
    """The one graph of a DOT text."""
    graphs = pydot.graph_from_dot_data(text)
    assert graphs is not None and len(graphs) == 1
    return graphs[0]


def _documents_view() -> PlanView:
    documents = [
        doc(Kind.DEPARTURE_DECLARATION, "dep", {"type": "DEPARTURE"}, 0),
        doc(
            Kind.TRANSIT_PARTY_UPDATE,
            "upd",
            {"declarationId": "${ref:DepartureDeclaration/dep.declarationId}"},
            1,
            "DepartureDeclaration/dep",
        ),
        movement("m1", 2),
        movement("m2", 3),
        doc(Kind.EXPORT_CANCELLATION, "c", {"declarationId": 1}, 4, "Movement/m2"),
    ]
    actions = [Action.CREATE, Action.REFUSED, Action.NO_CHANGE, Action.CREATE, Action.UPDATE]
    changes = [
        change(d.kind, d.name, action, depends_on=(), spec=dict(d.spec))
        for d, action in zip(documents, actions, strict=True)
    ]
    return view(*changes, edges=dependency_edges(documents))


def test_mermaid_draws_every_document_coloured_and_every_edge_with_its_reasons() -> None:
    chart = parse_mermaid(render_plan("mermaid", _documents_view()))
    nodes = _by_label(chart)
    assert chart.classes[nodes["TransitPartyUpdate/upd"]] == "refused"
    assert chart.classes[nodes["Movement/m1"]] == "no_change"
    assert chart.labels[nodes["Movement/m1"]] == ["Movement/m1", "no change"]
    named = {(chart.labels[a][0], chart.labels[b][0], label) for a, b, label in chart.edges}
    assert named == {
        ("DepartureDeclaration/dep", "TransitPartyUpdate/upd", "reference, dependsOn"),
        ("Movement/m1", "Movement/m2", "same shipment/HAWB"),
        ("Movement/m2", "ExportCancellation/c", "dependsOn"),
    }


def test_dot_parses_and_carries_the_same_graph() -> None:
    graph = _dot(render_plan("dot", _documents_view()))
    nodes = {n.get_name(): n for n in graph.get_nodes() if n.get_name() not in ("node", "edge")}
    label = {name: node.get("label").strip('"').split("\\n")[0] for name, node in nodes.items()}
    refused = next(n for name, n in nodes.items() if label[name] == "TransitPartyUpdate/upd")
    assert refused.get("fillcolor").strip('"') == COLOURS[Action.REFUSED][0]
    edges = {
        (
            label[str(e.get_source())],
            label[str(e.get_destination())],
            (e.get("label") or "").strip('"'),
        )
        for e in graph.get_edges()
    }
    assert ("Movement/m1", "Movement/m2", "same shipment/HAWB") in edges
    assert ("DepartureDeclaration/dep", "TransitPartyUpdate/upd", "reference, dependsOn") in edges
    assert len(edges) == 3


def test_a_saved_plan_without_documents_draws_its_edges_unlabelled() -> None:
    first = change(Kind.DEPARTURE_DECLARATION, "dep", Action.CREATE)
    second = change(Kind.TRANSIT_PARTY_UPDATE, "upd", Action.CREATE, depends_on=(first.address,))
    chart = parse_mermaid(render_plan("mermaid", view(first, second)))
    assert chart.edges == [("n0", "n1", "")]


def test_labels_with_quotes_and_brackets_stay_one_node() -> None:
    odd = change(Kind.MOVEMENT, 'a"b<c>', Action.CREATE)
    chart = parse_mermaid(render_plan("mermaid", view(odd)))
    assert chart.labels["n0"][0] == "Movement/a#quot;b#lt;c#gt;"
    graph = _dot(render_plan("dot", view(odd)))
    assert [n.get("label") for n in graph.get_nodes() if n.get_name() == "n0"] == [
        '"Movement/a\\"b<c>\\ncreate"'
    ]


def test_a_large_graph_is_grouped_by_kind_and_shipment() -> None:
    big = big_view(400)
    chart = parse_mermaid(render_plan("mermaid", big))
    assert len(chart.labels) == 40
    first = chart.labels["g7"]
    assert first[0] == "Movement on shp_0007"
    assert first[1] == "10 documents: 2 refused, 8 create"
    assert chart.classes["g7"] == "refused"
    # Same-lane edges inside a group are not drawn; none cross groups in this plan.
    assert chart.edges == []
    graph = _dot(render_plan("dot", big))
    assert "grouped by kind and shipment" in graph.get("label")


def test_too_many_shipments_are_grouped_by_kind() -> None:
    changes = [
        change(Kind.MOVEMENT, f"m{i}", Action.CREATE, spec={"shipmentId": f"shp_{i}"})
        for i in range(120)
    ]
    group = change(Kind.TEMPLATE_GROUP, "g", Action.UPDATE)
    after = change(Kind.EXPORT_CANCELLATION, "c", Action.CREATE, depends_on=(group.address,))
    chart = parse_mermaid(render_plan("mermaid", view(*changes, group, after)))
    assert sorted(lines[0] for lines in chart.labels.values()) == [
        "ExportCancellation",
        "Movement",
        "TemplateGroup",
    ]
    nodes = _by_label(chart)
    assert chart.labels[nodes["Movement"]][1] == "120 documents: 120 create"
    assert chart.edges == [(nodes["TemplateGroup"], nodes["ExportCancellation"], "x1")]
