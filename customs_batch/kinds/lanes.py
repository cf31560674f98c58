"""Lanes: documents the service gives meaning by their order, applied one after another.

Here, not in the kind's module, so that ``validate`` (which checks that a lane's order is
written down) does not load the client to know a lane.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def movement_lane(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """Movements on one shipment and HAWB (or its master AWB: no ``hawbId``) happen in
    order: the service keeps their order."""
    return (str(spec.get("shipmentId", "")), str(spec.get("hawbId", "")))
