"""The dependency graph of a plan as a picture: nodes coloured by action, arrows in apply
order labelled by why they exist, and large graphs collapsed into groups.

A picture of a few hundred boxes helps nobody, so past ``max_nodes`` documents are grouped
by kind and shipment, and when that still leaves too many boxes, by kind alone. A group
takes the colour of its most pressing action and says how many documents of each action
it holds.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from customs_batch.kinds import Address
from customs_batch.planning.graph import Edge
from customs_batch.planning.model import Action, PlannedChange
from customs_batch.reports._base import PlanView
from customs_batch.reports._words import REVIEW_ORDER

MAX_NODES = 50

# Fill and border of each action's boxes: red for what stops the pipeline, green for new,
# amber for changes, grey for what sends nothing.
COLOURS = {
    Action.CREATE: ("#d3f9d8", "#2b8a3e"),
    Action.UPDATE: ("#fff3bf", "#e67700"),
    Action.RESUBMIT: ("#ffe8cc", "#d9480f"),
    Action.NO_CHANGE: ("#f1f3f5", "#868e96"),
    Action.MOVED: ("#e3fafc", "#0b7285"),
    Action.DROP: ("#e9ecef", "#495057"),
    Action.REFUSED: ("#ffe3e3", "#c92a2a"),
    Action.REJECTED: ("#ffe3e3", "#c92a2a"),
    Action.ORPHANED: ("#f3d9fa", "#862e9c"),
    Action.NEEDS_DECISION: ("#ffc9c9", "#a61e4d"),
    Action.WAITING: ("#e3fafc", "#0c8599"),
}


@dataclass(frozen=True)
class Node:
    """One box: a document, or a group of documents (``count`` > 1 or ``group``)."""

    id: str
    lines: tuple[str, ...]
    action: Action


@dataclass(frozen=True)
class Arrow:
    """From what is applied first to what waits for it, with why."""

    source: str
    target: str
    label: str


@dataclass(frozen=True)
class Picture:
    """The boxes and arrows to draw; ``grouped_by`` says how documents were collapsed."""

    nodes: tuple[Node, ...]
    arrows: tuple[Arrow, ...]
    grouped_by: str | None = None
    documents: int = 0


def picture(view: PlanView, max_nodes: int = MAX_NODES) -> Picture:
    """The picture of ``view``'s plan: one box per document up to ``max_nodes``, else
    groups by kind and shipment, else by kind."""
    changes = view.plan.changes
    edges = view.graph_edges()
    if len(changes) <= max_nodes:
        ids = {change.address: f"n{index}" for index, change in enumerate(changes)}
        nodes = tuple(
            Node(ids[c.address], (str(c.address), c.action.value.replace("-", " ")), c.action)
            for c in changes
        )
        arrows = tuple(
            Arrow(ids[edge.target], ids[change.address], ", ".join(edge.reasons))
            for change in changes
            for edge in edges[change.address]
        )
        return Picture(nodes, arrows, None, len(changes))
    if len({_kind_and_shipment(change) for change in changes}) <= max_nodes:
        return _grouped(changes, edges, _kind_and_shipment, "kind and shipment")
    return _grouped(changes, edges, _kind, "kind")


def _kind_and_shipment(change: PlannedChange) -> str:
    shipment = change.spec.get("shipmentId")
    kind = change.address.kind.value
    return f"{kind} on {shipment}" if isinstance(shipment, str) and shipment else kind


def _kind(change: PlannedChange) -> str:
    return change.address.kind.value


def _grouped(
    changes: tuple[PlannedChange, ...],
    edges: Mapping[Address, tuple[Edge, ...]],
    key: Callable[[PlannedChange], str],
    grouped_by: str,
) -> Picture:
    members: dict[str, list[PlannedChange]] = defaultdict(list)
    for change in changes:
        members[key(change)].append(change)
    ids = {name: f"g{index}" for index, name in enumerate(members)}
    group_of = {change.address: ids[key(change)] for change in changes}
    nodes = []
    for name, group in members.items():
        tally = Counter(change.action for change in group)
        first = min(tally, key=REVIEW_ORDER.index)
        counts = ", ".join(
            f"{tally[action]} {action.value.replace('-', ' ')}"
            for action in REVIEW_ORDER
            if tally[action]
        )
        noun = "document" if len(group) == 1 else "documents"
        nodes.append(Node(ids[name], (name, f"{len(group)} {noun}: {counts}"), first))
    reasons: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for change in changes:
        for edge in edges[change.address]:
            source, target = group_of[edge.target], group_of[change.address]
            if source != target:
                reasons[source, target].update(edge.reasons or ("",))
    arrows = tuple(
        Arrow(source, target, _group_label(tally)) for (source, target), tally in reasons.items()
    )
    return Picture(tuple(nodes), arrows, grouped_by, len(changes))


def _group_label(tally: Counter[str]) -> str:
    return ", ".join(
        (f"{reason} x{count}" if count > 1 else reason) if reason else f"x{count}"
        for reason, count in sorted(tally.items())
    )
