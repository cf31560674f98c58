"""Movement: immutable, in lanes, re-sent only with its Idempotency-Key."""

from __future__ import annotations

import uuid
from datetime import timedelta

from customs_batch.kinds import Kind
from customs_batch.kinds.actions import Action, Operation
from customs_batch.kinds.model import (
    IDEMPOTENCY_WINDOW,
    KEY_MARGIN,
    derived_idempotency_key,
    key_honoured_until,
    key_made_at,
    new_idempotency_key,
)
from customs_batch.kinds.registry import model_of
from tests.kinds.helpers import NOW, after_unknown, identity

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


def test_a_keys_24_hours_count_from_when_it_was_made_not_from_its_last_attempt() -> None:
    # Reported: a re-send that got no answer either restamped the record, and a key 25 h
    # old was re-sent as honoured: the service made a second movement.
    made = NOW - timedelta(hours=25)
    key = new_idempotency_key(made)
    assert key_made_at(key) == made.replace(microsecond=made.microsecond // 1000 * 1000)
    assert uuid.UUID(key).version == 7
    last_attempt = after_unknown(KIND, key=key, started=timedelta(hours=1))
    assert last_attempt.action is Action.NEEDS_DECISION
    fresh = new_idempotency_key(NOW - timedelta(hours=23))
    resent = after_unknown(KIND, key=fresh, started=timedelta(minutes=5))
    assert resent.operation is Operation.RESEND_MOVEMENT
    # Within the last half hour of the service's 24 hours (its clock may be ahead): not.
    late = new_idempotency_key(NOW - timedelta(hours=23, minutes=45))
    assert after_unknown(KIND, key=late).action is Action.NEEDS_DECISION
    # Made on a machine whose clock ran ahead: its record's earlier time counts.
    ahead = new_idempotency_key(NOW + timedelta(hours=2))
    assert after_unknown(KIND, key=ahead, started=timedelta(hours=25)).action is (
        Action.NEEDS_DECISION
    )
    # A key of an earlier version (no time in it) counts from its record's time.
    assert key_made_at("k-1") is None and key_made_at(str(uuid.uuid4())) is None


def test_a_key_made_by_apply_is_the_same_for_the_same_state_and_request_only() -> None:
    # Reported: a CI runner lost before its state was kept; the run again from the state
    # kept before it sent each movement under a new key, and the service made it twice.
    lineage, address = "6f1c2a9e-4b7d-4e0a-9c1f-2d3e4f5a6b7c", "Movement/mov-a1-arrival"
    body = {**SPEC, "grossWeightKg": 12.5, "customsDeclaration": {"mrn": "26NL0000000000001"}}
    key = derived_idempotency_key(lineage, 4, address, body)
    assert key == derived_idempotency_key(lineage, 4, address, dict(reversed(body.items())))
    assert uuid.UUID(key).version == 8 and uuid.UUID(key).variant == uuid.RFC_4122
    others = {
        derived_idempotency_key(str(uuid.uuid4()), 4, address, body),  # another state
        derived_idempotency_key(lineage, 5, address, body),  # a later one of this state
        derived_idempotency_key(lineage, 4, "Movement/mov-a1-storage-in", body),
        derived_idempotency_key(lineage, 4, address, {**body, "quantity": 2}),
        derived_idempotency_key(lineage, 4, address, {**body, "customsDeclaration": {}}),
    }
    assert key not in others and len(others) == 5
    # One request to the service, which compares numbers by value: one key.
    assert derived_idempotency_key(lineage, 4, address, {**body, "quantity": 1.0}) == key
    # No time in it: its 24 hours count from its record's.
    assert key_made_at(key) is None
    recorded = NOW - timedelta(hours=3)
    assert key_honoured_until(key, recorded.isoformat()) == (
        recorded + IDEMPOTENCY_WINDOW - KEY_MARGIN
    )
    assert key_honoured_until(key, "") is None


def test_a_lost_movement_is_re_sent_with_its_key_only_while_the_key_holds() -> None:
    resent = after_unknown(KIND, key="k-1")
    assert (resent.action, resent.operation) == (Action.CREATE, Operation.RESEND_MOVEMENT)
    assert resent.idempotency_key == "k-1"
    expired = after_unknown(KIND, key="k-1", started=timedelta(hours=25))
    assert expired.action is Action.NEEDS_DECISION
    edited = after_unknown(KIND, key="k-1", edited=("quantity",))
    assert edited.action is Action.NEEDS_DECISION and "quantity" in edited.reason
