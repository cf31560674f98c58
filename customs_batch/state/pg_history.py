"""The history of a PostgreSQL state: one row per entry in ``customs_batch_history``.

Each entry is committed when :meth:`PostgresHistory.append` returns (autocommit: one
round trip), so :meth:`~PostgresHistory.sync` has nothing left to do. The entry is kept as
the exact text that was hashed. The history has its own connection, so that a history
write never waits behind the state session's group commit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import psycopg
from psycopg.rows import TupleRow

from customs_batch.errors import StateError
from customs_batch.state.history import Chain, StoredEntry, last_body
from customs_batch.state.pg_connect import LOST_HINT, connect, database_error
from customs_batch.state.pg_tables import ensure_tables

T = TypeVar("T")
_ATTEMPTS = 5


class PostgresHistory:
    """The history of the state ``name`` in the database at ``url``."""

    def __init__(self, url: str, name: str) -> None:
        self.url = url
        self.name = name
        self._lock = threading.Lock()
        self._connection: psycopg.Connection[TupleRow] | None = None
        self._chain: Chain | None = None

    def __repr__(self) -> str:  # never the URL: it may carry a password
        return f"PostgresHistory(name={self.name!r})"

    def _connect(self) -> psycopg.Connection[TupleRow]:
        if self._connection is None:
            connection = connect(self.url)
            try:
                self._guard("create or upgrade the tables", lambda: ensure_tables(connection))
            except BaseException:
                connection.close()
                raise
            self._connection = connection
        return self._connection

    def _guard(self, doing: str, action: Callable[[], T]) -> T:
        try:
            return action()
        except psycopg.Error as exc:
            raise database_error(exc, self.url, doing, hint=LOST_HINT) from None

    def append(self, fields: Mapping[str, Any]) -> int:
        with self._lock:
            connection = self._connect()
            for _ in range(_ATTEMPTS):
                if self._chain is None:
                    self._chain = Chain(self._last(connection))
                seq, line = self._chain.seal(fields)
                try:
                    connection.execute(
                        "INSERT INTO customs_batch_history (state, seq, entry) VALUES (%s, %s, %s)",
                        (self.name, seq, line.decode()),
                    )
                except psycopg.errors.UniqueViolation:
                    # Another process wrote entry ``seq`` (a run whose lock was broken):
                    # chain on from the entry that is there now.
                    self._chain = None
                    continue
                except psycopg.Error as exc:
                    self._chain = None
                    raise database_error(
                        exc, self.url, "record a history entry", hint=LOST_HINT
                    ) from None
                return seq
            raise StateError(
                f"the history of the state {self.name} is being written by another process",
                hint="check who runs apply on this state (`customs-batch force-unlock` may have "
                "broken a live run's lock); run the command again once it has stopped",
            )

    def _last(self, connection: psycopg.Connection[TupleRow]) -> dict[str, Any] | None:
        row = self._guard(
            "read the history",
            lambda: connection.execute(
                "SELECT entry FROM customs_batch_history WHERE state = %s "
                "ORDER BY seq DESC LIMIT 1",
                (self.name,),
            ).fetchone(),
        )
        return last_body(row[0].encode() if row else None)

    def entry_at(self, seq: int) -> dict[str, Any] | None:
        """The fields of entry ``seq`` (None: there is none, or not a JSON object)."""
        with self._lock:
            connection = self._connect()
            row = self._guard(
                "read the history",
                lambda: connection.execute(
                    "SELECT entry FROM customs_batch_history WHERE state = %s AND seq = %s",
                    (self.name, seq),
                ).fetchone(),
            )
        return StoredEntry(f"entry {seq}", str(row[0]).encode()).body() if row else None

    def last_entry(self) -> dict[str, Any] | None:
        """The fields of the newest entry (None: none, or not a JSON object)."""
        with self._lock:
            return self._last(self._connect())

    def sync(self) -> None:
        """Nothing to do: each entry is committed when appended."""

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def entries(self) -> Iterator[StoredEntry]:
        connection = self._connect()
        try:
            # A named (server-side) cursor streams the rows; it lives in a transaction.
            with (
                connection.transaction(),
                connection.cursor(name="customs_batch_history_read") as cursor,
            ):
                cursor.execute(
                    "SELECT seq, entry FROM customs_batch_history WHERE state = %s ORDER BY seq",
                    (self.name,),
                )
                for seq, entry in cursor:
                    yield StoredEntry(f"entry {seq}", str(entry).encode())
        except psycopg.Error as exc:
            raise database_error(exc, self.url, "read the history", hint=LOST_HINT) from None
