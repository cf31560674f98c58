"""The service's timestamp format: UTC, milliseconds truncated, a ``Z``."""

from __future__ import annotations

import pytest

from customs_batch.sandbox.records import parse_timestamp, timestamp


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
