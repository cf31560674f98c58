"""The test gate: while closed, API requests wait before they are counted or take effect."""

from __future__ import annotations

import io
import json
from typing import Any

import anyio
import anyio.abc
import httpx

from customs_batch.sandbox import create_app
from tests.sandbox.conftest import AUTH, ClientFactory


async def _a_group_held(
    client: httpx.AsyncClient, group: anyio.abc.TaskGroup
) -> list[httpx.Response]:
    """Post a template group in ``group`` and return once it waits at the closed gate: the
    list its answer is added to."""
    answers: list[httpx.Response] = []
    body = {"name": "Held", "code": "HELD", "companyId": 1}

    async def send() -> None:
        answers.append(await client.post("/v1/declaration-templates/groups", json=body))

    group.start_soon(send)
    with anyio.fail_after(10):
        while (await client.get("/_sandbox/gate")).json()["waiting"] < 1:
            await anyio.sleep(0.01)
    return answers


def test_a_request_waits_at_the_closed_gate_until_it_opens() -> None:
    async def scenario() -> None:
        transport = httpx.ASGITransport(app=create_app(rate_limit=None))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://sandbox", headers=AUTH
        ) as client:
            closed = await client.post("/_sandbox/gate", json={"open": False})
            assert closed.json() == {"open": False, "writes": False, "waiting": 0}
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
            assert (await client.get("/_sandbox/gate")).json() == {
                "open": True,
                "writes": False,
                "waiting": 0,
            }

    anyio.run(scenario)


def test_a_gate_closed_for_writes_lets_reads_pass_and_holds_the_first_write() -> None:
    async def scenario() -> None:
        transport = httpx.ASGITransport(app=create_app(rate_limit=None))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://sandbox", headers=AUTH
        ) as client:
            closed = await client.post("/_sandbox/gate", json={"open": False, "writes": True})
            assert closed.json() == {"open": False, "writes": True, "waiting": 0}
            with anyio.fail_after(10):
                read = await client.get("/v1/declarations/transit")  # not held
            assert read.status_code == 200
            async with anyio.create_task_group() as group:
                answers = await _a_group_held(client, group)
                assert answers == []
                await client.post("/_sandbox/gate", json={"open": True})
            assert [answer.status_code for answer in answers] == [201]
            # Opened, it is a whole gate again when closed without "writes".
            again = await client.post("/_sandbox/gate", json={"open": False})
            assert again.json()["writes"] is False
            await client.post("/_sandbox/gate", json={"open": True})

    anyio.run(scenario)


def test_a_request_held_when_the_emulator_stops_is_503_with_nothing_done() -> None:
    async def scenario() -> None:
        app = create_app(rate_limit=None)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://sandbox", headers=AUTH
        ) as client:
            await client.post("/_sandbox/gate", json={"open": False})
            async with anyio.create_task_group() as group:
                answers = await _a_group_held(client, group)
                app.state.gate.stop()  # what the server does first when it shuts down
            assert [answer.status_code for answer in answers] == [503]
            assert "stopping" in answers[0].json()["message"]
            stats = (await client.get("/_sandbox/stats")).json()
            assert "POST /v1/declaration-templates/groups" not in stats["requests"]
            groups = (await client.get("/v1/declaration-templates/groups")).json()["result"]
            assert "HELD" not in [g["code"] for g in groups]  # never carried out

    anyio.run(scenario)


def test_the_gate_needs_a_key_and_a_boolean(make_api: ClientFactory) -> None:
    with make_api(headers={}) as client:
        assert client.post("/_sandbox/gate", json={"open": False}).status_code == 401
        refused = client.post("/_sandbox/gate", json={"open": "no"}, headers=AUTH)
        assert refused.status_code == 400
        assert "open" in str(refused.json()["message"])
        assert client.get("/_sandbox/gate", headers=AUTH).json()["open"] is True


def _scope(method: str, path: str, body: bytes) -> dict[str, Any]:
    headers = [(b"authorization", AUTH["Authorization"].encode())]
    if body:
        headers += [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "server": ("sandbox", 80),
        "client": ("127.0.0.1", 1),
    }


async def _abandoned(
    app: Any, client: httpx.AsyncClient, scope: dict[str, Any], body: bytes, *, whole: bool
) -> list[int]:
    """Send ``scope`` with ``body`` (all of it, or with more announced to come), leave while
    it is held at the closed gate, then open the gate: the statuses the emulator started to
    answer with."""
    left = anyio.Event()
    statuses: list[int] = []
    pending = [body]

    async def receive() -> dict[str, Any]:
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": not whole}
        await left.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def waiting() -> int:
        count: int = (await client.get("/_sandbox/gate")).json()["waiting"]
        return count

    async with anyio.create_task_group() as group:
        group.start_soon(app, scope, receive, send)
        with anyio.fail_after(10):
            while await waiting() < 1:
                await anyio.sleep(0.01)
            left.set()  # the client gives up while its request is held
            while await waiting() > 0:
                await anyio.sleep(0.01)
        assert (await client.post("/_sandbox/gate", json={"open": True})).is_success
    return statuses


def test_a_client_that_leaves_the_closed_gate_no_longer_waits_its_whole_request_is_served() -> None:
    async def scenario() -> None:
        log = io.StringIO()
        app = create_app(rate_limit=None, request_log=log)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://sandbox", headers=AUTH
        ) as client:

            async def closed() -> None:
                assert (await client.post("/_sandbox/gate", json={"open": False})).is_success

            # A DELETE has no body: whole when it came, it is carried out, as a service
            # would, though nobody gets its answer.
            await closed()
            delete = _scope("DELETE", "/v1/declarations/501", b"")
            assert await _abandoned(app, client, delete, b"", whole=True) == [200]
            status = (await client.get("/v1/declarations/501")).json()["status"]
            assert status in ("cancellation_requested", "canceled")
            # A POST whose whole body had come: carried out too.
            group = json.dumps({"name": "G", "code": "GONE-1", "companyId": 1}).encode()
            await closed()
            post = _scope("POST", "/v1/declaration-templates/groups", group)
            assert await _abandoned(app, client, post, group, whole=True) == [201]
            # A POST whose body had not all come: nothing is done, nothing answered.
            other = json.dumps({"name": "G", "code": "GONE-2", "companyId": 1}).encode()
            await closed()
            post = _scope("POST", "/v1/declaration-templates/groups", other)
            assert await _abandoned(app, client, post, other[:10], whole=False) == []
            codes = {
                g["code"]
                for g in (await client.get("/v1/declaration-templates/groups")).json()["result"]
            }
            assert "GONE-1" in codes and "GONE-2" not in codes
            assert (await client.get("/_sandbox/gate")).json() == {
                "open": True,
                "writes": False,
                "waiting": 0,
            }
        # The log says what was done: the status answered to nobody, or disconnected.
        logged = [line.split()[2:5] for line in log.getvalue().splitlines()]
        held = [(method, path, outcome) for method, path, outcome in logged if method != "GET"]
        held = [entry for entry in held if not entry[1].startswith("/_sandbox")]
        assert [outcome for _, _, outcome in held] == ["200", "201", "disconnected"]

    anyio.run(scenario)
