"""The service's records as frozen dataclasses, parsed leniently.

Every record keeps the exact object the service sent in ``raw``, so ``get --format json`` prints
what the service said, including fields this client does not know. A field the service
omits, or sends with another type, becomes None rather than an error: reading must not fail
because the service added or loosened something.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Self

from customs_batch.jsontypes import JSON, JSONObject, entries_of


def _str(raw: JSONObject, key: str) -> str | None:
    value = raw.get(key)
    return value if isinstance(value, str) else None


def _int(raw: JSONObject, key: str) -> int | None:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(raw: JSONObject, key: str) -> float | None:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _bool(raw: JSONObject, key: str) -> bool | None:
    value = raw.get(key)
    return value if isinstance(value, bool) else None


def _frozen(raw: JSONObject) -> JSONObject:
    return MappingProxyType(dict(raw))


@dataclass(frozen=True)
class Record:
    """Base of every record: ``raw`` is the object exactly as the service sent it."""

    raw: JSONObject

    @classmethod
    def from_json(cls, raw: JSONObject) -> Self:
        """Build the record from a JSON object; unknown fields stay in ``raw`` only."""
        return cls(_frozen(raw), **cls._fields(raw))

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class Shipment(Record):
    """A shipment list entry (integer ID)."""

    shipment_id: int | None = None
    reference_number: str | None = None
    status: str | None = None

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        return {
            "shipment_id": _int(raw, "shipmentId"),
            "reference_number": _str(raw, "referenceNumber"),
            "status": _str(raw, "status"),
        }


@dataclass(frozen=True)
class DeclarationListEntry(Record):
    """An import or export declaration in the list."""

    declaration_id: int | None = None
    shipment_id: int | None = None
    type: str | None = None
    status: str | None = None
    reference_number: str | None = None
    mrn: str | None = None

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        return {
            "declaration_id": _int(raw, "declarationId"),
            "shipment_id": _int(raw, "shipmentId"),
            "type": _str(raw, "type"),
            "status": _str(raw, "status"),
            "reference_number": _str(raw, "referenceNumber"),
            "mrn": _str(raw, "mrn"),
        }


@dataclass(frozen=True)
class ExportDeclaration(DeclarationListEntry):
    """The detail of an export declaration, with its items and errors."""

    items: tuple[JSONObject, ...] = ()
    errors: tuple[JSON, ...] = ()

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        items = raw.get("items")
        errors = raw.get("errors")
        return {
            **super()._fields(raw),
            "items": tuple(i for i in items if isinstance(i, dict))
            if isinstance(items, list)
            else (),
            "errors": entries_of(errors),
        }


@dataclass(frozen=True)
class DeclarationItem(Record):
    """A declaration item (list entry or detail)."""

    item_id: int | None = None
    declaration_id: int | None = None
    description: str | None = None
    commodity_code: str | None = None
    quantity: float | None = None

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        return {
            "item_id": _int(raw, "id"),
            "declaration_id": _int(raw, "declarationId"),
            "description": _str(raw, "description"),
            "commodity_code": _str(raw, "commodityCode"),
            "quantity": _float(raw, "quantity"),
        }


@dataclass(frozen=True)
class TransitDeclaration(Record):
    """A transit declaration list entry."""

    declaration_id: int | None = None
    status: str | None = None
    declaration_type: str | None = None

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        return {
            "declaration_id": _int(raw, "declarationId"),
            "status": _str(raw, "status"),
            "declaration_type": _str(raw, "declarationType"),
        }


@dataclass(frozen=True)
class TransitDeclarationDetail(TransitDeclaration):
    """The detail of a transit declaration, with the service's errors."""

    procedure_type: str | None = None
    total_weight: float | None = None
    errors: tuple[JSON, ...] = ()

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        errors = raw.get("errors")
        return {
            **super()._fields(raw),
            "procedure_type": _str(raw, "procedureType"),
            "total_weight": _float(raw, "totalWeight"),
            "errors": entries_of(errors),
        }


@dataclass(frozen=True)
class TemplateGroup(Record):
    """A declaration-template group."""

    group_id: int | None = None
    name: str | None = None
    code: str | None = None
    is_default: bool | None = None
    company_id: int | None = None

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        return {
            "group_id": _int(raw, "id"),
            "name": _str(raw, "name"),
            "code": _str(raw, "code"),
            "is_default": _bool(raw, "isDefault"),
            "company_id": _int(raw, "companyId"),
        }


@dataclass(frozen=True)
class Hawb(Record):
    """A house air waybill of an RTO shipment."""

    hawb_id: str | None = None
    shipment_id: str | None = None
    number: str | None = None
    package_count: int | None = None
    gross_weight_kg: float | None = None
    is_active: bool | None = None

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        return {
            "hawb_id": _str(raw, "hawbId"),
            "shipment_id": _str(raw, "shipmentId"),
            "number": _str(raw, "houseAirWaybillNumber"),
            "package_count": _int(raw, "packageCount"),
            "gross_weight_kg": _float(raw, "grossWeightKg"),
            "is_active": _bool(raw, "isActive"),
        }


@dataclass(frozen=True)
class Allocation(Record):
    """A declaration allocation of an RTO shipment."""

    allocation_id: str | None = None
    hawb_id: str | None = None
    source: str | None = None
    declaration_number: str | None = None
    is_active: bool | None = None

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        return {
            "allocation_id": _str(raw, "allocationId"),
            "hawb_id": _str(raw, "hawbId"),
            "source": _str(raw, "source"),
            "declaration_number": _str(raw, "customsDeclarationNumber"),
            "is_active": _bool(raw, "isActive"),
        }


@dataclass(frozen=True)
class Movement(Record):
    """An RTO movement, as returned by its creation."""

    movement_id: str | None = None
    shipment_id: str | None = None
    action: str | None = None
    status: str | None = None

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        return {
            "movement_id": _str(raw, "movementId"),
            "shipment_id": _str(raw, "shipmentId"),
            "action": _str(raw, "action"),
            "status": _str(raw, "status"),
        }


@dataclass(frozen=True)
class DepartureSubmission(Record):
    """``{declarationId, status}``: a submitted departure, or a transit party update."""

    declaration_id: int | None = None
    status: str | None = None

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        return {"declaration_id": _int(raw, "declarationId"), "status": _str(raw, "status")}


@dataclass(frozen=True)
class CancellationResult(Record):
    """``{declarationId, canceled}``: false when cancellation was only requested."""

    declaration_id: int | None = None
    canceled: bool | None = None

    @classmethod
    def _fields(cls, raw: JSONObject) -> dict[str, Any]:
        return {"declaration_id": _int(raw, "declarationId"), "canceled": _bool(raw, "canceled")}


@dataclass
class Exchange:
    """One attempt as it left and came back: the method and path, the SHA-256 of the exact
    body sent (None without one), the status of the answer (None: no answer) and the MRN the
    answer gave, if any; for an error status, the service's error body (with the key, were
    it echoed, replaced by ``***``). Never the key, never the body sent."""

    method: str
    path: str
    body_sha256: str | None
    status: int | None = None
    mrn: str | None = None
    errors: JSON = None
