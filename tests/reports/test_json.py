"""The JSON plan: a value known only after apply says so, as the other formats do."""

from __future__ import annotations

import json

from customs_batch.kinds import Kind
from customs_batch.planning.model import Action
from customs_batch.reports import render_plan
from tests.reports.plans import change, view


def test_a_changed_value_that_follows_a_replaced_object_is_marked_known_after_apply() -> None:
    # A party update whose departure was resubmitted: its declarationId follows the new
    # declaration. The JSON plan's values[].new held "${ref:DepartureDeclaration/...}",
    # which apply never sends, where the text plan says (known after apply).
    reference = "${ref:DepartureDeclaration/dep-1.declarationId}"
    updated = change(
        Kind.TRANSIT_PARTY_UPDATE,
        "dep-1-consignee",
        Action.UPDATE,
        values=(("declarationId", 7003, reference), ("Consignee.name", "A", "B")),
        unknown=(("declarationId",),),
    )
    shown = json.loads(render_plan("json", view(updated)))
    (planned,) = shown["changes"]
    assert planned["values"] == [
        {"path": "declarationId", "old": 7003, "new": None, "knownAfterApply": True},
        {"path": "Consignee.name", "old": "A", "new": "B"},
    ]
    assert planned["knownAfterApply"] == ["declarationId"]
    assert "${ref:" not in json.dumps(planned["values"])
