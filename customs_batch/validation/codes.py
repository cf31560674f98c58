"""Formats of customs codes: MRN, GRN, EORI, office codes, UN/LOCODE, ISO countries, currencies.

Each ``*_problem`` function returns None for a good value, else a short sentence saying what is
wrong with it. The code tables are frozensets built once at import: pycountry's own lookups
are far too slow for tens of thousands of documents a second. They are read from the ISO
files pycountry ships, without importing it: its import (package metadata, logging, its
database objects) costs about 40 ms of a one-file ``validate``'s start-up, the two files 2 ms.

Readings of the customs rules:

- MRN: 18 characters: 2 digits (year), 2 letters (country of the office), 13 letters or
  digits, 1 check character. The check character is the ISO 6346 scheme over the first 17
  characters: letters get the ISO 6346 values (A=10, B=12, ... skipping multiples of 11), each
  value is weighted by 2**position, and the sum is taken mod 11 then mod 10.
- GRN (NCTS guarantee reference number): 2 digits (year), 2 letters (country), 12 letters or
  digits, 1 check character computed like the MRN's but over the first 16 characters, then
  for an individual guarantee by voucher 7 more letters or digits: 17 or 24 characters.
- Country codes are ISO 3166-1 alpha-2, plus ``XI`` (Northern Ireland), which the EU customs
  systems use as a country code in EORI numbers, office codes and country fields.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib.util import find_spec
from pathlib import Path


def _iso_codes(standard: str, field: str) -> frozenset[str]:
    """The ``field`` of every entry of pycountry's ISO ``standard`` file (``3166-1``)."""
    # find_spec locates the package without importing it.
    spec = find_spec("pycountry")
    folders = spec.submodule_search_locations if spec is not None else None
    if folders:
        try:
            data = (Path(next(iter(folders))) / "databases" / f"iso{standard}.json").read_bytes()
            return frozenset(entry[field] for entry in json.loads(data)[standard])
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a layout this reading does not know: ask pycountry itself
    import pycountry

    database = pycountry.countries if standard == "3166-1" else pycountry.currencies
    return frozenset(getattr(entry, field) for entry in database)


COUNTRIES: frozenset[str] = _iso_codes("3166-1", "alpha_2") | {"XI"}
CURRENCIES: frozenset[str] = _iso_codes("4217", "alpha_3")

# [0-9], not \d: \d takes any script's digits, which no code holds (an MRN whose year was
# written in Arabic-Indic digits passed the layout and was an internal error at its check
# character; such a commodity code passed with a warning). The look-alike keeps \d, so that
# such an MRN is checked, and refused for its layout.
_MRN = re.compile(r"[0-9]{2}[A-Z]{2}[A-Z0-9]{14}")
_MRN_LOOKALIKE = re.compile(r"\d{2}[A-Za-z]{2}[A-Za-z0-9]{12,16}")
_GRN = re.compile(r"[0-9]{2}[A-Z]{2}[A-Z0-9]{13}(?:[A-Z0-9]{7})?")
_EORI = re.compile(r"[A-Z]{2}[A-Za-z0-9]{1,15}")
_OFFICE = re.compile(r"[A-Z]{2}[A-Z0-9]{6}")
_UNLOCODE = re.compile(r"[A-Z]{2}[A-Z2-9]{3}")
_COMMODITY = re.compile(r"[0-9]{6}|[0-9]{8}|[0-9]{10}")
_COMMODITY_LENGTHS = (6, 8, 10)


# python-stdnum's iso6346.calc_check_digit gives the same result (a test holds them equal), but
# measured about 4x slower (9 us a call against 2.3 us here); it runs for every MRN of a batch.
_ISO6346_ALPHABET = "0123456789A BCDEFGHIJK LMNOPQRSTU VWXYZ"
_CHARACTER_VALUES = {c: v for v, c in enumerate(_ISO6346_ALPHABET) if c != " "}
_WEIGHTS = tuple(2**position for position in range(24))


def check_character(text: str) -> str:
    """The ISO 6346-style check character (a digit) of ``text``, as MRN and GRN use it.

    ``text`` is upper-case letters and digits, at most 24 characters.
    """
    values = _CHARACTER_VALUES
    total = sum(values[c] * w for c, w in zip(text, _WEIGHTS, strict=False))
    return str(total % 11 % 10)


def looks_like_mrn(text: str) -> bool:
    """Whether a customs reference is meant as an MRN (year, country, about 18 characters)."""
    return _MRN_LOOKALIKE.fullmatch(text) is not None


def mrn_format_problem(text: str) -> str | None:
    """What is wrong with the layout of an MRN, or None."""
    if _MRN.fullmatch(text) is None:
        return (
            f"{text!r} is not an MRN: expected 18 characters, 2 digits 0-9 (year), 2 letters "
            "(country), 13 upper-case letters or digits, 1 check character"
        )
    if text[2:4] not in COUNTRIES:
        return f"{text!r}: {text[2:4]!r} is not an ISO country code"
    return None


def mrn_check_problem(text: str) -> str | None:
    """What is wrong with the check character of a well-formed MRN, or None."""
    expected = check_character(text[:17])
    if text[17] != expected:
        return f"MRN {text!r} has check character {text[17]!r}, expected {expected!r}"
    return None


