"""Movements: Idempotency-Key semantics, the movement rules, QUEUED then sent."""

from __future__ import annotations

import json
import sys
from typing import Any

import httpx
import pytest

from customs_batch.sandbox.idempotency import Idempotency, Verdict, fingerprint
from customs_batch.sandbox.records import timestamp
from customs_batch.sandbox.store import Store
from tests.sandbox.conftest import MOVEMENTS, FakeClock, movement


def post(api: httpx.Client, body: dict[str, Any], key: str | None = "key-1") -> httpx.Response:
    headers = {"Idempotency-Key": key} if key is not None else {}
    return api.post(MOVEMENTS, json=body, headers=headers)


def test_new_movement_is_queued_by_api_with_the_shipments_process_type(api: httpx.Client) -> None:
    response = post(api, movement())
    assert response.status_code == 201
    record = response.json()
    assert record["movementId"].startswith("mov_")
    assert record["shipmentId"] == "shp_7Hk2Lm"
    assert (record["status"], record["trigger"], record["processType"]) == (
        "QUEUED",
        "API",
        "IMPORT_HANDLING",
    )
    assert record["originalMovementId"] is None
    assert record["createdAt"].endswith("Z") and len(record["createdAt"]) == 24


def test_movement_counts_as_sent_after_the_processing_time(
    api: httpx.Client, clock: FakeClock
) -> None:
    post(api, movement())
    assert api.get("/_sandbox/movements").json()[0]["status"] == "QUEUED"
    queued = api.get("/_sandbox/movements").json()[0]
    assert queued["updatedAt"] == queued["createdAt"] == timestamp(clock())
    clock.advance(3600.0)
    (sent,) = api.get("/_sandbox/movements").json()
    assert sent["status"] == "SENT"
    # Sent when processing ended (two seconds on), not when it was read.
    assert sent["updatedAt"] == timestamp(clock() - 3600.0 + 2.0)
    assert sent["createdAt"] == queued["createdAt"]


def test_idempotency_key_is_required(api: httpx.Client) -> None:
    response = post(api, movement(), key=None)
    assert response.status_code == 400
    assert "Idempotency-Key" in str(response.json()["message"])


def test_an_idempotency_key_longer_than_255_characters_is_400(api: httpx.Client) -> None:
    """A key of 100,000 characters was taken, held for 24 hours and echoed whole in a 422:
    the document recommends a UUID (36 characters); 255 is the bound, a 256th is refused."""
    response = post(api, movement(), key="k" * 100_000)
    assert response.status_code == 400
    (reason,) = response.json()["message"]
    assert "Idempotency-Key" in reason and "100,000" in reason and len(reason) < 200
    assert post(api, movement(), key="k" * 256).status_code == 400
    assert api.get("/_sandbox/movements").json() == []
    assert post(api, movement(), key="k" * 255).status_code == 201


def test_same_key_and_body_replays_the_first_response(api: httpx.Client) -> None:
    first = post(api, movement())
    again = post(api, movement())
    assert again.status_code == 201
    assert again.json() == first.json()
    assert len(api.get("/_sandbox/movements").json()) == 1


@pytest.mark.parametrize("spelling", ["25", "25.0", "2.5e1", "25.000", "250e-1", "25E0"])
def test_same_key_and_a_number_spelled_another_way_replays(
    api: httpx.Client, spelling: str
) -> None:
    # JSON has one number type: 25, 25.0 and 2.5e1 are one value wherever they are.
    first = post(api, movement(grossWeightKg=25))
    assert first.status_code == 201
    text = json.dumps(movement(grossWeightKg=25)).replace('Kg": 25,', f'Kg": {spelling},')
    assert spelling in text
    headers = {"Idempotency-Key": "key-1", "Content-Type": "application/json"}
    again = api.post(MOVEMENTS, content=text, headers=headers)
    assert again.status_code == 201, again.text
    assert again.json() == first.json()
    assert len(api.get("/_sandbox/movements").json()) == 1


@pytest.mark.parametrize(
    ("body", "digest"),
    [
        (
            movement(quantity=10, grossWeightKg=1.5, partyId="rpty_p1"),
            "c64bd552120d352d38ce64afad5f3decaf7e8d6ae0b101183e8c19bc31d95460",
        ),
        (
            {
                "quantity": 10.0,
                "grossWeightKg": -0.0,
                "z": [1e1, 2.5, None, True, False, {"b": "\u00e9\u2028", "a": [[]], "\u00e9": {}}],
                "emoji": "\U0001f600",
            },
            "ce2bb0b04bafe0163c81b0d6ad5c37a8b4cdf1c6572f74fafd9882c74b054ff0",
        ),
    ],
)
def test_the_fingerprint_is_the_one_a_database_holds(body: dict[str, Any], digest: str) -> None:
    """The digests an emulator wrote into a --db before the fingerprint was made in one pass
    of the JSON encoder (a Python step per value took 1 s for a body of 200,000 numbers): a
    retry after an upgrade still finds its movement."""
    path = "/v1/shipments/shp_7Hk2Lm/movements"
    assert fingerprint("POST", path, body) == digest


