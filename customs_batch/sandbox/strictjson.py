"""JSON as strict as a real service reads it: finite numbers, 64-bit integers, real text,
short echoes.

Python's parser takes ``NaN``, ``Infinity`` and ``1e400`` (which becomes infinity),
integers of any size, and a string holding half of a UTF-16 surrogate pair (``"\\ud800"``
with no ``"\\udc00"`` after it), which is no character; a service would refuse them, and
the emulator could not answer them back as JSON (no UTF-8 text holds a lone surrogate).
``loads`` refuses them; ``clip`` keeps a value echoed in an error short.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

from customs_batch.sandbox import contract

_CLIP = 60
_MAX_INT_DIGITS = len(str(contract.INT_MIN))  # sign and 19 digits


class NotStrictJson(ValueError):
    """A number that JSON allows but the service does not."""


class DuplicateKeys(ValueError):
    """Objects that name a key twice; ``reasons`` names each, ``where: what``.

    JSON leaves such an object's meaning to the parser (RFC 8259: names SHOULD be unique);
    Python's keeps the last value, another parser the first, so what the emulator would hold
    could not be told from the body."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


class _KeyTwice(Exception):
    """Raised by the decoder at the first object naming a key twice."""


class LoneSurrogates(ValueError):
    """Strings that hold half a surrogate pair; ``reasons`` names each, ``where: what``."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


SURROGATE = re.compile("[\ud800-\udfff]")
"""A UTF-16 surrogate code point: in a str from JSON, always one without its other half
(the parser joins a pair into the character it spells)."""

# Where a surrogate escape may be: the only way one gets into text decoded from UTF-8.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def loads(text: str) -> Any:
    """Parse ``text``; JSON errors raise ``ValueError``, refused numbers ``NotStrictJson``,
    objects naming a key twice ``DuplicateKeys``, strings holding a lone surrogate
    ``LoneSurrogates``.

    What ``json.loads`` does with these options, without building a decoder per call.
    """
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    try:
        value = _DECODER.decode(text)
    except _KeyTwice:  # rare: parsed again, keeping every duplicate, to say where each is
        raise DuplicateKeys(list(_duplicates(_MARKING_DECODER.decode(text), ""))) from None
    if _SURROGATE_ESCAPE.search(text):  # rare: the walk is skipped for every other body
        reasons = list(_lone_surrogates(value, ""))
        if reasons:
            raise LoneSurrogates(reasons)
    return value


def deeper_than(text: str, levels: int) -> bool:
    """Whether the JSON ``text`` (read already, so well formed) nests more than ``levels``
    objects and arrays inside one another (a scalar is level 0, ``{}`` and ``[]`` level 1).

    Read from the text's brackets outside its strings, by regular expressions and one
    running sum: a walk of the parsed value took a Python step per value (0.5 s for a
    departure of 300,000 items) in which the emulator answered no one."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > levels


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def shown_surrogate(text: str) -> str:
    """The first lone surrogate of ``text`` as its JSON escape (``\\udc00``), in ASCII."""
    found = SURROGATE.search(text)
    return f"\\u{ord(found.group()):04x}" if found else ""


_HALF_PAIR = (
    "holds {escape}, half of a UTF-16 surrogate pair without its other half, which is no "
    "character: send the character itself, or both halves of its pair"
)


def _lone_surrogates(value: Any, where: str) -> Iterator[str]:
    """``where: what`` for each string of ``value`` (keys too) holding a lone surrogate."""
    if isinstance(value, str):
        if SURROGATE.search(value):
            escape = shown_surrogate(value)
            yield f"{where or 'body'}: the string {_HALF_PAIR.format(escape=escape)}"
    elif isinstance(value, dict):
        for key, child in value.items():
            if SURROGATE.search(key):
                escape = shown_surrogate(key)
                yield f"{where or 'body'}: a key {_HALF_PAIR.format(escape=escape)}"
                continue  # a path through that key could not be shown
            yield from _lone_surrogates(child, f"{where}.{clip(key)}" if where else clip(key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _lone_surrogates(child, f"{where}[{index}]")


class _Marked(dict[str, Any]):
    """An object of a body that named keys twice, with the keys it named twice."""

    twice: tuple[str, ...] = ()


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise _KeyTwice
    return value


def _marking_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = _Marked(pairs)
    if len(value) != len(pairs):
        counts: dict[str, int] = {}
        for key, _ in pairs:
            counts[key] = counts.get(key, 0) + 1
        value.twice = tuple(key for key, count in counts.items() if count > 1)
    return value


def _duplicates(value: Any, where: str) -> Iterator[str]:
    """``where: what`` for each key an object of ``value`` names more than once."""
    if isinstance(value, dict):
        for key in getattr(value, "twice", ()):
            yield (
                f"{where or 'body'}: the key '{clip(key)}' is given more than once in one "
                "object, which leaves its value to the parser: send each key once"
            )
        for key, child in value.items():
            yield from _duplicates(child, f"{where}.{clip(key)}" if where else clip(key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _duplicates(child, f"{where}[{index}]")


def clip(text: str, limit: int = _CLIP) -> str:
    """``text``, or its start and how long it was when it is longer than ``limit``."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def _refuse_constant(name: str) -> Any:
    raise NotStrictJson(f"{name} is not a JSON number")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise NotStrictJson(f"the number {clip(literal)} is out of range (not a finite double)")
    return value


def _int64(literal: str) -> int:
    # The length test first: int() of a huge literal is slow, and refused past 4,300 digits.
    if len(literal) <= _MAX_INT_DIGITS:
        value = int(literal)
        if contract.INT_MIN <= value <= contract.INT_MAX:
            return value
    raise NotStrictJson(
        f"the integer {clip(literal)} is out of range ({contract.INT_MIN} to {contract.INT_MAX})"
    )


_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant,
    parse_float=_finite,
    parse_int=_int64,
    object_pairs_hook=_unique_object,
)
_MARKING_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant,
    parse_float=_finite,
    parse_int=_int64,
    object_pairs_hook=_marking_object,
)
