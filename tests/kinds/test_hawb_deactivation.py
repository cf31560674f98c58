"""HawbDeactivation: known by its HAWB; safe to repeat, never undone."""

from __future__ import annotations

from customs_batch.kinds import Kind
from customs_batch.kinds.actions import Action
from customs_batch.kinds.registry import model_of
from tests.kinds.helpers import after_unknown, identity

KIND = Kind.HAWB_DEACTIVATION
SPEC = {"shipmentId": "shp_1", "hawbId": "hawb_a1"}


def test_its_identity_is_its_shipment_and_hawb() -> None:
    base = identity(KIND, SPEC)
    assert identity(KIND, {**SPEC, "hawbId": "hawb_a2"}) != base
    assert identity(KIND, {**SPEC, "shipmentId": "shp_2"}) != base


def test_it_is_repeated_after_an_unknown_outcome_and_cannot_change() -> None:
    model = model_of(KIND)
    assert after_unknown(KIND).action is Action.CREATE
    assert model.update is None and not model.mutable and model.id_field == "hawbId"
