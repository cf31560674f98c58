"""Pagination beyond 100, the emulator's rate limit and its faults, in-process."""

from __future__ import annotations

import uuid

import httpx
import pytest
from starlette.applications import Starlette

from customs_batch.client import CustomsClient, RetryPolicy, Sender, ServerError
from customs_batch.sandbox import InProcessTransport, create_app, parse_faults, parse_rate_limit
from tests.client.bodies import movement
from tests.client.conftest import MakeClient
from tests.client.seeds import MANY, big_seed


@pytest.fixture(scope="module")
def big_app() -> Starlette:
    return create_app(seed=big_seed(), rate_limit=None)


def test_every_pagination_family_is_followed_past_100(
    make_client: MakeClient,
    big_app: Starlette,
) -> None:
    client = make_client(big_app)
    assert len(list(client.iter_hawbs("shp_big"))) == MANY  # data/pagination
    assert len(list(client.iter_allocations("shp_big"))) == MANY  # data/pagination
    assert len(list(client.iter_shipments())) == MANY + 1  # result with itemCount
    assert len(list(client.iter_declarations())) == MANY
    assert len(list(client.iter_transit())) == MANY
    assert len(list(client.iter_template_groups())) == MANY  # result, no count
    items = [i.item_id for i in client.iter_items()]  # items/meta
    assert len(items) == MANY
    assert len(set(items)) == MANY


def test_one_page_reports_what_remains(make_client: MakeClient, big_app) -> None:  # type: ignore[no-untyped-def]
    page = make_client(big_app).list_items(page=2, page_size=100)
    assert len(page.records) == MANY - 100
    assert page.total_pages == 2
    assert page.is_last()


class CountingTransport(httpx.BaseTransport):
    """Counts the requests that reach the emulator, faulted ones included."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.sent: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(f"{request.method} {request.url.path}")
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def _stats(client: CustomsClient) -> dict[str, object]:
    stats = client.sender.send("GET", "/_sandbox/stats")
    assert isinstance(stats, dict)
    return stats


def test_a_rate_limited_service_still_answers_everything_slower(make_client: MakeClient) -> None:
    app = create_app(rate_limit=parse_rate_limit("5/second"))
    client = make_client(app)  # the client does not know the limit: it learns from 429s
    shipments = [len(client.list_shipments().records) for _ in range(8)]
    assert shipments == [3] * 8
    assert _stats(client)["rateLimited"] != 0


def test_keeping_to_the_limit_draws_no_429(make_client: MakeClient) -> None:
    app = create_app(rate_limit=parse_rate_limit("5/second"))
    client = make_client(app, rate="5/second")
    client.sender.send("GET", "/openapi.json")  # start the in-process server, outside the limit
    for _ in range(7):
        client.list_shipments()
    assert _stats(client)["rateLimited"] == 0


def test_faults_are_retried_and_create_each_movement_once() -> None:
    faults = parse_faults("5xx=0.2,drop=0.1,5xx-after=0.1,drop-after=0.1")
    app = create_app(rate_limit=None, faults=faults, fault_seed=11)
    transport = CountingTransport(InProcessTransport(app))
    policy = RetryPolicy(max_attempts=12, base_delay=0.001, max_delay=0.01)
    sender = Sender("http://sandbox.test", "sandbox-key", retry_policy=policy, transport=transport)
    keys = [str(uuid.uuid4()) for _ in range(12)]
    with CustomsClient(sender) as client:
        created = {
            client.create_movement("shp_7Hk2Lm", movement(), idempotency_key=k).movement_id
            for k in keys
        }
        assert len(created) == len(keys)
        assert len(client.sender.send("GET", "/_sandbox/movements")) == len(keys)
    posts = [r for r in transport.sent if r.startswith("POST")]
    assert len(posts) > len(keys)  # faults struck, and were retried


def test_a_post_without_key_is_not_retried_under_faults() -> None:
    app = create_app(rate_limit=None, faults=parse_faults("5xx=1"))
    transport = CountingTransport(InProcessTransport(app))
    sender = Sender("http://sandbox.test", "sandbox-key", transport=transport)
    with CustomsClient(sender) as client, pytest.raises(ServerError):
        client.create_template_group({"name": "X", "code": "X", "companyId": 1})
    assert transport.sent == ["POST /v1/declaration-templates/groups"]
