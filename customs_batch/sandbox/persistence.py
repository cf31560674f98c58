"""Where the store keeps its records between runs: nowhere, or a SQLite file."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from customs_batch.errors import ConfigError
from customs_batch.sandbox.records import JsonObject, record_json

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    tbl TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tbl, id)
)
"""
APPLICATION_ID = 0x43425345
"""What the emulator writes in its database's header (SQLite's ``application_id``, "CBSE"):
the mark of a file that is its own. An older emulator wrote none; its file holds only the
``records`` table."""
_COLUMNS = ["tbl", "id", "body"]
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

    def delete(self, table: str, record_id: int | str) -> None:
        """Remove one record."""
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

    def delete(self, table: str, record_id: int | str) -> None:
        """Nothing was kept."""

    def begin(self) -> None:
        """Nothing to group."""

    def commit(self) -> None:
        """Nothing to make durable."""

    def close(self) -> None:
        """Nothing to release."""


def _private(path: Path) -> None:
    """Make the database readable by its owner only (it holds customs data): created so, or
    made so when an earlier version left it open to others. SQLite gives its ``-wal`` and
    ``-shm`` files the mode of the database; any left from an earlier run are made private
    too. A file that cannot be changed (a read-only file system) is left to SQLite."""
    if not path.exists():
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
    for name in (path.name, *(path.name + suffix for suffix in ("-wal", "-shm", "-journal"))):
        with contextlib.suppress(OSError):
            found = path.with_name(name)
            mode = found.stat().st_mode
            if stat.S_ISREG(mode) and mode & 0o077:  # never a device's mode (/dev/null)
                os.chmod(found, 0o600)


_DB_HINT = (
    "give --db a writable SQLite file path in a folder that exists (the file is created if "
    "missing, its folder is not)"
)


@contextmanager
def held_alone(path: Path) -> Iterator[None]:
    """Hold the database ``path`` for one emulator for as long as the block lasts: a second
    emulator started on it meanwhile is refused (each would keep its own copy of the data
    in memory and write over the other's rows).

    The lock is the operating system's (``flock``) on the database file itself: no file
    beside it, released when the process ends however it ends, and apart from the locks
    SQLite takes on the same file. The file is created (``0600``) if missing, as SQLite
    would create it.
    """
    try:
        try:  # created private, as SQLite would create it; an existing file is left as it is
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except PermissionError:  # a read-only file is still the emulator's to hold
            descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot open the emulator database: {exc.strerror}",
            hint=_DB_HINT,
        ) from None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise ConfigError(
                    f"{path}: cannot lock the emulator database: {exc.strerror}",
                    hint="give --db a file on a local file system",
                ) from None
            raise ConfigError(
                f"{path}: the emulator database is in use by another emulator "
                "(a `customs-batch sandbox serve` running with this --db)",
                hint="stop that emulator first, or give this one another --db",
            ) from None
        yield
    finally:
        os.close(descriptor)


def _emulators(path: Path, db: sqlite3.Connection) -> bool:
    """Whether the database of ``db`` is marked as the emulator's (``APPLICATION_ID``); a
    new, empty one, or one an older emulator wrote (only its ``records`` table), is not yet
    and may be. Any other is refused before anything is written to it: SQLite file that
    it is, it is not the emulator's to change."""
    (application_id,) = db.execute("PRAGMA application_id").fetchone()
    if application_id == APPLICATION_ID:
        return True
    tables = sorted(
        name
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not name.startswith("sqlite_")
    )
    if application_id == 0 and not tables:
        return False
    if application_id == 0 and tables == ["records"]:
        columns = [row[1] for row in db.execute("PRAGMA table_info(records)")]
        if columns == _COLUMNS:
            return False
    listed = ", ".join(map(_quoted, tables[:5])) + (", ..." if len(tables) > 5 else "")
    held = f"table{'s' if len(tables) > 1 else ''} {listed}" if tables else ""
    made_by = f"application id {application_id:#x}" if application_id else ""
    raise ConfigError(
        f"{path}: a SQLite database, but not the emulator's "
        f"({' and '.join(what for what in (held, made_by) if what)}); nothing was changed in it",
        hint="give --db a file of its own (a new path is created), not another program's database",
    )


def _quoted(value: object) -> str:
    """A name or ID read from the file, quoted (no control character reaches the terminal)
    and cut to its start when long."""
    text = str(value)
    return repr(text) if len(text) <= 40 else f"{text[:40]!r}... ({len(text):,} characters)"


def _row(table: object, record_id: object) -> str:
    return f"the row of table {_quoted(table)}, ID {_quoted(record_id)},"


def _damaged(path: Path, what: str) -> ConfigError:
    return ConfigError(
        f"{path}: the emulator database is damaged: {what}",
        hint="it was changed outside the emulator; restore it from a copy, "
        "or start with a new --db (the seed fills a new database)",
    )


class SqlitePersistence:
    """Records as JSON rows of one SQLite table; IDs are stored as JSON to keep their type."""

    def __init__(self, path: Path) -> None:
        self._path = path
        if not path.exists():  # made private before SQLite makes it with the umask's mode
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
        try:
            # The store's lock serialises use; the connection may move between threads.
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            try:
                marked = _emulators(path, self._db)  # before anything is written to the file
                _private(path)
                if not marked:
                    self._db.execute(f"PRAGMA application_id={APPLICATION_ID}")
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute(_SCHEMA)
            except BaseException:
                self._db.close()
                raise
        except sqlite3.Error as exc:
            raise ConfigError(
                f"{path}: cannot open the emulator database: {exc}",
                hint=_DB_HINT,
            ) from None
        self._lock = threading.Lock()

    def load(self) -> Iterator[tuple[str, int | str, JsonObject]]:
        """Every saved record, in the order it was first saved; a row that is no record (a
        file changed outside the emulator) is an error naming the file and the row."""
        try:
            rows = self._db.execute("SELECT tbl, id, body FROM records ORDER BY rowid").fetchall()
        except sqlite3.Error as exc:
            raise _damaged(self._path, f"its records cannot be read: {exc}") from None
        for table, record_id, body in rows:
            try:
                key, record = json.loads(record_id), json.loads(body)
            except (TypeError, ValueError) as exc:
                raise _damaged(self._path, f"{_row(table, record_id)} is not JSON: {exc}") from None
            if (
                not isinstance(table, str)
                or not isinstance(key, (int, str))
                or isinstance(key, bool)
            ):
                raise _damaged(self._path, f"{_row(table, record_id)} has no valid table or ID")
            if not isinstance(record, dict):
                raise _damaged(self._path, f"{_row(table, record_id)} holds no JSON object")
            yield table, key, record

    def save(self, table: str, record_id: int | str, record: JsonObject) -> None:
        """Upsert one record (autocommit: durable when this returns)."""
        with self._lock:
            self._db.execute(_UPSERT, (table, json.dumps(record_id), record_json(record)))

    def save_many(self, table: str, records: dict[int | str, JsonObject]) -> None:
        """Upsert many records in one transaction."""
        rows = [(table, json.dumps(key), record_json(value)) for key, value in records.items()]
        with self._lock:
            self._db.executemany(_UPSERT, rows)

    def delete(self, table: str, record_id: int | str) -> None:
        """Remove one record (autocommit)."""
        with self._lock:
            self._db.execute(
                "DELETE FROM records WHERE tbl = ? AND id = ?", (table, json.dumps(record_id))
            )

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
