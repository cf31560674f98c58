"""Fixtures of the emulator tests: an in-process client with a fake clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from customs_batch.sandbox import InProcessTransport, create_app

SHIPMENT = "shp_7Hk2Lm"
MOVEMENTS = f"/v1/shipments/{SHIPMENT}/movements"
AUTH = {"Authorization": "Bearer sandbox-key"}


class FakeClock:
    """A clock the test moves by hand (seconds since the epoch)."""

    def __init__(self, now: float = 1_790_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    """The fake clock of the ``api`` client's emulator."""
    return FakeClock()


ClientFactory = Callable[..., httpx.Client]


@pytest.fixture
def make_api(clock: FakeClock) -> Iterator[ClientFactory]:
    """Build in-process clients of emulators made with ``create_app(**options)``."""
    clients: list[httpx.Client] = []

    def make(headers: dict[str, str] | None = None, **options: Any) -> httpx.Client:
        options.setdefault("rate_limit", None)
        options.setdefault("clock", clock)
        transport = InProcessTransport(create_app(**options))
        client = httpx.Client(
            transport=transport,
            base_url="http://sandbox.local",
            headers=AUTH if headers is None else headers,
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def api(make_api: ClientFactory) -> httpx.Client:
    """A client of an emulator with the built-in seed, no rate limit and the fake clock."""
    return make_api()


def movement(**fields: Any) -> dict[str, Any]:
    """A valid VAH movement body for hawb_a1 of the built-in seed, changed by ``fields``."""
    body: dict[str, Any] = {
        "action": "VAH",
        "quantity": 2,
        "grossWeightKg": 25.0,
        "customsSupervision": "Y",
        "goodsHandlingCode": "N",
        "hawbId": "hawb_a1",
        "partyId": "rpty_p1",
    }
    body.update(fields)
    return {key: value for key, value in body.items() if value is not None}


def departure(**fields: Any) -> dict[str, Any]:
    """A minimal departure declaration body the schema accepts, changed by ``fields``."""
    party = {"name": "Acme BV", "eoriNo": "NL123456789", "countryCode": "NL"}
    body: dict[str, Any] = {
        "type": "DEPARTURE",
        "companyId": 1,
        "procedureType": "D1",
        "declarationType": "externalTransit",
        "additionalDeclarationType": "STANDARD",
        "commercialReference": "CR-0001",
        "departureOffice": "NL000396",
        "destinationOffice": "DE004073",
        "countryOfDispatch": "NL",
        "countryOfDestination": "DE",
        "security": "0",
        "totalWeight": 120.5,
        "goodsLocationType": "B",
        "goodsLocationAddressType": "Z",
        "goodsLocationAddress": {
            "Address": {
                "street": "Main 1",
                "city": "Rotterdam",
                "postCode": "3011",
                "countryCode": "NL",
            }
        },
        "loadingCountry": "NL",
        "loadingLocation": "Rotterdam",
        "loadingUNLocode": "NLRTM",
        "Principal": party,
        "Consignor": party,
        "Consignee": {
            "name": "Globex",
            "countryCode": "DE",
            "city": "Hamburg",
            "street": "Kai 2",
            "postcode": "20457",
        },
        "DeclarationGuarantees": [
            {
                "guaranteeType": "1",
                "guaranteeReferenceNumber": "24NL0000000000001",
                "guaranteeAmount": 1000.0,
                "currencyCode": "EUR",
                "accessCode": "ABCD",
            }
        ],
        "DeclarationItems": [
            {
                "description": "Bolts",
                "commodityCode": "731815",
                "originCountry": "NL",
                "quantity": 10,
                "grossMass": 120.5,
                "netWeight": 110.0,
                "netPrice": 250.0,
                "currency": "EUR",
                "packaging": [
                    {
                        "sequenceNumber": 1,
                        "typeOfPackages": "PK",
                        "quantity": 10,
                        "shippingMarks": "ACME",
                    }
                ],
            }
        ],
    }
    body.update(fields)
    return body
