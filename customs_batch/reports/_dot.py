"""The dependency graph in Graphviz DOT (``dot -Tsvg plan.dot > plan.svg``)."""

from __future__ import annotations

from customs_batch.reports._base import PlanView, register
from customs_batch.reports._picture import COLOURS, picture


@register("dot")
def render_dot(view: PlanView) -> str:
    """A ``digraph``: one box per document (or group), arrows in apply order."""
    drawing = picture(view)
    lines = [
        "digraph plan {",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=10];',
    ]
    if drawing.grouped_by:
        label = f"{drawing.documents} documents, grouped by {drawing.grouped_by}"
        lines += [f"  label={_quote(label)};", "  labelloc=t;"]
    for node in drawing.nodes:
        fill, stroke = COLOURS[node.action]
        label = _quote("\n".join(node.lines))
        lines.append(f'  {node.id} [label={label}, fillcolor="{fill}", color="{stroke}"];')
    for arrow in drawing.arrows:
        attributes = f" [label={_quote(arrow.label)}]" if arrow.label else ""
        lines.append(f"  {arrow.source} -> {arrow.target}{attributes};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    """A DOT string: quotes and backslashes escaped, line breaks as ``\\n``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
