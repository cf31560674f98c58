"""The longest line, and the longest value, a manifest may hold; the longest line of every
other YAML file the tool reads (a team's policies, a sandbox seed).

A customs field is a few hundred characters at most, but a 200 MB line costs gigabytes
before any check sees it: libyaml copies the line into a token, the token into a Python
string, and the schema validator copies the value again into each error it builds. So the
raw bytes are measured before YAML reads them (a line longer than the bound is a
``yaml.line-too-long`` finding and the file is not parsed), and the loader refuses any value
longer than the bound that spans several lines (``yaml.value-too-long``). The bound is
``CUSTOMS_BATCH_MAX_LINE_MB`` megabytes (default 1).

A policy file and a seed are refused at a long line the same way (:func:`long_line_refusal`):
a 100 MB comment line in a policy file took 38 seconds to be read, and was then accepted.
"""

from __future__ import annotations

from collections.abc import Mapping

from customs_batch.env_numbers import positive_whole_number
from customs_batch.userfiles import MEGABYTE, megabytes

MAX_LINE_MB_VARIABLE = "CUSTOMS_BATCH_MAX_LINE_MB"
DEFAULT_MAX_LINE_MB = 1


def max_line_bytes(environ: Mapping[str, str] | None = None) -> int:
    """The longest line (and value) a manifest may hold, from ``CUSTOMS_BATCH_MAX_LINE_MB``."""
    megabytes = positive_whole_number(
        MAX_LINE_MB_VARIABLE, DEFAULT_MAX_LINE_MB, unit="megabytes", example=4, environ=environ
    )
    return megabytes * MEGABYTE


def first_long_line(data: bytes, limit: int) -> int | None:
    """The 1-based number of the first line of ``data`` longer than ``limit`` bytes, if any.

    Looks at windows of ``limit + 1`` bytes from the start of a line, jumping to the last
    line break in each: two windows cover at least ``limit`` bytes, so the scan makes a few
    hundred C-speed searches on a 256 MB file and never splits it into lines.
    """
    if len(data) <= limit:
        return None
    start, end = 0, len(data)
    while end - start > limit:
        last_break = data.rfind(b"\n", start, start + limit + 1)
        if last_break < 0:
            return data.count(b"\n", 0, start) + 1
        start = last_break + 1
    return None


def hint(limit: int, size: int = 0) -> str:
    """What to do about a line or a value over ``limit`` bytes (of ``size`` bytes, if known)."""
    return (
        "No customs field is this long: check that this is the manifest you meant (not a "
        f"generated or binary file), or split the value. {_raise_it(limit, size)}"
    )


def long_line_refusal(data: bytes, what: str) -> tuple[int, str, str] | None:
    """The line, message and hint refusing ``data`` (the bytes of ``what``: "a policy
    file") for its first line longer than :func:`max_line_bytes`, or None."""
    limit = max_line_bytes()
    line = first_long_line(data, limit)
    if line is None:
        return None
    message = f"line {line} is longer than {megabytes(limit)}; the file is not read further"
    return (
        line,
        message,
        (
            f"{what[0].upper()}{what[1:]} holds lines of a few hundred characters: check that this "
            f"is the file you meant (not a generated or binary file). {_raise_it(limit)}"
        ),
    )


def _raise_it(limit: int, size: int = 0) -> str:
    raised = max(2 * limit // MEGABYTE, 2, -(-size // MEGABYTE))
    return f"To read it anyway, raise the bound with {MAX_LINE_MB_VARIABLE}={raised} (megabytes)."
