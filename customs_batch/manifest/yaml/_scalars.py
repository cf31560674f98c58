"""Plain YAML scalars resolved by the YAML 1.2 core schema (not PyYAML's YAML 1.1 rules).

YAML 1.1 turns ``NO`` into false, ``0150`` into an octal 104 and ``1:30`` into 90; customs
codes are full of such strings. Where the schema does not say "string only", the loader uses
the 1.2 core schema: true/false, null/~/empty, decimal, ``0o`` octal and ``0x`` hex integers,
floats including ``.inf`` and ``.nan``; everything else stays the text it is.
"""

from __future__ import annotations

import math
import re
import sys

ScalarValue = str | int | float | bool | None

_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
NULLS = frozenset({"", "~", "null", "Null", "NULL"})
"""The plain scalars that are YAML's null (an empty value too)."""
_INT = re.compile(r"[-+]?[0-9]+")
_OCT = re.compile(r"0o[0-7]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)")
# Only text starting with one of these characters can be anything but a string.
_MAYBE_NOT_STRING = frozenset("0123456789+-.tTfFnN~")


MAX_BITS = 1024
"""No whole number of more bits is read: past the largest double (about 1.8e308), JSON
readers make it infinite, and no field holds one."""


def integer(text: str, base: int = 10) -> int | None:
    """``int(text, base)``, or None for a number past the largest double (:data:`MAX_BITS`)
    or with more decimal digits than Python turns into text (``sys.get_int_max_str_digits``,
    4,300 by default): such a number cannot be sent as a JSON number, nor printed in a
    message or a request, and no field holds one. Hex and octal convert without the digits'
    limit, so their size is checked before anything prints them."""
    try:
        value = int(text, base)
    except ValueError:
        return None
    if value.bit_length() > MAX_BITS:
        return None
    limit = sys.get_int_max_str_digits()
    if limit and value.bit_length() * math.log10(2) >= limit - 1:
        try:  # near the limit: as Python decides (it refuses before converting)
            str(value)
        except ValueError:
            return None
    return value


def number_too_long(text: str) -> bool:
    """Whether ``text`` is a whole number (decimal, ``0o`` octal or ``0x`` hex) that
    :func:`integer` refuses as too long: YAML's number, kept as the text it is."""
    for pattern, start, base in ((_INT, 0, 10), (_OCT, 2, 8), (_HEX, 2, 16)):
        if pattern.fullmatch(text):
            return integer(text[start:], base) is None
    return False


def resolve_plain(text: str) -> ScalarValue:
    """The value of a plain (unquoted) scalar under the YAML 1.2 core schema."""
    if not text:
        return None
    if text[0] not in _MAYBE_NOT_STRING:
        return text
    if text in _BOOLS:
        return _BOOLS[text]
    if text in NULLS:
        return None
    # A number too long to print stays the text it is, and the schema reports its type.
    if _INT.fullmatch(text):
        return _or_text(integer(text), text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _OCT.fullmatch(text):
        return _or_text(integer(text[2:], 8), text)
    if _HEX.fullmatch(text):
        return _or_text(integer(text[2:], 16), text)
    if _INF.fullmatch(text):
        return float("-inf") if text[0] == "-" else float("inf")
    if _NAN.fullmatch(text):
        return float("nan")
    return text


def _or_text(value: int | None, text: str) -> int | str:
    return text if value is None else value


def resolve_tagged(tag: str, text: str) -> ScalarValue | ValueError:
    """The value of a scalar with an explicit core tag (``!!int 5``); a ValueError when it
    does not fit the tag (returned, not raised, so the caller can make it a finding)."""
    if tag == "str":
        return text
    value = resolve_plain(text)
    wanted: dict[str, tuple[type, ...]] = {
        "int": (int,),
        "float": (float, int),
        "bool": (bool,),
        "null": (type(None),),
    }
    types = wanted.get(tag)
    if types is None:
        return ValueError(f"the tag !!{tag} is not supported")
    if isinstance(value, bool) and bool not in types:
        return ValueError(f"{text!r} is not a valid !!{tag}")
    if not isinstance(value, types):
        return ValueError(f"{text!r} is not a valid !!{tag}")
    return float(value) if tag == "float" and value is not None else value
