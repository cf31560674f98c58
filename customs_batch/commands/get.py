"""``get`` as functions: what the service holds, one list or one record at a time.

A list is asked for with a query (one of the client's typed filters, or :class:`HawbQuery`
and :class:`AllocationQuery` for an RTO shipment's lists) and a :class:`Paging`; one record
with its :class:`RecordKind` and ID. The records come back as the service sent them
(``Record.raw``); how they are shown is the caller's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from customs_batch.client import (
    DeclarationFilter,
    ItemFilter,
    Page,
    Record,
    ShipmentFilter,
    TemplateGroupFilter,
    TransitFilter,
)
from customs_batch.commands.session import open_client
from customs_batch.environments import load_project
from customs_batch.errors import UsageError

if TYPE_CHECKING:
    from customs_batch.client import CustomsClient

DEFAULT_LIMIT = 20
"""Records per page when none is asked for."""


@dataclass(frozen=True)
class HawbQuery:
    """The HAWBs of the RTO shipment ``shipment_id`` (its shp_ ID); deactivated ones too
    with ``include_inactive``."""

    shipment_id: str
    include_inactive: bool = False


@dataclass(frozen=True)
class AllocationQuery:
    """The declaration allocations of the RTO shipment ``shipment_id``."""

    shipment_id: str


Query = (
    ShipmentFilter
    | DeclarationFilter
    | TransitFilter
    | ItemFilter
    | TemplateGroupFilter
    | HawbQuery
    | AllocationQuery
)
"""What a list asks for: the type names the list, its fields filter it."""


@dataclass(frozen=True)
class Paging:
    """Which records: page ``page`` (None: the first) of ``limit`` records, or with
    ``every`` all of them, page after page (``page`` must then be None)."""

    page: int | None = None
    limit: int = DEFAULT_LIMIT
    every: bool = False


@dataclass(frozen=True)
class ListOptions:
    """A list: ``query`` (which list, filtered), ``paging``, and ``environment``, a name
    from customs-batch.yaml (None: ``$CUSTOMS_BATCH_ENV``, then the configured default)."""

    query: Query
    paging: Paging = field(default_factory=Paging)
    environment: str | None = None


@dataclass(frozen=True)
class ListResult:
    """The records, as the service sent them, and the page they came on (None when every
    page was read)."""

    records: tuple[Record, ...]
    page: Page[Record] | None


class RecordKind(StrEnum):
    """The objects that are read one at a time, by their numeric ID."""

    DECLARATION = "declaration"
    TRANSIT = "transit"
    ITEM = "item"


@dataclass(frozen=True)
class RecordOptions:
    """One record: what it is, its ID, and the environment (as in :class:`ListOptions`)."""

    kind: RecordKind
    record_id: int
    environment: str | None = None


def list_records(options: ListOptions) -> ListResult:
    """One page of the list ``options.query`` names, or every page of it.

    A usage error when both a page and every page are asked for; the service's errors as
    :class:`customs_batch.errors.ServiceError`.
    """
    paging = options.paging
    if paging.every and paging.page is not None:
        raise UsageError("--all and --page exclude each other", hint="use one of them")
    environment = load_project().select(options.environment)
    with open_client(environment) as client:
        one_page, every = _list(client, options.query)
        if paging.every:
            return ListResult(tuple(every()), None)
        page = one_page(paging.page or 1, paging.limit)
        return ListResult(page.records, page)


def read_record(options: RecordOptions) -> Record:
    """The record ``options`` names, as the service holds it (a
    :class:`customs_batch.client.NotFoundError` when it has none)."""
    environment = load_project().select(options.environment)
    with open_client(environment) as client:
        if options.kind is RecordKind.DECLARATION:
            return client.get_declaration(options.record_id)
        if options.kind is RecordKind.TRANSIT:
            return client.get_transit(options.record_id)
        return client.get_item(options.record_id)


OnePage = Callable[[int, int], Page[Any]]
EveryPage = Callable[[], Iterator[Any]]


def _list(client: CustomsClient, query: Query) -> tuple[OnePage, EveryPage]:
    """The client's two calls for ``query``'s list: one page (number, size), every page."""
    match query:
        # A DeclarationFilter is a ShipmentFilter too: it comes first.
        case DeclarationFilter():
            return (
                lambda p, n: client.list_declarations(query, page=p, page_size=n),
                lambda: client.iter_declarations(query),
            )
        case ShipmentFilter():
            return (
                lambda p, n: client.list_shipments(query, page=p, page_size=n),
                lambda: client.iter_shipments(query),
            )
        case TransitFilter():
            return (
                lambda p, n: client.list_transit(query, page=p, page_size=n),
                lambda: client.iter_transit(query),
            )
        case ItemFilter():
            return (
                lambda p, n: client.list_items(query, page=p, page_size=n),
                lambda: client.iter_items(query),
            )
        case TemplateGroupFilter():
            return (
                lambda p, n: client.list_template_groups(query, page=p, page_size=n),
                lambda: client.iter_template_groups(query),
            )
        case HawbQuery(shipment_id, include_inactive):
            return (
                lambda p, n: client.list_hawbs(
                    shipment_id, include_inactive=include_inactive, page=p, page_size=n
                ),
                lambda: client.iter_hawbs(shipment_id, include_inactive=include_inactive),
            )
        case AllocationQuery(shipment_id):
            return (
                lambda p, n: client.list_allocations(shipment_id, page=p, page_size=n),
                lambda: client.iter_allocations(shipment_id),
            )
