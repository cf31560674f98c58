"""The manual clock (``--clock manual``): customs decides only when a test moves its clock,
and the rate limiter keeps the real one."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.sandbox import RateLimit
from tests.sandbox.conftest import MOVEMENTS, ClientFactory, FakeClock, departure, movement

START = 1_790_000_000.0
"""The fake clock's reading: 2026-09-21T14:13:20Z."""


def test_customs_decides_only_when_the_manual_clock_is_moved(
    make_api: ClientFactory, clock: FakeClock
) -> None:
    api = make_api(manual_clock=True)
    assert api.get("/_sandbox/clock").json() == {
        "manual": True,
        "now": "2026-09-21T14:13:20.000Z",
        "advancedSeconds": 0.0,
    }
    created = api.post("/v1/declarations/transit", json=departure()).json()["declarationId"]
    assert api.delete("/v1/declarations/502").json()["canceled"] is False
    clock.advance(3600)  # the real time runs on: customs' clock does not
    assert api.get(f"/v1/declarations/transit/{created}").json()["status"] == "processing"
    assert api.get("/v1/declarations/502").json()["status"] == "cancellation_requested"

    moved = api.post("/_sandbox/clock", json={"advanceSeconds": 1.5}).json()
    assert moved == {"manual": True, "now": "2026-09-21T14:13:21.500Z", "advancedSeconds": 1.5}
    assert api.get(f"/v1/declarations/transit/{created}").json()["status"] == "processing"
    api.post("/_sandbox/clock", json={"advanceSeconds": 0.5}).raise_for_status()
    assert api.get(f"/v1/declarations/transit/{created}").json()["status"] == "ready"
    assert api.get("/v1/declarations/502").json()["status"] == "canceled"
    listed = api.get("/v1/declarations/transit", params={"itemsPerPage": 100}).json()
    stamps = {r["declarationId"]: r["createdAt"] for r in listed["result"]}
    assert stamps[created] == "2026-09-21T14:13:20.000Z"  # stamped by customs' clock


def test_with_no_processing_time_everything_is_decided_at_once(make_api: ClientFactory) -> None:
    api = make_api(manual_clock=True, processing_seconds=0)
    created = api.post("/v1/declarations/transit", json=departure()).json()["declarationId"]
    assert api.get(f"/v1/declarations/transit/{created}").json()["status"] == "ready"
    sent = api.post(MOVEMENTS, json=movement(), headers={"Idempotency-Key": "k1"}).json()
    assert api.get("/_sandbox/movements").json()[0]["movementId"] == sent["movementId"]


def test_the_rate_limit_keeps_the_real_clock(make_api: ClientFactory, clock: FakeClock) -> None:
    api = make_api(manual_clock=True, rate_limit=RateLimit(2, 60.0))
    assert [api.get("/v1/shipments").status_code for _ in range(3)] == [200, 200, 429]
    # The clock itself is not limited, and moving it does not slide the limiter's window...
    assert api.post("/_sandbox/clock", json={"advanceSeconds": 3600}).status_code == 200
    assert api.get("/v1/shipments").status_code == 429
    # ...the real time does: a manual clock standing still never starves the clients.
    clock.advance(60)
    assert api.get("/v1/shipments").status_code == 200


def test_idempotency_keys_age_on_customs_clock(make_api: ClientFactory) -> None:
    api = make_api(manual_clock=True, processing_seconds=0)
    headers = {"Idempotency-Key": "k1"}
    first = api.post(MOVEMENTS, json=movement(), headers=headers).json()
    assert api.post(MOVEMENTS, json=movement(), headers=headers).json() == first
    api.post("/_sandbox/clock", json={"advanceSeconds": 24 * 3600 + 1}).raise_for_status()
    again = api.post(MOVEMENTS, json=movement(), headers=headers).json()
    assert again["movementId"] != first["movementId"]


def test_the_advances_survive_a_restart_on_the_same_database(
    make_api: ClientFactory, clock: FakeClock, tmp_path: Path
) -> None:
    db = tmp_path / "sandbox.db"
    api = make_api(manual_clock=True, db_path=db)
    created = api.post("/v1/declarations/transit", json=departure()).json()["declarationId"]
    api.post("/_sandbox/clock", json={"advanceSeconds": 2}).raise_for_status()
    assert api.get(f"/v1/declarations/transit/{created}").json()["status"] == "ready"
    api.close()
    clock.advance(0.5)  # restarted sooner than the clock was moved: it must not go back
    again = make_api(manual_clock=True, db_path=db)
    assert again.get("/_sandbox/clock").json()["advancedSeconds"] == 2.0
    assert again.get(f"/v1/declarations/transit/{created}").json()["status"] == "ready"


