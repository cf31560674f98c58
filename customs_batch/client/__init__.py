"""The httpx client of the Customs Declaration Service: endpoint map, auth, pagination, errors.

Build one ``Sender`` (base URL, key, rate limiter, retry policy) and one ``CustomsClient``
per run; share them between worker threads. See ``_errors`` for the exception tree.
"""

from typing import TYPE_CHECKING, Any

from customs_batch.client._endpoints import DEFAULT_ENDPOINTS, Endpoint, EndpointMap
from customs_batch.client._errors import (
    AuthenticationError,
    ConnectionFailedError,
    NotFoundError,
    NotSentError,
    PermissionDeniedError,
    RateLimitedError,
    RequestRefusedError,
    ServerError,
    ServiceResponseError,
    TlsFailedError,
    UnexpectedResponseError,
)
from customs_batch.client._filters import (
    DeclarationFilter,
    ItemFilter,
    Order,
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
    Exchange,
    ExportDeclaration,
    Hawb,
    Movement,
    Record,
    Shipment,
    TemplateGroup,
    TransitDeclaration,
    TransitDeclarationDetail,
)
from customs_batch.client._pagination import MAX_PAGE, MAX_PAGE_SIZE, Page, PageFamily
from customs_batch.client._ratelimit import RateLimit, RateLimiter
from customs_batch.client._retry import NO_RETRIES, RetryPolicy, is_repeatable, is_transient
from customs_batch.vocabulary import (
    ARCHIVED_FILTERS,
    DECLARATION_STATUSES,
    DECLARATION_TYPES,
    DELETED_FILTERS,
    SHIPMENT_STATUSES,
    TRANSIT_STATUSES,
)

if TYPE_CHECKING:
    from customs_batch.client._client import CustomsClient
    from customs_batch.client._transport import USER_AGENT, Sender

# The names that need httpx (a tenth of a second to import) are imported when first asked
# for: `validate` and `plan` read the environments and their rate limits but send nothing.
_NEEDS_HTTPX = {
    "CustomsClient": "customs_batch.client._client",
    "Sender": "customs_batch.client._transport",
    "USER_AGENT": "customs_batch.client._transport",
}


def __getattr__(name: str) -> Any:
    module = _NEEDS_HTTPX.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ARCHIVED_FILTERS",
    "DECLARATION_STATUSES",
    "DECLARATION_TYPES",
    "DEFAULT_ENDPOINTS",
    "DELETED_FILTERS",
    "MAX_PAGE",
    "MAX_PAGE_SIZE",
    "NO_RETRIES",
    "SHIPMENT_STATUSES",
    "TRANSIT_STATUSES",
    "USER_AGENT",
    "Allocation",
    "AuthenticationError",
    "CancellationResult",
    "ConnectionFailedError",
    "CustomsClient",
    "DeclarationFilter",
    "DeclarationItem",
    "DeclarationListEntry",
    "DepartureSubmission",
    "Endpoint",
    "EndpointMap",
    "Exchange",
    "ExportDeclaration",
    "Hawb",
    "ItemFilter",
    "Movement",
    "NotFoundError",
    "NotSentError",
    "Order",
    "Page",
    "PageFamily",
    "PermissionDeniedError",
    "RateLimit",
    "RateLimitedError",
    "RateLimiter",
    "Record",
    "RequestRefusedError",
    "RetryPolicy",
    "Sender",
    "ServerError",
    "ServiceResponseError",
    "Shipment",
    "ShipmentFilter",
    "TemplateGroup",
    "TemplateGroupFilter",
    "TlsFailedError",
    "TransitDeclaration",
    "TransitDeclarationDetail",
    "TransitFilter",
    "UnexpectedResponseError",
    "is_repeatable",
    "is_transient",
]
