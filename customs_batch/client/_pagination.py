"""The four pagination families of the API, and an iterator that follows every page.

============  =========================================================  =================
family        shape                                                      page-size param
============  =========================================================  =================
DATA          ``{data, pagination: {page, limit, total, totalPages}}``   ``limit``
              (HAWBs, allocations)
RESULT        ``{page, itemsPerPage, itemCount, result}`` (shipments,    ``itemsPerPage``
              import/export, transit)
RESULT_PLAIN  ``{page, itemsPerPage, result}`` (template groups)         ``itemsPerPage``
ITEMS         ``{items, meta: {totalItems, itemCount, itemsPerPage,      ``itemsPerPage``
              totalPages, currentPage}}`` (declaration items)
============  =========================================================  =================
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

from customs_batch.client._errors import UnexpectedResponseError
from customs_batch.jsontypes import JSON, JSONObject

MAX_PAGE_SIZE = 100
MAX_PAGE = 2**63 - 1
"""The largest page number: the API's pagination numbers are integers, which the service
reads as 64-bit ones (a larger page is answered 400)."""
T = TypeVar("T")


class PageFamily(Enum):
    """The response shape of a list endpoint."""

    DATA = "data"
    RESULT = "result"
    RESULT_PLAIN = "result-plain"
    ITEMS = "items"

    @property
    def page_size_param(self) -> str:
        """The query parameter that sets the page size (docs/api-choices.md)."""
        return "limit" if self is PageFamily.DATA else "itemsPerPage"


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list: its records and whatever the service said about the rest.

    ``total_items`` and ``total_pages`` are None when the family does not say.
    """

    records: tuple[T, ...]
    page: int
    page_size: int
    total_items: int | None
    total_pages: int | None

    def is_last(self) -> bool:
        """Whether no further page can hold records."""
        if not self.records or len(self.records) < self.page_size:
            return True
        if self.total_pages is not None:
            return self.page >= self.total_pages
        if self.total_items is not None:
            return self.page * self.page_size >= self.total_items
        return False


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _object(value: object) -> JSONObject:
    return value if isinstance(value, dict) else {}


def _objects(value: object, where: str) -> list[JSONObject]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise UnexpectedResponseError(
            f"the list response has no array of objects at {where!r}",
            hint="the service may differ from the API document; check the environment's "
            "base_url and endpoint overrides",
        )
    return value


def parse_page(
    family: PageFamily,
    body: JSON,
    parse: Callable[[JSONObject], T],
    *,
    page: int,
    page_size: int,
) -> Page[T]:
    """Read one page of ``family`` from a response body; ``parse`` builds each record.

    ``page`` and ``page_size`` are what was asked for; the body's own numbers win where
    it has them.
    """
    if not isinstance(body, dict):
        raise UnexpectedResponseError("the list response is not a JSON object")
    total_items: int | None = None
    total_pages: int | None = None
    if family is PageFamily.DATA:
        rows = _objects(body.get("data"), "data")
        meta = _object(body.get("pagination"))
        page = _int(meta.get("page")) or page
        page_size = _int(meta.get("limit")) or page_size
        total_items, total_pages = _int(meta.get("total")), _int(meta.get("totalPages"))
    elif family is PageFamily.ITEMS:
        rows = _objects(body.get("items"), "items")
        meta = _object(body.get("meta"))
        page = _int(meta.get("currentPage")) or page
        page_size = _int(meta.get("itemsPerPage")) or page_size
        total_items, total_pages = _int(meta.get("totalItems")), _int(meta.get("totalPages"))
    else:
        rows = _objects(body.get("result"), "result")
        page = _int(body.get("page")) or page
        page_size = _int(body.get("itemsPerPage")) or page_size
        count = _int(body.get("itemCount"))
        # itemCount may be the page's count or the total; only a count above the page's
        # length can be the total, so only then is it trusted to end the walk early.
        if family is PageFamily.RESULT and count is not None and count > len(rows):
            total_items = count
    return Page(tuple(parse(row) for row in rows), page, page_size, total_items, total_pages)


def iterate_pages(
    fetch: Callable[[int, int], Page[T]], *, page_size: int = MAX_PAGE_SIZE, start: int = 1
) -> Iterator[T]:
    """Every record of a list, fetching page after page with ``fetch(page, page_size)``."""
    page_number = start
    while True:
        page = fetch(page_number, page_size)
        yield from page.records
        if page.is_last():
            return
        page_number = page.page + 1
