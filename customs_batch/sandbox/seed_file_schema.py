"""The JSON Schema of a sandbox seed file (docs/sandbox.md); every top-level key optional."""

from __future__ import annotations

from typing import Any, Final

from customs_batch.vocabulary import DECLARATION_STATUSES

_STRING: Final = {"type": "string"}
_INT: Final = {"type": "integer"}
_NUMBER: Final = {"type": "number"}
_TIMESTAMP: Final = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$"}


def _record(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _prefixed(prefix: str) -> dict[str, Any]:
    return {"type": "string", "pattern": f"^{prefix}_[A-Za-z0-9]+$"}


_API_KEY = _record(
    {"key": {"type": "string", "minLength": 1}, "companyId": _INT, "active": {"type": "boolean"}},
    ["key", "companyId"],
)
_HAWB = _record(
    {
        "hawbId": _prefixed("hawb"),
        "houseAirWaybillNumber": _STRING,
        "packageCount": _INT,
        "grossWeightKg": _NUMBER,
        "isActive": {"type": "boolean"},
    },
    ["hawbId", "houseAirWaybillNumber", "packageCount", "grossWeightKg"],
)
_ALLOCATION = _record(
    {
        "allocationId": _prefixed("alc"),
        "hawbId": _prefixed("hawb"),
        "source": {"enum": ["INTERNAL", "EXTERNAL", "RTO_LICENSE", "DECO", "ENTREPOT"]},
        "declarationId": {"anyOf": [_prefixed("dec"), {"type": "null"}]},
        "declarationProcedureType": _STRING,
        "customsDocumentType": _STRING,
        "customsDeclarationType": _STRING,
        "customsDeclarationNumber": _STRING,
        "packageCount": _INT,
        "grossWeightKg": _NUMBER,
        "isActive": {"type": "boolean"},
    },
    ["allocationId", "hawbId", "source", "packageCount", "grossWeightKg"],
)
_SHIPMENT = _record(
    {
        "id": _INT,
        "publicId": _prefixed("shp"),
        "referenceNumber": _STRING,
        "status": {"enum": ["new", "clearanceInProgress", "completed"]},
        "processType": _STRING,
        "createdAt": _TIMESTAMP,
        "hawbs": {"type": "array", "items": _HAWB},
        "parties": {"type": "array", "items": _prefixed("rpty")},
        "allocations": {"type": "array", "items": _ALLOCATION},
        "declarations": {"type": "array", "items": _prefixed("dec")},
    },
    ["id", "publicId", "referenceNumber", "status"],
)
ITEM_FIELDS: Final = {
    "id": _INT,
    "description": _STRING,
    "quantity": _NUMBER,
    "grossMass": _NUMBER,
    "netMass": _NUMBER,
    "value": _NUMBER,
    "currency": _STRING,
    "originCountry": _STRING,
}
"""The fields of a declaration's item, in its detail as in a seed's ``declarationItems``."""
_DECLARATION_ITEM = _record({**ITEM_FIELDS, "hsCode": _STRING}, ["id", "description"])
_PARTY = {"type": "object", "additionalProperties": _STRING}
_DECLARATION = _record(
    {
        "declarationId": _INT,
        "shipmentId": _INT,
        "type": {"enum": ["IMPORT", "EXPORT"]},
        # The API document's import/export states, lower-case: the list's status filter and
        # DELETE (cancelled at once before submission) read them as written.
        "status": {"enum": list(DECLARATION_STATUSES)},
        "referenceNumber": _STRING,
        "lrn": _STRING,
        "mrn": _STRING,
        "declarationOffice": _STRING,
        "createdAt": _TIMESTAMP,
        "exporter": _PARTY,
        "consignee": _PARTY,
        "items": {"type": "array", "items": _DECLARATION_ITEM},
        "errors": {"type": "array"},
        "cancellationAnswer": {"enum": ["granted", "refused"]},
    },
    ["declarationId", "shipmentId", "type", "status", "referenceNumber"],
)
_SUPPORTING_DOCUMENT = _record(
    {"typeCode": _STRING, "description": _STRING, "statementCode": _STRING}, ["typeCode"]
)
_STANDALONE_ITEM = _record(
    {
        **ITEM_FIELDS,
        "declarationId": _INT,
        "commodityCode": _STRING,
        "deleted": {"type": "boolean"},
        "archived": {"type": "boolean"},
        "SupportingDocuments": {"type": "array", "items": _SUPPORTING_DOCUMENT},
    },
    ["id", "declarationId", "description"],
)
_TEMPLATE_GROUP = _record(
    {
        "id": _INT,
        "name": _STRING,
        "code": _STRING,
        "companyId": _INT,
        "isDefault": {"type": "boolean"},
        "DeclarationTemplates": {"type": "array", "items": {"type": "object"}},
        "createdAt": _TIMESTAMP,
    },
    ["id", "name", "code", "companyId"],
)
_TRANSIT = _record(
    {
        "declarationId": _INT,
        "status": _STRING,
        "procedureType": _STRING,
        "declarationType": _STRING,
        "totalWeight": _NUMBER,
        "weightUnit": _STRING,
        "departureOffice": _STRING,
        "destinationOffice": _STRING,
        "errors": {"type": "array"},
        "createdAt": _TIMESTAMP,
    },
    ["declarationId", "status"],
)

SEED_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "apiKeys": {"type": "array", "items": _API_KEY},
        "shipments": {"type": "array", "items": _SHIPMENT},
        "declarations": {"type": "array", "items": _DECLARATION},
        "declarationItems": {"type": "array", "items": _STANDALONE_ITEM},
        "templateGroups": {"type": "array", "items": _TEMPLATE_GROUP},
        "transitDeclarations": {"type": "array", "items": _TRANSIT},
    },
    "additionalProperties": False,
}
