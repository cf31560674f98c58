"""``CustomsClient`` itself, beside what its endpoints send (``test_wire.py``)."""

from __future__ import annotations

import httpx
import pytest

from customs_batch.client import NO_RETRIES, CustomsClient, NotFoundError, ServerError

from .fakes import FakeClock, sender_on


class _Counting:
    """A service that answers each GET of a transit declaration with a status one step on
    (``processing``, ``ready``...), 404 for 404, 500 for 500, counting what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.asked.append(f"{request.method} {request.url.path}")
        ident = request.url.path.removesuffix("/parties").rsplit("/", 1)[-1]
        if ident in ("404", "500"):
            return httpx.Response(int(ident), json={"statusCode": int(ident), "message": "no"})
        status = ("processing", "ready")[min(len(self.asked) - 1, 1)]
        return httpx.Response(200, json={"declarationId": int(ident), "status": status})


def test_reading_once_gives_every_read_of_one_object_the_first_answer() -> None:
    # refresh reads a departure's declaration for its record and for each party update of
    # it: read twice a moment apart, the two records could hold two statuses of one object.
    service = _Counting()
    client = CustomsClient(sender_on(FakeClock(), service, NO_RETRIES))
    with client.reading_once():
        first, second = client.get_transit(7003), client.get_transit(7003)
        for _ in range(2):
            with pytest.raises(NotFoundError):
                client.get_transit(404)
        other = client.get_transit(7004)
    assert first.raw["status"] == second.raw["status"] == "processing"
    assert other.raw["status"] == "ready"
    assert service.asked == [
        "GET /v1/declarations/transit/7003",
        "GET /v1/declarations/transit/404",
        "GET /v1/declarations/transit/7004",
    ]
    client.get_transit(7003)  # outside the block: read again
    assert len(service.asked) == 4


def test_reading_once_keeps_no_failed_read_and_no_write() -> None:
    service = _Counting()
    client = CustomsClient(sender_on(FakeClock(), service, NO_RETRIES))
    with client.reading_once():
        for _ in range(2):
            with pytest.raises(ServerError):
                client.get_transit(500)
        client.update_departure_parties(7003, {"Principal": {"name": "A"}})
        client.update_departure_parties(7003, {"Principal": {"name": "A"}})
    assert service.asked.count("GET /v1/declarations/transit/500") == 2
    assert service.asked.count("PATCH /declarations/transit/7003/parties") == 2
