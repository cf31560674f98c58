"""Request bodies the emulator accepts, built from the API document's required fields."""

from __future__ import annotations

from typing import Any


def departure(reference: str = "CR-0001") -> dict[str, Any]:
    """A minimal departure declaration: only the required fields."""
    party = {"name": "Acme Export BV", "eoriNo": "NL123456789", "countryCode": "NL"}
    return {
        "type": "DEPARTURE",
        "companyId": 1,
        "procedureType": "D1",
        "declarationType": "externalTransit",
        "additionalDeclarationType": "STANDARD",
        "commercialReference": reference,
        "departureOffice": "NL000396",
        "destinationOffice": "DE004073",
        "countryOfDispatch": "NL",
        "countryOfDestination": "DE",
        "security": "0",
        "totalWeight": 12.5,
        "goodsLocationType": "A",
        "goodsLocationAddressType": "Z",
        "goodsLocationAddress": {
            "Address": {
                "street": "Kade 1",
                "city": "Rotterdam",
                "postCode": "3011AA",
                "countryCode": "NL",
            }
        },
        "loadingCountry": "NL",
        "loadingLocation": "Rotterdam",
        "loadingUNLocode": "NLRTM",
        "Principal": party,
        "Consignor": party,
        "Consignee": {
            "name": "Globex GmbH",
            "countryCode": "DE",
            "city": "Hamburg",
            "street": "Hafen 2",
            "postcode": "20457",
        },
        "DeclarationGuarantees": [
            {
                "guaranteeType": "1",
                "guaranteeReferenceNumber": "24NL0000000000001",
                "guaranteeAmount": 1000,
                "currencyCode": "EUR",
                "accessCode": "1234",
            }
        ],
        "DeclarationItems": [
            {
                "description": "Bolts",
                "commodityCode": "731815",
                "originCountry": "NL",
                "quantity": 100,
                "grossMass": 12.5,
                "netWeight": 12.0,
                "netPrice": 250,
                "currency": "EUR",
                "packaging": [
                    {
                        "sequenceNumber": 1,
                        "typeOfPackages": "CT",
                        "quantity": 2,
                        "shippingMarks": "ACME",
                    }
                ],
            }
        ],
    }


def movement(action: str = "VAH") -> dict[str, Any]:
    """A VAH movement of hawb_a1 with an external declaration."""
    return {
        "action": action,
        "quantity": 1,
        "grossWeightKg": 1.0,
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
