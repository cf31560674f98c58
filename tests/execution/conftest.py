from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from customs_batch.client import NO_RETRIES, CustomsClient, Sender
from customs_batch.sandbox import create_app
from customs_batch.sandbox.inprocess import InProcessTransport


class Emulator:
    """The emulator in-process, with a client for the run and a peek at what it holds."""

    def __init__(self, **app_options: Any) -> None:
        self.transport = InProcessTransport(create_app(rate_limit=None, **app_options))
        self.client = CustomsClient(
            Sender(
                "http://sandbox.test",
                "sandbox-key",
                transport=self.transport,
                retry_policy=NO_RETRIES,
            )
        )
        self.http = httpx.Client(
            transport=self.transport,
            base_url="http://sandbox.test",
            headers={"Authorization": "Bearer sandbox-key"},
        )

    def movements(self) -> list[dict[str, Any]]:
        answer: list[dict[str, Any]] = self.http.get("/_sandbox/movements").json()
        return answer

    def close(self) -> None:
        self.client.close()
        self.http.close()
        self.transport.close()


@pytest.fixture
def emulator() -> Iterator[Emulator]:
    running = Emulator(processing_seconds=0.0)
    yield running
    running.close()
