"""Every API choice the emulator makes (docs/api-choices.md), in one place.

The API document leaves open the departure submission path, the query parameter names,
the refusal codes, the idempotency semantics and the transit status words. The emulator
follows docs/api-choices.md for each; the names below are the only place they are spelled.
"""

from __future__ import annotations

from typing import Final

from customs_batch.vocabulary import DECLARATION_STATUSES as DECLARATION_STATUSES
from customs_batch.vocabulary import DECLARATION_TYPES as DECLARATION_TYPES
from customs_batch.vocabulary import SHIPMENT_STATUSES as SHIPMENT_STATUSES
from customs_batch.vocabulary import TRANSIT_STATUSES, same_status

# -- paths (Starlette route syntax) --------------------------------------------------------
# ``{name:id}`` is an integer ID of the service, 64-bit as every integer it takes (routing.py):
# a path ID of more digits names nothing, 404, as an unknown path is.
SHIPMENTS: Final = "/v1/shipments"
MOVEMENTS: Final = "/v1/shipments/{id}/movements"
ALLOCATIONS: Final = "/v1/shipments/{id}/allocations"
HAWBS: Final = "/v1/shipments/{id}/hawbs"
HAWB: Final = "/v1/shipments/{id}/hawbs/{hawbId}"
DECLARATIONS: Final = "/v1/declarations"
DECLARATION: Final = "/v1/declarations/{id:id}"
SUBMIT_DEPARTURE: Final = "/v1/declarations/transit"  # POST, 201 (section 7)
TRANSIT_LIST: Final = "/v1/declarations/transit"
TRANSIT: Final = "/v1/declarations/transit/{id:id}"
DEPARTURE_PARTIES: Final = "/declarations/transit/{declarationId:id}/parties"
ARRIVAL_PARTIES: Final = "/transit-declarations/{id:id}/parties"
ITEMS: Final = "/v1/declaration-items"
ITEM: Final = "/v1/declaration-items/{id:id}"
TEMPLATE_GROUPS: Final = "/v1/declaration-templates/groups"
TEMPLATE_GROUP: Final = "/v1/declaration-templates/groups/{id:id}"
INSPECT_MOVEMENTS: Final = "/_sandbox/movements"
INSPECT_STATS: Final = "/_sandbox/stats"
TEST_GATE: Final = "/_sandbox/gate"
TEST_CLOCK: Final = "/_sandbox/clock"
TEST_ROTATE_KEY: Final = "/_sandbox/keys/rotate"
OPENAPI: Final = "/openapi.json"

# -- query parameter names -------------------------------------------------------------------
PAGE: Final = "page"
LIMIT: Final = "limit"  # page size of the data/pagination lists (HAWBs, allocations)
ITEMS_PER_PAGE: Final = "itemsPerPage"  # page size of every other list
INCLUDE_INACTIVE: Final = "includeInactive"
STATUS: Final = "status"
REFERENCE_NUMBER: Final = "referenceNumber"
CREATED_FROM: Final = "createdFrom"
CREATED_TO: Final = "createdTo"
ORDER: Final = "order"
START_DATE: Final = "startDate"
END_DATE: Final = "endDate"
SEARCH: Final = "search"
DELETED: Final = "deleted"
ARCHIVED: Final = "archived"
SORT_BY: Final = "sortBy"
SORT_ORDER: Final = "sortOrder"
COMPANY_ID: Final = "companyId"
TYPE: Final = "type"

PAGE_SIZE_DEFAULT: Final = 20
ORDER_DEFAULT: Final = "desc"  # newest first
SORT_ORDER_DEFAULT: Final = "asc"
DELETED_VALUES: Final = ("deleted", "normal", "all")
DELETED_DEFAULT: Final = "normal"
ARCHIVED_VALUES: Final = ("unarchived", "archived", "all")
ARCHIVED_DEFAULT: Final = "unarchived"
INCLUDE_INACTIVE_DEFAULT: Final = False
PAGE_SIZE_MAX: Final = 100
ITEM_SORT_FIELDS: Final = (
    "id",
    "declarationId",
    "description",
    "commodityCode",
    "quantity",
    "grossMass",
    "netMass",
    "value",
    "currency",
    "originCountry",
)

# -- request bodies --------------------------------------------------------------------------
# The document states no size limit; 1 MiB holds a departure declaration of thousands of items.
MAX_BODY_BYTES: Final = 1024 * 1024
# Nor a nesting limit ("limits on the count of nested arrays: not shown"). The deepest body of
# the API nests a handful of levels; a body nested deeper than this is refused with a 400
# before anything walks it (the fingerprint, the schema's reasons), as a parser with a
# nesting limit would.
MAX_BODY_DEPTH: Final = 64
# Integers in bodies and queries are 64-bit signed, as a database column would hold them.
INT_MIN: Final = -(2**63)
INT_MAX: Final = 2**63 - 1

