"""The shape of stored records and the service's timestamp format.

The emulator stores each resource as the JSON object the service returns for it (a
"wire record"): it serves them back almost verbatim, so a typed model per resource would
only be copied field by field into the same JSON.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

JsonObject = dict[str, Any]


def timestamp(seconds: float) -> str:
    """ISO 8601 UTC with milliseconds, as the service writes them: 2026-01-05T08:00:00.000Z."""
    # isoformat truncates to milliseconds as the service does; "+00:00" becomes "Z".
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def parse_timestamp(text: str) -> float:
    """Seconds since the epoch of a service timestamp (``Z`` suffix, optional fraction)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
