"""Manifests of larger batches for the reliability tests, written as a user would write them.

Movements run in lanes (one shipment and HAWB each, in manifest order) on the HAWBs of the
built-in seed. ISL and USL need a party and no declaration, so any number of them is valid;
each has its own quantity, so that no two documents submit the same thing and every
movement the emulator holds can be traced back to exactly one document.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

LANES = (
    ("shp_7Hk2Lm", "hawb_a1", "rpty_p1"),
    ("shp_7Hk2Lm", "hawb_a2", "rpty_p2"),
    ("shp_9Xc4Rt", "hawb_b1", "rpty_p3"),
    ("shp_7Hk2Lm", None, "rpty_p1"),  # movements on the master AWB: no hawbId
)


def movements(per_lane: int, lanes: int = len(LANES)) -> str:
    """``per_lane`` movements on each of the first ``lanes`` lanes, as one manifest file."""
    documents = []
    for lane, (shipment, hawb, party) in enumerate(LANES[:lanes]):
        for number in range(1, per_lane + 1):
            spec: dict[str, Any] = {
                "shipmentId": shipment,
                "action": "ISL" if number % 2 else "USL",
                "quantity": number,
                "grossWeightKg": float(number),
                "customsSupervision": "Y",
                "goodsHandlingCode": "N",
                "partyId": party,
            }
            if hawb is not None:
                spec["hawbId"] = hawb
            documents.append(
                {
                    "apiVersion": "customs-batch/v1",
                    "kind": "Movement",
                    "metadata": {"name": f"mov-l{lane}-{number:02d}"},
                    "spec": spec,
                }
            )
    return yaml.safe_dump_all(documents, sort_keys=False)


def departure_weight(number: int) -> float:
    """The total weight of departure ``number``: distinct, so the emulator's record (which
    does not show the commercial reference) can be matched to its document."""
    return 100.0 + number


def departures(count: int) -> str:
    """``count`` departure declarations from the built-in ``t1-road`` template."""
    party = {"name": "Acme Export BV", "eoriNo": "NL123456789", "countryCode": "NL"}
    documents = []
    for number in range(1, count + 1):
        weight = departure_weight(number)
        documents.append(
            {
                "apiVersion": "customs-batch/v1",
                "kind": "DepartureDeclaration",
                "metadata": {"name": f"dep-e2e-{number:02d}"},
                "template": "t1-road",
                "values": {
                    "office": "NL000396",
                    "destination": "BE212000",
                    "company": 1,
                    "vehicle": "NL-34-ABC",
                },
                "spec": {
                    "commercialReference": f"E2E-{number:04d}",
                    "totalWeight": weight,
                    "goodsLocationAddress": {
                        "Address": {
                            "street": "Europaweg 875",
                            "city": "Rotterdam",
                            "postCode": "3199 LC",
                            "countryCode": "NL",
                        }
                    },
                    "loadingCountry": "NL",
                    "loadingLocation": "Rotterdam",
                    "loadingUNLocode": "NLRTM",
                    "Principal": party,
                    "Consignor": party,
                    "Consignee": {
                        "name": "Initech NV",
                        "countryCode": "BE",
                        "city": "Antwerpen",
                        "street": "Noorderlaan 147",
                        "postcode": "2030",
                    },
                    "DeclarationGuarantees": [
                        {
                            "guaranteeType": "1",
                            "guaranteeReferenceNumber": "24NL0000000000017",
                            "guaranteeAmount": 2500,
                            "currencyCode": "EUR",
                            "accessCode": "1234",
                        }
                    ],
                    "DeclarationItems": [
                        {
                            "description": "Washers",
                            "commodityCode": "731821",
                            "originCountry": "DE",
                            "quantity": 500,
                            "grossMass": weight,
                            "netWeight": weight - 2,
                            "netPrice": 60,
                            "currency": "EUR",
                            "packaging": [
                                {
                                    "sequenceNumber": 1,
                                    "typeOfPackages": "PX",
                                    "quantity": 1,
                                    "shippingMarks": f"E2E-{number}",
                                }
                            ],
                        }
                    ],
                },
            }
        )
    return yaml.safe_dump_all(documents, sort_keys=False)


def movement_identity(movement: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two movements the same submission: shipment, HAWB, action, quantity."""
    return (
        movement.get("shipmentId"),
        movement.get("hawbId"),
        movement.get("action"),
        movement.get("quantity"),
    )


def duplicates(found: Iterable[Mapping[str, Any]]) -> dict[tuple[Any, ...], int]:
    """The submissions the emulator holds more than once, with their counts."""
    counts = Counter(movement_identity(m) for m in found)
    return {identity: n for identity, n in counts.items() if n > 1}
