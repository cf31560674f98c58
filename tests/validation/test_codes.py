"""Formats and check characters of customs codes."""

from __future__ import annotations

import random
import string
from collections.abc import Callable

import pytest
from stdnum import iso6346

from customs_batch.validation import codes


def test_the_code_tables_are_pycountry_s_read_from_its_files() -> None:
    import pycountry

    assert frozenset(c.alpha_2 for c in pycountry.countries) | {"XI"} == codes.COUNTRIES
    assert frozenset(c.alpha_3 for c in pycountry.currencies) == codes.CURRENCIES


def test_without_pycountry_s_files_the_tables_come_from_its_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(codes, "find_spec", lambda name: None)
    assert codes._iso_codes("3166-1", "alpha_2") | {"XI"} == codes.COUNTRIES
    assert codes._iso_codes("4217", "alpha_3") == codes.CURRENCIES


def test_check_character_follows_iso_6346_weights_mod_11_mod_10() -> None:
    # By hand: A=10 at position 2 (x4), B=12 at position 3 (x8), 1 at position 16 (x65536):
    # 40 + 96 + 65536 = 65672; 65672 mod 11 = 2; 2 mod 10 = 2.
    assert codes.check_character("00AB0000000000001") == "2"
    # 2 + D=14 x4 + E=15 x8 = 178; 178 mod 11 = 2.
    assert codes.check_character("20DE000000000000") == "2"


def test_check_character_agrees_with_python_stdnum() -> None:
    alphabet = string.ascii_uppercase + string.digits
    rng = random.Random(6346)
    for length in (16, 17):
        for _ in range(300):
            text = "".join(rng.choice(alphabet) for _ in range(length))
            assert codes.check_character(text) == iso6346.calc_check_digit(text), text


@pytest.mark.parametrize(
    ("text", "looks_like"),
    [("24NLR1234567890120", True), ("24nlr1234567890120", True), ("INV-2024-0001", False),
     ("1234567890", False), ("24NL12", False)],
)  # fmt: skip
def test_looks_like_mrn(text: str, looks_like: bool) -> None:
    assert codes.looks_like_mrn(text) is looks_like


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("24NLR1234567890120", None),
        ("24NLR123456789012", "expected 18 characters"),
        ("24nlR1234567890120", "expected 18 characters"),
        ("24QQR1234567890120", "'QQ' is not an ISO country code"),
    ],
)
def test_mrn_format(text: str, problem: str | None) -> None:
    found = codes.mrn_format_problem(text)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_mrn_check_character() -> None:
    assert codes.mrn_check_problem("24NLR1234567890120") is None
    assert codes.mrn_check_problem("24NLR1234567890123") == (
        "MRN '24NLR1234567890123' has check character '3', expected '0'"
    )


@pytest.mark.parametrize(
    ("text", "looks_like", "check_ok"),
    [
        ("20DE0000000000002", True, True),
        ("20DE0000000000002ABC1234", True, True),
        ("20DE0000000000005", True, False),
        ("20QQ0000000000002", False, None),
        ("TIR-XB12345678", False, None),
    ],
)
def test_grn(text: str, looks_like: bool, check_ok: bool | None) -> None:
    assert codes.looks_like_grn(text) is looks_like
    if check_ok is not None:
        assert (codes.grn_check_problem(text) is None) is check_ok


CHECKS: dict[str, Callable[[str], str | None]] = {
    "eori": codes.eori_problem,
    "office": codes.office_problem,
    "unlocode": codes.unlocode_problem,
    "country": codes.country_problem,
    "currency": codes.currency_problem,
    "commodity": codes.commodity_problem,
}


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        ("eori", ["NL123456789", "DE123456789012345", "XI123456789000"], ["NL", "nl123", "QQ123", "DE1234567890123456", "DE 123"]),
        ("office", ["DE004073", "NL000854", "XI000142"], ["DE00407", "DE0040733", "de004073", "QQ004073"]),
        ("unlocode", ["DEHAM", "NLRTM", "US2AB"], ["DE HAM", "DEHA", "DEHA1", "QQHAM", "deham"]),
        ("country", ["DE", "NL", "XI"], ["de", "DEU", "QQ", ""]),
        ("currency", ["EUR", "USD", "CHF"], ["eur", "EU", "XXY", ""]),
        ("commodity", ["731815", "7318150000", "73181500"], ["73181", "7318150", "731815000", "73181500001", "7318.15", "73 18 15"]),
    ],
)  # fmt: skip
def test_code_formats(check: str, good: list[str], bad: list[str]) -> None:
    problem = CHECKS[check]
    assert [text for text in good if problem(text) is not None] == []
    assert [text for text in bad if problem(text) is None] == []