def test_same_key_and_another_number_is_still_another_request(api: httpx.Client) -> None:
    post(api, movement())
    assert post(api, movement(grossWeightKg=25.5)).status_code == 422


def test_a_body_nested_as_deep_as_json_allows_is_400_never_500(api: httpx.Client) -> None:
    # The fingerprint of the Idempotency-Key is taken before the schema check, and the
    # schema's reasons quote the body: neither may run out of stack on a body the JSON
    # reader took (it failed on one depth just short of the reader's own limit).
    limit = sys.getrecursionlimit()
    for depth in range(limit - 150, limit + 20):
        text = json.dumps(movement()).replace("{", '{"x":' + "[" * depth + "]" * depth + ",", 1)
        headers = {"Idempotency-Key": f"deep-{depth}", "Content-Type": "application/json"}
        response = api.post(MOVEMENTS, content=text, headers=headers)
        assert response.status_code == 400, (depth, response.text)
    assert api.get("/_sandbox/movements").json() == []


def test_same_key_with_another_body_is_422(api: httpx.Client) -> None:
    post(api, movement())
    response = post(api, movement(quantity=3))
    assert response.status_code == 422
    assert response.json()["error"] == "Unprocessable Entity"


def test_same_key_and_body_on_another_shipment_is_422_not_a_replay(api: httpx.Client) -> None:
    first = post(api, movement())
    assert first.status_code == 201
    other = "/v1/shipments/shp_9Xc4Rt/movements"
    response = api.post(other, json=movement(), headers={"Idempotency-Key": "key-1"})
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "Unprocessable Entity"
    assert "another request" in response.json()["message"]
    assert len(api.get("/_sandbox/movements").json()) == 1
    # The first request is still replayed; another key on the other path is judged as new.
    assert post(api, movement()).json() == first.json()
    fresh = api.post(other, json=movement(), headers={"Idempotency-Key": "key-2"})
    assert fresh.status_code == 400
    assert "not a HAWB of shipment shp_9Xc4Rt" in " ".join(fresh.json()["message"])


def test_key_expires_after_24_hours(api: httpx.Client, clock: FakeClock) -> None:
    post(api, movement())
    clock.advance(24 * 3600 + 1)
    assert post(api, movement(quantity=3)).status_code == 201
    assert len(api.get("/_sandbox/movements").json()) == 2


def test_refused_request_releases_its_key(api: httpx.Client) -> None:
    assert post(api, movement(partyId=None)).status_code == 400
    assert post(api, movement()).status_code == 201


def test_key_in_flight_is_409() -> None:
    idempotency = Idempotency(Store())
    assert idempotency.begin("k", "key", "digest", 0.0).verdict is Verdict.NEW
    assert idempotency.begin("k", "key", "digest", 0.0).verdict is Verdict.IN_FLIGHT
    idempotency.finish("k", "key", 201, {"movementId": "mov_1"}, 0.0)
    replay = idempotency.begin("k", "key", "digest", 1.0)
    assert (replay.verdict, replay.status, replay.body) == (
        Verdict.REPLAY,
        201,
        {"movementId": "mov_1"},
    )


