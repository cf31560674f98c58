"""The plan as one HTML page (:mod:`customs_batch.html_report`): a sortable, filterable table
of the changes with each changed field's old and new value, and the dependency graph."""

from __future__ import annotations

from customs_batch.html_report import Column, Graph, GraphEdge, GraphNode, Row, html_report
from customs_batch.planning.model import UNKNOWN, Action, PlannedChange
from customs_batch.reports._base import PlanView, register
from customs_batch.reports._picture import COLOURS, picture
from customs_batch.reports._words import (
    REVIEW_ORDER,
    changed_values,
    declared,
    guard_text,
    only_unknown,
    path_text,
    shown_at,
    summary_text,
)

COLUMNS = (
    Column("action"),
    Column("address"),
    Column("from"),
    Column("values (old → new)"),
    Column("reason"),
)

_TONES = {
    Action.CREATE: "create",
    Action.UPDATE: "update",
    Action.RESUBMIT: "update",
    Action.REFUSED: "refused",
    Action.REJECTED: "refused",
    Action.NEEDS_DECISION: "refused",
    Action.WAITING: "pending",
    Action.ORPHANED: "pending",
}


@register("html")
def render_html(view: PlanView) -> str:
    """The plan as a page that opens in any browser, offline (unchanged documents listed only
    with ``show_unchanged``, but always in the graph's counts)."""
    plan = view.plan
    # What a reviewer must see first comes first (the page sorts by any column on a click).
    rows = [
        _row(change)
        for change in sorted(plan.changes, key=lambda c: REVIEW_ORDER.index(c.action))
        if change.action is not Action.NO_CHANGE or view.show_unchanged
    ]
    summary = [summary_text(plan, view.limit)]
    if plan.large_change is not None:
        summary.append(f"Large change: {guard_text(plan.large_change)}.")
    if plan.blocked:
        summary.append(
            f"{len(plan.blocked)} item(s) refused, rejected at the service or needing a "
            "decision: see their reasons."
        )
    state = f"state serial {plan.serial}" if plan.lineage else "no state yet"
    return html_report(
        f"customs-batch plan for {view.environment} ({state})",
        COLUMNS,
        rows,
        summary="\n".join(summary),
        graph=plan_graph(view),
    )


def plan_graph(view: PlanView) -> Graph:
    """The plan's dependency graph (grouped past 50 documents), coloured by action."""
    drawing = picture(view)
    # In review order: the first column of the drawing shows what changes before the rest.
    nodes = sorted(drawing.nodes, key=lambda node: REVIEW_ORDER.index(node.action))
    caption = f"Dependency graph ({drawing.documents} documents"
    caption += f", grouped by {drawing.grouped_by})" if drawing.grouped_by else ")"
    return Graph(
        tuple(GraphNode(node.id, node.lines, *COLOURS[node.action]) for node in nodes),
        tuple(GraphEdge(arrow.source, arrow.target, arrow.label) for arrow in drawing.arrows),
        caption,
    )


def _row(change: PlannedChange) -> Row:
    values = [f"{path}: {old} → {new}" for path, old, new in changed_values(change)]
    waiting = {path_text(path) for path in change.unknown}
    if change.action is Action.CREATE:
        values += [
            f"{where} = {shown_at(where, value)}"
            for where, value in declared(change.spec)
            if where not in waiting
        ]
    values += [f"{path} = {UNKNOWN}" for path in sorted(only_unknown(change))]
    return Row(
        (
            change.action.value.replace("-", " "),
            str(change.address),
            change.origin,
            "\n".join(values),
            change.reason,
        ),
        tone=_TONES.get(change.action, "neutral"),
    )