def spaced_problem(text: str, what: str) -> str | None:
    """What is wrong with a reference (``what``: MRN, GRN) written with whitespace around
    it, or None: it would be sent so, and customs know it without."""
    inside = any(char.isspace() for char in text.strip())
    if text == text.strip() and not inside:
        return None
    where = [
        side
        for side, spaced in (("before", text != text.lstrip()), ("after", text != text.rstrip()))
        if spaced
    ]
    # Inside too: an MRN copied from a letter that prints it in groups (24NL R123 ...).
    said = [f"a space {' and '.join(where)} it"] if where else []
    said += ["spaces inside it"] if inside else []
    return f"{what} {text!r} has {' and '.join(said)}, which would be sent with it"


def without_spaces(text: str) -> str:
    """``text`` without any whitespace: the reference a spaced one (``24NL R123 …``) means."""
    return "".join(text.split())


def looks_like_grn(text: str) -> bool:
    """Whether a guarantee reference is an NCTS GRN (17 or 24 characters, year and country)."""
    return _GRN.fullmatch(text) is not None and text[2:4] in COUNTRIES


def grn_check_problem(text: str) -> str | None:
    """What is wrong with the check character (the 17th) of a GRN, or None."""
    expected = check_character(text[:16])
    if text[16] != expected:
        return f"GRN {text!r} has check character {text[16]!r}, expected {expected!r}"
    return None


def eori_problem(text: str) -> str | None:
    """What is wrong with an EORI number, or None."""
    if _EORI.fullmatch(text) is None:
        return f"{text!r} is not an EORI number: 2 letters then up to 15 letters or digits"
    if text[:2] not in COUNTRIES:
        return f"EORI {text!r}: {text[:2]!r} is not an ISO country code"
    return None


_EORI_HINT = "write the EORI as issued, e.g. NL123456789 (no spaces)"


def eori_hint(text: str) -> str:
    """What to write for an EORI that is not one: the EORI meant when it is one written in
    small letters or with spaces or dashes (as EORIs are printed: ``NL 1234 5678 9``)."""
    meant = re.sub(r"[\s.-]", "", text).upper()
    if meant != text and eori_problem(meant) is None:
        return f"write {meant}: capitals and digits, without spaces, dots or dashes"
    return _EORI_HINT


def office_problem(text: str) -> str | None:
    """What is wrong with a customs office code, or None."""
    if _OFFICE.fullmatch(text) is None:
        return f"{text!r} is not a customs office code: 2 letters then 6 letters or digits"
    if text[:2] not in COUNTRIES:
        return f"office {text!r}: {text[:2]!r} is not an ISO country code"
    return None


def unlocode_problem(text: str) -> str | None:
    """What is wrong with a UN/LOCODE, or None."""
    if _UNLOCODE.fullmatch(text) is None:
        return f"{text!r} is not a UN/LOCODE: 2 letters (country) then 3 letters or digits 2-9"
    if text[:2] not in COUNTRIES:
        return f"UN/LOCODE {text!r}: {text[:2]!r} is not an ISO country code"
    return None


def country_problem(text: str) -> str | None:
    """What is wrong with an ISO 3166-1 alpha-2 country code, or None."""
    if text in COUNTRIES:
        return None
    return f"{text!r} is not an ISO 3166-1 alpha-2 country code"


_COUNTRY_HINT = "write an ISO 3166-1 alpha-2 code in capitals, e.g. DE"
_NOT_ISO = {
    "UK": "the United Kingdom's ISO code is GB (XI for Northern Ireland): write GB",
    "EL": "Greece's ISO code is GR (EL is its prefix in EU VAT numbers only): write GR",
}


def country_hint(text: str) -> str:
    """What to write for a country code that is not one: the code meant where it shows."""
    written = text.strip().upper()
    if written in _NOT_ISO:
        return _NOT_ISO[written]
    if written in COUNTRIES:
        return f"write {written}: two capital letters, without spaces"
    meant = _alpha_3().get(written)
    if meant is not None:
        return f"{written} is the three-letter (alpha-3) code: write {meant}"
    return _COUNTRY_HINT


@cache
def _alpha_3() -> dict[str, str]:
    """Each country's alpha-3 code to its alpha-2 code (read when a hint needs it)."""
    import pycountry

    return {entry.alpha_3: entry.alpha_2 for entry in pycountry.countries}


def currency_problem(text: str) -> str | None:
    """What is wrong with an ISO 4217 currency code, or None."""
    if text in CURRENCIES:
        return None
    return f"{text!r} is not an ISO 4217 currency code"


def commodity_problem(text: str) -> str | None:
    """What is wrong with a commodity code, or None.

    A code is an HS subheading (6 digits), a CN code (8) or a TARIC code (10): never 7 or 9.
    """
    if _COMMODITY.fullmatch(text) is None:
        return f"{text!r} is not a commodity code: 6, 8 or 10 digits (HS, CN or TARIC)"
    return None


def commodity_hint(text: str) -> str:
    """What to write instead of a bad commodity code.

    A code of chapters 01 to 09 starts with a zero, which a number loses: a spreadsheet cell
    formatted as a number (``values:`` keeps an unquoted ``0901...`` as text). So a code one digit
    short of a valid length is said to have lost its leading zero, whatever its digits (the
    cut code may well start with a real subheading: ``901210000`` with 9012.10).
    """
    if text.isdigit() and text[0] != "0" and len(text) + 1 in _COMMODITY_LENGTHS:
        return (
            f"if the code began with 0 (chapters 01 to 09: {'0' + text!r}), its leading zero "
            "was lost: a spreadsheet cell holding a number drops it (format the column as "
            "text and type the code again), as does a copy from one; otherwise a digit is "
            "missing or one too many"
        )
    return "write the HS/CN code as digits only: 6, 8 or 10 of them, e.g. 73181500"
