"""What every plan format is given, and the registry of formats by name."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from customs_batch.client import RateLimit
from customs_batch.formats import Formats
from customs_batch.kinds import Address
from customs_batch.planning.graph import Edge
from customs_batch.planning.model import Plan


@dataclass(frozen=True)
class PlanView:
    """A plan and what a format needs to show it.

    ``edges`` are the dependency edges with their reasons, when the documents are at hand
    (``plan``); without them (a saved plan) the graph comes from each change's
    ``depends_on``, its edges unlabelled. ``colour`` adds terminal colours to the text.
    """

    plan: Plan
    environment: str
    limit: RateLimit
    show_unchanged: bool = False
    colour: bool = False
    edges: Mapping[Address, tuple[Edge, ...]] | None = None

    def graph_edges(self) -> dict[Address, tuple[Edge, ...]]:
        """Every change's edges to other changes of the plan."""
        present = {change.address for change in self.plan.changes}
        if self.edges is not None:
            return {
                address: tuple(
                    edge for edge in self.edges.get(address, ()) if edge.target in present
                )
                for address in present
            }
        return {
            change.address: tuple(
                Edge(target, ()) for target in change.depends_on if target in present
            )
            for change in self.plan.changes
        }


PlanFormat = Callable[[PlanView], str]

PLAN_FORMATS: Formats[PlanFormat] = Formats(
    "plan", ("text", "json", "markdown", "html", "mermaid", "dot")
)
"""``plan --format``: text and json first, the graph formats last."""

register = PLAN_FORMATS.register
plan_format_names = PLAN_FORMATS.names


def render_plan(name: str, view: PlanView) -> str:
    """The plan in format ``name``, ending with a newline."""
    return PLAN_FORMATS.get(name)(view)


PlanPieces = Callable[[PlanView], Iterator[str]]

_PIECES: dict[str, PlanPieces] = {}


def in_pieces(name: str) -> Callable[[PlanPieces], PlanPieces]:
    """Register the pieces format ``name`` can be written in (its text is their join)."""

    def add(pieces: PlanPieces) -> PlanPieces:
        _PIECES[name] = pieces
        return pieces

    return add


def render_plan_pieces(name: str, view: PlanView) -> Iterator[str]:
    """:func:`render_plan` in pieces, for a writer that need not hold it whole: a change at a
    time where the format has pieces (the text of a plan of 100,000 creations is 25 MB, a
    million lines), else the whole text as one piece."""
    pieces = _PIECES.get(name)
    return pieces(view) if pieces is not None else iter((render_plan(name, view),))
