"""The tables of the PostgreSQL state backend, created on first use and upgraded in place.

``customs_batch_schema`` (a name existing databases hold) keeps the version of the tables.
``UPGRADES[n]`` turns version ``n`` into ``n + 1`` (version 0: no tables yet); each runs in
the same transaction as the update of the version, under a transaction-level advisory lock,
so two runners that start together on an empty database do not both create the tables, and a
failed upgrade leaves the previous version whole.

Version 1: the states, their resources (one row per address) and the journal.
Version 2: the lock holder's row (who holds a state's advisory lock, since when).
Version 3: the shared rate limits, one row per API key (by a fingerprint, never the key).
Version 4: the last requests of each key (when each left, when its answer came back),
so the shared limit keeps the service's window across processes.
Version 5: the history, one row per entry of each state's hash-chained log
(``customs_batch.state.history``).
Version 6: the service each state's records are objects of (its environment's base URL),
so that an environment pointed at another service reads records back before it sends.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg
from psycopg.rows import TupleRow

from customs_batch.errors import StateError

TABLES_LOCK_KEY = 0x43_42_53_43_48_45_4D_41  # "CBSCHEMA": serialises creation and upgrades


def _version_1(cursor: psycopg.Cursor[TupleRow]) -> None:
    cursor.execute(
        """
        CREATE TABLE customs_batch_states (
            name text PRIMARY KEY,
            lineage text NOT NULL,
            serial bigint NOT NULL
        );
        CREATE TABLE customs_batch_resources (
            state text NOT NULL REFERENCES customs_batch_states (name) ON DELETE CASCADE,
            address text NOT NULL,
            record jsonb NOT NULL,
            PRIMARY KEY (state, address)
        );
        CREATE TABLE customs_batch_journal (
            seq bigserial PRIMARY KEY,
            state text NOT NULL,
            lineage text NOT NULL,
            address text NOT NULL,
            record jsonb
        );
        CREATE INDEX customs_batch_journal_state ON customs_batch_journal (state, seq);
        """
    )


def _version_2(cursor: psycopg.Cursor[TupleRow]) -> None:
    cursor.execute(
        """
        CREATE TABLE customs_batch_locks (
            state text PRIMARY KEY,
            lock_id text NOT NULL,
            holder text NOT NULL,
            host text NOT NULL,
            pid integer NOT NULL,
            operation text NOT NULL,
            created text NOT NULL,
            backend_pid integer NOT NULL
        );
        """
    )


def _version_3(cursor: psycopg.Cursor[TupleRow]) -> None:
    cursor.execute(
        """
        CREATE TABLE customs_batch_rate_budgets (
            fingerprint text PRIMARY KEY,
            next_slot double precision NOT NULL
        );
        """
    )


def _version_4(cursor: psycopg.Cursor[TupleRow]) -> None:
    cursor.execute(
        """
        ALTER TABLE customs_batch_rate_budgets
            ADD COLUMN last_request bigint NOT NULL DEFAULT 0,
            ADD COLUMN horizon double precision NOT NULL DEFAULT 0;
        CREATE TABLE customs_batch_rate_requests (
            fingerprint text NOT NULL
                REFERENCES customs_batch_rate_budgets (fingerprint) ON DELETE CASCADE,
            request bigint NOT NULL,
            sent double precision NOT NULL,
            answered double precision,
            PRIMARY KEY (fingerprint, request)
        );
        """
    )


def _version_5(cursor: psycopg.Cursor[TupleRow]) -> None:
    # The entry is kept as the text that was hashed: jsonb would reorder its keys.
    cursor.execute(
        """
        CREATE TABLE customs_batch_history (
            state text NOT NULL,
            seq bigint NOT NULL,
            entry text NOT NULL,
            PRIMARY KEY (state, seq)
        );
        """
    )


def _version_6(cursor: psycopg.Cursor[TupleRow]) -> None:
    cursor.execute(
        """
        CREATE TABLE customs_batch_services (
            state text PRIMARY KEY,
            service text NOT NULL
        );
        """
    )


UPGRADES: list[Callable[[psycopg.Cursor[TupleRow]], None]] = [
    _version_1,
    _version_2,
    _version_3,
    _version_4,
    _version_5,
    _version_6,
]
TABLES_VERSION = len(UPGRADES)


def tables_version(connection: psycopg.Connection[TupleRow]) -> int:
    """The version of the tables in the database (0: none yet)."""
    found = connection.execute("SELECT to_regclass('customs_batch_schema') IS NOT NULL").fetchone()
    if not found or not found[0]:
        return 0
    row = connection.execute("SELECT version FROM customs_batch_schema").fetchone()
    return int(row[0]) if row else 0


def ensure_tables(connection: psycopg.Connection[TupleRow], target: int = TABLES_VERSION) -> int:
    """Create or upgrade the tables to ``target`` (the current version by default).

    Returns the version found before. A database written by a newer customs-batch is
    refused: an older one must not write tables it does not know. Tables already at
    ``target`` are only read (a database user that may read and write them but not create
    tables, as a CI role made for them often is, uses them as they are).
    """
    found = tables_version(connection)
    if found > TABLES_VERSION:
        raise _newer(found)
    if found >= target:
        return found
    with connection.transaction(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (TABLES_LOCK_KEY,))
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS customs_batch_schema "
            "(only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), version integer NOT NULL)"
        )
        cursor.execute("SELECT version FROM customs_batch_schema")
        row = cursor.fetchone()
        found = int(row[0]) if row else 0
        if found > TABLES_VERSION:
            raise _newer(found)
        for version in range(found, target):
            UPGRADES[version](cursor)
        if target > found:
            cursor.execute(
                "INSERT INTO customs_batch_schema (version) VALUES (%s) "
                "ON CONFLICT (only_row) DO UPDATE SET version = EXCLUDED.version",
                (target,),
            )
    return found


def _newer(found: int) -> StateError:
    return StateError(
        f"the state database was written by a newer customs-batch (tables version "
        f"{found}, this one knows up to {TABLES_VERSION})",
        hint="upgrade customs-batch; an older one must not write newer tables",
    )
