"""Import/export declarations and declaration items (read-only, integer IDs).

An export declaration already submitted to customs is ``cancellation_requested`` after a
DELETE (the ExportCancellation kind's endpoint, ``export_cancellations.py``) until
``processing_seconds`` have passed; then customs has decided: ``canceled``, or, when its
seed says ``cancellationAnswer: refused``, back to the status it had before. The status is
computed on read (``current``), as a transit declaration's is, from the time of the decision
fixed when the cancellation was requested: a restart with other options never takes it back.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.listing import (
    created_between,
    order_choice,
    ordered,
    reference_matches,
    result_page,
)
from customs_batch.sandbox.records import JsonObject, timestamp
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.web import Query, fail, json_response, page_of, public, total_pages

_LIST_FIELDS = ("declarationId", "shipmentId", "referenceNumber", "status", "lrn", "mrn", "type")
_IMPORT_DETAIL_EXTRA = ("declarationOffice", "createdAt", "updatedAt", "errors")
_EXPORT_DETAIL_EXTRA = ("exporter", "consignee", "items", "errors", "createdAt", "updatedAt")


def _entry(record: JsonObject) -> JsonObject:
    entry = {name: record.get(name, "") for name in _LIST_FIELDS}
    if record["type"] == "IMPORT":
        entry["declarationOffice"] = record.get("declarationOffice", "")
    entry["createdAt"], entry["updatedAt"] = record["createdAt"], record["updatedAt"]
    return entry


async def list_declarations(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/declarations: import and export, told apart by ``type``."""
    query = Query(request.query_params)
    kind = query.choice(contract.TYPE, contract.DECLARATION_TYPES)
    status = query.choice(contract.STATUS, contract.DECLARATION_STATUSES)
    records = [current(sandbox, r) for r in sandbox.store.values(Table.DECLARATIONS)]
    records = [
        r
        for r in records
        if (not kind or r["type"] == kind) and (not status or r["status"] == status)
    ]
    records = reference_matches(records, query.text(contract.REFERENCE_NUMBER))
    records = created_between(
        records, query.day(contract.CREATED_FROM), query.day(contract.CREATED_TO)
    )
    return result_page(query, [_entry(r) for r in ordered(records, order_choice(query))])


CANCELLATION_DECIDED_AT = "_cancellationDecidedAt"
"""The field of a declaration whose cancellation was requested that holds when customs
decides it (``Sandbox.decision_time`` of the request)."""


def current(sandbox: Sandbox, record: JsonObject) -> JsonObject:
    """The declaration with the status it has now: a cancellation request is decided once
    ``processing_seconds`` (those in force when it was made) have passed since it was made,
    and ``updatedAt`` is then the time customs decided it."""
    if (
        record["status"] != contract.CANCELLATION_REQUESTED
        or "_cancellationRequested" not in record
    ):
        return record
    if not sandbox.processed(record, "_cancellationRequested", CANCELLATION_DECIDED_AT):
        return record
    refused = record.get("cancellationAnswer") == contract.CANCELLATION_REFUSED
    status = record["_statusBeforeCancellation"] if refused else contract.CANCELED
    decided = sandbox.decided_at(record, "_cancellationRequested", CANCELLATION_DECIDED_AT)
    return {**record, "status": status, "updatedAt": timestamp(decided)}


def declaration(sandbox: Sandbox, request: Request) -> JsonObject:
    """The declaration of the request's ``id`` path parameter as it is now; 404 when there is
    none."""
    declaration_id = request.path_params["id"]
    record = sandbox.store.get(Table.DECLARATIONS, declaration_id)
    if record is None:
        fail(contract.NOT_FOUND, f"declaration {declaration_id} not found")
    return current(sandbox, record)


