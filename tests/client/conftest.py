"""Clients wired to the emulator running in-process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette

from customs_batch.client import CustomsClient, RateLimit, RateLimiter, RetryPolicy, Sender
from customs_batch.sandbox import InProcessTransport, create_app

MakeClient = Callable[..., CustomsClient]


@pytest.fixture
def make_client() -> Iterator[MakeClient]:
    """``make_client(app=None, key=..., rate="off", policy=None)``: a client of the emulator."""
    made: list[CustomsClient] = []

    def make(
        app: Starlette | None = None,
        *,
        key: str = "sandbox-key",
        rate: str = "off",
        policy: RetryPolicy | None = None,
        **app_options: Any,
    ) -> CustomsClient:
        if app is None:
            app = create_app(rate_limit=None, **app_options)
        sender = Sender(
            "http://sandbox.test",
            key,
            rate_limiter=RateLimiter(RateLimit.parse(rate)),
            retry_policy=policy or RetryPolicy(base_delay=0.01, max_delay=0.05),
            transport=InProcessTransport(app),
        )
        client = CustomsClient(sender)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def client(make_client: MakeClient) -> CustomsClient:
    """A client of the emulator with the built-in seed."""
    return make_client()
