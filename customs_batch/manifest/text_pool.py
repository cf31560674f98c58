"""A pool of repeated texts, so that a bulk load keeps one string per distinct value."""

from __future__ import annotations

from typing import Any


class TextPool:
    """One string object for each text a field repeats, shared by every record holding it.

    A plan keeps every document: in an export of 100,000 rows, or 10,000 manifests, the
    same shipment, party or action text would otherwise be one string per document. A field
    (a spreadsheet column, a spec field) found to hold more than ``LIMIT`` different texts
    (an id per row) stops being pooled and its pool is freed.
    """

    __slots__ = ("_columns",)
    LIMIT = 1024

    def __init__(self) -> None:
        self._columns: dict[str | int, dict[str, str] | None] = {}

    def share(self, row: dict[str, Any]) -> dict[str, Any]:
        """``row`` with each of its texts replaced by the pooled copy (changed in place)."""
        columns = self._columns
        for name, value in row.items():
            if type(value) is not str:
                continue
            pool = columns.get(name)
            if pool is None:
                if name in columns:
                    continue  # too many different texts: not pooled
                pool = columns[name] = {}
            shared = pool.setdefault(value, value)
            if shared is not value:
                row[name] = shared
            elif len(pool) > self.LIMIT:
                columns[name] = None
        return row

    def shared(self, column: str | int, value: str) -> str:
        """``value`` as pooled for ``column`` (a name, or a place in a tuple): the one copy
        of it, unless the column was found to hold more than ``LIMIT`` different texts."""
        columns = self._columns
        pool = columns.get(column)
        if pool is None:
            if column in columns:
                return value  # too many different texts: not pooled
            pool = columns[column] = {}
        shared = pool.setdefault(value, value)
        if shared is value and len(pool) > self.LIMIT:
            columns[column] = None
        return shared
