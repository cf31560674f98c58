"""Valid specs of every kind, to be varied by the tests."""

from __future__ import annotations

import copy
from typing import Any

from customs_batch.kinds import Kind

PARTY_WITH_EORI = {
    "name": "Hanse Logistik GmbH",
    "eoriNo": "DE123456789012345",
    "countryCode": "DE",
}

DEPARTURE: dict[str, Any] = {
    "type": "DEPARTURE",
    "companyId": 1,
    "procedureType": "D1",
    "declarationType": "externalTransit",
    "additionalDeclarationType": "STANDARD",
    "commercialReference": "REF-1001",
    "departureOffice": "DE004073",
    "destinationOffice": "NL000854",
    "countryOfDispatch": "DE",
    "countryOfDestination": "NL",
    "security": "0",
    "totalWeight": 130.0,
    "goodsLocationType": "A",
    "goodsLocationAddressType": "Z",
    "goodsLocationAddress": {
        "Address": {"street": "Kai 1", "city": "Hamburg", "postCode": "20457", "countryCode": "DE"}
    },
    "loadingCountry": "DE",
    "loadingLocation": "Hamburg",
    "loadingUNLocode": "DEHAM",
    "unloadingCountry": "NL",
    "unloadingUNLocode": "NLRTM",
    "Principal": dict(PARTY_WITH_EORI),
    "Consignor": dict(PARTY_WITH_EORI),
    "Consignee": {
        "name": "Rotterdam Trading BV",
        "countryCode": "NL",
        "city": "Rotterdam",
        "street": "Haven 2",
        "postcode": "3011",
    },
    "TransportMeans": [
        {"sequenceNumber": 1, "mode": "DEPARTURE", "transportType": "30", "nationality": "DE"}
    ],
    "DeclarationGuarantees": [
        {
            "guaranteeType": "1",
            "guaranteeReferenceNumber": "20DE0000000000002",
            "guaranteeAmount": 1000,
            "currencyCode": "EUR",
            "accessCode": "ABCD",
        }
    ],
    "DeclarationItems": [
        {
            "description": "Bolts",
            "commodityCode": "731815",
            "originCountry": "DE",
            "quantity": 100,
            "grossMass": 62.5,
            "netWeight": 60.0,
            "netPrice": 250.0,
            "currency": "EUR",
            "packaging": [
                {
                    "sequenceNumber": 1,
                    "typeOfPackages": "PK",
                    "quantity": 10,
                    "shippingMarks": "B-1",
                }
            ],
        },
        {
            "description": "Nuts",
            "commodityCode": "73181600",
            "originCountry": "NL",
            "quantity": 100,
            "grossMass": 67.5,
            "netWeight": 67.5,
            "netPrice": 120.0,
            "currency": "EUR",
        },
    ],
}

MOVEMENT: dict[str, Any] = {
    "shipmentId": "shp_7Hk2Lm",
    "action": "VAH",
    "quantity": 10,
    "grossWeightKg": 125.5,
    "customsSupervision": "Y",
    "goodsHandlingCode": "N",
    "hawbId": "hawb_a1",
    "partyId": "rpty_p1",
    "customsDeclaration": {
        "source": "EXTERNAL",
        "documentType": "X",
        "declarationType": "IM",
        "declarationNumber": "24NLR1234567890120",
    },
}

TEMPLATE_GROUP: dict[str, Any] = {
    "name": "EU road",
    "code": "EU-ROAD",
    "companyId": 1,
    "isDefault": False,
    "DeclarationTemplates": [
        {
            "procedureType": "D1",
            "declarationOffice": "DE004073",
            "countryOfDispatch": "DE",
            "PreviousDocuments": [
                {"documentCategory": 1, "typeCode": "N740", "description": "AWB"}
            ],
        }
    ],
}

PARTY_UPDATE: dict[str, Any] = {
    "declarationId": 4711,
    "variant": "departure",
    "Principal": dict(PARTY_WITH_EORI),
}

HAWB_DEACTIVATION: dict[str, Any] = {"shipmentId": "shp_7Hk2Lm", "hawbId": "hawb_a1"}

EXPORT_CANCELLATION: dict[str, Any] = {"declarationId": 501}

SAMPLES: dict[Kind, dict[str, Any]] = {
    Kind.DEPARTURE_DECLARATION: DEPARTURE,
    Kind.MOVEMENT: MOVEMENT,
    Kind.TEMPLATE_GROUP: TEMPLATE_GROUP,
    Kind.TRANSIT_PARTY_UPDATE: PARTY_UPDATE,
    Kind.HAWB_DEACTIVATION: HAWB_DEACTIVATION,
    Kind.EXPORT_CANCELLATION: EXPORT_CANCELLATION,
}


def sample(kind: Kind, **changes: Any) -> dict[str, Any]:
    """A deep copy of the valid spec of ``kind`` with top-level ``changes`` (None removes)."""
    spec = copy.deepcopy(SAMPLES[kind])
    for key, value in changes.items():
        if value is None:
            spec.pop(key, None)
        else:
            spec[key] = value
    return spec


MOVEMENT_YAML = """\
apiVersion: customs-batch/v1
kind: Movement
metadata:
  name: {name}
spec:
  shipmentId: shp_1
  hawbId: {hawb}
  action: VAH
  quantity: {quantity}
  grossWeightKg: 10.5
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: rpty_1
  customsDeclaration:
    source: EXTERNAL
    documentType: X
    declarationType: IM
    declarationNumber: 24NLR1234567890120
"""
"""A valid VAH movement document of shipment ``shp_1``, to ``.format(name=, hawb=, quantity=)``."""
