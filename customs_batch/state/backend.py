"""Where a state lives. The local backend keeps it in a folder beside the project.

A backend is small on purpose: ``read`` for commands that only look, ``open`` for commands
that write (it takes the lock and folds what a crashed run left in the journal). A team
backend (PostgreSQL) can implement the same protocol.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

from customs_batch.errors import StateError
from customs_batch.folders import make_private_folder
from customs_batch.service_address import same_service
from customs_batch.state._atomic import (
    UNCHANGED,
    fsync_dir,
    open_private,
    write_atomic,
    write_error,
)
from customs_batch.state.file import read_state, write_state
from customs_batch.state.journal import JournalEntry, JournalWriter, read_journal
from customs_batch.state.lock import (
    LockInfo,
    StateLock,
    Unlocked,
    force_unlock,
    holder_alive_here,
)
from customs_batch.state.marks import Mark, StateMarks
from customs_batch.state.model import ResourceRecord, State
from customs_batch.state.records import Records

if TYPE_CHECKING:
    from customs_batch.sensitive import Sealer

STATE_FILE = "state.json"
JOURNAL_FILE = "journal.jsonl"
LOCK_FILE = "state.lock"
ENVIRONMENT_FILE = "environment"
"""The name of the environment whose state the folder holds, and a line ``service URL``
(its base_url), written by its first command that writes the state: a folder copied to
another environment's state_dir is refused, and one whose environment now names another
service is checked against it before anything is sent (``commands.session``)."""
_ENVIRONMENT_READ = 4096  # bytes of that file read at most: a name and a URL, never a whole file
_SERVICE = "service "
_RECORDING_WHAT_EXISTS = frozenset({"import", "state adopt"})
"""The operations that record objects as they exist at the service: a state behind its
folder's mark catches up through them (:class:`LocalSession`)."""
PUSHED_SERVICE = "(not checked: the state was pushed here)"
"""What the environment file names as the service after ``state push``, until a command
that talks to the service has found the pushed records there."""
"""How the line of that file naming the environment's service starts."""


class StateSession(Protocol):
    """A locked, writable view of the state for one command."""

    state: State
    lock_info: LockInfo

    def record(self, record: ResourceRecord) -> None: ...
    def record_soon(self, record: ResourceRecord) -> None: ...
    def when_durable(self, callback: Callable[[], None]) -> None: ...
    def flush(self) -> None: ...
    def forget(self, address: str) -> None: ...
    def check_lock(self) -> None: ...
    def replace(self, state: State) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> StateSession: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class StateBackend(Protocol):
    """Read, lock and write one environment's state."""

    def read(self) -> State: ...
    def open(self, operation: str, *, lock_timeout: float = 0.0) -> StateSession: ...
    def force_unlock(self, lock_id: str, *, force: bool = False) -> Unlocked: ...
    def refuse_a_state_behind_its_history(self, state: State) -> None: ...
    def pushed(self, state: State) -> None: ...
    @property
    def location(self) -> str: ...

    service: str | None
    """Where the environment's service is now (its base URL; None: not checked)."""
    service_moved_from: str | None
    """The service the state's records were written for, when the environment now names
    another (:data:`PUSHED_SERVICE` for a pushed state); None when it is the same."""

    def confirm_service(self) -> None: ...
    def service_words(self) -> ServiceWords: ...
    def running_holder(self) -> LockInfo | None:
        """The holder of the state's lock while a run that is known to be alive holds it
        (a read does not wait for it), else None."""
        ...

    def other_states_of_the_service(self) -> list[OtherState]:
        """The other states this backend can see whose records are objects of the same
        service (``import`` and ``state adopt`` refuse an ID one of them holds), read
        without their locks."""
        ...


@dataclass(frozen=True)
class OtherState:
    """A state of another environment of the same service, as read without its lock."""

    where: str
    """Whose state it is and where, in words (``the state of environment 'nl' in /p/...``)."""
    service: str
    """The service its records are objects of (the base URL), the same as this one's."""
    state: State
    name: str = ""
    """Its name in its backend (a PostgreSQL state's ``name``; empty for a folder)."""
    environment: str | None = None
    """The environment whose state it is, when known (a PostgreSQL state names only
    itself: the commands find the environment of the project whose state it is)."""


