"""Positive whole numbers read from environment variables (the size limits).

``CUSTOMS_BATCH_MAX_FILE_MB``, ``CUSTOMS_BATCH_MAX_LINE_MB`` and
``CUSTOMS_BATCH_MAX_DOCUMENT_VALUES`` are read alike: unset or blank is the default; digits
0-9 only, at least 1 and at most 15 of them (``int()`` refuses thousands of digits); any
other value is a :class:`ConfigError` that shows the value cut to 32 characters.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from customs_batch.errors import ConfigError

_MAX_DIGITS = 15
_ECHOED = 32


def positive_whole_number(
    variable: str,
    default: int,
    *,
    unit: str,
    example: int,
    environ: Mapping[str, str] | None = None,
) -> int:
    """The whole number ``variable`` holds, ``default`` when it is unset or blank.

    ``unit`` names what is counted in the error (``"megabytes"``), ``example`` is the value
    the hint suggests.
    """
    environ = os.environ if environ is None else environ
    text = environ.get(variable, "").strip()
    if not text:
        return default
    # Digits 0-9 only, and few enough to be a number (int() refuses thousands of them).
    if not (text.isascii() and text.isdigit()) or len(text) > _MAX_DIGITS or int(text) < 1:
        raise ConfigError(
            f"{variable}={text[:_ECHOED]!r} is not a number of {unit}",
            hint=f"set it to a whole number in digits 0-9, e.g. {variable}={example}, or unset it",
        )
    return int(text)
