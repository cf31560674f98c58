from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from customs_batch.client import Page, PageFamily, UnexpectedResponseError
from customs_batch.client._pagination import iterate_pages, parse_page


def _ident(row: Mapping[str, Any]) -> int:
    return int(row["n"])


def _rows(start: int, count: int) -> list[dict[str, int]]:
    return [{"n": n} for n in range(start, start + count)]


@pytest.mark.parametrize(
    ("family", "body"),
    [
        (
            PageFamily.DATA,
            {
                "data": _rows(0, 2),
                "pagination": {"page": 1, "limit": 2, "total": 5, "totalPages": 3},
            },
        ),
        (
            PageFamily.ITEMS,
            {
                "items": _rows(0, 2),
                "meta": {
                    "totalItems": 5,
                    "itemCount": 2,
                    "itemsPerPage": 2,
                    "totalPages": 3,
                    "currentPage": 1,
                },
            },
        ),
        (PageFamily.RESULT, {"page": 1, "itemsPerPage": 2, "itemCount": 5, "result": _rows(0, 2)}),
        (PageFamily.RESULT_PLAIN, {"page": 1, "itemsPerPage": 2, "result": _rows(0, 2)}),
    ],
)
def test_each_family_is_read(family: PageFamily, body: dict[str, Any]) -> None:
    page = parse_page(family, body, _ident, page=1, page_size=2)
    assert page.records == (0, 1)
    assert page.page == 1
    assert not page.is_last()


def test_the_page_size_parameter_follows_design_section_7() -> None:
    assert PageFamily.DATA.page_size_param == "limit"
    assert {f.page_size_param for f in PageFamily if f is not PageFamily.DATA} == {"itemsPerPage"}


def test_an_item_count_equal_to_the_page_length_is_not_taken_as_the_total() -> None:
    body = {"page": 1, "itemsPerPage": 2, "itemCount": 2, "result": _rows(0, 2)}
    page = parse_page(PageFamily.RESULT, body, _ident, page=1, page_size=2)
    assert page.total_items is None
    assert not page.is_last()


def test_a_short_page_is_the_last() -> None:
    assert Page((1,), 3, 2, None, None).is_last()
    assert Page((), 1, 2, None, None).is_last()


def test_iterate_pages_follows_every_page_and_stops() -> None:
    asked: list[tuple[int, int]] = []

    def fetch(page: int, size: int) -> Page[int]:
        asked.append((page, size))
        rows = list(range((page - 1) * size, min(page * size, 250)))
        return Page(tuple(rows), page, size, 250, 3)

    assert list(iterate_pages(fetch)) == list(range(250))
    assert asked == [(1, 100), (2, 100), (3, 100)]


def test_a_body_without_the_array_is_an_unexpected_response() -> None:
    with pytest.raises(UnexpectedResponseError, match="'result'"):
        parse_page(PageFamily.RESULT, {"data": []}, _ident, page=1, page_size=2)
    with pytest.raises(UnexpectedResponseError):
        parse_page(PageFamily.DATA, [1, 2], _ident, page=1, page_size=2)