def test_data_a_manual_clock_moved_keeps_its_advances_on_the_real_clock(
    make_api: ClientFactory, clock: FakeClock, tmp_path: Path
) -> None:
    db = tmp_path / "sandbox.db"
    api = make_api(manual_clock=True, db_path=db, processing_seconds=2)
    api.post("/_sandbox/clock", json={"advanceSeconds": 3600}).raise_for_status()
    created = api.post("/v1/declarations/transit", json=departure()).json()["declarationId"]
    assert api.delete("/v1/declarations/502").status_code == 200
    moved = api.post("/_sandbox/clock", json={"advanceSeconds": 2}).json()["now"]
    assert api.get(f"/v1/declarations/transit/{created}").json()["status"] == "ready"
    api.close()
    clock.advance(1)  # reopened on the real clock a second later
    real = make_api(db_path=db, processing_seconds=2)
    shown = real.get("/_sandbox/clock").json()
    assert shown["manual"] is False and shown["advancedSeconds"] == 3602.0
    assert shown["now"] > moved  # customs' clock never goes back
    assert real.get(f"/v1/declarations/transit/{created}").json()["status"] == "ready"
    assert real.get("/v1/declarations/502").json()["status"] == "canceled"
    # What is created now is created after what was created then.
    later = real.post("/v1/declarations/transit", json=departure(commercialReference="REF-2"))
    listed = real.get("/v1/declarations/transit", params={"order": "desc"}).json()["result"]
    assert listed[0]["declarationId"] == later.json()["declarationId"]


def test_a_restart_with_other_processing_seconds_never_takes_a_decision_back(
    make_api: ClientFactory, tmp_path: Path
) -> None:
    db = tmp_path / "sandbox.db"
    api = make_api(manual_clock=True, db_path=db, processing_seconds=1)
    created = api.post("/v1/declarations/transit", json=departure()).json()["declarationId"]
    api.post(MOVEMENTS, json=movement(), headers={"Idempotency-Key": "k1"}).raise_for_status()
    assert api.delete("/v1/declarations/502").json()["canceled"] is False
    api.post("/_sandbox/clock", json={"advanceSeconds": 1}).raise_for_status()
    deactivate = "/v1/shipments/shp_7Hk2Lm/hawbs/hawb_a1"
    assert api.delete(deactivate).status_code == 409  # a sent movement references it
    api.close()

    slower = make_api(manual_clock=True, db_path=db, processing_seconds=600)
    assert slower.get(f"/v1/declarations/transit/{created}").json()["status"] == "ready"
    assert slower.get("/v1/declarations/502").json()["status"] == "canceled"
    assert slower.get("/_sandbox/movements").json()[0]["status"] == "SENT"
    assert slower.delete(deactivate).status_code == 409
    # What is submitted now is decided by the processing seconds in force now.
    later = slower.post("/v1/declarations/transit", json=departure()).json()["declarationId"]
    slower.post("/_sandbox/clock", json={"advanceSeconds": 599}).raise_for_status()
    assert slower.get(f"/v1/declarations/transit/{later}").json()["status"] == "processing"
    slower.post("/_sandbox/clock", json={"advanceSeconds": 1}).raise_for_status()
    assert slower.get(f"/v1/declarations/transit/{later}").json()["status"] == "ready"
    slower.close()

    # Nor does a faster one decide early what was submitted under the slower one.
    pending = make_api(manual_clock=True, db_path=db, processing_seconds=600)
    waiting = pending.post("/v1/declarations/transit", json=departure()).json()["declarationId"]
    pending.close()
    faster = make_api(manual_clock=True, db_path=db, processing_seconds=0)
    assert faster.get(f"/v1/declarations/transit/{waiting}").json()["status"] == "processing"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"advanceSeconds": -1}, "minimum of 0"),
        ({"advanceSeconds": "2"}, "advanceSeconds"),
        ({"advanceSeconds": True}, "advanceSeconds"),
        ({"seconds": 2}, "advanceSeconds"),
        ({"advanceSeconds": 1e300}, "9999"),
    ],
)
def test_a_bad_advance_is_400_and_moves_nothing(
    make_api: ClientFactory, body: dict[str, object], message: str
) -> None:
    api = make_api(manual_clock=True)
    refused = api.post("/_sandbox/clock", json=body)
    assert refused.status_code == 400
    assert message in str(refused.json()["message"])
    assert api.get("/_sandbox/clock").json()["advancedSeconds"] == 0.0


def test_the_real_clock_cannot_be_moved_and_the_clock_needs_a_key(
    make_api: ClientFactory,
) -> None:
    api = make_api()
    assert api.get("/_sandbox/clock").json() == {"manual": False, "now": "2026-09-21T14:13:20.000Z"}
    refused = api.post("/_sandbox/clock", json={"advanceSeconds": 1})
    assert refused.status_code == 409
    assert "--clock manual" in refused.json()["message"]
    anonymous = make_api(headers={}, manual_clock=True)
    assert anonymous.get("/_sandbox/clock").status_code == 401
    assert anonymous.post("/_sandbox/clock", json={"advanceSeconds": 1}).status_code == 401
