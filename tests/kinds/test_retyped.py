"""Identity values a spreadsheet re-typed as numbers (customs_batch/kinds/retyped.py)."""

from __future__ import annotations

import pytest

from customs_batch.kinds.retyped import percent_of, retyped_fields, retyped_key, retyped_text


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("12", "0012"),  # leading zeros dropped
        ("12.0", "12"),  # `.0` added
        ("12,0", "12"),  # a decimal comma
        ("1.23457E+17", "123456789012345678"),  # scientific notation, six digits kept
        ("1,23457E+17", "123456789012345678"),
        ("123456789012346000", "123456789012345678"),  # fifteen digits kept
        ("90121", "090121"),
    ],
)
def test_one_number_written_another_way_is_retyped(new: str, old: str) -> None:
    assert retyped_text(new, old)
    assert retyped_text(old, new)


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("12", "12"),  # equal: not re-typed
        ("13", "0012"),  # another number
        ("1200", "12"),
        ("C-0012", "C-12"),  # not a number
        ("1.23458E+17", "123456789012345678"),  # another number at six digits
        ("1" * 65, "0" + "1" * 65),  # longer than any reference or code
    ],
)
def test_other_values_are_not_retyped(new: str, old: str) -> None:
    assert not retyped_text(new, old)


def test_fields_name_each_retyped_value_and_nothing_else_may_differ() -> None:
    old = ("commercialReference=0012", "goods=090421/NL,731815/NL")
    assert retyped_fields(("commercialReference=12", old[1]), old) == [
        ("commercialReference", "12", "0012")
    ]
    assert retyped_fields((old[0], "goods=731815/NL,90421/NL"), old) == [
        ("goods", "731815/NL,90421/NL", "090421/NL,731815/NL")
    ]
    assert retyped_fields(old, old) is None  # nothing differs
    assert retyped_fields(("commercialReference=13", old[1]), old) is None
    assert retyped_fields(("commercialReference=12", "goods=090421/DE,731815/NL"), old) is None
    assert retyped_fields(("place=2", old[1]), ("place=02", old[1])) is None  # never a place
    assert retyped_fields(("commercialReference=12",), old) is None


def test_identities_that_may_be_one_share_a_key() -> None:
    one = retyped_key(("commercialReference=0012", "office=NL000396"))
    assert one is not None
    assert retyped_key(("commercialReference=12", "office=NL000396")) == one
    assert retyped_key(("commercialReference=12.0", "office=NL000396")) == one
    assert retyped_key(("commercialReference=1200", "office=NL000396")) != one
    long = retyped_key(("commercialReference=123456789012345678",))
    assert retyped_key(("commercialReference=1.23457E+17",)) == long
    assert retyped_key(("commercialReference=ACME", "office=NL000396")) is None  # no number


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        ("40%", "0.4", True),
        ("12.50%", "0.125", True),
        ("13%", "0.125", True),  # rounded as the format shows it
        ("100%", "1", True),
        ("-5%", "-0.05", True),
        ("40%", "0.5", False),
        ("40", "0.4", False),
        ("x%", "0.4", False),
        ("40%", "abc", False),
        ("NaN%", "NaN", False),
    ],
)
def test_a_percentage_of_the_number_recorded(new: str, old: str, expected: bool) -> None:
    assert percent_of(new, old) is expected
