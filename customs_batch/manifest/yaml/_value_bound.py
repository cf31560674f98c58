"""The most YAML values one document may hold.

Each value costs about 500 bytes as it is read (a node with two marks, then the value, its
position and the schema's view of it), so a short file of flow lists (``[1,1,1,...]``: two
bytes a value) could take hundreds of times its size in memory: 2 MB of them took 0.5 GB,
and a run whose memory runs out is killed by the system before Python can report anything.
The values of a document (every key, value, list and mapping) are counted while it is
composed, and a document with more than the bound is a ``yaml.too-large`` finding, let go
before its nodes all exist. The largest customs document, a departure of 999 goods items
with five packages each, holds about 64,000. The bound is
``CUSTOMS_BATCH_MAX_DOCUMENT_VALUES`` (default 200,000).
"""

from __future__ import annotations

from collections.abc import Mapping

from customs_batch.env_numbers import positive_whole_number

MAX_DOCUMENT_VALUES_VARIABLE = "CUSTOMS_BATCH_MAX_DOCUMENT_VALUES"
DEFAULT_MAX_DOCUMENT_VALUES = 200_000


def max_document_values(environ: Mapping[str, str] | None = None) -> int:
    """The most values a document may hold, from ``CUSTOMS_BATCH_MAX_DOCUMENT_VALUES``."""
    return positive_whole_number(
        MAX_DOCUMENT_VALUES_VARIABLE,
        DEFAULT_MAX_DOCUMENT_VALUES,
        unit="values",
        example=400000,
        environ=environ,
    )


def too_many_values(line: int, limit: int, held: int | None = None) -> tuple[str, str]:
    """The message and hint of a document at ``line`` over ``limit`` values, ``held`` of
    them (None: not known, the YAML after the bound could not be read)."""
    many = (
        f"{held:,} YAML values, more than {limit:,}" if held else f"more than {limit:,} YAML values"
    )
    message = (
        f"the document at line {line} holds {many} (every key, value, list and mapping "
        "counts); it is not read"
    )
    hint = (
        "No customs document needs this many (a departure of 999 goods items holds about "
        "64,000): check that this is the manifest you meant, or split it into several "
        "documents or files. To read it anyway, raise the bound with "
        f"{MAX_DOCUMENT_VALUES_VARIABLE}={held or 2 * limit}."
    )
    return message, hint