async def get_declaration(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/declarations/{id}: the export detail (an import shows its list fields)."""
    record = declaration(sandbox, request)
    extra = _EXPORT_DETAIL_EXTRA if record["type"] == "EXPORT" else _IMPORT_DETAIL_EXTRA
    detail = {name: record.get(name, "") for name in _LIST_FIELDS}
    detail.update({name: record[name] for name in extra if name in record})
    return json_response(detail)


_ITEM_SEARCH_FIELDS = ("description", "commodityCode", "originCountry", "currency")


async def list_items(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/declaration-items."""
    query = Query(request.query_params)
    page, size = query.page(), query.page_size(contract.ITEMS_PER_PAGE)
    deleted = query.choice(contract.DELETED, contract.DELETED_VALUES, contract.DELETED_DEFAULT)
    archived = query.choice(contract.ARCHIVED, contract.ARCHIVED_VALUES, contract.ARCHIVED_DEFAULT)
    sort_by = query.choice(contract.SORT_BY, contract.ITEM_SORT_FIELDS)
    sort_order = query.choice(contract.SORT_ORDER, ("asc", "desc"), contract.SORT_ORDER_DEFAULT)
    descending = sort_order == "desc"
    search = (query.text(contract.SEARCH) or "").lower()
    records = [
        item
        for item in sandbox.store.values(Table.ITEMS)
        if _flag(item["_deleted"], deleted, "deleted")
        and _flag(item["_archived"], archived, "archived")
        and (not search or any(search in str(item.get(f, "")).lower() for f in _ITEM_SEARCH_FIELDS))
    ]
    if sort_by:
        records.sort(key=lambda item: (str(type(item[sort_by])), item[sort_by]), reverse=descending)
    elif descending:
        records.reverse()
    total = len(records)
    meta = {
        "totalItems": total,
        "itemCount": len(page_of(records, page, size)),
        "itemsPerPage": size,
        "totalPages": total_pages(total, size),
        "currentPage": page,
    }
    return json_response({"items": page_of(records, page, size), "meta": meta})


def _flag(value: bool, wanted: str | None, word: str) -> bool:
    """Whether an item with flag ``value`` passes the filter (``word``, normal/un-, all)."""
    return wanted == "all" or value == (wanted == word)


async def get_item(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/declaration-items/{id}: the item with its declaration and documents."""
    item_id = request.path_params["id"]
    item = sandbox.store.get(Table.ITEMS, item_id)
    if item is None:
        fail(contract.NOT_FOUND, f"declaration item {item_id} not found")
    detail = public(item)
    stored = sandbox.store.get(Table.DECLARATIONS, item["declarationId"])
    declaration = current(sandbox, stored) if stored is not None else {}
    detail["Declaration"] = {
        "referenceNumber": declaration.get("referenceNumber", ""),
        "status": declaration.get("status", ""),
    }
    return json_response(detail)


C = contract
OPERATIONS = (
    op.ApiOperation(
        "GET",
        C.DECLARATIONS,
        list_declarations,
        "List import and export declarations",
        (
            op.PAGE,
            op.size(C.ITEMS_PER_PAGE),
            op.query(C.TYPE, op.enum(*C.DECLARATION_TYPES)),
            op.query(C.STATUS, op.enum(*C.DECLARATION_STATUSES)),
            op.query(C.REFERENCE_NUMBER, op.STR),
            *op.CREATED,
            op.ORDER,
        ),
    ),
    op.ApiOperation("GET", C.DECLARATION, get_declaration, "Poll an export declaration", (op.ID,)),
    op.ApiOperation(
        "GET",
        C.ITEMS,
        list_items,
        "List declaration items",
        (
            op.query(C.SEARCH, op.STR),
            op.PAGE,
            op.size(C.ITEMS_PER_PAGE),
            op.query(C.DELETED, op.enum(*C.DELETED_VALUES, default=C.DELETED_DEFAULT)),
            op.query(C.ARCHIVED, op.enum(*C.ARCHIVED_VALUES, default=C.ARCHIVED_DEFAULT)),
            op.query(C.SORT_BY, op.enum(*C.ITEM_SORT_FIELDS)),
            op.query(C.SORT_ORDER, op.enum("asc", "desc", default=C.SORT_ORDER_DEFAULT)),
        ),
    ),
    op.ApiOperation("GET", C.ITEM, get_item, "Get a declaration item", (op.ID,)),
)
"""The endpoints of this module (see ``operations.py``)."""
