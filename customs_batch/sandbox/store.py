"""The emulator's data: tables of wire records in memory, written through to SQLite if asked.

Every table is an insertion-ordered dict from record ID to record, guarded by one lock
(the in-process transport and uvicorn may call from different threads). With a database
file every change is also written to it, and a restart reads the tables back: the seed
is applied only to a new, empty database.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager
from enum import StrEnum
from pathlib import Path

from customs_batch.sandbox.persistence import NoPersistence, Persistence, SqlitePersistence
from customs_batch.sandbox.records import JsonObject, packed_fields

RecordId = int | str
Bucket = dict[RecordId, None]  # the IDs of the records of one value, as an ordered set


class Table(StrEnum):
    """The tables of the store. An emulator module may keep its records in a table of its
    own, by any other name: a table is made when first written."""

    API_KEYS = "apiKeys"
    SHIPMENTS = "shipments"  # by integer ID: the shipment list entries
    RTO_SHIPMENTS = "rtoShipments"  # by shp_ public ID: process type, parties, declarations
    HAWBS = "hawbs"
    ALLOCATIONS = "allocations"
    MOVEMENTS = "movements"
    DECLARATIONS = "declarations"
    ITEMS = "declarationItems"
    TEMPLATE_GROUPS = "templateGroups"
    TRANSIT = "transitDeclarations"
    IDEMPOTENCY = "idempotency"
    CLOCK = "clock"  # the advances of a manual clock (clock.py)


class Store:
    """Tables of records; hold ``lock()`` around a read-modify-write sequence."""

    def __init__(self, db_path: Path | None = None) -> None:
        self._persistence: Persistence = (
            SqlitePersistence(db_path) if db_path is not None else NoPersistence()
        )
        self._tables: dict[str, dict[RecordId, JsonObject]] = {table: {} for table in Table}
        self._largest: dict[str, int] = dict.fromkeys(Table, 0)  # largest integer ID
        # The indexes find() built, by table and field names: record IDs by field values.
        self._indexes: dict[str, dict[tuple[str, ...], dict[Hashable, Bucket]]] = {}
        for table_name, record_id, record in self._persistence.load():
            self._remember(table_name, record_id, packed_fields(record))
        self._lock = threading.RLock()

    def _remember(self, table: str, record_id: RecordId, record: JsonObject) -> None:
        records = self._tables.setdefault(table, {})
        indexes = self._indexes.get(table)
        if indexes:
            replaced = records.get(record_id)
            if replaced is not None:
                _unindex(indexes, record_id, replaced)
            _index(indexes, record_id, record)
        records[record_id] = record
        if isinstance(record_id, int) and record_id > self._largest.get(table, 0):
            self._largest[table] = record_id

    @property
    def is_empty(self) -> bool:
        """True for a new store (no seed applied yet)."""
        return not any(self._tables.values())

    def lock(self) -> AbstractContextManager[bool]:
        """Hold the store for a sequence of reads and writes that must not interleave."""
        return self._lock  # itself, not wrapped in a generator: it is taken on every write

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Hold the store and write every change made inside to the database at once."""
        with self._lock:
            self._persistence.begin()
            try:
                yield
            finally:
                self._persistence.commit()

    def get(self, table: str, record_id: RecordId) -> JsonObject | None:
        """The record ``record_id`` of ``table``, or None."""
        return self._tables.get(table, {}).get(record_id)

    def ids(self, table: str) -> list[RecordId]:
        """Every record ID of ``table`` in insertion order."""
        with self._lock:
            return list(self._tables.get(table, {}))

    def values(self, table: str) -> list[JsonObject]:
        """Every record of ``table`` in insertion order."""
        with self._lock:
            return list(self._tables.get(table, {}).values())

    def find(self, table: str, **fields: Hashable) -> list[JsonObject]:
        """The records of ``table`` whose ``fields`` hold these values, in insertion order.

        The first call for a table and field names (in this order) indexes the table by
        them, and every later write keeps the index up to date: a lookup then costs the same
        however many records the table holds. The fields must hold JSON scalars (hashable),
        and a record must be replaced by ``put``, never changed in place (as every record of
        the store).
        """
        names = tuple(fields)
        with self._lock:
            index = self._indexes.get(table, {}).get(names)
            if index is None:
                index = self._indexes.setdefault(table, {})[names] = {}
                for record_id, record in self._tables.get(table, {}).items():
                    _index({names: index}, record_id, record)
            bucket = index.get(tuple(fields.values()))
            if not bucket:
                return []
            records = self._tables[table]
            ids = list(bucket)
            if len(ids) > 1:  # a rewritten record keeps its place in the table, not the bucket
                order = {record_id: n for n, record_id in enumerate(records)}
                ids.sort(key=order.__getitem__)
            return [records[record_id] for record_id in ids]

    def put(self, table: str, record_id: RecordId, record: JsonObject) -> None:
        """Insert or replace a record (and write it through to the database)."""
        with self._lock:
            self._remember(table, record_id, record)
            self._persistence.save(str(table), record_id, record)

    def put_many(self, table: str, records: dict[RecordId, JsonObject]) -> None:
        """Insert or replace many records in one database transaction."""
        with self.batch():
            for record_id, record in records.items():
                self._remember(table, record_id, record)
            self._persistence.save_many(str(table), records)

    def rekey(self, table: str, old_id: RecordId, new_id: RecordId) -> None:
        """Move a record to another ID (the old row is deleted from the database)."""
        with self.batch():
            record = self._tables[table].pop(old_id)
            _unindex(self._indexes.get(table, {}), old_id, record)
            self._remember(table, new_id, record)
            self._persistence.save(str(table), new_id, record)
            self._persistence.delete(str(table), old_id)

    def next_id(self, table: str) -> int:
        """One more than the largest integer ID of ``table`` (1 for an empty table)."""
        return self._largest.get(table, 0) + 1

    def count(self, table: str) -> int:
        """How many records ``table`` holds."""
        return len(self._tables.get(table, {}))

    def close(self) -> None:
        """Close the database, if any."""
        self._persistence.close()


def _index(
    indexes: dict[tuple[str, ...], dict[Hashable, Bucket]], record_id: RecordId, record: JsonObject
) -> None:
    for names, index in indexes.items():
        index.setdefault(tuple(map(record.get, names)), {})[record_id] = None


def _unindex(
    indexes: dict[tuple[str, ...], dict[Hashable, Bucket]], record_id: RecordId, record: JsonObject
) -> None:
    for names, index in indexes.items():
        values = tuple(map(record.get, names))
        bucket = index.get(values)
        if bucket is not None:
            bucket.pop(record_id, None)
            if not bucket:
                del index[values]
