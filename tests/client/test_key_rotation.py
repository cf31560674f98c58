"""A key rotated during a run: after a 401 the sender reads the key again, once, and goes
on with a new one; an unchanged key stops as before. The emulator rotates its key through
``/_sandbox/keys/rotate``, as an operator would at the real service."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest
from starlette.applications import Starlette

from customs_batch.client import AuthenticationError, CustomsClient, Sender
from customs_batch.errors import ConfigError
from customs_batch.sandbox import InProcessTransport, create_app

from .bodies import departure

OLD = "sandbox-key"
NEW = "rotated-Key-7f3e"


class KeySource:
    """Where the run reads its key from, and how often it was read."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.reads = 0
        self.error: ConfigError | None = None

    def __call__(self) -> str:
        self.reads += 1
        if self.error is not None:
            raise self.error
        return self.key


@pytest.fixture
def app() -> Starlette:
    return create_app(rate_limit=None)


@pytest.fixture
def inspect(app: Starlette) -> Iterator[Callable[[str], httpx.Client]]:
    transports: list[InProcessTransport] = []
    clients: list[httpx.Client] = []

    def make(key: str) -> httpx.Client:
        transports.append(InProcessTransport(app))
        clients.append(
            httpx.Client(
                transport=transports[-1],
                base_url="http://sandbox.test",
                headers={"Authorization": f"Bearer {key}"},
            )
        )
        return clients[-1]

    yield make
    for client in clients:
        client.close()
    for transport in transports:
        transport.close()


def _client(app: Starlette, source: KeySource | None) -> CustomsClient:
    return CustomsClient(
        Sender("http://sandbox.test", OLD, transport=InProcessTransport(app), key_source=source)
    )


def _rotate(inspect: Callable[[str], httpx.Client]) -> None:
    inspect(OLD).post("/_sandbox/keys/rotate", json={"newKey": NEW}).raise_for_status()


def _stats(inspect: Callable[[str], httpx.Client]) -> dict[str, object]:
    answer: dict[str, object] = inspect(NEW).get("/_sandbox/stats").json()
    return answer


def test_a_rotated_key_is_read_again_and_the_request_goes_through_once(
    app: Starlette, inspect: Callable[[str], httpx.Client]
) -> None:
    source = KeySource(OLD)
    with _client(app, source) as client:
        first = client.submit_departure(departure("CR-1"))
        _rotate(inspect)
        source.key = NEW  # the operator writes the new key to the key file
        second = client.submit_departure(departure("CR-2"))
        third = client.submit_departure(departure("CR-3"))
    assert first.declaration_id is not None and second.declaration_id is not None
    assert second.declaration_id == first.declaration_id + 1
    assert third.declaration_id == second.declaration_id + 1
    assert source.reads == 1, "read again on the 401 only; later requests use the new key"
    stats = _stats(inspect)
    assert stats["unauthenticated"] == 1
    requests = stats["requests"]
    assert isinstance(requests, dict)
    assert requests["POST /v1/declarations/transit"] == 4  # 3 + the one refused


def test_an_unchanged_key_stops_at_the_401_as_before(
    app: Starlette, inspect: Callable[[str], httpx.Client]
) -> None:
    source = KeySource(OLD)
    with _client(app, source) as client:
        _rotate(inspect)
        with pytest.raises(AuthenticationError) as caught:
            client.submit_departure(departure())
    assert caught.value.status == 401
    assert "rejected the API key" in caught.value.message
    assert OLD not in str(caught.value)
    assert source.reads == 1
    assert _stats(inspect)["unauthenticated"] == 1


def test_a_new_key_that_is_refused_too_is_final(
    app: Starlette, inspect: Callable[[str], httpx.Client]
) -> None:
    source = KeySource("not-the-new-key")
    with _client(app, source) as client:
        _rotate(inspect)
        with pytest.raises(AuthenticationError) as caught:
            client.submit_departure(departure())
    assert source.reads == 1 and _stats(inspect)["unauthenticated"] == 2
    assert "not-the-new-key" not in str(caught.value)


def test_a_key_source_that_cannot_be_read_leaves_the_401(
    app: Starlette, inspect: Callable[[str], httpx.Client]
) -> None:
    source = KeySource(OLD)
    source.error = ConfigError("the API key file /k is missing")
    with _client(app, source) as client:
        _rotate(inspect)
        with pytest.raises(AuthenticationError):
            client.list_shipments()
    assert source.reads == 1


def test_without_a_key_source_a_401_is_final(
    app: Starlette, inspect: Callable[[str], httpx.Client]
) -> None:
    with _client(app, None) as client:
        _rotate(inspect)
        with pytest.raises(AuthenticationError):
            client.list_shipments()
    assert _stats(inspect)["unauthenticated"] == 1
