"""Typed filters of the list endpoints, and the query parameters they become.

The parameter names are the choices of docs/api-choices.md; the API document gives only meanings.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import Enum, StrEnum

QueryParams = dict[str, str]


class Order(StrEnum):
    """Sort order by creation date (or by the item list's sort field)."""

    ASC = "asc"
    DESC = "desc"


def _put(params: QueryParams, name: str, value: str | int | date | Enum | None) -> None:
    if value is None:
        return
    if isinstance(value, Enum):
        params[name] = str(value.value)
    elif isinstance(value, date):
        params[name] = value.isoformat()
    else:
        params[name] = str(value)


@dataclass(frozen=True)
class ShipmentFilter:
    """Filters of ``GET /v1/shipments``."""

    status: str | None = None
    reference_number: str | None = None
    created_from: date | None = None
    created_to: date | None = None
    order: Order | None = None

    def to_params(self) -> QueryParams:
        """The query parameters for these filters; unset filters are left out."""
        params: QueryParams = {}
        _put(params, "status", self.status)
        _put(params, "referenceNumber", self.reference_number)
        _put(params, "createdFrom", self.created_from)
        _put(params, "createdTo", self.created_to)
        _put(params, "order", self.order)
        return params


@dataclass(frozen=True)
class DeclarationFilter(ShipmentFilter):
    """Filters of ``GET /v1/declarations``; ``type`` selects IMPORT or EXPORT."""

    type: str | None = None

    def to_params(self) -> QueryParams:
        """The query parameters for these filters; unset filters are left out."""
        params = super().to_params()
        _put(params, "type", self.type)
        return params


@dataclass(frozen=True)
class TransitFilter:
    """Filters of ``GET /v1/declarations/transit``; ``status`` is an upper-case filter value."""

    status: str | None = None
    order: Order | None = None
    start_date: date | None = None
    end_date: date | None = None

    def to_params(self) -> QueryParams:
        """The query parameters for these filters; unset filters are left out."""
        params: QueryParams = {}
        _put(params, "status", self.status)
        _put(params, "order", self.order)
        _put(params, "startDate", self.start_date)
        _put(params, "endDate", self.end_date)
        return params


@dataclass(frozen=True)
class ItemFilter:
    """Filters of ``GET /v1/declaration-items``."""

    search: str | None = None
    deleted: str | None = None  # normal, deleted, all
    archived: str | None = None  # unarchived, archived, all
    sort_by: str | None = None
    sort_order: Order | None = None

    def to_params(self) -> QueryParams:
        """The query parameters for these filters; unset filters are left out."""
        params: QueryParams = {}
        _put(params, "search", self.search)
        _put(params, "deleted", self.deleted)
        _put(params, "archived", self.archived)
        _put(params, "sortBy", self.sort_by)
        _put(params, "sortOrder", self.sort_order)
        return params


@dataclass(frozen=True)
class TemplateGroupFilter:
    """Filters of ``GET /v1/declaration-templates/groups``."""

    company_id: int | None = None

    def to_params(self) -> QueryParams:
        """The query parameters for these filters; unset filters are left out."""
        params: QueryParams = {}
        _put(params, "companyId", self.company_id)
        return params
