from __future__ import annotations

import dataclasses

import pytest

from customs_batch.client import ExportDeclaration, Hawb, Shipment, TemplateGroup


def test_unknown_fields_are_kept_in_raw_exactly() -> None:
    sent = {"shipmentId": 1, "status": "new", "brandNewField": {"x": [1, 2]}}
    shipment = Shipment.from_json(sent)
    assert shipment.shipment_id == 1
    assert dict(shipment.raw) == sent
    assert list(shipment.raw) == list(sent)


def test_a_field_with_another_type_becomes_none_instead_of_failing() -> None:
    hawb = Hawb.from_json({"hawbId": 5, "packageCount": "ten", "isActive": "yes"})
    assert (hawb.hawb_id, hawb.package_count, hawb.is_active) == (None, None, None)
    group = TemplateGroup.from_json({"id": True, "isDefault": True})
    assert group.group_id is None
    assert group.is_default is True


def test_detail_records_hold_their_nested_lists() -> None:
    detail = ExportDeclaration.from_json(
        {"declarationId": 501, "items": [{"id": 1}, "junk"], "errors": [{"code": "E1"}]}
    )
    assert detail.items == ({"id": 1},)
    assert detail.errors == ({"code": "E1"},)


def test_records_are_frozen() -> None:
    shipment = Shipment.from_json({"shipmentId": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        shipment.status = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        shipment.raw["status"] = "x"  # type: ignore[index]
