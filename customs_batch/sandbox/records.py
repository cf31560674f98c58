"""The shape of stored records and the service's timestamp format.

The emulator stores each resource as the JSON object the service returns for it (a
"wire record"): it serves them back almost verbatim, so a typed model per resource would
only be copied field by field into the same JSON.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

JsonObject = dict[str, Any]


_last_second: tuple[float, str] = (math.nan, "")
"""The whole second :func:`timestamp` last wrote and its text up to the seconds (one tuple,
replaced whole, so that threads never see a second with another's text)."""


def timestamp(seconds: float) -> str:
    """ISO 8601 UTC with milliseconds, as the service writes them: 2026-01-05T08:00:00.000Z.

    The text of ``datetime.fromtimestamp(seconds, UTC)`` truncated to milliseconds, with its
    rounding to the microsecond (half to even, carried into the second), but with the date
    and time of day made by datetime once a second only: made on every call they cost a
    POST about 0.05x of a bare app's CPU per request (``docs/benchmarks.md``).
    """
    global _last_second
    fraction, whole = math.modf(seconds)
    microseconds = round(fraction * 1e6)
    if microseconds >= 1_000_000:
        whole, microseconds = whole + 1.0, microseconds - 1_000_000
    elif microseconds < 0:
        whole, microseconds = whole - 1.0, microseconds + 1_000_000
    second, text = _last_second
    if whole != second:
        text = datetime.fromtimestamp(whole, UTC).isoformat()[:-6]  # without "+00:00"
        _last_second = (whole, text)
    return f"{text}.{microseconds // 1000:03d}Z"


def parse_timestamp(text: str) -> float:
    """Seconds since the epoch of a service timestamp (``Z`` suffix, optional fraction)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
