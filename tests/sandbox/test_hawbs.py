"""HAWB and allocation lists, and HAWB deactivation with its refusal."""

from __future__ import annotations

import httpx

from tests.sandbox.conftest import MOVEMENTS, FakeClock, movement

HAWBS = "/v1/shipments/shp_7Hk2Lm/hawbs"


def test_hawb_list_has_the_data_pagination_shape(api: httpx.Client) -> None:
    body = api.get(HAWBS, params={"limit": 2}).json()
    assert [h["hawbId"] for h in body["data"]] == ["hawb_a1", "hawb_a2"]
    assert body["pagination"] == {"page": 1, "limit": 2, "total": 3, "totalPages": 2}
    assert body["data"][0]["status"] == "NOT_INITIATED"
    assert body["data"][0]["reportedStock"] == {"packageCount": 10, "grossWeightKg": 125.5}


def test_deactivated_hawb_is_returned_then_hidden_unless_asked(api: httpx.Client) -> None:
    response = api.delete(f"{HAWBS}/hawb_a3")
    assert response.status_code == 200
    assert (response.json()["hawbId"], response.json()["isActive"]) == ("hawb_a3", False)
    assert "hawb_a3" not in [h["hawbId"] for h in api.get(HAWBS).json()["data"]]
    shown = api.get(HAWBS, params={"includeInactive": "true"}).json()["data"]
    assert {h["hawbId"]: h["isActive"] for h in shown}["hawb_a3"] is False


def test_deactivation_is_refused_once_a_sent_movement_references_the_hawb(
    api: httpx.Client, clock: FakeClock
) -> None:
    api.post(MOVEMENTS, json=movement(), headers={"Idempotency-Key": "k"})
    clock.advance(2.0)
    response = api.delete(f"{HAWBS}/hawb_a1")
    assert response.status_code == 409
    assert response.json()["error"] == "Conflict"
    assert "mov_" in response.json()["message"]


def test_deactivation_is_allowed_while_the_movement_is_queued(api: httpx.Client) -> None:
    api.post(MOVEMENTS, json=movement(), headers={"Idempotency-Key": "k"})
    assert api.delete(f"{HAWBS}/hawb_a1").status_code == 200


def test_unknown_hawb_is_404(api: httpx.Client) -> None:
    assert api.delete(f"{HAWBS}/hawb_b1").status_code == 404


def test_allocations_list(api: httpx.Client) -> None:
    body = api.get("/v1/shipments/shp_7Hk2Lm/allocations").json()
    allocation = body["data"][0]
    assert allocation["allocationId"] == "alc_1"
    assert (allocation["source"], allocation["declarationId"]) == ("EXTERNAL", None)
    assert body["pagination"]["total"] == 1
    assert api.get("/v1/shipments/shp_3Qw8Zn/allocations").json()["data"] == []


def test_a_repeated_deactivation_answers_the_deactivated_hawb_as_it_is(
    api: httpx.Client, clock: FakeClock
) -> None:
    """A DELETE repeated (its answer lost) changes nothing (updatedAt stays the time it was
    deactivated); once a movement queued before it is sent, the request is refused, as the
    API document says of it."""
    api.post(MOVEMENTS, json=movement(), headers={"Idempotency-Key": "k"})
    first = api.delete(f"{HAWBS}/hawb_a1")
    assert (first.status_code, first.json()["isActive"]) == (200, False)
    clock.advance(1.0)
    again = api.delete(f"{HAWBS}/hawb_a1")
    assert again.status_code == 200, again.text
    assert again.json() == first.json()
    shown = api.get(HAWBS, params={"includeInactive": "true"}).json()["data"]
    assert {h["hawbId"]: h["updatedAt"] for h in shown}["hawb_a1"] == first.json()["updatedAt"]
    clock.advance(60.0)  # the queued movement is sent
    assert api.delete(f"{HAWBS}/hawb_a1").status_code == 409


def test_a_404_quotes_a_long_shipment_or_hawb_id_by_its_start_and_length(
    api: httpx.Client,
) -> None:
    """A 404 echoed a 10,000-character ID whole in its message (an answer 150 times the size
    of what it says); it is quoted by its start and how long it is, as a 400 quotes a value."""
    long_shipment = "shp_" + "a" * 10_000
    long_hawb = "hawb_" + "b" * 10_000
    for response in (
        api.get(f"/v1/shipments/{long_shipment}/hawbs"),
        api.get(f"/v1/shipments/{long_shipment}/allocations"),
        api.post(
            f"/v1/shipments/{long_shipment}/movements",
            json=movement(),
            headers={"Idempotency-Key": "k-long-id"},
        ),
        api.delete(f"/v1/shipments/shp_7Hk2Lm/hawbs/{long_hawb}"),
    ):
        assert response.status_code == 404, response.text
        message = response.json()["message"]
        assert len(message) < 200 and "(10,00" in message, message
    short = api.get("/v1/shipments/shp_nope/hawbs").json()["message"]
    assert short == "shipment shp_nope not found"
