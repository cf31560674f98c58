"""One reader for the size limits' variables: a positive whole number, or the default."""

from __future__ import annotations

import pytest

from customs_batch.env_numbers import positive_whole_number
from customs_batch.errors import ConfigError


def _read(value: str | None) -> int:
    environ = {} if value is None else {"CUSTOMS_BATCH_MAX_X": value}
    return positive_whole_number(
        "CUSTOMS_BATCH_MAX_X", 7, unit="widgets", example=12, environ=environ
    )


@pytest.mark.parametrize(("value", "expected"), [(None, 7), ("", 7), ("  ", 7), (" 3 ", 3)])
def test_unset_or_blank_is_the_default_and_digits_are_the_number(
    value: str | None, expected: int
) -> None:
    assert _read(value) == expected


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "2e3", "١٢", "x", "9" * 16, "9" * 5000])
def test_anything_but_a_positive_whole_number_is_refused_and_shown_cut(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _read(value)
    assert caught.value.message == f"CUSTOMS_BATCH_MAX_X={value[:32]!r} is not a number of widgets"
    assert caught.value.hint == (
        "set it to a whole number in digits 0-9, e.g. CUSTOMS_BATCH_MAX_X=12, or unset it"
    )
