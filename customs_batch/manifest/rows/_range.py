"""``--rows`` and ``forEach.rows``: a range of spreadsheet rows (light to import: a run
without a spreadsheet reads no ``forEach`` option)."""

from __future__ import annotations

import re
from dataclasses import dataclass

NO_ROW_IN_RANGE = "no-row-in-range"
"""The :attr:`~customs_batch.findings.Finding.signal` of the warning for a ``forEach`` whose
sheet has no data row in the range asked for: with ``--rows``, the run fails when every
such sheet says so (:func:`customs_batch.validation.batch.rows_named_none`)."""

_RANGE = re.compile(r"\s*([0-9]*)\s*(?:(-)\s*([0-9]*))?\s*")

ROW_PAST_EVERY_FILE = 10**18
"""What a row number of more digits reads as: past the last row of any file (an XLSX sheet
holds 1,048,576), and never converted from its digits (int() refuses more than 4,300)."""


def _row(digits: str) -> int:
    significant = digits.lstrip("0")
    if len(significant) > len(str(ROW_PAST_EVERY_FILE)):
        return ROW_PAST_EVERY_FILE
    return min(int(significant or "0"), ROW_PAST_EVERY_FILE)


@dataclass(frozen=True)
class RowRange:
    """Rows ``first``..``last`` as the spreadsheet numbers them (both ends included)."""

    first: int | None = None
    last: int | None = None

    @classmethod
    def parse(cls, text: str) -> RowRange | None:
        """``10-20``, ``10-``, ``-20`` or ``15``; None when ``text`` is none of these (a
        row 0, a last row before the first)."""
        match = _RANGE.fullmatch(text)
        if match is None or not (match.group(1) or match.group(3)):
            return None
        first = _row(match.group(1)) if match.group(1) else None
        last = _row(match.group(3)) if match.group(3) else None
        if match.group(2) is None:
            last = first
        if first == 0 or last == 0:
            return None  # rows are numbered from 1, as the spreadsheet numbers them
        if first is not None and last is not None and last < first:
            return None
        return cls(first, last)
