"""Movement: immutable, in lanes, re-sent only with its Idempotency-Key."""

from __future__ import annotations

from datetime import timedelta

from customs_batch.kinds import Kind
from customs_batch.kinds.actions import Action, Operation
from customs_batch.kinds.registry import model_of
from tests.kinds.helpers import after_unknown, identity

KIND = Kind.MOVEMENT
SPEC = {"shipmentId": "shp_1", "hawbId": "hawb_a1", "action": "ISL", "quantity": 1}


def test_its_identity_is_shipment_hawb_and_action_not_its_figures() -> None:
    base = identity(KIND, SPEC)
    for name, value in (("shipmentId", "shp_2"), ("hawbId", "hawb_a2"), ("action", "USL")):
        assert identity(KIND, {**SPEC, name: value}) != base, name
    assert identity(KIND, {**SPEC, "quantity": 2}) == base


def test_its_lane_is_its_shipment_and_hawb_and_a_correction_is_a_new_movement() -> None:
    model = model_of(KIND)
    assert model.lane is not None
    assert model.lane(SPEC) == ("shp_1", "hawb_a1")
    assert model.lane({"shipmentId": "shp_1"}) == ("shp_1", "")  # the master AWB
    assert model.corrected_by_a_new_one and model.idempotency_keys
    assert model.update is None and model.id_field == "movementId"


def test_a_lost_movement_is_re_sent_with_its_key_only_while_the_key_holds() -> None:
    resent = after_unknown(KIND, key="k-1")
    assert (resent.action, resent.operation) == (Action.CREATE, Operation.RESEND_MOVEMENT)
    assert resent.idempotency_key == "k-1"
    expired = after_unknown(KIND, key="k-1", started=timedelta(hours=25))
    assert expired.action is Action.NEEDS_DECISION
    edited = after_unknown(KIND, key="k-1", edited=("quantity",))
    assert edited.action is Action.NEEDS_DECISION and "quantity" in edited.reason
