"""Filters and orders shared by the ``result``-shaped lists."""

from __future__ import annotations

from datetime import date

from starlette.responses import Response

from customs_batch.sandbox import contract
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.web import Query, json_response, page_of


def created_between(
    records: list[JsonObject], first: date | None, last: date | None
) -> list[JsonObject]:
    """Records created on or after ``first`` and on or before ``last`` (UTC days)."""
    low = first.isoformat() if first else ""
    high = last.isoformat() if last else "9999"
    return [r for r in records if low <= r["createdAt"][:10] <= high]


def ordered(records: list[JsonObject], order: str | None) -> list[JsonObject]:
    """Records by creation time, newest first unless ``order`` is ``asc``.

    Records created in the same millisecond keep the order they were created in (the
    store's), and ``desc`` is exactly ``asc`` backwards: the later of two is the newer, so it
    comes first. (``sorted(..., reverse=True)`` would keep ties in creation order, listing
    the older first in both orders.)
    """
    oldest_first = sorted(records, key=lambda r: r["createdAt"])
    return oldest_first if order == "asc" else oldest_first[::-1]


def reference_matches(records: list[JsonObject], text: str | None) -> list[JsonObject]:
    """Records whose referenceNumber contains ``text`` (case-insensitive)."""
    if not text:
        return records
    needle = text.lower()
    return [r for r in records if needle in r.get("referenceNumber", "").lower()]


def order_choice(
    query: Query, name: str = contract.ORDER, default: str = contract.ORDER_DEFAULT
) -> str | None:
    """The ``asc``/``desc`` parameter ``name``."""
    return query.choice(name, ("asc", "desc"), default)


def result_page(query: Query, records: list[JsonObject], *, item_count: bool = True) -> Response:
    """The ``{page, itemsPerPage, itemCount, result}`` shape; itemCount counts every match."""
    page, size = query.page(), query.page_size(contract.ITEMS_PER_PAGE)
    body: JsonObject = {"page": page, "itemsPerPage": size}
    if item_count:
        body["itemCount"] = len(records)
    body["result"] = page_of(records, page, size)
    return json_response(body)