@dataclass(frozen=True)
class ServiceWords:
    """How a backend says where it keeps the service of its records, for the messages of
    an environment pointed at another service."""

    where: str
    """The state (a folder, a database state's name)."""
    kept: str
    """What names its service (``its file environment``)."""
    forget: str
    """What makes it name none, so that the next command takes the environment's."""
    own: str
    """How to give another service a state of its own."""


class LocalBackend:
    """The state as files in a folder: ``state.json``, ``journal.jsonl`` and the lock.

    A missing ``state.json`` is a new, empty state only when nothing of an earlier one is
    left (a backup, an emptied journal, a history of what apply sent); otherwise it is an
    error, unless
    ``allow_empty_state`` says that an empty start is deliberate.
    """

    def __init__(
        self,
        directory: Path,
        *,
        allow_empty_state: bool = False,
        sealer: Sealer | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        environment: str | None = None,
        service: str | None = None,
        marks: StateMarks | None = None,
    ) -> None:
        """``clock`` and ``sleep`` time the wait for the lock (``open``'s ``lock_timeout``).
        ``environment``: the name of the environment this state is of; a folder that
        another environment's commands wrote is then refused (None: not checked).
        ``service``: where that environment's service is (its base URL); a folder whose
        state was written for another service says so in :attr:`service_moved_from`
        (None: not checked)."""
        self.directory = directory
        self.environment = environment
        self.service = service
        self.marks = marks
        """The newest state seen in this folder, kept outside it (None: not kept, as for
        the embedded sandbox, whose data goes back with the folder)."""
        self.service_moved_from: str | None = None
        """The service the folder's state was written for, when the environment now names
        another (set once the folder is read): a command that talks to the service checks
        that it holds the recorded objects before anything is sent (``commands.session``)."""
        self.environment_path = directory / ENVIRONMENT_FILE
        self._clock, self._sleep = clock, sleep
        self.sealer = sealer
        self.state_path = directory / STATE_FILE
        self.journal_path = directory / JOURNAL_FILE
        self.lock_path = directory / LOCK_FILE
        self.allow_empty_state = allow_empty_state

    def read(self) -> State:
        """The state with the journal of an interrupted run applied, without writing anything.

        The serial is the one the state will have once that journal is folded in, so a plan
        made now is still current after the fold; ``state.journal`` tells that fold from
        the end of a run that was still recording when the journal was read.
        """
        self._check_environment()
        state, folded = self._load()
        if folded:
            state.serial += 1
        return state

    def _check_environment(self) -> bool:
        """Refuse a folder whose state another environment wrote: its records are objects of
        that environment's service. Whether the folder names an environment yet."""
        self.service_moved_from = None
        if self.environment is None:
            return True
        try:
            with self.environment_path.open("rb") as file:
                data = file.read(_ENVIRONMENT_READ)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise write_error(
                self.environment_path, exc, safe=UNCHANGED, doing="cannot read"
            ) from None
        recorded, service = _parse_environment(data)
        if recorded == self.environment:
            if service is None or self.service is None:
                return service is not None or self.service is None  # a file of before: written anew
            if same_service(service, self.service):
                return True
            self.service_moved_from = service
            return True  # rewritten only once the new service is found to hold the records
        printable = recorded.isprintable() and 0 < len(recorded) <= 100
        shown = f"environment {recorded!r}" if printable else "another environment"
        mine = self.environment
        original = self._original_of(recorded) if printable else None
        if original is not None:
            # That environment's own folder still holds its state: this one is a copy, and
            # taking it as a rename would give both environments the same objects to write.
            hint = (
                f"{original} still holds the state of {shown}, so this folder is a copy of it, "
                f"not {shown} renamed: give {mine!r} a state folder of its own (state_dir; an "
                "empty one for a first run, then `customs-batch import ADDR ID` for each "
                f"object it is to manage, once {shown} lets it go: `customs-batch state rm "
                f"ADDR --env {recorded}`)"
            )
        else:
            hint = (
                f"give {mine!r} a state folder of its own (state_dir; an empty one for a first "
                f"run); if {mine!r} is {shown} renamed, the same service and account, remove "
                f"{self.environment_path} and run again: the next command that writes the state "
                f"records {mine!r} there"
            )
        raise StateError(
            f"{self.directory} holds the state of {shown} (its file "
            f"{self.environment_path.name} says so), not of {mine!r}: its records are objects "
            f"at the service of {shown}, and {mine!r} would take them as its own: plan them "
            "unchanged, and send their updates and cancellations to IDs of another service",
            hint=hint,
        )

    def _original_of(self, environment: str) -> Path | None:
        """A folder beside this one whose file ``environment`` names ``environment`` and
        that holds a state: that environment's own, of which this folder is a copy."""
        try:
            siblings = sorted(p for p in self.directory.parent.iterdir() if p != self.directory)
        except OSError:
            return None
        for folder in siblings:
            named = _environment_of(folder / ENVIRONMENT_FILE)
            if named is None or named[0] != environment:
                continue
            if (folder / STATE_FILE).exists() or (folder / JOURNAL_FILE).exists():
                return folder
        return None

    @property
    def location(self) -> str:
        """Where the state is, to tell it from another of the same environment's name (a
        saved plan made against an empty state): the folder's real path."""
        return os.path.realpath(self.directory)

    def pushed(self, state: State) -> None:
        """``state`` was pushed here (``state push``, under the lock): the state the user
        chose, which the folder's mark takes as it is; its records may be objects of another
        environment's service, so the folder names no service until a command that talks to
        this one has read some of them back there (:attr:`service_moved_from` is
        :data:`PUSHED_SERVICE` until then)."""
        if self.marks is not None:
            self.marks.note(state, exact=True)
        if self.environment is None:
            return
        text = f"{self.environment}\n{_SERVICE}{PUSHED_SERVICE}\n"
        write_atomic(self.environment_path, text.encode("utf-8"))
        self.service_moved_from = PUSHED_SERVICE

    def confirm_service(self) -> None:
        """The environment's new service holds the recorded objects: the folder names it
        from now on (under the lock)."""
        if self.service_moved_from is None or self.environment is None:
            return
        write_atomic(self.environment_path, self._environment_text())
        self.service_moved_from = None

    def running_holder(self) -> LockInfo | None:
        """The note of the lock's holder when it is a live process of this machine (one
        of another machine, or a note a killed run left, cannot be told live: None)."""
        return holder_alive_here(self.lock_path)

    def other_states_of_the_service(self) -> list[OtherState]:
        """None: a state folder knows no other environment's (the commands read those of
        the project's other environments at the same service)."""
        return []

    def service_words(self) -> ServiceWords:
        return ServiceWords(
            where=str(self.directory),
            kept=f"its file {self.environment_path.name}",
            forget=f"remove {self.environment_path}",
            own="a state folder of its own (state_dir; an empty one for a first run, then "
            "`customs-batch import` what exists there)",
        )

    def _environment_text(self) -> bytes:
        text = f"{self.environment}\n"
        if self.service is not None:
            text += f"{_SERVICE}{self.service}\n"
        return text.encode("utf-8")

    def _own_folder(self) -> None:
        """Record in the folder which environment's state it holds, and where its service
        is (under the lock)."""
        if self.environment is None or self._check_environment():
            return
        write_atomic(self.environment_path, self._environment_text())

    def _load(self) -> tuple[State, bool]:
        """The state file with the journal applied (its fingerprint in ``state.journal``),
        and whether the journal held anything.

        A journal without its state file is the state when its lines were written on a
        state not yet written (serial 0: a first run that did not end); a journal written
        on a state file that is not here, or on a newer one, is refused.
        """
        state = read_state(self.state_path, self.sealer)
        absent = state is None
        if state is None:
            if not self.allow_empty_state:
                self._refuse_a_lost_state()
            state = State(lineage="", serial=0, sealer=self.sealer)
        check = None if absent and self.allow_empty_state else self._refuse_a_partial_state
        state.journal = _apply_journal(state, self.journal_path, check, absent=absent)
        return state, bool(state.journal)

    def _refuse_a_lost_state(self) -> None:
        """An absent state file beside traces of an earlier state is a lost state: planning
        from nothing would send every document again."""
        backup = self.state_path.with_name(self.state_path.name + ".backup")
        if backup.exists():
            trace = f"its backup {backup.name} is there"
            copy = f"cp -p {shlex.quote(str(backup))} {shlex.quote(str(self.state_path))}"
            restore = (
                f"restore it: `{copy}` (the state before the last run that wrote it: check "
                "the next plan), or a newer copy from version control or CI"
            )
        elif self.journal_path.exists() and self.journal_path.stat().st_size == 0:
            trace = f"{self.journal_path.name} is left from an earlier run"
            restore = f"restore {self.state_path.name} from version control or CI"
        elif not self.journal_path.exists() and (sent := self._history_kept()) is not None:
            # (A journal beside the history is what a first run killed leaves: the state.)
            trace = f"its history ({sent.name}) records what apply sent from here"
            restore = (
                f"restore {self.state_path.name} from version control or CI "
                "(`customs-batch history` lists what was sent)"
            )
        else:
            return
        raise StateError(
            f"{self.state_path} is missing, but {trace}: this environment had a state. "
            "Starting from an empty one would send every document again (goods declared "
            "twice, movements created twice)",
            hint=f"{restore}; if a new, empty state is really what you want, run the command "
            "with --allow-empty-state",
        )

    def _refuse_a_renamed_environment(self) -> None:
        """No state here, while a folder beside this one holds the state of another
        environment at the same service: this environment is most likely that one renamed
        in customs-batch.yaml, its folder left behind, and starting empty would declare
        every recorded document again."""
        if (
            self.environment is None
            or self.service is None
            or not self.service.startswith(("http://", "https://"))
        ):
            return  # the embedded sandbox keeps its data in the folder: nothing is left behind
        try:
            siblings = [p for p in self.directory.parent.iterdir() if p != self.directory]
        except OSError:
            return
        for folder in sorted(siblings):
            named = _environment_of(folder / ENVIRONMENT_FILE)
            if named is None or not same_service(named[1], self.service):
                continue
            if not (folder / STATE_FILE).exists() and not (folder / JOURNAL_FILE).exists():
                continue
            other = named[0]
            mine = self.environment
            if other == mine:
                # This environment's own state, in the folder it had before its state_dir
                # was changed (or the folder renamed): starting here would declare again
                # everything that state records.
                move = f"mv {shlex.quote(str(folder))} {shlex.quote(str(self.directory))}"
                raise StateError(
                    f"{self.directory} holds no state of environment {mine!r}, but {folder} "
                    f"holds the state of environment {mine!r} at the same service "
                    f"({self.service}): its state_dir was changed in customs-batch.yaml, or "
                    "its folder renamed, and starting empty would declare every recorded "
                    "document again",
                    hint=f"point the state_dir of {mine!r} back at {folder}, or move the "
                    f"folder: `{move}`; if a second, empty state of {mine!r} is really what "
                    "you want, run the command with --allow-empty-state",
                )
            move = (
                f"mv {shlex.quote(str(folder))} {shlex.quote(str(self.directory))} && rm "
                f"{shlex.quote(str(self.directory / ENVIRONMENT_FILE))}"
            )
            raise StateError(
                f"{self.directory} holds no state of environment {mine!r}, but {folder} holds "
                f"the state of environment {other!r} at the same service ({self.service}): if "
                f"{mine!r} is {other!r} renamed in customs-batch.yaml, its state was left "
                "behind, and starting empty would declare every recorded document again",
                hint=f"if {mine!r} is {other!r} renamed (the same service and account), move "
                f"its folder and the file that names {other!r}: `{move}`; if {mine!r} is "
                "another environment of that service on purpose, run the command with "
                "--allow-empty-state to start its state empty",
            )

    def refuse_a_state_behind_its_history(self, state: State) -> None:
        """Refuse ``state`` (read here) when the history records that apply sent requests
        from a newer state of the same lineage: the state file was put back to an older
        copy, and what those runs created is not in it. Planning from it would send their
        documents again. Plan and apply ask; the commands that mend a state do not, nor a
        command given ``--allow-empty-state`` (a state begun from less on purpose)."""
        if self.allow_empty_state:
            if self.marks is not None:
                self.marks.note(state, exact=True)  # this state is the one meant
            return
        from customs_batch.state.history import LocalHistory, state_behind_history

        problem = state_behind_history(state, LocalHistory(self.directory))
        if problem is not None:
            raise StateError(
                f"{self.state_path} is older than its history: {problem}",
                hint=f"put back the newest {self.state_path.name} of this environment (from "
                "version control or wherever CI kept it); if it is lost, record each "
                "object named above with `customs-batch import ADDR ID` before planning "
                "(`customs-batch history` lists what was sent)",
            )
        if not state.lineage and not state.resources and not self.journal_path.exists():
            self._refuse_a_renamed_environment()  # (plan and apply: a read alone goes on)
        if self.marks is None:
            return
        mark = self.marks.behind(state)
        if mark is not None:
            self._refuse_an_older_folder(state, mark)
        self.marks.note(state)

    def _refuse_an_older_folder(self, state: State, mark: Mark) -> None:
        """The folder holds an older state than this project saw in it (its mark): put
        back whole from an older copy, or emptied."""
        here = os.path.abspath(self.directory)
        where = f"in {mark.folder}" if mark.folder and mark.folder != here else "here"
        seen = (
            f"on {mark.at} this project read serial {mark.serial} of the same state {where}, "
            f"with {mark.records} record(s)"
        )
        if mark.diverged:
            what = (
                f"{self.state_path} was written by a command (refresh, state rm, import...) "
                f"while it was older than the newest state this project saw {where} (serial "
                f"{mark.serial}, {mark.records} record(s), on {mark.at})"
            )
            how = "its serial may have caught up since, but it is still that older copy"
        elif state.lineage == mark.lineage and state.serial >= mark.serial:
            what = (
                f"{self.state_path} was caught up from an older copy with `customs-batch "
                f"import` or `state adopt`, but holds {len(state.resources)} of the "
                f"{mark.records} record(s) this project saw {where} at serial {mark.serial} (on "
                f"{mark.at})"
            )
            how = "what the runs since created is still missing from it"
        elif state.lineage == mark.lineage:
            what = f"{self.state_path} has serial {state.serial}, but {seen}"
            how = (
                "the folder was put back to an older copy (its history with it)"
                if where == "here"
                else "this folder holds an older copy of that state (its history with it)"
            )
        elif state.lineage:
            what = (
                f"{self.state_path} is another state (lineage {state.lineage[:8]}) than the "
                f"one this project saw here (lineage {mark.lineage[:8]}): {seen}"
            )
            how = "the state file was replaced by another (a copy from another project?)"
        else:
            what = f"{self.directory} holds no state, but {seen}"
            how = "the folder was emptied"
        raise StateError(
            f"{what}: {how}, and holds no trace of what the runs since created at the "
            "service. Planning from it would declare those documents again (goods declared "
            "twice, movements created twice)",
            hint=(
                f"put back the newest copy of {self.directory} (from version control or "
                "wherever CI kept it)"
                if where == "here"
                else f"use the newer copy of this state (seen in {mark.folder}; its folder "
                "whole, history with it), not this one"
            )
            + "; if this state is the one you mean, first record what "
            "exists at the service with `customs-batch import ADDR ID` (compare with "
            "`customs-batch get transit` and `customs-batch get template-groups`), then run "
            "the command once with --allow-empty-state to take this state as it is",
        )

    def _history_kept(self) -> Path | None:
        # Imported here: the history module builds on this one.
        from customs_batch.state.history import first_file_with_a_send

        return first_file_with_a_send(self.directory)

    def _refuse_a_partial_state(self, continued: int, found: int, absent: bool) -> None:
        """The journal holds what a run recorded on the state of serial ``continued``, and
        the state file here is older (serial ``found``) or not here at all: the records of
        that state are missing, and planning from what is here would send them again."""
        restore = (
            f"put the {self.state_path.name} of serial {continued} (or newer) back beside the "
            "journal, from version control or wherever CI kept it; the next command that "
            "writes the state folds the journal into it"
        )
        if absent:
            raise StateError(
                f"{self.state_path} is missing, and {self.journal_path.name} holds only what "
                f"the last run recorded after the state of serial {continued}: the rest of "
                "the state is not here. Starting from the journal alone would send every "
                "other document again (goods declared twice, movements created twice)",
                hint=f"{restore}; if a state holding only the journal's records is really "
                "what you want, run the command with --allow-empty-state",
            )
        raise StateError(
            f"{self.state_path} has serial {found}, but {self.journal_path.name} holds what "
            f"the last run recorded after the state of serial {continued}: the state file is "
            "older than the journal, and what was recorded between them is not here",
            hint=restore,
        )

    def open(self, operation: str, *, lock_timeout: float = 0.0) -> LocalSession:
        """Lock the state for ``operation`` and fold any journal a crash left behind."""
        if not self.allow_empty_state and not self.directory.exists():
            self._refuse_a_renamed_environment()  # before the folder is made: it is moved here
        try:
            make_private_folder(self.directory)
        except OSError as exc:
            raise write_error(
                self.directory, exc, safe=UNCHANGED, doing="cannot make the state folder"
            ) from None
        lock = StateLock(self.lock_path, operation, clock=self._clock, sleep=self._sleep)
        info = lock.acquire(lock_timeout)
        try:
            self._own_folder()
            state, folded = self._load()
            if folded:
                state.serial += 1
                write_state(self.state_path, state)
                _clear(self.journal_path)
        except BaseException:
            lock.release()
            raise
        return LocalSession(self, state, lock, info)

    def force_unlock(self, lock_id: str, *, force: bool = False) -> Unlocked:
        """Break the lock ``lock_id`` when it is safe, or ``force`` says so (see lock.py)."""
        return force_unlock(self.lock_path, lock_id, force=force)


