"""The synchronous in-process transport: threads, close and dropped connections."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from customs_batch.sandbox import InProcessTransport, create_app, parse_faults
from tests.sandbox.conftest import AUTH, MOVEMENTS, movement


def test_several_threads_send_through_one_transport() -> None:
    transport = InProcessTransport(create_app(rate_limit=None))
    with httpx.Client(transport=transport, base_url="http://sandbox.local", headers=AUTH) as client:

        def send(n: int) -> int:
            body = movement(quantity=n)
            return client.post(
                MOVEMENTS, json=body, headers={"Idempotency-Key": f"k{n}"}
            ).status_code

        with ThreadPoolExecutor(max_workers=8) as pool:
            statuses = list(pool.map(send, range(80)))
        assert statuses == [201] * 80
        ids = {m["movementId"] for m in client.get("/_sandbox/movements").json()}
        assert len(ids) == 80


def test_close_stops_the_loop_and_a_later_request_starts_another() -> None:
    transport = InProcessTransport(create_app())
    client = httpx.Client(transport=transport, base_url="http://sandbox.local", headers=AUTH)
    assert client.get("/v1/shipments").status_code == 200
    transport.close()
    assert client.get("/v1/shipments").status_code == 200
    client.close()


def test_drop_is_a_remote_protocol_error() -> None:
    app = create_app(faults=parse_faults("drop=1"))
    with (
        httpx.Client(
            transport=InProcessTransport(app), base_url="http://x", headers=AUTH
        ) as client,
        pytest.raises(httpx.RemoteProtocolError, match="disconnected"),
    ):
        client.get("/v1/shipments")
