from __future__ import annotations

import customs_batch.client as client


def test_the_public_api_is_this_list() -> None:
    assert sorted(client.__all__) == sorted(
        [
            "ARCHIVED_FILTERS",
            "DECLARATION_STATUSES",
            "DECLARATION_TYPES",
            "DELETED_FILTERS",
            "SHIPMENT_STATUSES",
            "TRANSIT_STATUSES",
            "DEFAULT_ENDPOINTS",
            "MAX_PAGE",
            "MAX_PAGE_SIZE",
            "NO_RETRIES",
            "USER_AGENT",
            "Allocation",
            "AuthenticationError",
            "CancellationResult",
            "ConnectionFailedError",
            "NotSentError",
            "TlsFailedError",
            "CustomsClient",
            "DeclarationFilter",
            "DeclarationItem",
            "DeclarationListEntry",
            "DepartureSubmission",
            "Exchange",
            "Endpoint",
            "EndpointMap",
            "ExportDeclaration",
            "Hawb",
            "ItemFilter",
            "Movement",
            "NotFoundError",
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
            "TransitDeclaration",
            "TransitDeclarationDetail",
            "TransitFilter",
            "UnexpectedResponseError",
            "is_repeatable",
        ]
    )
    for name in client.__all__:
        assert getattr(client, name) is not None
