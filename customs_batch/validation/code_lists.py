"""Closed customs code lists: kinds of packages, Incoterms, the security indicator, transport
modes and guarantee types.

- Kinds of packages are the codes of UN/ECE Recommendation 21, Revision 12 (2021), Annexes
  V and VI: the list the EU customs data requirements take for "kind of packages". No
  maintained Python package ships it, so the list is kept here as data
  (``data/rec21-package-kinds.csv``: code and name), taken from UN/CEFACT's own code-list
  repository (``uncefact/vocab-codes``, ``CLR/Rec21/current/code-list.csv``), without the
  code marked deleted there (``SX``, set).
- Incoterms are the 11 rules of Incoterms 2020 (ICC), plus ``XXX``, which the EU customs
  code list for delivery terms adds for terms other than those rules.
- The security indicator of a transit declaration (NCTS phase 5 code list CL217) is one of
  ``0`` (no safety and security data), ``1`` (entry summary declaration), ``2`` (exit
  summary declaration) and ``3`` (both), written as text.
- Transport modes are the EU customs code list CL018 (TransportMode, the one-digit codes of
  UN/ECE Recommendation 19 that customs use: no ``0``, not specified, and no ``6``,
  multimodal), kept as data (``data/ncts-cl018-transport-modes.csv``). The transport type of
  a ``TransportMeans`` entry may also be one of the two-digit codes of the NCTS transport-mode
  list (``30``, road), which the service's own example writes
  (``data/ncts-transport-modes-two-digit.csv``).
- Guarantee types are the NCTS (phase 5) code list CL251 (GuaranteeType), kept as data
  (``data/ncts-cl251-guarantee-types.csv``).

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


_DATA = Path(__file__).parent / "data"
TRANSPORT_MODE_LIST = "the EU customs code list CL018"
GUARANTEE_TYPE_LIST = "the NCTS code list CL251"


def _read_codes(name: str) -> dict[str, str]:
    with (_DATA / name).open(encoding="utf-8", newline="") as file:
        return {row["code"]: row["name"] for row in csv.DictReader(file)}


@cache
def transport_modes() -> dict[str, str]:
    """The one-digit transport modes of CL018, with their names (read once per process)."""
    return _read_codes("ncts-cl018-transport-modes.csv")


@cache
def two_digit_transport_modes() -> dict[str, str]:
    """The two-digit codes of the NCTS transport-mode list (``30``, road transport)."""
    return _read_codes("ncts-transport-modes-two-digit.csv")


@cache
def guarantee_types() -> dict[str, str]:
    """The guarantee types of CL251, with their names (read once per process)."""
    return _read_codes("ncts-cl251-guarantee-types.csv")


# Words a mode is written in instead of its code, each with the code meant.
_MODE_WORDS = {
    "1": ("sea", "maritime", "ship", "vessel", "ocean"),
    "2": ("rail", "railway", "train"),
    "3": ("road", "truck", "lorry", "trailer"),
    "4": ("air", "aircraft", "plane", "flight"),
    "5": ("post", "postal", "mail"),
    "7": ("pipeline", "fixed"),
    "8": ("inland", "waterway", "barge", "river"),
}
# Codes of Recommendation 19 that the customs list leaves out.
_REC19_ONLY = {
    "0": "0 (transport mode not specified) of UN/ECE Recommendation 19 is not a customs code",
    "6": "6 (multimodal transport) of UN/ECE Recommendation 19 is not a customs code",
}


def _mode_listed() -> str:
    return ", ".join(f"{code} ({name.lower()})" for code, name in transport_modes().items())


def _mode_named(text: str) -> str | None:
    """The CL018 code whose name or usual word ``text`` is (``Road``, ``truck``: 3)."""
    words = text.strip().casefold().replace("-", " ").split()
    if not words:
        return None
    for code, synonyms in _MODE_WORDS.items():
        if words[0] in synonyms:
            return code
    return None


def _mode_problem(text: str, two_digit: bool) -> tuple[str, str] | None:
    modes = transport_modes()
    if text in modes or (two_digit and text in two_digit_transport_modes()):
        return None
    kind = "one digit, or one of the two-digit NCTS codes" if two_digit else "one digit"
    message = f"{text!r} is not a transport mode code of {TRANSPORT_MODE_LIST} ({kind})"
    if text in _REC19_ONLY:
        message = f"{message}: {_REC19_ONLY[text]}"
        hint = f"write the mode of the active means of transport, or 9 when it is unknown: {_mode_listed()}"
        return message, hint
    paired = two_digit_transport_modes()
    if not two_digit and text in paired and text[0] in modes:
        hint = (
            f"write {text[0]} ({modes[text[0]]}): {text} is the same mode in the two-digit NCTS "
            "list, which this field does not take"
        )
        return message, hint
    named = _mode_named(text)
    if named is not None:
        return message, f"write the code, not the name: {named} ({modes[named]})"
    if two_digit and len(text) == 2 and text[0] in modes and text.isdigit():
        codes = " or ".join(code for code in paired if code[0] == text[0])
        return message, f"write {text[0]} ({modes[text[0]]}) or {codes}"
    return message, f"write one of the codes, quoted: {_mode_listed()}"


def transport_mode_problem(text: str) -> tuple[str, str] | None:
    """Message and hint when ``text`` is not a transport mode of CL018 (one digit)."""
    return _mode_problem(text, two_digit=False)


def transport_means_mode_problem(text: str) -> tuple[str, str] | None:
    """Message and hint when ``text`` is no transport mode of CL018 nor a two-digit NCTS one."""
    return _mode_problem(text, two_digit=True)


_GUARANTEE_SHORT = {
    "0": "guarantee waiver",
    "1": "comprehensive guarantee",
    "2": "individual guarantee by a guarantor",
    "3": "individual guarantee in cash",
    "4": "individual guarantee in vouchers",
    "5": "waiver, amount below the statistical threshold",
    "8": "not required, public body",
    "9": "individual guarantee with multiple usage",
    "A": "waiver by agreement",
    "B": "TIR",
    "J": "not required up to the office of transit",
    "R": "not required, Rhine or Danube",
}


def _guarantees_named(text: str, types: dict[str, str]) -> list[str]:
    """The codes whose name holds every word of ``text`` (``waiver``: 0, 5 and A; ``TIR``: B);
    a plural ``vouchers`` is read as its singular too."""
    words = [word.removesuffix("s") for word in text.casefold().replace("-", " ").split()]
    if not words or all(len(word) < 3 for word in words):
        return []
    found = []
    for code, name in types.items():
        name_words = {word.strip(",()").removesuffix("s") for word in name.casefold().split()}
        if all(word in name_words for word in words):
            found.append(code)
    return found


def guarantee_type_problem(text: str) -> tuple[str, str] | None:
    """Message and hint when ``text`` is not a guarantee type of CL251."""
    types = guarantee_types()
    if text in types:
        return None
    message = f"{text!r} is not a guarantee type of {GUARANTEE_TYPE_LIST}"
    if text.upper() in types:
        return message, f"write it in capitals: {text.upper()} ({types[text.upper()]})"
    named = _guarantees_named(text, types)
    if named:
        listed = ", ".join(f"{code} ({_GUARANTEE_SHORT[code]})" for code in named)
        return message, f"write the code, not the name: {listed}"
    listed = ", ".join(f"{code} ({short})" for code, short in _GUARANTEE_SHORT.items())
    return message, f"write one of the codes, quoted: {listed}"
