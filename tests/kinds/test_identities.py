"""Each kind's identity: the fields that make two requests the same thing at the service,
and nothing else (a change of anything else is an update or a refusal, never a new object)."""

from __future__ import annotations

from typing import Any

import pytest

from customs_batch.kinds import Kind
from customs_batch.kinds.registry import model_of

DEPARTURE: dict[str, Any] = {
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
SPECS: dict[Kind, dict[str, Any]] = {
    Kind.DEPARTURE_DECLARATION: DEPARTURE,
    Kind.MOVEMENT: {"shipmentId": "shp_1", "hawbId": "hawb_a1", "action": "ISL", "quantity": 1},
    Kind.TEMPLATE_GROUP: {"companyId": 1, "code": "EU-ROAD", "name": "EU road"},
    Kind.TRANSIT_PARTY_UPDATE: {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
    Kind.EXPORT_CANCELLATION: {"declarationId": 501},
    Kind.HAWB_DEACTIVATION: {"shipmentId": "shp_1", "hawbId": "hawb_a1"},
}
# For each kind: a field that is part of its identity, and one that is not.
IDENTIFYING: dict[Kind, tuple[str, str | None]] = {
    Kind.DEPARTURE_DECLARATION: ("commercialReference", "totalWeight"),
    Kind.MOVEMENT: ("action", "quantity"),
    Kind.TEMPLATE_GROUP: ("code", "name"),
    Kind.TRANSIT_PARTY_UPDATE: ("declarationId", None),
    Kind.EXPORT_CANCELLATION: ("declarationId", None),
    Kind.HAWB_DEACTIVATION: ("hawbId", None),
}


def _identity(kind: Kind, spec: dict[str, Any]) -> tuple[str, ...]:
    identify = model_of(kind).identity
    assert identify is not None
    return identify(spec)


@pytest.mark.parametrize("kind", list(Kind))
def test_an_identifying_field_changes_the_identity_and_another_does_not(kind: Kind) -> None:
    spec = SPECS[kind]
    same, other = IDENTIFYING[kind]
    base = _identity(kind, spec)
    changed = spec[same] + 1 if isinstance(spec[same], int) else f"{spec[same]}-X"
    assert _identity(kind, {**spec, same: changed}) != base
    if other is not None:
        value = spec[other]
        assert _identity(kind, {**spec, other: f"{value}-X"}) == base


def test_a_departures_goods_are_part_of_what_it_declares_whatever_their_order() -> None:
    items = DEPARTURE["DeclarationItems"]
    base = _identity(Kind.DEPARTURE_DECLARATION, DEPARTURE)
    reordered = {**DEPARTURE, "DeclarationItems": list(reversed(items))}
    assert _identity(Kind.DEPARTURE_DECLARATION, reordered) == base
    priced = [{**items[0], "netPrice": 61}, items[1]]
    assert _identity(Kind.DEPARTURE_DECLARATION, {**DEPARTURE, "DeclarationItems": priced}) == base
    other = [{**items[0], "commodityCode": "731822"}, items[1]]
    assert _identity(Kind.DEPARTURE_DECLARATION, {**DEPARTURE, "DeclarationItems": other}) != base


def test_a_party_update_is_known_by_its_declaration_and_the_roles_it_writes() -> None:
    spec = SPECS[Kind.TRANSIT_PARTY_UPDATE]
    base = _identity(Kind.TRANSIT_PARTY_UPDATE, spec)
    assert _identity(Kind.TRANSIT_PARTY_UPDATE, {**spec, "Consignee": {"eoriNo": "DE2"}}) == base
    assert _identity(Kind.TRANSIT_PARTY_UPDATE, {**spec, "Principal": {"name": "P"}}) != base


def test_only_movements_are_corrected_by_a_new_one_and_have_a_place_in_a_lane() -> None:
    for kind in Kind:
        model = model_of(kind)
        assert model.corrected_by_a_new_one is (kind is Kind.MOVEMENT)
        assert (model.lane is not None) is (kind is Kind.MOVEMENT)
