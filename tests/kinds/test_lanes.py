"""Lanes: the movements of one shipment and HAWB."""

from __future__ import annotations

from customs_batch.kinds.lanes import movement_lane


def test_a_lane_is_the_shipment_and_the_hawb_or_the_master_awb() -> None:
    assert movement_lane({"shipmentId": "shp_1", "hawbId": "hawb_a1"}) == ("shp_1", "hawb_a1")
    assert movement_lane({"shipmentId": "shp_1"}) == ("shp_1", "")
    assert movement_lane({"shipmentId": "shp_1", "hawbId": "hawb_a2"}) != movement_lane(
        {"shipmentId": "shp_1", "hawbId": "hawb_a1"}
    )
