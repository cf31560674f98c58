"""``CustomsClient``: one method per endpoint of the API document.

List endpoints come in pairs: ``list_x(..., page, page_size)`` returns one ``Page`` and
``iter_x(...)`` yields every record of every page (100 per request). Write bodies are the
API's own request objects (a manifest's ``spec``, by the API's field names, validated by
the schemas before it gets here).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TypeVar

from customs_batch.client._endpoints import Endpoint, EndpointMap
from customs_batch.client._errors import NotFoundError, UnexpectedResponseError
from customs_batch.client._filters import (
    DeclarationFilter,
    ItemFilter,
    ShipmentFilter,
    TemplateGroupFilter,
    TransitFilter,
)
from customs_batch.client._models import (
    Allocation,
    CancellationResult,
    DeclarationItem,
    DeclarationListEntry,
    DepartureSubmission,
    ExportDeclaration,
    Hawb,
    Movement,
    Record,
    Shipment,
    TemplateGroup,
    TransitDeclaration,
    TransitDeclarationDetail,
)
from customs_batch.client._pagination import (
    MAX_PAGE,
    MAX_PAGE_SIZE,
    Page,
    PageFamily,
    iterate_pages,
    parse_page,
)
from customs_batch.client._transport import Sender
from customs_batch.errors import UsageError
from customs_batch.jsontypes import JSON

R = TypeVar("R", bound=Record)
DEFAULT_PAGE_SIZE = 20


def _record(kind: type[R], body: object, operation: str) -> R:
    if not isinstance(body, dict):
        raise UnexpectedResponseError(f"the answer to {operation} is not a JSON object")
    return kind.from_json(body)


def _check_page(page: int, page_size: int) -> None:
    if not 1 <= page <= MAX_PAGE or not 1 <= page_size <= MAX_PAGE_SIZE:
        raise UsageError(
            f"page {page} with page size {page_size} is out of bounds",
            hint=f"pages are 1 to {MAX_PAGE}; a page holds 1 to {MAX_PAGE_SIZE} records",
        )


class CustomsClient:
    """The Customs Declaration Service, one method per endpoint.

    Thread-safe: worker threads may share one client, and so its rate limiter.
    """

    def __init__(self, sender: Sender, endpoints: EndpointMap | None = None) -> None:
        self.sender = sender
        self.endpoints = endpoints or EndpointMap()
        self._readings: dict[tuple[str, tuple[tuple[str, str], ...]], JSON | NotFoundError] | None
        self._readings = None
        self._readings_lock = threading.Lock()

    def close(self) -> None:
        """Release the connections."""
        self.sender.close()

    def __enter__(self) -> CustomsClient:
        return self

    @contextmanager
    def checking_before_each_send(self, check: Callable[[], None]) -> Iterator[None]:
        """Call ``check`` right before each request leaves (after any rate-limit wait and
        any backoff before a retry); an exception it raises keeps that request unsent."""
        previous = self.sender.before_send
        self.sender.before_send = check
        try:
            yield
        finally:
            self.sender.before_send = previous

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def reading_once(self) -> Iterator[None]:
        """Within the block, each GET of one URL and query is sent once: every later call
        gets the first answer (a 404 too), so that what reads one object several times
        (``refresh``: a departure and the party updates of it) holds one reading of it,
        not readings a moment apart that may differ. A failed read is not kept."""
        with self._readings_lock:
            previous, self._readings = self._readings, {}
        try:
            yield
        finally:
            with self._readings_lock:
                self._readings = previous

    # -- plumbing ------------------------------------------------------------------------

    def call(
        self,
        name: str | Endpoint,
        *,
        path: Mapping[str, str | int] | None = None,
        params: Mapping[str, str] | None = None,
        body: Mapping[str, object] | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        """Call the endpoint ``name`` of the endpoint map, or the ``Endpoint`` given (a kind's
        module calling an endpoint of its own: ``Endpoint.parse("POST /v1/x")``); return the
        response's JSON, through the same limits, retries and errors as every other call."""
        endpoint = name if isinstance(name, Endpoint) else self.endpoints[name]
        url = endpoint.url_path(**(path or {}))
        readings = self._readings
        if readings is None or endpoint.method != "GET":
            return self.sender.send(
                endpoint.method, url, params=params, body=body, idempotency_key=idempotency_key
            )
        key = (url, tuple(sorted((params or {}).items())))
        with self._readings_lock:
            known, read = key in readings, readings.get(key)
        if not known:
            try:
                read = self.sender.send(endpoint.method, url, params=params)
            except NotFoundError as exc:
                read = exc
            with self._readings_lock:
                readings[key] = read
        if isinstance(read, NotFoundError):
            raise read
        # A copy: what one caller does with its answer is not another's reading.
        return copy.deepcopy(read)

    def _one(
        self,
        kind: type[R],
        name: str,
        *,
        path: Mapping[str, str | int] | None = None,
        body: Mapping[str, object] | None = None,
        idempotency_key: str | None = None,
    ) -> R:
        answer = self.call(name, path=path, body=body, idempotency_key=idempotency_key)
        return _record(kind, answer, str(self.endpoints[name]))

    def _page(
        self,
        kind: type[R],
        name: str,
        family: PageFamily,
        params: Mapping[str, str],
        page: int,
        page_size: int,
        path: Mapping[str, str | int] | None = None,
    ) -> Page[R]:
        _check_page(page, page_size)
        query = {**params, "page": str(page), family.page_size_param: str(page_size)}
        body = self.call(name, path=path, params=query)
        return parse_page(family, body, kind.from_json, page=page, page_size=page_size)

    @staticmethod
    def _all(fetch: Callable[[int, int], Page[R]]) -> Iterator[R]:
        return iterate_pages(fetch, page_size=MAX_PAGE_SIZE)

    # -- shipments and RTO -----------------------------------------------------------------

    def list_shipments(
        self,
        filters: ShipmentFilter | None = None,
        *,
        page: int = 1,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Page[Shipment]:
        """One page of ``GET /v1/shipments``."""
        params = (filters or ShipmentFilter()).to_params()
        return self._page(Shipment, "list_shipments", PageFamily.RESULT, params, page, page_size)

    def iter_shipments(self, filters: ShipmentFilter | None = None) -> Iterator[Shipment]:
        """Every shipment matching ``filters``."""
        return self._all(lambda p, n: self.list_shipments(filters, page=p, page_size=n))

    def list_hawbs(
        self,
        shipment_id: str,
        *,
        include_inactive: bool = False,
        page: int = 1,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Page[Hawb]:
        """One page of a shipment's HAWBs; deactivated ones only with ``include_inactive``."""
        params = {"includeInactive": "true"} if include_inactive else {}
        path = {"shipment_id": shipment_id}
        return self._page(Hawb, "list_hawbs", PageFamily.DATA, params, page, page_size, path)

    def iter_hawbs(self, shipment_id: str, *, include_inactive: bool = False) -> Iterator[Hawb]:
        """Every HAWB of a shipment."""
        return self._all(
            lambda p, n: self.list_hawbs(
                shipment_id, include_inactive=include_inactive, page=p, page_size=n
            )
        )

    def deactivate_hawb(self, shipment_id: str, hawb_id: str) -> Hawb:
        """``DELETE`` a HAWB; the answer is the HAWB with isActive false."""
        path = {"shipment_id": shipment_id, "hawb_id": hawb_id}
        return self._one(Hawb, "deactivate_hawb", path=path)

    def list_allocations(
        self, shipment_id: str, *, page: int = 1, page_size: int = DEFAULT_PAGE_SIZE
    ) -> Page[Allocation]:
        """One page of a shipment's declaration allocations."""
        path = {"shipment_id": shipment_id}
        return self._page(
            Allocation, "list_allocations", PageFamily.DATA, {}, page, page_size, path
        )

    def iter_allocations(self, shipment_id: str) -> Iterator[Allocation]:
        """Every declaration allocation of a shipment."""
        return self._all(lambda p, n: self.list_allocations(shipment_id, page=p, page_size=n))

    def create_movement(
        self, shipment_id: str, body: Mapping[str, object], *, idempotency_key: str
    ) -> Movement:
        """Create an RTO movement; the key makes a resend replay instead of duplicate."""
        return self._one(
            Movement,
            "create_movement",
            path={"shipment_id": shipment_id},
            body=body,
            idempotency_key=idempotency_key,
        )

    # -- import and export declarations ----------------------------------------------------

    def list_declarations(
        self,
        filters: DeclarationFilter | None = None,
        *,
        page: int = 1,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Page[DeclarationListEntry]:
        """One page of ``GET /v1/declarations`` (import and export)."""
        params = (filters or DeclarationFilter()).to_params()
        return self._page(
            DeclarationListEntry, "list_declarations", PageFamily.RESULT, params, page, page_size
        )

    def iter_declarations(
        self, filters: DeclarationFilter | None = None
    ) -> Iterator[DeclarationListEntry]:
        """Every import and export declaration matching ``filters``."""
        return self._all(lambda p, n: self.list_declarations(filters, page=p, page_size=n))

    def get_declaration(self, declaration_id: int) -> ExportDeclaration:
        """Poll an export declaration."""
        path = {"declaration_id": declaration_id}
        return self._one(ExportDeclaration, "get_declaration", path=path)

    def cancel_declaration(self, declaration_id: int) -> CancellationResult:
        """Cancel an export declaration (``canceled`` false: cancellation requested)."""
        path = {"declaration_id": declaration_id}
        return self._one(CancellationResult, "cancel_declaration", path=path)

    # -- transit declarations --------------------------------------------------------------

    def list_transit(
        self,
        filters: TransitFilter | None = None,
        *,
        page: int = 1,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Page[TransitDeclaration]:
        """One page of ``GET /v1/declarations/transit``."""
        params = (filters or TransitFilter()).to_params()
        return self._page(
            TransitDeclaration, "list_transit", PageFamily.RESULT, params, page, page_size
        )

    def iter_transit(self, filters: TransitFilter | None = None) -> Iterator[TransitDeclaration]:
        """Every transit declaration matching ``filters``."""
        return self._all(lambda p, n: self.list_transit(filters, page=p, page_size=n))

    def get_transit(self, declaration_id: int) -> TransitDeclarationDetail:
        """Poll a transit declaration."""
        path = {"declaration_id": declaration_id}
        return self._one(TransitDeclarationDetail, "get_transit", path=path)

    def submit_departure(self, body: Mapping[str, object]) -> DepartureSubmission:
        """Submit a departure declaration. Never retried: the API has no idempotency for it."""
        return self._one(DepartureSubmission, "submit_departure", body=body)

    def update_departure_parties(
        self, declaration_id: int, body: Mapping[str, object]
    ) -> DepartureSubmission:
        """PATCH the parties of a departure declaration."""
        path = {"declaration_id": declaration_id}
        return self._one(DepartureSubmission, "update_departure_parties", path=path, body=body)

    def update_arrival_parties(
        self, declaration_id: int, body: Mapping[str, object]
    ) -> DepartureSubmission:
        """PATCH the parties of an arrival declaration."""
        path = {"declaration_id": declaration_id}
        return self._one(DepartureSubmission, "update_arrival_parties", path=path, body=body)

    # -- declaration items -----------------------------------------------------------------

    def list_items(
        self,
        filters: ItemFilter | None = None,
        *,
        page: int = 1,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Page[DeclarationItem]:
        """One page of ``GET /v1/declaration-items``."""
        params = (filters or ItemFilter()).to_params()
        return self._page(DeclarationItem, "list_items", PageFamily.ITEMS, params, page, page_size)

    def iter_items(self, filters: ItemFilter | None = None) -> Iterator[DeclarationItem]:
        """Every declaration item matching ``filters``."""
        return self._all(lambda p, n: self.list_items(filters, page=p, page_size=n))

    def get_item(self, item_id: int) -> DeclarationItem:
        """One declaration item, with its declaration and supporting documents."""
        return self._one(DeclarationItem, "get_item", path={"item_id": item_id})

    # -- template groups -------------------------------------------------------------------

    def list_template_groups(
        self,
        filters: TemplateGroupFilter | None = None,
        *,
        page: int = 1,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> Page[TemplateGroup]:
        """One page of ``GET /v1/declaration-templates/groups``."""
        params = (filters or TemplateGroupFilter()).to_params()
        return self._page(
            TemplateGroup,
            "list_template_groups",
            PageFamily.RESULT_PLAIN,
            params,
            page,
            page_size,
        )

    def iter_template_groups(
        self, filters: TemplateGroupFilter | None = None
    ) -> Iterator[TemplateGroup]:
        """Every template group matching ``filters``."""
        return self._all(lambda p, n: self.list_template_groups(filters, page=p, page_size=n))

    def create_template_group(self, body: Mapping[str, object]) -> TemplateGroup:
        """Create a template group. Not retried: the API has no idempotency for it."""
        return self._one(TemplateGroup, "create_template_group", body=body)

    def update_template_group(self, group_id: int, body: Mapping[str, object]) -> TemplateGroup:
        """PATCH a template group's name, code, isDefault or templates."""
        path = {"group_id": group_id}
        return self._one(TemplateGroup, "update_template_group", path=path, body=body)