@pytest.mark.parametrize("action", ["ISL", "USL"])
@pytest.mark.parametrize("declaration", [{}, None, {"source": "FOO"}, "X", {"documentType": 1}])
def test_any_declaration_of_isl_or_usl_is_refused_as_not_allowed(
    api: httpx.Client, action: str, declaration: object
) -> None:
    """Found probing: an ISL's customsDeclaration the schema refused was answered with the
    schema's reason ("customsDeclaration: 'source' is a required property", "null is not of
    type 'object'"), as if a declaration with a source would do; whatever it holds, ISL and
    USL take none (the API document's rule 2), and that is the reason given."""
    body = {**movement(action=action), "customsDeclaration": declaration}
    response = post(api, body)
    assert response.status_code == 400, response.text
    assert response.json()["message"] == [
        f"customsDeclaration is not allowed for {action}: it reuses the linked movement's "
        "declaration"
    ]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (movement(partyId=None), "partyId is required for VAH"),
        (movement(action="ISL", customsDeclaration={"source": "EXTERNAL"}), "not allowed for ISL"),
        (
            movement(action="VAH", customsDeclaration={"source": "DECO"}),
            "customsDeclaration.source",
        ),
        (
            movement(action="ISC", partyId=None, hawbId="hawb_a2"),
            "customsDeclaration is required for ISC",
        ),
        (
            movement(
                customsDeclaration={
                    "source": "EXTERNAL",
                    "documentType": "X",
                    "declarationType": "IM",
                }
            ),
            "customsDeclaration.declarationNumber is required",
        ),
        (
            movement(customsDeclaration={"source": "RTO_LICENSE", "documentType": "X"}),
            "customsDeclaration.documentType is not allowed for source RTO_LICENSE",
        ),
        (
            movement(
                action="ISC", customsDeclaration={"source": "INTERNAL", "declarationId": "dec_r2"}
            ),
            "dec_r2 is not a declaration",
        ),
        (movement(processType="IMPORT_HANDLING"), "processType must not be sent"),
        (movement(provider="x"), "provider must not be sent"),
        (movement(hawbId="hawb_b1"), "hawb_b1 is not a HAWB of shipment shp_7Hk2Lm"),
        (movement(partyId="rpty_p3"), "rpty_p3 is not a party"),
        (movement(quantity="many"), "quantity"),
        (movement(colour="red"), "colour"),
    ],
)
def test_movement_rules_refuse_with_400_naming_the_field(
    api: httpx.Client, body: dict[str, Any], named: str
) -> None:
    response = post(api, body)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "Bad Request"
    assert named in " ".join(response.json()["message"])


@pytest.mark.parametrize("hawb", ["hawb_zz", "hawb_b1"])
def test_a_hawb_the_shipment_does_not_have_is_the_one_reason(api: httpx.Client, hawb: str) -> None:
    # Not also "customsDeclaration is required: no allocation is on file for hawb_zz": the
    # client's mistake is the HAWB, and a declaration would not make the request valid.
    response = post(api, movement(hawbId=hawb))
    assert response.status_code == 400
    assert response.json()["message"] == [f"hawbId: {hawb} is not a HAWB of shipment shp_7Hk2Lm"]


_EXTERNAL = {
    "source": "EXTERNAL",
    "documentType": "X",
    "declarationType": "IM",
    "declarationNumber": "24NLR1234567890120",
}


@pytest.mark.parametrize(
    ("declaration", "field"),
    [
        ({**_EXTERNAL, "declarationNumber": ""}, "declarationNumber"),
        ({**_EXTERNAL, "declarationType": ""}, "declarationType"),
        ({**_EXTERNAL, "documentType": ""}, "documentType"),
        ({"source": "ENTREPOT", "documentType": ""}, "documentType"),
    ],
)
def test_a_required_declaration_field_sent_empty_is_refused_and_creates_nothing(
    api: httpx.Client, declaration: dict[str, str], field: str
) -> None:
    # "declarationNumber (required; MRN or other customs reference)": "" is no reference.
    action = "ISC" if declaration["source"] == "ENTREPOT" else "VAH"
    body = movement(action=action, hawbId="hawb_a2", customsDeclaration=declaration)
    response = post(api, body)
    assert response.status_code == 400, response.text
    assert response.json()["message"] == [f"customsDeclaration.{field}: '' should be non-empty"]
    assert api.get("/_sandbox/movements").json() == []


@pytest.mark.parametrize(
    "body",
    [
        movement(),  # hawb_a1 has an allocation on file
        movement(action="ISL"),
        movement(
            action="ISC",
            partyId=None,
            customsDeclaration={"source": "INTERNAL", "declarationId": "dec_q9"},
        ),
        movement(
            action="USC", partyId=None, hawbId="hawb_a2", customsDeclaration={"source": "DECO"}
        ),
        movement(
            action="ISC",
            partyId=None,
            hawbId="hawb_a3",
            customsDeclaration={"source": "ENTREPOT", "documentType": "X"},
        ),
        movement(
            hawbId="hawb_a2",
            customsDeclaration={
                "source": "EXTERNAL",
                "documentType": "X",
                "declarationType": "IM",
                "declarationNumber": "24NLR1234567890120",
            },
        ),
    ],
)
def test_movements_that_follow_the_rules_are_created(
    api: httpx.Client, body: dict[str, Any]
) -> None:
    response = post(api, body)
    assert response.status_code == 201, response.text


def test_unknown_shipment_is_404(api: httpx.Client) -> None:
    response = api.post(
        "/v1/shipments/shp_nope/movements", json=movement(), headers={"Idempotency-Key": "k"}
    )
    assert response.status_code == 404
    assert response.json()["statusCode"] == 404
