"""Where the store keeps its records between runs: nowhere, or a SQLite file."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from customs_batch.errors import ConfigError
from customs_batch.sandbox.records import JsonObject

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    tbl TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tbl, id)
)
"""
_UPSERT = (
    "INSERT INTO records (tbl, id, body) VALUES (?, ?, ?) "
    "ON CONFLICT (tbl, id) DO UPDATE SET body = excluded.body"
)


class Persistence(Protocol):
    """Loads every record at start and saves each change."""

    def load(self) -> Iterator[tuple[str, int | str, JsonObject]]:
        """Every saved record as (table, id, record), in insertion order."""
        ...

    def save(self, table: str, record_id: int | str, record: JsonObject) -> None:
        """Save one record."""
        ...

    def save_many(self, table: str, records: dict[int | str, JsonObject]) -> None:
        """Save many records at once."""
        ...

    def begin(self) -> None:
        """Start grouping saves into one transaction."""
        ...

    def commit(self) -> None:
        """Make the grouped saves durable."""
        ...

    def close(self) -> None:
        """Release the storage."""
        ...


class NoPersistence:
    """Data lives in memory only and is gone when the emulator stops."""

    def load(self) -> Iterator[tuple[str, int | str, JsonObject]]:
        """Nothing was saved."""
        return iter(())

    def save(self, table: str, record_id: int | str, record: JsonObject) -> None:
        """Keep nothing."""

    def save_many(self, table: str, records: dict[int | str, JsonObject]) -> None:
        """Keep nothing."""

    def begin(self) -> None:
        """Nothing to group."""

    def commit(self) -> None:
        """Nothing to make durable."""

    def close(self) -> None:
        """Nothing to release."""


class SqlitePersistence:
    """Records as JSON rows of one SQLite table; IDs are stored as JSON to keep their type."""

    def __init__(self, path: Path) -> None:
        try:
            # The store's lock serialises use; the connection may move between threads.
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise ConfigError(
                f"{path}: cannot open the emulator database: {exc}",
                hint="give --db a writable SQLite file path (it is created if missing)",
            ) from None
        self._lock = threading.Lock()

    def load(self) -> Iterator[tuple[str, int | str, JsonObject]]:
        """Every saved record, in the order it was first saved."""
        rows = self._db.execute("SELECT tbl, id, body FROM records ORDER BY rowid").fetchall()
        for table, record_id, body in rows:
            yield table, json.loads(record_id), json.loads(body)

    def save(self, table: str, record_id: int | str, record: JsonObject) -> None:
        """Upsert one record (autocommit: durable when this returns)."""
        with self._lock:
            self._db.execute(_UPSERT, (table, json.dumps(record_id), json.dumps(record)))

    def save_many(self, table: str, records: dict[int | str, JsonObject]) -> None:
        """Upsert many records in one transaction."""
        rows = [(table, json.dumps(key), json.dumps(value)) for key, value in records.items()]
        with self._lock:
            self._db.executemany(_UPSERT, rows)

    def begin(self) -> None:
        """Start a transaction: one commit for several saves is much cheaper than one each."""
        with self._lock:
            self._db.execute("BEGIN")

    def commit(self) -> None:
        """Commit the transaction."""
        with self._lock:
            self._db.execute("COMMIT")

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()
