"""The shape of stored records and the service's timestamp format.

The emulator stores each resource as the JSON object the service returns for it (a
"wire record"): it serves them back almost verbatim, so a typed model per resource would
only be copied field by field into the same JSON.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

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


@dataclass(frozen=True, slots=True)
class Packed:
    """A JSON value a record keeps but the emulator seldom reads, held as its compact JSON
    text (ASCII, as ``json.dumps`` writes it) and parsed again only when read (``value``).

    A departure body parsed is about 25 times its size in Python objects (a 900 KB body of
    300,000 empty authorisations, some 23 MB): kept parsed, thirty such submissions held
    700 MB for as long as the emulator ran. Packed, a body holds about its size.
    """

    text: bytes

    @classmethod
    def of(cls, value: Any) -> Packed:
        """``value`` packed."""
        return cls(_PACKER.encode(value).encode("ascii"))

    def value(self) -> Any:
        """The value, parsed again (a new object on each call)."""
        return json.loads(self.text)


# One encoder for every packing: json.dumps with options builds a new one per call (half
# the cost of packing a group's empty templates).
_PACKER = json.JSONEncoder(separators=(",", ":"))

PACKED_FIELDS: Final = ("_body", "DeclarationTemplates")
"""The fields a record keeps packed, whatever its table, the parts of request bodies kept but
never answered (the body of a transit declaration, the templates of a template group): a
database holds them as JSON like any other field, and they are packed again on load."""


def unpacked(value: Any) -> Any:
    """``value`` parsed again if it is packed, else ``value``."""
    return value.value() if isinstance(value, Packed) else value


def packed_fields(record: JsonObject) -> JsonObject:
    """``record`` with each of ``PACKED_FIELDS`` that is not packed yet packed."""
    loose = [name for name in PACKED_FIELDS if name in record]
    loose = [name for name in loose if not isinstance(record[name], Packed)]
    if not loose:
        return record
    return {**record, **{name: Packed.of(record[name]) for name in loose}}


def record_json(record: JsonObject) -> str:
    """``json.dumps(record)`` with each packed field written as the value it holds: the text
    a database keeps is the same whether a field is packed or not."""
    packed = [(name, value) for name, value in record.items() if isinstance(value, Packed)]
    if not packed:
        return json.dumps(record)
    plain = {name: value for name, value in record.items() if not isinstance(value, Packed)}
    fields = [json.dumps(plain)[1:-1]] if plain else []
    fields += [f"{json.dumps(name)}: {value.text.decode('ascii')}" for name, value in packed]
    return "{" + ", ".join(fields) + "}"
