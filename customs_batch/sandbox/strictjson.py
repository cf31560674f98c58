"""JSON as strict as a real service reads it: finite numbers, 64-bit integers, short echoes.

Python's parser takes ``NaN``, ``Infinity`` and ``1e400`` (which becomes infinity) and
integers of any size; a service would refuse them, and the emulator could not answer them
back as JSON. ``loads`` refuses them; ``clip`` keeps a value echoed in an error short.
"""

from __future__ import annotations

import json
import math
from typing import Any

from customs_batch.sandbox import contract

_CLIP = 60
_MAX_INT_DIGITS = len(str(contract.INT_MIN))  # sign and 19 digits


class NotStrictJson(ValueError):
    """A number that JSON allows but the service does not."""


def loads(text: str) -> Any:
    """Parse ``text``; JSON errors raise ``ValueError``, refused numbers ``NotStrictJson``.

    What ``json.loads`` does with these options, without building a decoder per call.
    """
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER.decode(text)


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


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite, parse_int=_int64)
