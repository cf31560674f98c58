"""The closed word lists of the API document, in one place for the client and the emulator.

Only what the document itself lists; how the emulator maps or chooses beyond it lives in
``customs_batch.sandbox.contract``.
"""

from __future__ import annotations

from typing import Final

SHIPMENT_STATUSES: Final = ("new", "clearanceInProgress", "completed")

# Import and export declaration status (lower-case, as the API document lists them).
DECLARATION_STATUSES: Final = (
    "processing",
    "ready",
    "submitted",
    "registered",
    "under_control",
    "accepted",
    "released",
    "tax_notice",
    "invalid",
    "error",
    "completed",
    "canceled",
    "cancellation_requested",
    "non_exited",
    "exited",
    "amendment_requested",
    "no_release",
)

# Transit declaration status filter values (upper-case, as the API document lists them).
TRANSIT_STATUSES: Final = (
    "NEW",
    "READY_TO_DECLARE",
    "ARRIVAL_NOTIFICATION",
    "UNLOADING_PERMITTED",
    "UNLOADING_REMARKS",
    "PARTIAL_RELEASED",
    "NO_RELEASE",
    "RELEASED",
    "INVALID",
    "CONTROL",
    "BLOCKED",
    "COMPLETED",
    "TRANSIT_DECLARATION",
    "REGISTERED",
    "ACCEPTED",
    "CANCELED",
    "CANCELLATION_REQ",
)

DECLARATION_TYPES: Final = ("IMPORT", "EXPORT")
DELETED_FILTERS: Final = ("normal", "deleted", "all")
ARCHIVED_FILTERS: Final = ("unarchived", "archived", "all")

# Transit body statuses with a meaning of their own to the tool.
PROCESSING: Final = "processing"
FAILED_TRANSIT_STATUSES: Final = frozenset({"invalid", "error"})
"""Departure statuses in which customs never accepted the declaration: a corrected document
may be submitted again without declaring the goods twice."""
CANCELED: Final = "canceled"
"""A transit declaration customs cancelled (the body's word for the filter's ``CANCELED``)."""
