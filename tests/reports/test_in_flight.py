"""A request of the run that holds the state's lock, not answered yet, is in flight: the
plan's summary never counts it as waiting at the service (it may not have reached it)."""

from __future__ import annotations

import dataclasses
import json

from customs_batch.kinds import Kind
from customs_batch.planning.model import Action, Operation
from customs_batch.reports import render_plan
from tests.reports.plans import change, view


def _plan_with_both() -> tuple[str, str, str]:
    flying = change(
        Kind.DEPARTURE_DECLARATION,
        "dep-1",
        Action.WAITING,
        reason="in flight: sent by the run that holds the state's lock",
    )
    undecided = dataclasses.replace(
        change(Kind.EXPORT_CANCELLATION, "cancel-1", Action.WAITING, reason="not decided"),
        operation=Operation.FOLLOW,
    )
    shown = view(flying, undecided)
    return (
        render_plan("text", shown),
        render_plan("markdown", shown),
        render_plan("json", shown),
    )


def test_the_summary_counts_a_request_in_flight_apart_from_what_waits_at_the_service() -> None:
    text, markdown, _ = _plan_with_both()
    assert "1 waiting at the service, 1 in flight." in text
    assert "| waiting at the service | 1 |" in markdown and "| in flight | 1 |" in markdown
    assert "#### Waiting at the service (1)" in markdown
    assert "#### In flight (sent by the run that holds the state's lock" in markdown
    waiting = markdown.index("**`ExportCancellation/cancel-1`**")
    flying = markdown.index("**`DepartureDeclaration/dep-1`**")
    assert markdown.index("#### Waiting at the service") < waiting
    assert markdown.index("#### In flight") < flying
    assert waiting < markdown.index("#### In flight")


def test_a_plan_of_only_a_request_in_flight_says_nothing_waits_at_the_service() -> None:
    flying = change(
        Kind.DEPARTURE_DECLARATION, "dep-1", Action.WAITING, reason="in flight: sent by …"
    )
    text = render_plan("text", view(flying))
    assert "1 in flight." in text and "waiting at the service" not in text


def test_the_json_plan_marks_a_request_in_flight_and_counts_it() -> None:
    _, _, raw = _plan_with_both()
    body = json.loads(raw)
    marked = {c["address"]: (c["action"], c["inFlight"]) for c in body["changes"]}
    assert marked == {
        "DepartureDeclaration/dep-1": ("waiting", True),
        "ExportCancellation/cancel-1": ("waiting", False),
    }
    # Counted as the text and markdown count them: one waiting at the service, one in flight.
    assert body["summary"]["waiting"] == 1 and body["summary"]["inFlight"] == 1
