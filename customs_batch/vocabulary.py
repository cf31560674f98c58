"""The closed word lists of the API document, in one place for the client and the emulator.

Only what the document itself lists; how the emulator maps or chooses beyond it lives in
``customs_batch.sandbox.contract``.
"""

from __future__ import annotations

from collections.abc import Iterable
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


def status_key(word: object) -> str | None:
    """A status word as the tool compares it: the API document writes one status in two
    cases (a transit body's ``invalid``, the filter value ``INVALID``), so case is no part
    of its meaning. None for what is no word (an absent or non-text status)."""
    return word.casefold() if isinstance(word, str) else None


def same_status(word: object, other: str) -> bool:
    """Whether the service's ``word`` is the status ``other``, whatever its case."""
    return status_key(word) == status_key(other)


class StatusWords(frozenset[str]):
    """Status words with a meaning to the tool (a kind's rejected or pending states), held
    as :func:`status_key` gives them: ``in`` finds the service's word in either case."""

    def __new__(cls, words: Iterable[str] = ()) -> StatusWords:
        return super().__new__(cls, (word.casefold() for word in words))

    def __contains__(self, word: object) -> bool:
        key = status_key(word)
        return key is not None and super().__contains__(key)

    def __or__(self, other: Iterable[str]) -> StatusWords:  # type: ignore[override]
        return StatusWords([*self, *other])


NO_STATUS_WORDS: Final = StatusWords()

# Transit body statuses with a meaning of their own to the tool.
PROCESSING: Final = "processing"
FAILED_TRANSIT_STATUSES: Final = StatusWords({"invalid", "error"})
"""Departure statuses in which customs never accepted the declaration: a corrected document
may be submitted again without declaring the goods twice."""
CANCELED: Final = "canceled"
"""A transit declaration customs cancelled (the body's word for the filter's ``CANCELED``)."""
PROCESSING_TRANSIT_STATUSES: Final = StatusWords({PROCESSING, "NEW"})
"""Transit statuses in which the service is still working on the declaration: the body's
``processing`` and the filter's ``NEW``, which the document lists and docs/api-choices.md
maps to it."""
DONE_TRANSIT_STATUSES: Final = StatusWords(
    {"ready", "READY_TO_DECLARE", "REGISTERED", "ACCEPTED", "RELEASED", "COMPLETED"}
)
"""Transit statuses in which the declaration is done: the service took it and it stands
(the body's ``ready``, its filter word ``READY_TO_DECLARE``, and the words that say customs
registered, accepted, released or completed it). With the processing, failed and cancelled
words, these are every transit status the tool knows: any other (``CONTROL``, ``BLOCKED``,
``NO_RELEASE``, ``CANCELLATION_REQ``, ``ARRIVAL_NOTIFICATION``, a word the document does not
list) says no more than that customs has not finished with the declaration, and is never
counted done nor failed (``KindModel.done_states``)."""
