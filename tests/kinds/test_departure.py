"""DepartureDeclaration: known by what it declares; never re-sent blindly."""

from __future__ import annotations

from typing import Any

from customs_batch.kinds import Kind
from customs_batch.kinds.actions import Action, Operation
from customs_batch.kinds.registry import model_of
from tests.kinds.helpers import after_unknown, identity

KIND = Kind.DEPARTURE_DECLARATION
SPEC: dict[str, Any] = {
    "companyId": 1,
    "commercialReference": "C-1",
    "departureOffice": "NL000396",
    "destinationOffice": "DE004058",
    "totalWeight": 10.0,
    "Consignee": {"name": "A"},
    "DeclarationItems": [
        {"commodityCode": "731821", "originCountry": "DE", "netPrice": 60},
        {"commodityCode": "090121", "originCountry": "BR", "netPrice": 5},
    ],
}


def test_its_identity_is_declarant_reference_offices_and_goods() -> None:
    base = identity(KIND, SPEC)
    for name, value in (
        ("companyId", 2),
        ("commercialReference", "C-2"),
        ("departureOffice", "NL000397"),
        ("destinationOffice", "DE004059"),
    ):
        assert identity(KIND, {**SPEC, name: value}) != base, name
    # Weight and parties are not what it is: a change of them is an update or a refusal.
    assert identity(KIND, {**SPEC, "totalWeight": 11.0, "Consignee": {"name": "B"}}) == base


def test_its_goods_count_in_any_order_and_without_their_prices() -> None:
    items = SPEC["DeclarationItems"]
    base = identity(KIND, SPEC)
    assert identity(KIND, {**SPEC, "DeclarationItems": list(reversed(items))}) == base
    priced = [{**items[0], "netPrice": 61}, items[1]]
    assert identity(KIND, {**SPEC, "DeclarationItems": priced}) == base
    other = [{**items[0], "commodityCode": "731822"}, items[1]]
    assert identity(KIND, {**SPEC, "DeclarationItems": other}) != base


def test_a_lost_submission_needs_a_decision_and_a_lost_party_update_is_repeated() -> None:
    lost = after_unknown(KIND)
    assert (lost.action, lost.operation) == (Action.NEEDS_DECISION, Operation.NONE)
    assert "state adopt" in lost.reason and "state forget" in lost.reason
    update = after_unknown(KIND, outputs={"declarationId": 7003})
    assert update.action is Action.UPDATE


def test_only_its_parties_change_in_place_and_a_rejected_one_is_resubmitted() -> None:
    model = model_of(KIND)
    assert model.mutable == {"Principal", "Consignor", "Consignee"}
    assert model.resubmit is Operation.RESUBMIT_DEPARTURE
    assert model.id_field == "declarationId"
    assert {"invalid", "error"} <= model.rejected_states
