"""The dependency graph as a Mermaid flowchart, which GitHub draws inside markdown."""

from __future__ import annotations

from customs_batch.reports._base import PlanView, register
from customs_batch.reports._picture import COLOURS, Picture, picture


@register("mermaid")
def render_mermaid(view: PlanView) -> str:
    """A ``flowchart LR``: one box per document (or group), arrows in apply order."""
    return mermaid(picture(view))


def mermaid(drawing: Picture) -> str:
    """The Mermaid text of a picture."""
    lines = ["flowchart LR"]
    if drawing.grouped_by:
        lines.append(f"  %% {drawing.documents} documents, grouped by {drawing.grouped_by}")
    for node in drawing.nodes:
        label = "<br/>".join(_escape(line) for line in node.lines)
        lines.append(f'  {node.id}["{label}"]:::{_class(node.action.value)}')
    for arrow in drawing.arrows:
        link = f'-->|"{_escape(arrow.label)}"|' if arrow.label else "-->"
        lines.append(f"  {arrow.source} {link} {arrow.target}")
    for action in sorted({node.action for node in drawing.nodes}, key=list(COLOURS).index):
        fill, stroke = COLOURS[action]
        lines.append(f"  classDef {_class(action.value)} fill:{fill},stroke:{stroke},color:#000")
    return "\n".join(lines) + "\n"


def _class(action: str) -> str:
    return action.replace("-", "_")


def _escape(text: str) -> str:
    """Text safe inside a quoted Mermaid label: entity codes for what Mermaid would parse."""
    for char, code in (("&", "#amp;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;")):
        text = text.replace(char, code)
    return text
