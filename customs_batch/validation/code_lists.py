"""Closed customs code lists: kinds of packages, Incoterms, the security indicator.

- Kinds of packages are the codes of UN/ECE Recommendation 21, Revision 12 (2021), Annexes
  V and VI: the list the EU customs data requirements take for "kind of packages". No
  maintained Python package ships it, so the list is kept here as data
  (``data/rec21-package-kinds.csv``: code and name), taken from UN/CEFACT's own code-list
  repository (``uncefact/vocab-codes``, ``CLR/Rec21/current/code-list.csv``), without the
  code marked deleted there (``SX``, set).
- Incoterms are the 11 rules of Incoterms 2020 (ICC), plus ``XXX``, which the EU customs
  code list for delivery terms adds for terms other than those rules.
- The security indicator of a transit declaration (NCTS) is one of ``0`` (no safety and
  security data), ``1`` (entry summary declaration), ``2`` (exit summary declaration) and
  ``3`` (both), written as text.

Each ``*_problem`` function returns None for a good value, else the message and the hint.
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

REC21_EDITION = "UN/ECE Recommendation 21, Revision 12 (2021)"
_PACKAGE_KINDS_FILE = Path(__file__).parent / "data" / "rec21-package-kinds.csv"
_SHOWN = 5  # package kinds suggested in a hint


@cache
def package_kinds() -> dict[str, str]:
    """Every package-kind code of Recommendation 21, with its name (read once per process)."""
    with _PACKAGE_KINDS_FILE.open(encoding="utf-8", newline="") as file:
        return {row["code"]: row["name"] for row in csv.DictReader(file)}


def package_kind_problem(text: str) -> tuple[str, str] | None:
    """Message and hint when ``text`` is not a kind-of-packages code."""
    kinds = package_kinds()
    if text in kinds:
        return None
    message = f"{text!r} is not a kind-of-packages code of {REC21_EDITION}"
    if text.upper() in kinds:
        return message, f"write it in capitals: {text.upper()} ({kinds[text.upper()]})"
    named = _codes_named(text, kinds)
    if named:
        listed = ", ".join(f"{code} ({kinds[code]})" for code in named[:_SHOWN])
        return message, f"write the two-character code, not the name: {listed}"
    return message, "write a two-character code, e.g. BX (box), CT (carton), PX (pallet)"


def _codes_named(text: str, kinds: dict[str, str]) -> list[str]:
    """The codes whose name is ``text`` (``BOX`` gives BX), else whose name begins with it
    (``Box, steel``); a plural ``BOXES`` or ``PALLETS`` is read as its singular."""
    words = text.strip().casefold()
    wanted = {words, words.removesuffix("s"), words.removesuffix("es")} - {""}
    exact = [code for code, name in kinds.items() if name.casefold() in wanted]
    if exact:
        return exact
    return [code for code, name in kinds.items() if name.split(",")[0].casefold() in wanted]


INCOTERMS_2020 = ("EXW", "FCA", "CPT", "CIP", "DAP", "DPU", "DDP", "FAS", "FOB", "CFR", "CIF")
_OTHER_DELIVERY_TERMS = "XXX"
# Rules of earlier editions that users still write: what became of each.
_RETIRED_INCOTERMS = {
    "DDU": ("Delivered Duty Unpaid", "has not existed since Incoterms 2010", "DAP"),
    "DAF": ("Delivered At Frontier", "has not existed since Incoterms 2010", "DAP"),
    "DES": ("Delivered Ex Ship", "has not existed since Incoterms 2010", "DAP"),
    "DEQ": ("Delivered Ex Quay", "has not existed since Incoterms 2010", "DPU"),
    "DAT": ("Delivered At Terminal", "was renamed DPU in Incoterms 2020", "DPU"),
    "C&F": ("Cost and Freight", "is written CFR since Incoterms 1990", "CFR"),
}
_SUCCESSOR_NAMES = {"DAP": "Delivered At Place", "DPU": "Delivered at Place Unloaded"}
_RULES = ", ".join(INCOTERMS_2020)


def incoterm_problem(text: str) -> tuple[str, str] | None:
    """Message and hint when ``text`` is not an Incoterms 2020 rule."""
    if text in INCOTERMS_2020 or text == _OTHER_DELIVERY_TERMS:
        return None
    upper = text.strip().upper()
    retired = _RETIRED_INCOTERMS.get(upper)
    if retired is not None:
        name, fate, successor = retired
        message = f"{text!r} is not an Incoterms 2020 rule: {upper} ({name}) {fate}"
        named = _SUCCESSOR_NAMES.get(successor)
        successor_text = f"{successor} ({named})" if named else successor
        hint = f"use {successor_text}, or whichever of the 11 rules the contract names: {_RULES}"
        return message, hint
    message = f"{text!r} is not an Incoterms 2020 rule"
    if upper in INCOTERMS_2020:
        return message, f"write it in capitals: {upper}"
    return message, f"write one of the 11 rules: {_RULES} (XXX for other delivery terms)"


SECURITY_CODES = ("0", "1", "2", "3")
# Plain scalars a YAML 1.1 reader (PyYAML, many editors and linters) takes for a boolean.
_YAML11_BOOLEANS = frozenset(
    word
    for base in ("y", "yes", "n", "no", "true", "false", "on", "off")
    for word in (base, base.capitalize(), base.upper())
)
_SECURITY_HINT = (
    'write the code as quoted text: security: "0" (no safety and security data), "1" (entry '
    'summary declaration), "2" (exit summary declaration) or "3" (both)'
)


def security_problem(text: str) -> tuple[str, str] | None:
    """Message and hint when ``text`` is not a security indicator code."""
    if text in SECURITY_CODES:
        return None
    message = f"{text!r} is not a security indicator code: 0, 1, 2 or 3"
    if text in _YAML11_BOOLEANS:
        truth = "true" if text.lower() in ("y", "yes", "true", "on") else "false"
        message += f"; unquoted, {text} is the boolean {truth} to a YAML 1.1 reader, not a code"
    return message, _SECURITY_HINT