class LocalSession:
    """Records go to the journal at once; the state file is rewritten once, at close.

    Before every record and before the final write the session checks that it still holds
    the lock. Once a record failed (the lock was broken, the disk is full) the session
    writes nothing more: close leaves the state file as it was and the journal to the next
    run, and does not raise that error a second time.
    """

    def __init__(self, backend: LocalBackend, state: State, lock: StateLock, info: LockInfo):
        self.backend = backend
        self.state = state
        self.lock_info = info
        self._lock = lock
        self._journal = JournalWriter(backend.journal_path)
        self._mutex = threading.Lock()
        self._changed = False
        self._failed = False
        self._failing = _Failing(self)
        marks = backend.marks
        behind = (
            marks is not None and not backend.allow_empty_state and marks.behind(state) is not None
        )
        recording = info.operation in _RECORDING_WHAT_EXISTS
        self._began_behind = behind and not recording
        """Whether the state was behind the folder's mark when the session began: what it
        writes stays behind it (:meth:`StateMarks.note`). Not for the commands that record
        what exists at the service (``import``, ``state adopt``): the way a state put back
        catches up (docs/state.md, "A state file older than its history"), once it holds
        as many records as the mark saw (:attr:`_catching_up`)."""
        self._catching_up = behind and recording

    def record(self, record: ResourceRecord) -> None:
        """Durably record ``record`` (journal line fsynced) before returning."""
        self._append(record.address, record)

    def record_soon(self, record: ResourceRecord) -> None:
        """Write ``record`` to the journal without waiting for the disk: it is durable with
        the next fsync, whoever makes it (``when_durable`` says when, ``flush`` forces it)."""
        self._write(record.address, record)

    def when_durable(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once everything recorded so far is on disk (see JournalWriter)."""
        self._journal.when_durable(callback)

    def flush(self) -> None:
        """Return once everything recorded so far is on disk."""
        with self._failing:
            self._journal.flush()

    def forget(self, address: str) -> None:
        """Durably forget ``address``."""
        self._append(address, None)

    def _append(self, address: str, record: ResourceRecord | None) -> None:
        # The wait for the disk is outside the mutex, so workers that record at the same
        # time share an fsync.
        sequence = self._write(address, record)
        with self._failing:
            self._journal.sync(sequence)

    def _write(self, address: str, record: ResourceRecord | None) -> int:
        # The line is written and the memory updated in one order under the mutex.
        with self._mutex, self._failing:
            self._lock.check()
            if not self._changed:
                self._refuse_what_could_not_be_written()
            if not self.state.lineage:
                self.state.lineage = str(uuid.uuid4())
            if record is not None:
                record = self.state.seal(record)
            entry = JournalEntry(self.state.lineage, address, record, self.state.serial)
            sequence = self._journal.write(entry)
            self.state.apply(address, record)
            self._changed = True
            return sequence

    def _refuse_what_could_not_be_written(self) -> None:
        """Before the first change: a state file holding access codes in clear (written by
        a version before digests) is written again digested, with the API key; without the
        key that write would fail after the change was already in the journal, and the
        command would say it failed while the next one applied it."""
        sealer = self.backend.sealer
        if sealer is None or sealer.has_key():
            return  # (the key at hand, as for every run that sends: no search)
        records = self.state.resources
        if not self.state.clear_at_rest and not (
            isinstance(records, Records) and records.any_clear()
        ):
            return
        raise StateError(
            f"{self.backend.state_path} holds guarantee access codes in clear (written by an "
            "earlier version of customs-batch); writing the state digests them with the API "
            "key, and the key cannot be read here. Nothing was changed",
            hint="set the environment's API key (see `customs-batch env show`) and run the "
            "command again",
        )

    def check_lock(self) -> None:
        """Raise LockLostError when this session's lock was broken (two ``stat`` calls)."""
        with self._failing:
            self._lock.check()

    def replace(self, state: State) -> None:
        """Replace the whole state file by ``state`` (lineage, serial and every record)."""
        with self._mutex:
            self._journal.close()
            state = state.sealed_by(self.backend.sealer)
            write_state(self.backend.state_path, state)
            _clear(self.backend.journal_path)
            self.state = state
            self._changed = False
            self._note_written()

    def _note_written(self) -> None:
        """The state just written is the newest of the folder (as it is, when the command
        was told to take the state it found: ``--allow-empty-state``), unless it was behind
        the folder's mark when the session began (a mending command on an older copy)."""
        marks = self.backend.marks
        if marks is not None:
            marks.note(
                self.state,
                exact=self.backend.allow_empty_state,
                behind=self._began_behind,
                catching_up=self._catching_up,
            )

    def close(self) -> None:
        """Fold the journal into the state file (serial + 1) and release the lock."""
        try:
            if self._failed:
                with contextlib.suppress(StateError):
                    self._journal.close()
                return
            self._journal.close()
            if self._changed:
                self._lock.check()
                self.state.serial += 1
                write_state(self.backend.state_path, self.state)
                _clear(self.backend.journal_path)
                self._changed = False
                self._note_written()
        finally:
            self._lock.release()

    def __enter__(self) -> LocalSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _Failing:
    """A block after which a StateError marks the session failed (it writes nothing more).

    A plain class rather than a generator-based context manager: it wraps every journal
    line and lock check, and the generator's setup cost several microseconds each time.
    """

    __slots__ = ("session",)

    def __init__(self, session: LocalSession) -> None:
        self.session = session

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None and issubclass(exc_type, StateError):
            self.session._failed = True


def _apply_journal(
    state: State,
    journal_path: Path,
    refuse_newer: Callable[[int, int, bool], None] | None,
    *,
    absent: bool,
) -> str:
    """Apply the journal's lines to ``state``; the SHA-256 of the lines applied, or "" when
    there were none. ``refuse_newer`` is called (and raises) for a line written on a state
    newer than ``state``."""
    applied = False
    found = state.serial
    digest = hashlib.sha256()
    for entry in read_journal(journal_path, digest.update):
        if refuse_newer is not None and entry.serial is not None and entry.serial > found:
            refuse_newer(entry.serial, found, absent)
        if not state.lineage:
            state.lineage = entry.lineage
        elif entry.lineage != state.lineage:
            raise StateError(
                f"{journal_path}: the journal belongs to another state (lineage {entry.lineage}, "
                f"the state's is {state.lineage})",
                hint="the state file was replaced while a run's journal was pending; restore "
                "the matching state, or move the journal aside after checking it",
            )
        state.apply(entry.address, entry.record)
        applied = True
    return f"sha256:{digest.hexdigest()}" if applied else ""


def _clear(journal_path: Path) -> None:
    """Empty the journal once the state file holds it. The empty file stays, as a sign that
    this environment has a state (see ``LocalBackend._refuse_a_lost_state``)."""
    try:
        fd = open_private(journal_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(journal_path.parent)
    except OSError as exc:
        raise write_error(
            journal_path,
            exc,
            safe="the state file already holds everything recorded; the journal is folded "
            "in again, to the same result, by the next run",
            doing="cannot empty the journal",
        ) from None


def _environment_of(path: Path) -> tuple[str, str] | None:
    """The environment and service an ``environment`` file names, or None (none there, or
    unreadable: the environment that owns it says so when it reads it)."""
    try:
        with path.open("rb") as file:
            data = file.read(_ENVIRONMENT_READ)
    except OSError:
        return None
    name, service = _parse_environment(data)
    return None if not name or service is None else (name, service)


def _parse_environment(data: bytes) -> tuple[str, str | None]:
    """The environment an ``environment`` file names (its first line) and its service
    (the ``service URL`` line; None for a file written before it was kept)."""
    lines = data.decode("utf-8", errors="replace").strip().splitlines() or [""]
    service = next((line[len(_SERVICE) :] for line in lines if line.startswith(_SERVICE)), None)
    return lines[0].strip(), service