# -- headers -------------------------------------------------------------------------------
# Nor a limit on the request head (its request line and headers). Served over HTTP, a head
# larger than this is 431, however its bytes arrive (sandbox/server.py).
MAX_HEAD_BYTES: Final = 64 * 1024
# Nor how long a client may take to send a request. Served over HTTP, a request head must
# arrive whole within HEAD_SECONDS of the emulator's waiting for it (the connection opened,
# or the answer before it sent), and a body must not stop for BODY_IDLE_SECONDS while the
# emulator reads it, nor take more than BODY_SECONDS of the emulator's reading in all (a
# byte every few seconds would otherwise hold a connection and its megabyte for months):
# else 408 (a connection that sent nothing is closed without an answer).
# At most MAX_CONNECTIONS are open at once; past them a new one is answered 503 and closed.
HEAD_SECONDS: Final = 10.0
BODY_IDLE_SECONDS: Final = 10.0
BODY_SECONDS: Final = 60.0
MAX_CONNECTIONS: Final = 1000
IDEMPOTENCY_KEY: Final = "Idempotency-Key"
IDEMPOTENCY_TTL_SECONDS: Final = 24 * 3600
# The document gives the key as a string, a UUID recommended (36 characters); a key of
# megabytes would be held for 24 hours. Longer than this is 400.
IDEMPOTENCY_KEY_MAX: Final = 255

# -- refusal codes ---------------------------------------------------------------------------
BAD_REQUEST: Final = 400  # refused movement, bad body, missing Idempotency-Key
INVALID_CREDENTIALS: Final = 401
UNAUTHORIZED: Final = 403
NOT_FOUND: Final = 404
METHOD_NOT_ALLOWED: Final = 405
HAWB_REFUSED: Final = 409  # HAWB deactivation refused
TRANSIT_CANCELED: Final = 409  # a party PATCH of a transit declaration customs cancelled
DUPLICATE_CODE: Final = 409  # template group code already used by the company
IDEMPOTENCY_IN_FLIGHT: Final = 409
IDEMPOTENCY_OTHER_REQUEST: Final = 422  # a key reused with another path or body
PAYLOAD_TOO_LARGE: Final = 413  # a body over MAX_BODY_BYTES
UNSUPPORTED_MEDIA_TYPE: Final = 415  # Content-Type not application/json, charset not UTF-8
HEAD_TOO_LARGE: Final = 431  # a request head over MAX_HEAD_BYTES (served over HTTP)
REQUEST_TIMEOUT: Final = 408  # a head or body not sent in time (served over HTTP)
TOO_MANY_REQUESTS: Final = 429
SERVICE_UNAVAILABLE: Final = 503  # a fault, or a request held at the test gate at shutdown
CREATED: Final = 201  # every creating POST, the departure submission included
OK: Final = 200

REASONS: Final[dict[int, str]] = {
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    413: "Payload Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
}

# -- transit status words: response body word <-> filter value ---------------------------------
TRANSIT_FILTER_VALUES: Final = TRANSIT_STATUSES
_TRANSIT_SPECIAL: Final = {"NEW": "processing", "READY_TO_DECLARE": "ready"}


def transit_body_status(filter_value: str) -> str:
    """The body word of a transit status filter value (``NEW`` -> ``processing``)."""
    return _TRANSIT_SPECIAL.get(filter_value, filter_value.lower())


def transit_status_matches(held: object, filter_value: str) -> bool:
    """Whether a transit declaration held in status ``held`` is found by the filter value:
    its body word or the filter word itself, in either case (the API document writes the
    transit states both ways, and a seed or customs may hold ``CANCELED`` or ``BLOCKED``)."""
    return same_status(held, transit_body_status(filter_value)) or same_status(held, filter_value)


# Export declarations in these statuses have not reached customs: DELETE cancels at once.
NOT_YET_SUBMITTED: Final = frozenset({"processing", "ready", "invalid", "error"})
CANCELED: Final = "canceled"
# A submitted one becomes this until customs decides (after --processing-seconds).
CANCELLATION_REQUESTED: Final = "cancellation_requested"
# The seed's `cancellationAnswer` that makes customs refuse (the default grants it).
CANCELLATION_REFUSED: Final = "refused"

# -- movements -------------------------------------------------------------------------------
MOVEMENT_QUEUED: Final = "QUEUED"
MOVEMENT_SENT: Final = "SENT"  # what a movement counts as after --processing-seconds
MOVEMENT_TRIGGER: Final = "API"
HAWB_STATUS_NEW: Final = "NOT_INITIATED"

# -- departure declarations ------------------------------------------------------------------
DEPARTURE_PROCESSING: Final = "processing"
DEPARTURE_READY: Final = "ready"
DEPARTURE_INVALID: Final = "invalid"
# The documented, deterministic reason a submitted departure turns invalid.
INVALID_REFERENCE_PREFIX: Final = "INVALID"
