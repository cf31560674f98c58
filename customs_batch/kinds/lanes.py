"""Lanes: documents the service gives meaning by their order, applied one after another.

Here, not in the kind's module, so that ``validate`` (which checks that a lane's order is
written down) does not load the client to know a lane.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from customs_batch.jsontypes import JSONObject

if TYPE_CHECKING:
    from customs_batch.kinds.movement import MovementSpec


def movement_lane(spec: JSONObject) -> tuple[str, ...]:
    """Movements on one shipment and HAWB (or its master AWB: no ``hawbId``) happen in
    order: the service keeps their order."""
    # As ``movement.spec_of`` (which imports this module) narrows it.
    movement = cast("MovementSpec", spec)
    return (str(movement.get("shipmentId", "")), str(movement.get("hawbId", "")))
