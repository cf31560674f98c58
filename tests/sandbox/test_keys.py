"""Key rotation in the emulator: the old key is refused from then on, the new one works."""

from __future__ import annotations

from pathlib import Path

import httpx

from customs_batch.sandbox import InProcessTransport, create_app
from tests.sandbox.conftest import AUTH, MOVEMENTS, ClientFactory, FakeClock, movement

ROTATE = "/_sandbox/keys/rotate"
NEW = {"Authorization": "Bearer rotated-key-2"}


def test_after_a_rotation_the_old_key_is_401_and_the_new_one_works(
    make_api: ClientFactory,
) -> None:
    with make_api(headers={}) as client:
        rotated = client.post(ROTATE, json={"newKey": "rotated-key-2"}, headers=AUTH)
        assert rotated.status_code == 200
        assert rotated.json() == {"rotated": True, "companyId": 1}
        refused = client.get("/v1/shipments", headers=AUTH)
        assert refused.status_code == 401
        assert refused.json()["error"] == "INVALID_CREDENTIALS"
        assert client.get("/v1/shipments", headers=NEW).status_code == 200
        stats = client.get("/_sandbox/stats", headers=NEW).json()
        assert stats["unauthenticated"] == 1
        # The revoked key cannot rotate again or take back its name.
        assert client.post(ROTATE, json={"newKey": "x-3"}, headers=AUTH).status_code == 401
        taken = client.post(ROTATE, json={"newKey": "rotated-key-2"}, headers=NEW)
        assert taken.status_code == 409


def test_a_rotation_with_an_overlap_keeps_the_old_key_working_until_it_ends(
    make_api: ClientFactory, clock: FakeClock
) -> None:
    """As the service rotates: a new key, the clients switch over, about 24 hours pass,
    then the old key is revoked."""
    with make_api(headers={}) as client:
        rotated = client.post(
            ROTATE, json={"newKey": "rotated-key-2", "overlapSeconds": 86_400}, headers=AUTH
        )
        assert rotated.status_code == 200, rotated.text
        assert client.get("/v1/shipments", headers=NEW).status_code == 200
        clock.advance(86_399)
        assert client.get("/v1/shipments", headers=AUTH).status_code == 200
        clock.advance(1)
        refused = client.get("/v1/shipments", headers=AUTH)
        assert refused.status_code == 401
        assert refused.json()["error"] == "INVALID_CREDENTIALS"
        assert client.get("/v1/shipments", headers=NEW).status_code == 200
        for overlap in (-1, "1", 31_536_001):
            body = {"newKey": f"k-{overlap}", "overlapSeconds": overlap}
            assert client.post(ROTATE, json=body, headers=NEW).status_code == 400, overlap


def test_a_key_rotated_again_within_its_overlap_gives_no_end_to_the_new_key(
    make_api: ClientFactory, clock: FakeClock
) -> None:
    with make_api(headers={}) as client:
        first = {"newKey": "key-b", "overlapSeconds": 100}
        assert client.post(ROTATE, json=first, headers=AUTH).status_code == 200
        # A second client rotates the old key (still working) too, without an overlap...
        assert client.post(ROTATE, json={"newKey": "key-c"}, headers=AUTH).status_code == 200
        # ...and one rotating key-b with a longer overlap does not put off key-b's end.
        third = {"newKey": "key-d", "overlapSeconds": 50}
        assert client.post(ROTATE, json=third, headers={"Authorization": "Bearer key-b"}).is_success
        longer = {"newKey": "key-e", "overlapSeconds": 500}
        assert client.post(
            ROTATE, json=longer, headers={"Authorization": "Bearer key-b"}
        ).is_success
        clock.advance(101)
        works = {
            k: client.get("/v1/shipments", headers={"Authorization": f"Bearer {k}"}).status_code
            for k in ("sandbox-key", "key-b", "key-c", "key-d", "key-e")
        }
        assert works == {"sandbox-key": 401, "key-b": 401, "key-c": 200, "key-d": 200, "key-e": 200}


def test_a_rotation_needs_a_valid_key_and_a_printable_new_key(make_api: ClientFactory) -> None:
    with make_api(headers={}) as client:
        assert client.post(ROTATE, json={"newKey": "k"}).status_code == 401
        for body in ({}, {"newKey": ""}, {"newKey": "with space"}, {"newKey": 7}):
            refused = client.post(ROTATE, json=body, headers=AUTH)
            assert refused.status_code == 400, body
            assert "newKey" in str(refused.json()["message"])
        assert client.get("/v1/shipments", headers=AUTH).status_code == 200


def test_a_rotation_survives_a_restart_on_the_same_database(tmp_path: Path) -> None:
    database = tmp_path / "sandbox.sqlite3"
    for rotate in (True, False):
        transport = InProcessTransport(create_app(db_path=database, rate_limit=None))
        with httpx.Client(transport=transport, base_url="http://sandbox") as client:
            if rotate:
                assert client.post(ROTATE, json={"newKey": "k-2"}, headers=AUTH).is_success
            assert client.get("/v1/shipments", headers=AUTH).status_code == 401
            assert client.get("/v1/shipments", headers={"Authorization": "Bearer k-2"}).is_success
        transport.close()


def test_a_retry_with_the_companys_new_key_replays_the_movement_made_with_the_old_one(
    make_api: ClientFactory,
) -> None:
    # The answer to the first request is lost; the client switches to the new key (the
    # rotation the API describes) and retries with the same Idempotency-Key: the movement
    # exists once, and the retry gets it back.
    with make_api(headers={}) as client:
        first = client.post(MOVEMENTS, json=movement(), headers={**AUTH, "Idempotency-Key": "m1"})
        assert first.status_code == 201
        assert client.post(ROTATE, json={"newKey": "rotated-key-2"}, headers=AUTH).is_success
        retry = client.post(MOVEMENTS, json=movement(), headers={**NEW, "Idempotency-Key": "m1"})
        assert (retry.status_code, retry.json()) == (201, first.json())
        assert len(client.get("/_sandbox/movements", headers=NEW).json()) == 1
        other = client.post(
            MOVEMENTS, json=movement(quantity=3), headers={**NEW, "Idempotency-Key": "m1"}
        )
        assert other.status_code == 422
