"""Shipments, import/export declarations, cancellation and declaration items."""

from __future__ import annotations

import httpx
import pytest

from customs_batch.sandbox.records import timestamp
from customs_batch.sandbox.seed import builtin_seed_text, parse_seed
from tests.sandbox.conftest import ClientFactory, FakeClock


def ids(body: dict[str, object], field: str = "declarationId") -> list[object]:
    return [entry[field] for entry in body["result"]]  # type: ignore[attr-defined]


def test_export_detail(api: httpx.Client) -> None:
    detail = api.get("/v1/declarations/501").json()
    assert (detail["type"], detail["status"], detail["shipmentId"]) == ("EXPORT", "ready", 1001)
    assert detail["exporter"]["eoriNo"] == "NL123456789"
    assert detail["items"][0]["hsCode"] == "731815"
    assert detail["errors"] == []


def test_unknown_declaration_is_404_with_the_documented_body(api: httpx.Client) -> None:
    response = api.get("/v1/declarations/999")
    assert response.status_code == 404
    assert set(response.json()) == {"statusCode", "message", "error"}
    assert (response.json()["statusCode"], response.json()["error"]) == (404, "Not Found")
    assert api.delete("/v1/declarations/999").status_code == 404


def test_cancellation_before_submission(api: httpx.Client) -> None:
    assert api.delete("/v1/declarations/501").json() == {"declarationId": 501, "canceled": True}
    assert api.get("/v1/declarations/501").json()["status"] == "canceled"


def test_cancellation_after_submission_is_requested(api: httpx.Client) -> None:
    assert api.delete("/v1/declarations/502").json() == {"declarationId": 502, "canceled": False}
    assert api.get("/v1/declarations/502").json()["status"] == "cancellation_requested"


def test_a_requested_cancellation_is_granted_after_the_processing_time(
    api: httpx.Client, clock: FakeClock
) -> None:
    assert api.delete("/v1/declarations/502").json()["canceled"] is False
    clock.advance(1.5)
    # Asked again while customs decides: still requested, and the time is not reset.
    assert api.delete("/v1/declarations/502").json()["canceled"] is False
    assert api.get("/v1/declarations/502").json()["status"] == "cancellation_requested"
    clock.advance(0.5)
    assert api.get("/v1/declarations/502").json()["status"] == "canceled"
    listed = api.get("/v1/declarations", params={"status": "canceled"}).json()
    assert ids(listed) == [502]
    assert api.delete("/v1/declarations/502").json() == {"declarationId": 502, "canceled": True}


@pytest.mark.parametrize("answer", ["", " cancellationAnswer: refused,"])
def test_a_decided_cancellation_is_stamped_when_customs_decided(
    make_api: ClientFactory, clock: FakeClock, answer: str
) -> None:
    text = builtin_seed_text().replace(
        "type: EXPORT, status: submitted,", f"type: EXPORT, status: submitted,{answer}"
    )
    api = make_api(seed=parse_seed(text, "seed.yaml"))
    requested_at = timestamp(clock())
    api.delete("/v1/declarations/502")
    assert api.get("/v1/declarations/502").json()["updatedAt"] == requested_at
    clock.advance(3600)
    # Decided two seconds after the request (--processing-seconds), read an hour later.
    decided_at = timestamp(clock() - 3600 + 2)
    assert api.get("/v1/declarations/502").json()["updatedAt"] == decided_at
    (listed,) = [
        entry
        for entry in api.get("/v1/declarations", params={"type": "EXPORT"}).json()["result"]
        if entry["declarationId"] == 502
    ]
    assert listed["updatedAt"] == decided_at


def test_a_seed_can_make_customs_refuse_a_cancellation(
    make_api: ClientFactory, clock: FakeClock
) -> None:
    text = builtin_seed_text().replace(
        "type: EXPORT, status: submitted,",
        "type: EXPORT, status: submitted, cancellationAnswer: refused,",
    )
    api = make_api(seed=parse_seed(text, "seed.yaml"))
    assert api.delete("/v1/declarations/502").json()["canceled"] is False
    clock.advance(2)
    # Refused: the declaration is as it was before the request.
    assert api.get("/v1/declarations/502").json()["status"] == "submitted"
    assert "cancellationAnswer" not in api.get("/v1/declarations/502").json()
    # A new request starts again.
    assert api.delete("/v1/declarations/502").json()["canceled"] is False
    assert api.get("/v1/declarations/502").json()["status"] == "cancellation_requested"


def test_import_declaration_cannot_be_cancelled(api: httpx.Client) -> None:
    assert api.delete("/v1/declarations/601").status_code == 400


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, [601, 502, 501]),
        ({"type": "IMPORT"}, [601]),
        ({"type": "EXPORT", "order": "asc"}, [501, 502]),
        ({"status": "submitted"}, [502]),
        ({"referenceNumber": "ref-100"}, [601, 502, 501]),
        ({"referenceNumber": "1002"}, [502]),
        ({"createdFrom": "2026-01-06", "createdTo": "2026-01-06"}, [502]),
    ],
)
def test_declaration_list_filters(
    api: httpx.Client, params: dict[str, str], expected: list[int]
) -> None:
    assert ids(api.get("/v1/declarations", params=params).json()) == expected


def test_import_entries_carry_their_office(api: httpx.Client) -> None:
    entry = api.get("/v1/declarations", params={"type": "IMPORT"}).json()["result"][0]
    assert entry["declarationOffice"] == "NL000396"


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, [1003, 1002, 1001]),
        ({"status": "new"}, [1001]),
        ({"order": "asc", "itemsPerPage": 2}, [1001, 1002]),
        ({"order": "asc", "itemsPerPage": 2, "page": 2}, [1003]),
        ({"createdTo": "2026-01-05"}, [1001]),
    ],
)
def test_shipment_list_filters(
    api: httpx.Client, params: dict[str, str], expected: list[int]
) -> None:
    assert ids(api.get("/v1/shipments", params=params).json(), "shipmentId") == expected


def items(api: httpx.Client, **params: str) -> list[int]:
    return [item["id"] for item in api.get("/v1/declaration-items", params=params).json()["items"]]


def test_item_list_filters_and_sorting(api: httpx.Client) -> None:
    assert items(api) == [9001, 9002, 9003, 9010]
    assert items(api, deleted="deleted") == [9011]
    assert items(api, archived="archived") == [9012]
    assert items(api, deleted="all", archived="all") == [9001, 9002, 9003, 9010, 9011, 9012]
    assert items(api, search="bolt") == [9001]
    assert items(api, search="7318") == [9001, 9002, 9003]
    assert items(api, sortBy="value", sortOrder="desc") == [9010, 9001, 9002, 9003]


def test_item_list_meta(api: httpx.Client) -> None:
    meta = api.get("/v1/declaration-items", params={"itemsPerPage": 3, "page": 2}).json()["meta"]
    assert meta == {
        "totalItems": 4,
        "itemCount": 1,
        "itemsPerPage": 3,
        "totalPages": 2,
        "currentPage": 2,
    }


def test_item_detail(api: httpx.Client) -> None:
    detail = api.get("/v1/declaration-items/9001").json()
    assert detail["Declaration"] == {"referenceNumber": "REF-1001", "status": "ready"}
    assert detail["SupportingDocuments"] == []
    assert api.get("/v1/declaration-items/1").status_code == 404
