"""The state in PostgreSQL, for a team or a CI that share one environment.

The same promises as the local backend, kept by the database:

- Recording: each operation is a journal row, committed before ``record`` returns (threads
  that record at the same time share one transaction: group commit, as the local journal
  shares an fsync). The journal is folded into the resources rows at the end of a run
  (serial + 1) and, after a crash, by the next command that opens the state. Folding costs
  what the journal holds, never what the state holds.
- Locking: a session-level advisory lock whose key comes from the state's name, held by the
  connection for the whole command, and a row naming the holder. A runner that dies or
  loses its connection releases the lock with its session; nobody has to clean up.
"""

from __future__ import annotations

import contextlib
import getpass
import hashlib
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import psycopg
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb

from customs_batch.errors import StateError
from customs_batch.sensitive import Sealer, clear_value_pattern, kind_of_address
from customs_batch.service_address import same_service
from customs_batch.state.backend import JOURNAL_FILE, PUSHED_SERVICE, OtherState, ServiceWords
from customs_batch.state.lock import LockInfo, Unlocked
from customs_batch.state.model import ResourceRecord, State
from customs_batch.state.pg_connect import LOST_HINT, connect, database_error
from customs_batch.state.pg_tables import TABLES_VERSION, ensure_tables, tables_version
from customs_batch.state.records import Records

Connection = psycopg.Connection[TupleRow]
T = TypeVar("T")
_MAX_LOCK_TIMEOUT_MS = 2**31 - 1


def _same_records(one: State, other: State) -> bool:
    """Both states hold the same addresses, each with the same status and outputs."""
    if len(one.resources) != len(other.resources):
        return False
    for address, record in one.resources.items():
        theirs = other.resources.get(address)
        if theirs is None or (theirs.status, dict(theirs.outputs)) != (
            record.status,
            dict(record.outputs),
        ):
            return False
    return True


def _ids(record: ResourceRecord) -> dict[str, str]:
    """The IDs the service gave ``record`` (its outputs named ``id`` or ``...Id``), as
    text: what the history's entries of it say too."""
    return {
        key: str(value)
        for key, value in record.outputs.items()
        if key == "id" or key.endswith("Id")
    }


def _holds_the_folders_state(left: State, state: State) -> bool:
    """``state`` (the database's) was pushed from ``left`` (a state folder's, of the same
    lineage) and went on from there: its serial is not lower, and each record of ``left``
    is in it, one with IDs by those IDs under an address of the same kind (applies, moves
    and ``state rm`` since keep them), one without by its address. The folder's runs sent
    nothing that ``state`` lacks then, whatever its history holds (a state pushed without
    its history, applied since in the database)."""
    if left.lineage != state.lineage or left.serial > state.serial:
        return False
    index: dict[tuple[str, str, str], set[str]] = {}
    for address, record in state.resources.items():
        kind = address.split("/", 1)[0]
        for key, value in _ids(record).items():
            index.setdefault((kind, key, value), set()).add(address)
    for address, record in left.resources.items():
        ids = _ids(record)
        if not ids:
            if address not in state.resources:
                return False
            continue
        kind = address.split("/", 1)[0]
        holders: set[str] | None = None
        for key, value in ids.items():
            found = index.get((kind, key, value), set())
            holders = found if holders is None else holders & found
            if not holders:
                return False
    return True


def _has_lines(path: Path) -> bool:
    """The file exists and is not empty (a journal a run killed on files left behind,
    whose outcomes its state file lacks)."""
    try:
        return path.stat().st_size > 0
    except FileNotFoundError:
        return False


