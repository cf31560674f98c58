"""The service's timestamp format: UTC, milliseconds truncated, a ``Z``."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest

from customs_batch.sandbox.records import (
    JsonObject,
    Packed,
    packed_fields,
    parse_timestamp,
    record_json,
    timestamp,
)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1_767_600_000.9999, "2026-01-05T08:00:00.999Z"),
        (1_767_600_000.0005, "2026-01-05T08:00:00.000Z"),
        (253_402_300_799.5, "9999-12-31T23:59:59.500Z"),
    ],
)
def test_timestamps_are_utc_with_milliseconds(seconds: float, text: str) -> None:
    assert timestamp(seconds) == text
    assert parse_timestamp(text) == pytest.approx(seconds, abs=0.001)


def _datetime_text(seconds: float) -> str:
    """What the service's format is, by datetime alone (milliseconds truncated)."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def test_timestamps_are_datetimes_text_to_the_millisecond() -> None:
    draw = random.Random(26)
    moments = [draw.uniform(-86_400 * 365, 253_402_300_798) for _ in range(20_000)]
    moments += [n + f for n in (0, 1_767_600_000, -5) for f in EDGES]
    moments += [m for m in (draw.uniform(0, 2e9) for _ in range(2_000)) for m in (m, m)]
    for seconds in moments:
        assert timestamp(seconds) == _datetime_text(seconds), repr(seconds)


# Fractions where the rounding to the microsecond carries, halves, or stops short of a carry.
EDGES = (
    0.0,
    0.0005,
    0.0009995,
    0.9995,
    0.999999,
    0.9999994,
    0.9999995,
    0.9999996,
    0.5e-6,
    1.5e-6,
    2.5e-6,
    -0.5e-6,
    -0.9999996,
    -0.0000004,
)


@pytest.mark.parametrize(
    "record",
    [
        {"a": 1, "_body": Packed.of({"x": [1.5, "é", "\ud800", None]})},
        {"_body": Packed.of([])},
        {"a": {"b": 2}},
    ],
)
def test_a_record_with_packed_fields_is_written_as_json_of_their_values(record: JsonObject) -> None:
    unpacked = {k: v.value() if isinstance(v, Packed) else v for k, v in record.items()}
    assert json.loads(record_json(record)) == unpacked
    assert packed_fields(json.loads(record_json(record))) == record
