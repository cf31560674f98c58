"""The test gate: while closed, API requests wait before they are counted or take effect."""

from __future__ import annotations

import anyio
import httpx

from customs_batch.sandbox import create_app
from tests.sandbox.conftest import AUTH, ClientFactory


def test_a_request_waits_at_the_closed_gate_until_it_opens() -> None:
    async def scenario() -> None:
        transport = httpx.ASGITransport(app=create_app(rate_limit=None))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://sandbox", headers=AUTH
        ) as client:
            closed = await client.post("/_sandbox/gate", json={"open": False})
            assert closed.json() == {"open": False, "waiting": 0}
            answers: list[httpx.Response] = []

            async def send() -> None:
                answers.append(await client.get("/v1/shipments"))

            async with anyio.create_task_group() as group:
                group.start_soon(send)
                with anyio.fail_after(10):
                    while (await client.get("/_sandbox/gate")).json()["waiting"] < 1:
                        await anyio.sleep(0.01)
                assert answers == []
                stats = (await client.get("/_sandbox/stats")).json()
                assert "GET /v1/shipments" not in stats["requests"]  # not counted while held
                opened = await client.post("/_sandbox/gate", json={"open": True})
                assert opened.json()["open"] is True
            assert [answer.status_code for answer in answers] == [200]
            assert (await client.get("/_sandbox/gate")).json() == {"open": True, "waiting": 0}

    anyio.run(scenario)


def test_the_gate_needs_a_key_and_a_boolean(make_api: ClientFactory) -> None:
    with make_api(headers={}) as client:
        assert client.post("/_sandbox/gate", json={"open": False}).status_code == 401
        refused = client.post("/_sandbox/gate", json={"open": "no"}, headers=AUTH)
        assert refused.status_code == 400
        assert "open" in str(refused.json()["message"])
        assert client.get("/_sandbox/gate", headers=AUTH).json()["open"] is True