def lock_key(name: str) -> int:
    """The advisory lock key of the state ``name``: 64 bits of a hash, as a signed bigint."""
    digest = hashlib.sha256(b"customs-batch state\0" + name.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PostgresBackend:
    """One named state in a PostgreSQL database, reached with ``url``."""

    def __init__(
        self,
        url: str,
        name: str,
        *,
        sealer: Sealer | None = None,
        allow_empty_state: bool = False,
        service: str | None = None,
        local_folder: Path | None = None,
    ) -> None:
        """``allow_empty_state``: start from an empty state although the history of the
        state ``name`` records what apply sent to it (see :meth:`_refuse_a_lost_state`).
        ``service``: where the environment's service is (its base URL); a state whose
        records were written for another service says so in :attr:`service_moved_from`
        (None: not checked). ``local_folder``: where the environment's state was kept
        before it moved to PostgreSQL (its local state folder): a new, empty state here
        while that folder holds records is the move's push forgotten (None: not checked)."""
        self.url = url
        self.name = name
        self.allow_empty_state = allow_empty_state
        self.key = lock_key(name)
        self.sealer = sealer
        self.service = service
        self.service_moved_from: str | None = None
        self.local_folder = local_folder

    def __repr__(self) -> str:  # never the URL: it may carry a password
        return f"PostgresBackend(name={self.name!r})"

    def _connect(self) -> Connection:
        connection = connect(self.url)
        try:
            self._guard("create or upgrade the tables", lambda: ensure_tables(connection))
        except BaseException:
            connection.close()
            raise
        return connection

    def _guard(self, doing: str, action: Callable[[], T]) -> T:
        try:
            return action()
        except psycopg.OperationalError as exc:
            raise database_error(exc, self.url, doing, hint=LOST_HINT) from None
        except psycopg.Error as exc:
            hint = "check the database user's rights on the customs_batch_* tables"
            raise database_error(exc, self.url, doing, hint=hint) from None

    def refuse_a_state_behind_its_history(self, state: State) -> None:
        """Refuse ``state`` (read here) when the history rows of the state ``name`` record
        apply running on a newer serial of it: the state's rows were put back from an older
        backup (the history's rows, beside them, were not), and planning from them would
        send again what the later runs created (see LocalBackend's). A database put back
        whole, history too, is not detected. Not checked with ``allow_empty_state``."""
        if self.allow_empty_state:
            return
        self._refuse_a_state_left_in_its_folder(state)
        self._refuse_a_state_left_under_another_name(state)
        from customs_batch.state.history import state_behind_history
        from customs_batch.state.pg_history import PostgresHistory

        history = PostgresHistory(self.url, self.name)
        try:
            problem = state_behind_history(state, history)
        finally:
            history.close()
        if problem is not None:
            raise StateError(
                f"the state {self.name} in the database is older than its history: {problem}",
                hint="restore the state's rows (customs_batch_states and "
                "customs_batch_resources) from the newest backup of the database; if none "
                "holds them, record each object named above with `customs-batch import ADDR "
                "ID` before planning (`customs-batch history` lists what was sent)",
            )

    def _refuse_a_state_left_in_its_folder(self, state: State) -> None:
        """A new, empty state, while the environment's local state folder holds records: the
        environment was moved to PostgreSQL and its state was not pushed (docs/state.md,
        "Moving a state between backends"); planning from nothing would send them again.
        A state of the folder's lineage, while the folder holds runs beyond it: see
        :meth:`_refuse_a_state_behind_its_folder`."""
        if self.local_folder is None:
            return
        from customs_batch.state.file import read_state

        path = self.local_folder / "state.json"
        if state.lineage or state.resources:
            self._refuse_a_state_behind_its_folder(state, self.local_folder)
            return
        left = read_state(path)
        if left is None or not left.resources:
            return
        raise StateError(
            f"the state {self.name} in the database is new and empty, but {path}, where this "
            f"environment kept its state before it was moved to PostgreSQL, holds "
            f"{len(left.resources)} record(s): starting from an empty state would send every "
            "document again (goods declared twice, movements created twice)",
            hint=f"move that state into the database first: `customs-batch state push {path}` "
            '(docs/state.md, "Moving a state between backends"); if a new, empty state is '
            "really what you want, run the command with --allow-empty-state",
        )

    def _refuse_a_state_behind_its_folder(self, state: State, folder: Path) -> None:
        """The environment came back to PostgreSQL after running on files, and the state of
        those runs was not pushed: the folder's history holds entries of this state's
        lineage past the chain the database's history shares with it (compared by hash,
        since a serial moves for other reasons too), or its state file has this lineage, a
        higher serial than this state and records this one lacks. Planning from this state
        would send again what those runs created. Not refused while this state holds the
        folder's records as they are (its state pushed, as ``state push`` of that file
        does), nor while it holds each of them and went on from there (pushed without its
        history, applied since: :func:`_holds_the_folders_state`), the folder's journal
        empty. One entry is read from each history unless the folder's is ahead."""
        from customs_batch.state.file import read_state
        from customs_batch.state.history import LocalHistory, entries_beyond
        from customs_batch.state.pg_history import PostgresHistory

        path = folder / "state.json"
        left = read_state(path)
        if (
            left is not None
            and _holds_the_folders_state(left, state)
            and not _has_lines(folder / JOURNAL_FILE)
        ):
            return
        mine = LocalHistory(folder)
        theirs = PostgresHistory(self.url, self.name)
        try:
            last = mine.last_entry() if mine.files() else None
            held = theirs.entry_at(last["seq"]) if last and type(last.get("seq")) is int else None
            beyond = None
            if mine.files() and (
                last is None or held is None or held.get("hash") != last.get("hash")
            ):
                beyond = entries_beyond(mine, theirs, state.lineage)
        finally:
            theirs.close()
        if left is not None and left.lineage == state.lineage and _same_records(left, state):
            return
        newer = left is not None and left.lineage == state.lineage and left.serial > state.serial
        if beyond is None and not newer:
            return
        if beyond is not None:
            lacking = f"that the history of the state {self.name} in the database lacks"
            found = f"its history holds {beyond.said(lacking)}"
        else:
            assert left is not None
            found = (
                f"its state file has serial {left.serial} of the same lineage, where the state "
                f"{self.name} in the database has serial {state.serial} and other records"
            )
        # The history first: pushed alone, the state would pass, its history left behind.
        pushes = f"`customs-batch state push {path}`"
        files = mine.files()
        if len(files) == 1:
            pushes = f"`customs-batch state push --history {files[0]}`, then {pushes}"
        elif files:
            joined = " ".join(str(file) for file in files)
            pushes = (
                f"its history files joined in order (`cat {joined} > folder-history.jsonl`) "
                f"with `customs-batch state push --history folder-history.jsonl`, then {pushes}"
            )
        raise StateError(
            f"{folder}, where this environment kept its state on files, holds runs that the "
            f"state {self.name} in the database does not: {found}. The environment ran on "
            "files after its state was moved to PostgreSQL, and their state was not pushed "
            "back; planning from the database's state would send again what those runs "
            "created (goods declared twice, movements created twice)",
            hint=f"bring those runs into the database first: {pushes} (docs/state.md, "
            '"Moving a state between backends"); if the database\'s state is really the one '
            "to keep, run the command with --allow-empty-state",
        )

    @property
    def location(self) -> str:
        """Where the state is: its name (each runner reaches its database by its own URL)."""
        return f"the PostgreSQL state {self.name}"

    def pushed(self, state: State) -> None:
        """``state`` was pushed here (``state push``, under the lock): its records may be
        objects of another environment's service, so the state names no service until a
        command that talks to this one has read some of them back there (see
        LocalBackend's). A PostgreSQL state has no mark."""
        if self.service is None:
            return
        self._name_service(PUSHED_SERVICE)
        self.service_moved_from = PUSHED_SERVICE

    def confirm_service(self) -> None:
        """The environment's service holds the recorded objects: the state names it from
        now on (under the lock)."""
        if self.service_moved_from is None or self.service is None:
            return
        self._name_service(self.service)
        self.service_moved_from = None

    def running_holder(self) -> LockInfo | None:
        """The holder row while the session that wrote it holds the lock."""
        with self._connect() as connection:
            return self._guard(
                "read who holds the lock", lambda: _live_holder(connection, self.name, self.key)
            )

    def other_states_of_the_service(self) -> list[OtherState]:
        """The other states of this database whose row in customs_batch_services names
        the same service, each as it is (its pending journal applied in memory), read
        without their locks; none for the embedded sandbox, each of whose environments is a
        service of its own."""
        service = self.service
        if service is None or not service.startswith(("http://", "https://")):
            return []
        with self._connect() as connection:

            def read() -> list[OtherState]:
                # Compared here, not by the query: a row an older version wrote keeps the
                # service as its customs-batch.yaml wrote it (another case of host, say).
                rows = connection.execute(
                    "SELECT state, service FROM customs_batch_services WHERE state <> %s "
                    "ORDER BY state",
                    (self.name,),
                ).fetchall()
                names = [name for name, named in rows if same_service(str(named), service)]
                found = []
                for name in names:
                    try:
                        state = _load(connection, str(name))
                    except StateError:
                        continue  # a state that cannot be read is its own commands' error
                    found.append(
                        OtherState(f"the PostgreSQL state {name}", service, state, str(name))
                    )
                return found

            return self._guard("read the other states of the service", read)

    def service_words(self) -> ServiceWords:
        return ServiceWords(
            where=self.location,
            kept="its row in customs_batch_services",
            forget=f"delete that row (DELETE FROM customs_batch_services WHERE state = "
            f"'{self.name}')",
            own="a state of its own (another `name:` under `state:`; a new one for a first "
            "run, then `customs-batch import` what exists there)",
        )

    def _name_service(self, service: str) -> None:
        with self._connect() as connection:
            self._guard(
                "record the state's service",
                lambda: connection.execute(
                    "INSERT INTO customs_batch_services (state, service) VALUES (%s, %s) "
                    "ON CONFLICT (state) DO UPDATE SET service = EXCLUDED.service",
                    (self.name, service),
                ),
            )

    def _check_service(self, connection: Connection, *, own: bool = False) -> None:
        """Note in :attr:`service_moved_from` a state whose records were written for
        another service than the environment's; with ``own`` (under the lock), name the
        environment's where the state names none yet."""
        self.service_moved_from = None
        if self.service is None:
            return
        row = connection.execute(
            "SELECT service FROM customs_batch_services WHERE state = %s", (self.name,)
        ).fetchone()
        if row is None:
            if own:
                connection.execute(
                    "INSERT INTO customs_batch_services (state, service) VALUES (%s, %s) "
                    "ON CONFLICT (state) DO NOTHING",
                    (self.name, self.service),
                )
            return
        if not same_service(str(row[0]), self.service):
            self.service_moved_from = str(row[0])  # named anew once the records are found there

    def read(self) -> State:
        """The state with any pending journal applied, without writing anything."""
        with self._connect() as connection:
            state = self._guard("read the state", lambda: self._load(connection))
            self._guard("read the state's service", lambda: self._check_service(connection))
            return state

    def peek(self) -> State | None:
        """The state as :meth:`read` gives it, for another environment's command: read
        without its lock and without creating or upgrading a table (None when the database
        holds no tables of this version: nothing to read as this version reads it)."""
        with connect(self.url) as connection:
            if tables_version(connection) != TABLES_VERSION:
                return None
            return self._guard("read the state", lambda: _load(connection, self.name))

    def open(self, operation: str, *, lock_timeout: float = 0.0) -> PostgresSession:
        """Lock the state for ``operation`` and fold any journal a crashed run left behind."""
        connection = self._connect()
        try:
            info = self._guard(
                "take the state lock", lambda: self._acquire(connection, operation, lock_timeout)
            )
            folded = self._guard("fold the journal", lambda: _fold(connection, self.name))
            state = self._guard("read the state", lambda: self._load(connection))
            self._guard(
                "read the state's service", lambda: self._check_service(connection, own=True)
            )
            state.journal = folded
            session = PostgresSession(self, connection, state, info)
            session.upgrade()
        except BaseException:
            connection.close()  # the lock, if taken, goes with the session
            raise
        return session

    def _refuse_a_state_left_under_another_name(self, state: State) -> None:
        """A new, empty state, while another state of this database holds records of the
        same service: the environment was most likely renamed in customs-batch.yaml (its
        state's name is the environment's unless ``name:`` says otherwise), and starting
        empty would declare every recorded document again (see LocalBackend's
        ``_refuse_a_renamed_environment``)."""
        if (
            state.lineage
            or state.resources
            or self.service is None
            or not self.service.startswith(("http://", "https://"))
        ):
            return
        with self._connect() as connection:
            rows = self._guard(
                "read the other states of the service",
                lambda: connection.execute(
                    "SELECT s.state, count(r.address), s.service FROM customs_batch_services s "
                    "JOIN customs_batch_resources r ON r.state = s.state "
                    "WHERE s.state <> %s GROUP BY s.state, s.service "
                    "ORDER BY count(r.address) DESC, s.state",
                    (self.name,),
                ).fetchall(),
            )
        # Compared here, not by the query (a row an older version wrote keeps the service
        # as its customs-batch.yaml wrote it).
        rows = [row for row in rows if same_service(str(row[2]), self.service)]
        if not rows:
            return
        other, count = str(rows[0][0]), int(rows[0][1])
        more = f" (and {len(rows) - 1} other state(s) of it)" if len(rows) > 1 else ""
        raise StateError(
            f"the state {self.name} in the database is new and empty, but the state {other} "
            f"there holds {count} record(s) of the same service ({self.service}){more}: if "
            f"this environment is the one whose state is {other}, renamed in "
            "customs-batch.yaml, its state was left under the old name, and starting empty "
            "would declare every recorded document again (goods declared twice, movements "
            "created twice)",
            hint=f"if it is that environment renamed (the same service and account), keep its "
            f"state: `state: {{backend: postgres, url_env: ..., name: {other}}}` under the "
            "environment in customs-batch.yaml; if it is another environment of that service "
            "on purpose, run the command with --allow-empty-state to start its state empty",
        )

    def _load(self, connection: Connection) -> State:
        lost = None if self.allow_empty_state else self._refuse_a_lost_state
        return _load(connection, self.name, self.sealer, lost)

    def _refuse_a_lost_state(self, connection: Connection) -> None:
        """A state with neither rows nor a journal, whose history records what apply sent
        to it, is a lost state: planning from nothing would send every document again.
        ``request`` entries alone do not count (see
        :func:`customs_batch.state.history.first_file_with_a_send`): an entry in canonical
        form says ``"event":"request"`` only when it is one."""
        sent = connection.execute(
            "SELECT 1 FROM customs_batch_history WHERE state = %s "
            'AND position(\'"event":"request"\' in entry) = 0 LIMIT 1',
            (self.name,),
        ).fetchone()
        if sent is None:
            return
        raise StateError(
            f"the state {self.name} in the database is missing, but its history records "
            "what apply sent to it: this environment had a state. Starting from an empty one "
            "would send every document again (goods declared twice, movements created twice)",
            hint=f"restore the rows of the state {self.name} (customs_batch_states and "
            "customs_batch_resources) from a backup of the database (`customs-batch history` "
            "lists what was sent); if a new, empty state is really what you want, run the "
            "command with --allow-empty-state",
        )

    def _acquire(self, connection: Connection, operation: str, timeout: float) -> LockInfo:
        if timeout <= 0:
            row = connection.execute("SELECT pg_try_advisory_lock(%s)", (self.key,)).fetchone()
            taken = bool(row and row[0])
        else:
            milliseconds = min(int(timeout * 1000) or 1, _MAX_LOCK_TIMEOUT_MS)
            connection.execute(f"SET lock_timeout = {milliseconds}")
            try:
                connection.execute("SELECT pg_advisory_lock(%s)", (self.key,))
                taken = True
            except psycopg.errors.LockNotAvailable:
                taken = False
            finally:
                connection.execute("SET lock_timeout = 0")
        if not taken:
            holder = _live_holder(connection, self.name, self.key)
            if holder is not None:
                raise StateError(
                    f"the state {self.name} is locked: {holder.describe()}",
                    hint="wait for that run to finish, or raise --lock-timeout; if it hangs, "
                    f"`customs-batch force-unlock {holder.id}`",
                )
            # The lock is per state name in the whole database: a state of the same name in
            # another schema takes the same one, and its holder is in that schema's table.
            raise StateError(
                f"the state {self.name} is locked by a database session not named in this "
                "schema's customs_batch_locks: a run that has only just begun, or a run on a "
                f"state also called {self.name} in another schema of this database (states of "
                "one name share one lock across the database's schemas)",
                hint="wait for that run to finish, or raise --lock-timeout; if the states of "
                "two schemas share the name, give each its own (`name:` under `state:`)",
            )
        info = LockInfo(
            id=str(uuid.uuid4()),
            holder=_user(),
            host=socket.gethostname(),
            pid=os.getpid(),
            operation=operation,
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
        # A row left by a holder whose session died is replaced: the lock proves it is stale.
        connection.execute(
            "INSERT INTO customs_batch_locks "
            "(state, lock_id, holder, host, pid, operation, created, backend_pid) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, pg_backend_pid()) "
            "ON CONFLICT (state) DO UPDATE SET lock_id = EXCLUDED.lock_id, "
            "holder = EXCLUDED.holder, host = EXCLUDED.host, pid = EXCLUDED.pid, "
            "operation = EXCLUDED.operation, created = EXCLUDED.created, "
            "backend_pid = EXCLUDED.backend_pid",
            (self.name, info.id, info.holder, info.host, info.pid, operation, info.created),
        )
        return info

    def force_unlock(self, lock_id: str, *, force: bool = False) -> Unlocked:
        """Remove the holder row ``lock_id``. A holder whose session is alive still holds
        the lock: refused, unless ``force``, which ends that session on the server."""
        with self._connect() as connection:
            return self._guard("unlock the state", lambda: self._unlock(connection, lock_id, force))

    def _unlock(self, connection: Connection, lock_id: str, force: bool) -> Unlocked:
        found = _holder(connection, self.name)
        holder = found[0] if found else None
        session = _lock_session(connection, self.key)
        if found is not None and session is not None and found[1] != session:
            holder = None  # the row is a dead holder's; the live one has not written its own
        if holder is None:
            if session is None:
                raise StateError(f"the state {self.name} is not locked", hint="nothing to unlock")
            raise StateError(
                f"the state {self.name} is locked by database session {session}, which has not "
                "named itself yet",
                hint="try again in a moment: a holder writes its row right after taking the lock",
            )
        if holder.id != lock_id:
            raise StateError(
                f"the lock id is {holder.id}, not {lock_id}",
                hint="copy the id from the message that named the holder",
            )
        if session is not None:
            if not force:
                raise StateError(
                    f"{holder.describe()}, and its database session ({session}) is alive",
                    hint="a live holder is still running or hung: stop it first. If it cannot "
                    "be stopped, `customs-batch force-unlock --force ID` ends its database "
                    "session: its next record then fails and the run stops, and a request it "
                    "had sent but not yet recorded shows as pending in the next run",
                )
            row = connection.execute("SELECT pg_terminate_backend(%s, 10000)", (session,))
            ended = row.fetchone()
            if not ended or not ended[0]:
                raise StateError(
                    f"could not end the holder's database session {session}",
                    hint="the database user needs the pg_signal_backend role (or to be the "
                    "same user as the holder's); or ask the database's administrator",
                )
        connection.execute(
            "DELETE FROM customs_batch_locks WHERE state = %s AND lock_id = %s",
            (self.name, lock_id),
        )
        how = (
            "Its database session was ended: the run stops at its next record."
            if session is not None
            else "Its database session had already ended, and the lock with it."
        )
        return Unlocked(holder, how)


class PostgresSession:
    """Records go to the journal table at once; they are folded once, at close."""

    def __init__(
        self, backend: PostgresBackend, connection: Connection, state: State, info: LockInfo
    ) -> None:
        self.backend = backend
        self.state = state
        self.lock_info = info
        self._connection = connection
        self._mutex = threading.Lock()  # the order of the rows and the state in memory
        self._sync_lock = threading.Lock()  # one commit at a time
        self._pending: list[tuple[str, str, Jsonb | None]] = []
        self._written = 0
        self._synced = 0
        self._broken: StateError | None = None
        self._changed = False
        self._closed = False

    def record(self, record: ResourceRecord) -> None:
        """Commit ``record`` to the journal before returning."""
        self._append(record.address, record)

    def record_soon(self, record: ResourceRecord) -> None:
        """Commit ``record`` before returning: each row is its own commit (group commit
        already shares them between workers), so there is nothing to defer."""
        self._append(record.address, record)

    def when_durable(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` now: every record is committed when its call returns."""
        callback()

    def flush(self) -> None:
        """Nothing to do: every record is committed when its call returns."""

    def forget(self, address: str) -> None:
        """Commit the forgetting of ``address`` before returning."""
        self._append(address, None)

    def _append(self, address: str, record: ResourceRecord | None) -> None:
        with self._mutex:
            if not self.state.lineage:
                self.state.lineage = str(uuid.uuid4())
            if record is not None:
                record = self.state.seal(record)
            body = None if record is None else Jsonb(record.to_json())
            self._pending.append((self.state.lineage, address, body))
            self._written += 1
            sequence = self._written
            self.state.apply(address, record)
            self._changed = True
        self._sync(sequence)

    def _sync(self, sequence: int) -> None:
        """Return once the row ``sequence`` and every one before it are committed."""
        with self._sync_lock:
            if self._broken is not None:
                raise self._broken
            if self._synced >= sequence:
                return  # another thread's commit covered it while this one waited
            with self._mutex:
                rows, self._pending = self._pending, []
                target = self._written
            try:
                self._insert(rows)
            except StateError as exc:
                self._broken = exc
                raise
            self._synced = target

    def _insert(self, rows: list[tuple[str, str, Jsonb | None]]) -> None:
        """One multi-row INSERT: in autocommit it is its own transaction, one round trip."""
        name = self.backend.name
        values = ", ".join(["(%s, %s, %s, %s)"] * len(rows))
        params = [
            value for lineage, address, body in rows for value in (name, lineage, address, body)
        ]
        query = (
            "INSERT INTO customs_batch_journal (state, lineage, address, record) VALUES " + values
        )
        self.backend._guard("record an operation", lambda: self._connection.execute(query, params))

    def upgrade(self) -> None:
        """Record again, digested, every record whose row holds a sensitive value in clear
        (written before digests were kept): folded into the rows when the session ends."""
        resources = self.state.resources
        if self.state.sealer is None or not isinstance(resources, Records):
            return
        pattern = clear_value_pattern()
        for address in resources:
            text = resources.text_of(address)
            if text is None or not kind_of_address(address):
                continue
            if pattern.search(text.encode() if isinstance(text, str) else text) is not None:
                self._append(address, resources[address])

    def check_lock(self) -> None:
        """Raise when this session lost its lock. The advisory lock lives as long as the
        database session, so the lock is held while the connection is; a session ended by
        `force-unlock --force` or a server restart shows as a closed or broken connection."""
        if self._broken is not None:
            raise self._broken
        if self._connection.closed or self._connection.broken:
            raise StateError(
                f"the connection to the state {self.backend.name} was lost, and the state lock "
                "with it: this run stopped without sending anything more",
                hint="run the same command again: it takes the lock and goes on from what "
                "was recorded",
            )

    def replace(self, state: State) -> None:
        """Replace the whole state by ``state`` (lineage, serial and every record)."""
        with self._sync_lock, self._mutex:
            state = state.sealed_by(self.backend.sealer)
            self.backend._guard(
                "replace the state", lambda: _replace(self._connection, self.backend.name, state)
            )
            self.state = state
            self._changed = False

    def close(self) -> None:
        """Fold the journal into the state (serial + 1) and release the lock."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._broken is not None:
                raise self._broken  # what was committed before it waits for the next fold
            if self._changed:
                self.backend._guard(
                    "fold the journal", lambda: _fold(self._connection, self.backend.name)
                )
                self.state.serial += 1
                self._changed = False
            if not self._connection.broken:
                self.backend._guard("release the state lock", self._release)
        finally:
            self._connection.close()

    def _release(self) -> None:
        self._connection.execute(
            "DELETE FROM customs_batch_locks WHERE state = %s AND lock_id = %s",
            (self.backend.name, self.lock_info.id),
        )
        self._connection.execute("SELECT pg_advisory_unlock(%s)", (self.backend.key,))

    def __enter__(self) -> PostgresSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self.close()
            return
        # The error that stopped the run says more; the journal keeps the records.
        with contextlib.suppress(StateError):
            self.close()


def _load(
    connection: Connection,
    name: str,
    sealer: Sealer | None = None,
    lost: Callable[[Connection], None] | None = None,
) -> State:
    """The state ``name`` as one snapshot, with its pending journal applied in memory;
    ``lost`` is asked, in the same snapshot, when the state has neither rows nor journal."""
    with connection.transaction():
        connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        row = connection.execute(
            "SELECT lineage, serial FROM customs_batch_states WHERE name = %s", (name,)
        ).fetchone()
        # The records as text, each parsed when first used: a run that changes ten
        # records of 100,000 parses ten (see docs/benchmarks.md).
        rows = connection.execute(
            "SELECT address, record::text FROM customs_batch_resources WHERE state = %s", (name,)
        ).fetchall()
        records = Records.from_texts(dict(rows), f"the state {name} in the database")
        lineage, serial = (row[0], int(row[1])) if row else ("", 0)
        state = State(lineage=lineage, serial=serial, resources=records, sealer=sealer)
        journal = connection.execute(
            "SELECT seq, lineage, address, record FROM customs_batch_journal WHERE state = %s "
            "ORDER BY seq",
            (name,),
        ).fetchall()
        if row is None and not journal and lost is not None:
            lost(connection)
    if journal:
        for _, lineage, address, record in journal:
            _check_lineage(state, lineage, name)
            state.apply(
                address, None if record is None else ResourceRecord.from_json(address, record)
            )
        state.serial += 1
        state.journal = _journal_mark(len(journal), journal[0][0], journal[-1][0])
    return state


def _journal_mark(rows: int, first: int, last: int) -> str:
    """The fingerprint of a journal (``State.journal``): its rows are never changed, and a
    run still recording only adds rows after the last one."""
    return f"rows:{rows}:{first}-{last}"


def _check_lineage(state: State, lineage: str, name: str) -> None:
    if not state.lineage:
        state.lineage = lineage
    elif lineage != state.lineage:
        raise StateError(
            f"the journal of the state {name} belongs to another state (lineage {lineage}, "
            f"the state's is {state.lineage})",
            hint="the state was replaced while a run's journal was pending; look at the rows "
            f"of customs_batch_journal for {name} before deleting them",
        )


def _fold(connection: Connection, name: str) -> str:
    """Apply the journal of ``name`` to its resources rows in one transaction; serial + 1.
    The fingerprint of the journal folded (``State.journal``), or "" when it was empty."""
    with connection.transaction():
        lineages = [
            row[0]
            for row in connection.execute(
                "SELECT DISTINCT lineage FROM customs_batch_journal WHERE state = %s", (name,)
            )
        ]
        if not lineages:
            return ""
        rows, first, last = connection.execute(
            "SELECT count(*), min(seq), max(seq) FROM customs_batch_journal WHERE state = %s",
            (name,),
        ).fetchone() or (0, 0, 0)
        row = connection.execute(
            "SELECT lineage FROM customs_batch_states WHERE name = %s FOR UPDATE", (name,)
        ).fetchone()
        current = State(lineage=row[0] if row else "")
        for lineage in lineages:
            _check_lineage(current, lineage, name)
        connection.execute(
            "INSERT INTO customs_batch_states (name, lineage, serial) VALUES (%s, %s, 0) "
            "ON CONFLICT (name) DO NOTHING",
            (name, current.lineage),
        )
        connection.execute(
            """
            CREATE TEMPORARY TABLE customs_batch_last ON COMMIT DROP AS
            SELECT DISTINCT ON (address) address, record FROM customs_batch_journal
            WHERE state = %s ORDER BY address, seq DESC
            """,
            (name,),
        )
        connection.execute(
            "DELETE FROM customs_batch_resources r USING customs_batch_last l "
            "WHERE r.state = %s AND r.address = l.address AND l.record IS NULL",
            (name,),
        )
        connection.execute(
            "INSERT INTO customs_batch_resources (state, address, record) "
            "SELECT %s, address, record FROM customs_batch_last WHERE record IS NOT NULL "
            "ON CONFLICT (state, address) DO UPDATE SET record = EXCLUDED.record",
            (name,),
        )
        connection.execute("DELETE FROM customs_batch_journal WHERE state = %s", (name,))
        connection.execute(
            "UPDATE customs_batch_states SET serial = serial + 1 WHERE name = %s", (name,)
        )
    return _journal_mark(int(rows), int(first), int(last))


def _replace(connection: Connection, name: str, state: State) -> None:
    """Make ``state`` the whole state ``name`` in one transaction."""
    with connection.transaction():
        connection.execute(
            "INSERT INTO customs_batch_states (name, lineage, serial) VALUES (%s, %s, %s) "
            "ON CONFLICT (name) DO UPDATE SET lineage = EXCLUDED.lineage, serial = EXCLUDED.serial",
            (name, state.lineage, state.serial),
        )
        connection.execute("DELETE FROM customs_batch_journal WHERE state = %s", (name,))
        connection.execute("DELETE FROM customs_batch_resources WHERE state = %s", (name,))
        with connection.cursor().copy(
            "COPY customs_batch_resources (state, address, record) FROM STDIN"
        ) as copy:
            for address in sorted(state.resources):
                copy.write_row((name, address, Jsonb(state.resources[address].to_json())))


def _holder(connection: Connection, name: str) -> tuple[LockInfo, int] | None:
    """The holder row of ``name`` and the database session (server pid) that wrote it."""
    row = connection.execute(
        "SELECT lock_id, holder, host, pid, operation, created, backend_pid "
        "FROM customs_batch_locks WHERE state = %s",
        (name,),
    ).fetchone()
    if row is None:
        return None
    lock_id, holder, host, pid, operation, created, backend_pid = row
    return LockInfo(lock_id, holder, host, int(pid), operation, created), int(backend_pid)


def _live_holder(connection: Connection, name: str, key: int) -> LockInfo | None:
    """The holder row, if the session that wrote it still holds the lock."""
    found = _holder(connection, name)
    if found is None or _lock_session(connection, key) != found[1]:
        return None
    return found[0]


def _lock_session(connection: Connection, key: int) -> int | None:
    """The server process (pid) whose session holds the advisory lock ``key``, if any."""
    unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
    row = connection.execute(
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
        "AND classid::text::bigint = %s AND objid::text::bigint = %s AND objsubid = 1 "
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        (unsigned >> 32, unsigned & 0xFFFF_FFFF),
    ).fetchone()
    return int(row[0]) if row else None


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"
