"""Every endpoint of the client against the emulator in-process (built-in seed)."""

from __future__ import annotations

import uuid

import pytest

from customs_batch.client import (
    AuthenticationError,
    CustomsClient,
    DeclarationFilter,
    ItemFilter,
    NotFoundError,
    PermissionDeniedError,
    RequestRefusedError,
    ShipmentFilter,
    TemplateGroupFilter,
    TransitFilter,
)
from tests.client.bodies import departure, movement
from tests.client.conftest import MakeClient


def test_shipments_are_listed_and_filtered(client: CustomsClient) -> None:
    assert {s.shipment_id for s in client.iter_shipments()} == {1001, 1002, 1003}
    new = client.list_shipments(ShipmentFilter(status="new"))
    assert [s.reference_number for s in new.records] == ["REF-1001"]


def test_declarations_are_listed_by_type_and_polled(client: CustomsClient) -> None:
    exports = list(client.iter_declarations(DeclarationFilter(type="EXPORT")))
    assert {d.declaration_id for d in exports} == {501, 502}
    detail = client.get_declaration(501)
    assert detail.status == "ready"
    assert [i["description"] for i in detail.items] == ["Bolts", "Nuts"]
    assert detail.raw["exporter"]["eoriNo"] == "NL123456789"


def test_export_cancellation_before_and_after_submission(client: CustomsClient) -> None:
    assert client.cancel_declaration(501).canceled is True
    assert client.cancel_declaration(502).canceled is False
    assert client.get_declaration(502).status == "cancellation_requested"


def test_transit_list_detail_submission_and_party_updates(client: CustomsClient) -> None:
    ready = list(client.iter_transit(TransitFilter(status="READY_TO_DECLARE")))
    assert [t.declaration_id for t in ready] == [7001]
    assert client.get_transit(7001).procedure_type == "D1"
    submitted = client.submit_departure(departure())
    assert submitted.status == "processing"
    assert submitted.declaration_id is not None
    assert client.get_transit(submitted.declaration_id).status == "processing"
    principal = {"Principal": {"name": "New BV", "eoriNo": "NL123456789", "countryCode": "NL"}}
    assert client.update_departure_parties(7001, principal).declaration_id == 7001
    assert client.update_arrival_parties(7001, principal).declaration_id == 7001


def test_items_are_listed_searched_and_shown(client: CustomsClient) -> None:
    normal = {i.item_id for i in client.iter_items()}
    every = {i.item_id for i in client.iter_items(ItemFilter(deleted="all", archived="all"))}
    assert 9011 not in normal
    assert {9011, 9012} <= every
    assert [i.description for i in client.iter_items(ItemFilter(search="Bolts"))] == ["Bolts"]
    item = client.get_item(9001)
    assert item.commodity_code == "731815"
    assert item.raw["Declaration"]["referenceNumber"] == "REF-1001"


def test_template_groups_are_created_updated_and_listed(client: CustomsClient) -> None:
    created = client.create_template_group({"name": "Road", "code": "ROAD", "companyId": 1})
    assert created.group_id is not None
    updated = client.update_template_group(created.group_id, {"name": "Road EU"})
    assert updated.name == "Road EU"
    codes = {g.code for g in client.iter_template_groups(TemplateGroupFilter(company_id=1))}
    assert codes == {"DEFAULT", "ROAD"}


def test_hawbs_are_listed_and_deactivated(client: CustomsClient) -> None:
    assert len(list(client.iter_hawbs("shp_7Hk2Lm"))) == 3
    hawb = client.deactivate_hawb("shp_7Hk2Lm", "hawb_a3")
    assert hawb.is_active is False
    assert {h.hawb_id for h in client.iter_hawbs("shp_7Hk2Lm")} == {"hawb_a1", "hawb_a2"}
    every = client.list_hawbs("shp_7Hk2Lm", include_inactive=True)
    assert len(every.records) == 3


def test_allocations_are_listed(client: CustomsClient) -> None:
    page = client.list_allocations("shp_7Hk2Lm")
    assert [a.allocation_id for a in page.records] == ["alc_1"]
    assert page.records[0].source == "EXTERNAL"


def test_a_movement_resent_with_its_key_is_created_once(client: CustomsClient) -> None:
    key = str(uuid.uuid4())
    first = client.create_movement("shp_7Hk2Lm", movement(), idempotency_key=key)
    again = client.create_movement("shp_7Hk2Lm", movement(), idempotency_key=key)
    assert first.status == "QUEUED"
    assert again.movement_id == first.movement_id
    assert len(client.sender.send("GET", "/_sandbox/movements")) == 1


def test_a_refused_movement_carries_the_services_message(client: CustomsClient) -> None:
    body = {**movement("ISL")}
    with pytest.raises(RequestRefusedError) as caught:
        client.create_movement("shp_7Hk2Lm", body, idempotency_key=str(uuid.uuid4()))
    assert caught.value.status == 400
    assert caught.value.service_message


def test_unknown_ids_are_not_found(client: CustomsClient) -> None:
    with pytest.raises(NotFoundError, match="999"):
        client.get_declaration(999)
    with pytest.raises(NotFoundError):
        client.list_hawbs("shp_nope")


def test_an_invalid_key_is_401_and_the_message_never_holds_it(make_client: MakeClient) -> None:
    with pytest.raises(AuthenticationError) as caught:
        make_client(key="wrong-key-4711").list_shipments()
    assert caught.value.status == 401
    assert caught.value.body["error"] == "INVALID_CREDENTIALS"
    assert "wrong-key-4711" not in str(caught.value)


def test_an_inactive_account_is_403(make_client: MakeClient) -> None:
    with pytest.raises(PermissionDeniedError) as caught:
        make_client(key="inactive-key").list_shipments()
    assert caught.value.body["error"] == "UNAUTHORIZED"
