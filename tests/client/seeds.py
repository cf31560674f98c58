"""Seeds for the emulator: a big one (every list beyond 100 records) and one with a given key."""

from __future__ import annotations

from typing import Any

import yaml

from customs_batch.sandbox.seed import Seed, parse_seed

MANY = 130  # more than one page of the largest page size (100)


def _hawb(n: int) -> dict[str, Any]:
    return {
        "hawbId": f"hawb_m{n}",
        "houseAirWaybillNumber": f"176-{10000000 + n}",
        "packageCount": 1,
        "grossWeightKg": 1.5,
    }


def _allocation(n: int) -> dict[str, Any]:
    return {
        "allocationId": f"alc_m{n}",
        "hawbId": f"hawb_m{n}",
        "source": "EXTERNAL",
        "declarationId": None,
        "declarationProcedureType": "IMPORT",
        "customsDocumentType": "X",
        "customsDeclarationType": "IM",
        "customsDeclarationNumber": "24NLR1234567890120",
        "packageCount": 1,
        "grossWeightKg": 1.5,
    }


def big_seed_data(key: str = "sandbox-key") -> dict[str, Any]:
    """A seed with MANY records in every list, for walks over several pages."""
    shipments: list[dict[str, Any]] = [
        {
            "id": 1001,
            "publicId": "shp_big",
            "referenceNumber": "REF-BIG",
            "status": "new",
            "hawbs": [_hawb(n) for n in range(MANY)],
            "parties": ["rpty_p1"],
            "allocations": [_allocation(n) for n in range(MANY)],
        }
    ]
    shipments += [
        {"id": 2000 + n, "publicId": f"shp_s{n}", "referenceNumber": f"REF-{n}", "status": "new"}
        for n in range(MANY)
    ]
    return {
        "apiKeys": [
            {"key": key, "companyId": 1},
            {"key": "inactive-key", "companyId": 2, "active": False},
        ],
        "shipments": shipments,
        "declarations": [
            {
                "declarationId": 3000 + n,
                "shipmentId": 1001,
                "type": "EXPORT" if n % 2 else "IMPORT",
                "status": "ready",
                "referenceNumber": f"REF-{n}",
                "lrn": f"LRN{n}",
                "mrn": "",
            }
            for n in range(MANY)
        ],
        "declarationItems": [
            {
                "id": 9100 + n,
                "declarationId": 3000,
                "description": f"Item {n}",
                "commodityCode": "731815",
                "quantity": 1,
                "grossMass": 1.0,
                "netMass": 0.9,
                "value": 10,
                "currency": "EUR",
                "originCountry": "NL",
            }
            for n in range(MANY)
        ],
        "templateGroups": [
            {"id": n + 1, "name": f"Group {n}", "code": f"G{n}", "companyId": 1, "isDefault": False}
            for n in range(MANY)
        ],
        "transitDeclarations": [
            {
                "declarationId": 7000 + n,
                "status": "ready",
                "procedureType": "D1",
                "declarationType": "externalTransit",
                "totalWeight": 10.0,
                "weightUnit": "KGM",
                "departureOffice": "NL000396",
                "destinationOffice": "DE004073",
            }
            for n in range(MANY)
        ],
    }


def big_seed(key: str = "sandbox-key") -> Seed:
    """``big_seed_data`` as a parsed seed."""
    return parse_seed(yaml.safe_dump(big_seed_data(key)), "big seed")
