"""Turn a seed into the store's wire records (applied once, to an empty store)."""

from __future__ import annotations

from typing import Any

from customs_batch.sandbox import contract
from customs_batch.sandbox.auth import key_digest
from customs_batch.sandbox.records import JsonObject, parse_timestamp, timestamp
from customs_batch.sandbox.seed import Seed
from customs_batch.sandbox.seed_file_schema import ITEM_FIELDS
from customs_batch.sandbox.store import RecordId, Store, Table

_DEFAULT_PROCESS_TYPE = "IMPORT_HANDLING"

# What a GET answers for a field a seed leaves out, of the type the API document gives it
# (a seed's transit declaration needs only its ID and status): never null, which the
# document allows only where it says "or null".
_TRANSIT_DEFAULTS: dict[str, object] = {
    "procedureType": "",
    "declarationType": "",
    "totalWeight": 0,
    "weightUnit": "KGM",  # what a submitted departure is held in
    "departureOffice": "",
    "destinationOffice": "",
    "errors": [],
}
_EXPORT_ITEM_DEFAULTS: dict[str, object] = {
    "hsCode": "",
    "quantity": 0,
    "grossMass": 0,
    "netMass": 0,
    "value": 0,
    "currency": "",
    "originCountry": "",
}


def populate(store: Store, seed: Seed, now: float) -> None:
    """Fill an empty ``store`` from ``seed``; records without createdAt get ``now``."""
    stamp = timestamp(now)
    tables: dict[Table, dict[RecordId, JsonObject]] = {table: {} for table in Table}
    for key in seed.api_keys:
        # Only a digest of each key: the emulator's database never holds a key.
        digest = key_digest(key.key)
        tables[Table.API_KEYS][digest] = {
            "key": digest,
            "companyId": key.company_id,
            "active": key.active,
        }
    for shipment in seed.shipments:
        _add_shipment(tables, shipment, _created(shipment, stamp))
    for declaration in seed.declarations:
        _add_declaration(tables, declaration, _created(declaration, stamp))
    for item in seed.declaration_items:
        declaration_id = item["declarationId"]
        tables[Table.ITEMS][item["id"]] = _item(item, declaration_id)
        # Listed on its own, it is still one of its declaration's items: an export
        # declaration's detail (the one that shows items) lists it, as GET
        # /v1/declaration-items/{id} names that declaration.
        owner = tables[Table.DECLARATIONS].get(declaration_id)
        if owner is not None and owner["type"] == "EXPORT" and not item.get("deleted", False):
            nested = {key: item[key] for key in ITEM_FIELDS if key in item}
            if "commodityCode" in item:
                nested["hsCode"] = item["commodityCode"]
            owner["items"] = [*owner["items"], {**_EXPORT_ITEM_DEFAULTS, **nested}]
    for group in seed.template_groups:
        created = _created(group, stamp)
        tables[Table.TEMPLATE_GROUPS][group["id"]] = {
            "isDefault": False,
            "DeclarationTemplates": [],
            **group,
            "createdAt": created,
            "updatedAt": created,
        }
    for transit in seed.transit_declarations:
        created = _created(transit, stamp)
        tables[Table.TRANSIT][transit["declarationId"]] = {
            **_TRANSIT_DEFAULTS,
            **transit,
            "createdAt": created,
            "_created": parse_timestamp(created),
        }
    for table, records in tables.items():
        if records:
            store.put_many(table, records)


def _created(seed: Any, stamp: str) -> str:
    """The seed's createdAt as the service writes a time, with milliseconds
    (``...T08:00:00Z`` is ``...T08:00:00.000Z``), so answers and the order of lists agree
    with the records the emulator creates; ``stamp`` without one."""
    written = seed.get("createdAt")
    return stamp if written is None else timestamp(parse_timestamp(written))


def _add_shipment(tables: dict[Table, dict[RecordId, JsonObject]], seed: Any, created: str) -> None:
    public_id = seed["publicId"]
    tables[Table.SHIPMENTS][seed["id"]] = {
        "shipmentId": seed["id"],
        "referenceNumber": seed["referenceNumber"],
        "status": seed["status"],
        "createdAt": created,
        "updatedAt": created,
    }
    tables[Table.RTO_SHIPMENTS][public_id] = {
        "publicId": public_id,
        "shipmentId": seed["id"],
        "processType": seed.get("processType", _DEFAULT_PROCESS_TYPE),
        "parties": list(seed.get("parties", [])),
        "declarations": list(seed.get("declarations", [])),
    }
    for hawb in seed.get("hawbs", []):
        stock = {"packageCount": hawb["packageCount"], "grossWeightKg": hawb["grossWeightKg"]}
        tables[Table.HAWBS][hawb["hawbId"]] = {
            "hawbId": hawb["hawbId"],
            "shipmentId": public_id,
            "houseAirWaybillNumber": hawb["houseAirWaybillNumber"],
            "packageCount": hawb["packageCount"],
            "grossWeightKg": hawb["grossWeightKg"],
            "status": contract.HAWB_STATUS_NEW,
            "isActive": hawb.get("isActive", True),
            "reportedStock": dict(stock),
            "remainingStock": dict(stock),
            "createdAt": created,
            "updatedAt": created,
        }
    for allocation in seed.get("allocations", []):
        tables[Table.ALLOCATIONS][allocation["allocationId"]] = {
            "allocationId": allocation["allocationId"],
            "shipmentId": public_id,
            "declarationId": None,
            "declarationProcedureType": "",
            "customsDocumentType": "",
            "customsDeclarationType": "",
            "customsDeclarationNumber": "",
            "isActive": True,
            **allocation,
            "createdAt": created,
            "updatedAt": created,
        }


def _add_declaration(
    tables: dict[Table, dict[RecordId, JsonObject]], seed: Any, created: str
) -> None:
    declaration_id = seed["declarationId"]
    items = seed.get("items", [])
    record = {"lrn": "", "mrn": "", "errors": [], **seed, "items": items}
    record.update(createdAt=created, updatedAt=created)
    if record["type"] == "EXPORT":
        record["exporter"] = {"name": "", "eoriNo": "", **record.get("exporter", {})}
        record["consignee"] = {"name": "", **record.get("consignee", {})}
        record["items"] = [{**_EXPORT_ITEM_DEFAULTS, **item} for item in items]
    tables[Table.DECLARATIONS][declaration_id] = record
    for item in items:
        tables[Table.ITEMS][item["id"]] = _item(item, declaration_id)


def _item(seed: Any, declaration_id: int) -> JsonObject:
    """A declaration item record; ``_deleted``/``_archived`` drive the list filters."""
    return {
        "id": seed["id"],
        "declarationId": declaration_id,
        "description": seed["description"],
        "commodityCode": seed.get("commodityCode", seed.get("hsCode", "")),
        "quantity": seed.get("quantity", 0),
        "grossMass": seed.get("grossMass", 0),
        "netMass": seed.get("netMass", 0),
        "value": seed.get("value", 0),
        "currency": seed.get("currency", ""),
        "originCountry": seed.get("originCountry", ""),
        "SupportingDocuments": list(seed.get("SupportingDocuments", [])),
        "_deleted": seed.get("deleted", False),
        "_archived": seed.get("archived", False),
    }
