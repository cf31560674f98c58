"""Shipments (read-only): the shipment list (integer IDs) and, of an RTO shipment (``shp_``
public IDs), its HAWBs and allocations.

No kind writes here; the kinds that write under a shipment (``movements.py``,
``hawb_deactivations.py``) find it with ``rto_shipment``.
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
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.strictjson import clip
from customs_batch.sandbox.web import Query, fail, json_response, page_of, total_pages


def rto_shipment(sandbox: Sandbox, request: Request) -> JsonObject:
    """The RTO shipment of the request's ``id`` path parameter; 404 when there is none,
    quoting a long ID by its start and length (a 10,000-character ID was echoed whole)."""
    public_id = request.path_params["id"]
    shipment = sandbox.store.get(Table.RTO_SHIPMENTS, public_id)
    if shipment is None:
        fail(contract.NOT_FOUND, f"shipment {clip(public_id)} not found")
    return shipment


async def list_shipments(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/shipments."""
    query = Query(request.query_params)
    status = query.choice(contract.STATUS, contract.SHIPMENT_STATUSES)
    records = sandbox.store.values(Table.SHIPMENTS)
    if status:
        records = [r for r in records if r["status"] == status]
    records = reference_matches(records, query.text(contract.REFERENCE_NUMBER))
    records = created_between(
        records, query.day(contract.CREATED_FROM), query.day(contract.CREATED_TO)
    )
    return result_page(query, ordered(records, order_choice(query)))


async def list_hawbs(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/shipments/{id}/hawbs."""
    query = Query(request.query_params)
    page, size = query.page(), query.page_size(contract.LIMIT)
    include_inactive = query.boolean(contract.INCLUDE_INACTIVE, contract.INCLUDE_INACTIVE_DEFAULT)
    public_id = rto_shipment(sandbox, request)["publicId"]
    records = [
        hawb
        for hawb in sandbox.store.values(Table.HAWBS)
        if hawb["shipmentId"] == public_id and (include_inactive or hawb["isActive"])
    ]
    return _data_page(records, page, size)


async def list_allocations(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/shipments/{id}/allocations."""
    query = Query(request.query_params)
    page, size = query.page(), query.page_size(contract.LIMIT)
    public_id = rto_shipment(sandbox, request)["publicId"]
    records = [a for a in sandbox.store.values(Table.ALLOCATIONS) if a["shipmentId"] == public_id]
    return _data_page(records, page, size)


def _data_page(records: list[JsonObject], page: int, size: int) -> Response:
    total = len(records)
    pagination = {
        "page": page,
        "limit": size,
        "total": total,
        "totalPages": total_pages(total, size),
    }
    return json_response({"data": page_of(records, page, size), "pagination": pagination})


C = contract
OPERATIONS = (
    op.ApiOperation(
        "GET",
        C.SHIPMENTS,
        list_shipments,
        "List shipments",
        (
            op.PAGE,
            op.size(C.ITEMS_PER_PAGE),
            op.query(C.STATUS, op.enum(*C.SHIPMENT_STATUSES)),
            op.query(C.REFERENCE_NUMBER, op.STR),
            *op.CREATED,
            op.ORDER,
        ),
    ),
    op.ApiOperation(
        "GET",
        C.ALLOCATIONS,
        list_allocations,
        "List allocations of a shipment",
        (op.SHIPMENT, op.PAGE, op.size(C.LIMIT)),
    ),
    op.ApiOperation(
        "GET",
        C.HAWBS,
        list_hawbs,
        "List HAWBs of a shipment",
        (
            op.SHIPMENT,
            op.PAGE,
            op.size(C.LIMIT),
            op.query(
                C.INCLUDE_INACTIVE, {"type": "boolean", "default": C.INCLUDE_INACTIVE_DEFAULT}
            ),
        ),
    ),
)
"""The endpoints of this module (see ``operations.py``)."""
