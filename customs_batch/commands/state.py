"""The state commands as functions: look at the state, and mend it (``state rm``, ``mv``,
``restore``, ``forget``, ``adopt``, ``push``, and ``import``). Each chooses the environment and
its backend, takes the lock where it writes, and returns what it did; the CLI only parses and
prints."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from customs_batch.backends import backend_for
from customs_batch.commands.session import locked_session
from customs_batch.environments import Environment, StateKind, load_project
from customs_batch.errors import CustomsBatchError, StateError, UsageError
from customs_batch.execution.elsewhere import ObjectsHeldElsewhere
from customs_batch.findings import Severity
from customs_batch.jsontypes import JSON
from customs_batch.kinds import Address
from customs_batch.kinds.actions import Action
from customs_batch.kinds.model import key_honoured, key_honoured_until
from customs_batch.kinds.registry import model_of
from customs_batch.planning.references import resolve
from customs_batch.service_address import same_service
from customs_batch.state import (
    LocalBackend,
    RecordStatus,
    ResourceRecord,
    State,
    StateBackend,
    edits,
)
from customs_batch.state.backend import OtherState
from customs_batch.state.history import (
    HistoryPushed,
    history_for,
    last_ids,
    push_history,
    reading_history,
)
from customs_batch.state.lock import InFlight, Unlocked, in_flight_of, running_request
from customs_batch.state.transfer import pushed_state, undone_by_push

if TYPE_CHECKING:
    from customs_batch.execution.reconcile import RestatedRecords
    from customs_batch.kinds.readback import Comparison
    from customs_batch.state.model import Scalar


@dataclass(frozen=True)
class StateOptions:
    """``environment``: a name from customs-batch.yaml (None: the default);
    ``allow_empty_state``: read a local state that starts empty although traces of an
    earlier one are there; ``lock_timeout``: how long a writing command waits for the lock."""

    environment: str | None = None
    allow_empty_state: bool = False
    lock_timeout: float = 0.0

    def chosen(self) -> Environment:
        return load_project().select(self.environment)

    def backend(self, environment: Environment | None = None) -> StateBackend:
        return backend_for(environment or self.chosen(), allow_empty_state=self.allow_empty_state)


def unlock(options: StateOptions, lock_id: str, *, force: bool) -> Unlocked:
    """``force-unlock``: the lock ``lock_id`` of a run that has ended, removed."""
    return options.backend().force_unlock(lock_id, force=force)


def read_state(options: StateOptions) -> State:
    """The whole state (``state list``, ``show``, ``pull``), read without the lock."""
    return options.backend().read()


@dataclass(frozen=True)
class Listing:
    """The whole state as ``state list`` shows it, and what says which of its records are
    requests of a run still holding the lock (read without it)."""

    state: State
    in_flight: InFlight | None = None

    def word(self, address: str, record: ResourceRecord) -> str:
        """How ``state list`` names the status of ``record`` (:func:`record_word`)."""
        return record_word(address, record, self.in_flight)

    def outputs(self, address: str, record: ResourceRecord) -> Mapping[str, Scalar]:
        """The outputs ``state list`` shows of ``record``: as recorded, but where its kind's
        answer told the state of an object of another kind that the state records (a party
        update's: its departure's declaration, ``KindModel.restates``), the outputs both
        hold (its status) as that object's own record holds them: its departure's own
        updates and ``refresh`` change that record, not the party update's, which would
        otherwise show the status of the time it was sent. ``status`` shows it so too."""
        from customs_batch.execution.reconcile import as_restated

        return as_restated(record, self._restated.of(record)).outputs

    @cached_property
    def _restated(self) -> RestatedRecords:
        from customs_batch.execution.reconcile import RestatedRecords

        return RestatedRecords(self.state)


def list_state(options: StateOptions) -> Listing:
    """``state list``: the whole state, read without the lock, with the run that holds it."""
    backend = options.backend()
    state = backend.read()
    return Listing(state, in_flight_of(backend.running_holder()))


def show_record(options: StateOptions, address: Address) -> ResourceRecord:
    """``state show``: everything recorded for ``address`` (a :class:`UsageError`, exit 64,
    when the state has no record of it), read without the lock."""
    record = read_state(options).resources.get(str(address))
    if record is None:
        raise edits.not_recorded(str(address))
    return record


def forget_records(
    options: StateOptions, addresses: list[Address], *, gone: bool
) -> list[edits.Forgotten]:
    """``state rm``: every address checked first, then each forgotten (a tombstone, or for
    good with ``gone``). With ``gone`` the service is asked first whether each object still
    exists: one it still holds is refused, and nothing is removed. An address given twice is
    forgotten once (twice, it left a tombstone of its tombstone, which `state restore` turned
    back into a tombstone while saying "Restored")."""
    addresses = list(dict.fromkeys(addresses))
    if not gone:
        with options.backend().open("state rm", lock_timeout=options.lock_timeout) as session:
            for address in addresses:
                edits.check_forgettable(
                    session, str(address), gone=gone, confirmable=_confirmable(address)
                )
            return [
                replace(
                    edits.forget(session, str(address), gone=gone),
                    confirmable=_confirmable(address),
                )
                for address in addresses
            ]
    from customs_batch.execution.reconcile import check_gone

    environment = options.chosen()
    backend = options.backend(environment)
    with locked_session(environment, backend, "state rm", lock_timeout=options.lock_timeout) as (
        client,
        session,
    ):
        checks: list[str] = []
        for address in addresses:
            edits.check_forgettable(session, str(address), gone=gone)
            record = session.state.resources[str(address)]
            checks.append("" if record.never_created else check_gone(client, record).words)
        return [
            replace(edits.forget(session, str(address), gone=gone), checked=checked)
            for address, checked in zip(addresses, checks, strict=True)
        ]


def _confirmable(address: Address) -> bool:
    """Whether the API reads ``address``'s kind back, so that ``state rm --gone`` can ask
    whether its object still exists (a movement's cannot be)."""
    return model_of(address.kind).refresh is not None


def restore_record(options: StateOptions, address: Address) -> ResourceRecord:
    """``state restore``: a tombstone tracked again; refused while a record of another state
    of the same service stands for its object (another environment took it over)."""
    environment = options.chosen()
    backend = options.backend(environment)
    with backend.open("state restore", lock_timeout=options.lock_timeout) as session:
        _refuse_to_track_again(environment, backend, session.state, address)
        return edits.restore(session, str(address))


def move_record(options: StateOptions, old: Address, new: Address) -> ResourceRecord:
    """``state mv``: a renamed document takes its record. A tombstone moved is tracked
    again under the new name: refused, as ``state restore`` is, while a record of another
    state of the same service stands for its object."""
    edits.check_movable(str(old), str(new))
    environment = options.chosen()
    backend = options.backend(environment)
    with backend.open("state mv", lock_timeout=options.lock_timeout) as session:
        _refuse_to_track_again(environment, backend, session.state, old, moved_to=new)
        return edits.move(session, str(old), str(new))


def _refuse_to_track_again(
    environment: Environment,
    backend: StateBackend,
    state: State,
    address: Address,
    *,
    moved_to: Address | None = None,
) -> None:
    """Where ``state`` holds a tombstone at ``address`` (``state restore`` of it, or
    ``state mv`` of it to ``moved_to``, tracks it again), refused while a record of another
    state of the same service stands for its object; anything else passes (the other states
    are then not read)."""
    from customs_batch.execution.reconcile import refuse_a_tombstone_held_elsewhere

    record = state.resources.get(str(address))
    if record is None or record.status is not RecordStatus.FORGOTTEN:
        return
    others = objects_held_elsewhere(environment, backend)
    refuse_a_tombstone_held_elsewhere(others, address, record, moved_to=moved_to)


def forget_attempt(options: StateOptions, address: Address) -> datetime | None:
    """``state forget``: an attempt whose outcome is unknown, found not to have created
    anything, is taken back so the next apply sends it again. One sent under an
    Idempotency-Key (a movement) keeps it while the service honours it: the next apply
    sends the document, unchanged, under that key, so that a mistaken forget makes no
    second object. Until when that key is honoured, or None when none is kept."""
    model = model_of(address.kind)
    now = datetime.now(UTC)

    def honoured(record: ResourceRecord) -> bool:
        return model.idempotency_keys and key_honoured(
            record.idempotency_key, record.updated_at, now
        )

    with options.backend().open("state forget", lock_timeout=options.lock_timeout) as session:
        record = session.state.resources.get(str(address))
        kept = edits.forget_attempt(
            session, str(address), confirmable=_confirmable(address), keep_key=honoured
        )
    if not kept or record is None:
        return None
    return key_honoured_until(record.idempotency_key, record.updated_at)


def record_word(address: str, record: ResourceRecord, in_flight: InFlight | None = None) -> str:
    """How ``state list`` names a record's status: its own word, but ``needs-decision`` for
    an outcome left unknown that the next plan holds for a decision (a departure); one the
    next apply repeats safely (a movement with its recorded key) stays ``pending`` or
    ``unknown``: nothing to decide. A request of a run that still holds the lock
    (``in_flight`` says why) is ``in-flight``: that run records its answer. An applied
    record whose object ``refresh`` found no longer at the service is ``not-found``; one apply
    could not tell from another object at its ID (``unverified``) is ``needs-decision``. An
    attempt ``state forget`` took back keeping its Idempotency-Key is ``forgotten-attempt``
    (the service refused nothing)."""
    parsed = Address.parse(address)
    if record.status is RecordStatus.APPLIED and record.not_found_at is not None:
        return "not-found"
    if record.unverified is not None:
        return "needs-decision"
    if record.kept_key is not None:
        return "forgotten-attempt"
    if not record.status.outcome_unknown or parsed is None:
        return record.status.value
    if running_request(in_flight, record):
        return "in-flight"
    decision = model_of(parsed.kind).unknown_outcome(parsed, record, datetime.now(UTC))
    if decision.action is Action.NEEDS_DECISION:
        return "needs-decision"
    return record.status.value


def push_state(
    options: StateOptions,
    incoming: State,
    *,
    force: bool,
    warn: Callable[[str], None] = lambda _: None,
) -> State:
    """``state push``: the state replaced by ``incoming`` (refused for another lineage or an
    older serial unless ``force``; refused, ``force`` or not, while a record it brings holds
    an object a record of another state of the same service stands for, or while one of
    its records is given an object another of its records holds). An older copy of this
    state pushed all the same (``--force --allow-empty-state``) is told to ``warn``: what it
    undid, which the next plan would send again unless imported first."""
    from customs_batch.execution.reconcile import (
        refuse_a_push_held_elsewhere,
        refuse_a_push_holding_one_object_twice,
    )

    environment = options.chosen()
    backend = options.backend(environment)
    with backend.open("state push", lock_timeout=options.lock_timeout) as session:
        replacement = pushed_state(session.state, incoming, force=force)
        refuse_a_push_holding_one_object_twice(session.state, incoming)
        others = objects_held_elsewhere(environment, backend)
        refuse_a_push_held_elsewhere(others, session.state, incoming)
        # (Another lineage is pushed only with --force, which says the other state is meant.)
        same = incoming.lineage == session.state.lineage or not session.state.lineage
        if same and not options.allow_empty_state:
            _refuse_a_pushed_state_behind(backend, session.state, incoming, force=force)
        undone = undone_by_push(session.state, incoming) if same else None
        session.replace(replacement)
        if replacement.resources:
            backend.pushed(replacement)  # read back at the service before the next send
    if undone is not None and "undo nothing but its serial" not in undone:
        done = undone.replace("; pushed, it would undo ", "; the push undid ", 1)
        warn(
            f"pushed all the same: {done}. Before the next plan, record each of those "
            "objects that exists at the service with `customs-batch import ADDR ID` "
            "(`customs-batch history` lists what was sent)"
        )
    return replacement


def pull_history(options: StateOptions) -> Iterator[bytes]:
    """``state pull --history``: the environment's history, each entry as stored and a
    newline, oldest first, read without the lock."""
    store = history_for(options.backend())
    try:
        for stored in store.entries():
            yield stored.text + b"\n"
    finally:
        store.close()


def push_history_file(options: StateOptions, path: Path) -> HistoryPushed:
    """``state push --history FILE``: the entries of FILE (as ``state pull --history``
    printed them) added to this environment's history, which must be empty or hold the
    same chain's first entries; under the state lock, so that no apply writes meanwhile."""
    backend = options.backend()
    with backend.open("state push --history", lock_timeout=options.lock_timeout):
        store = history_for(backend)
        try:
            return push_history(path, store)
        finally:
            store.close()


def _refuse_a_pushed_state_behind(
    backend: StateBackend, current: State, incoming: State, *, force: bool
) -> None:
    """Refuse a pushed state older than what this environment's history (or the project's
    mark of its folder) says it reached: with --force it would get a new serial and pass
    every later check, and the objects the runs since created would be declared again.
    Where it is an older serial of ``current`` (pulled before a command wrote the state
    again), the refusal names what it would undo of ``current``. The options the hints name
    keep the --force given: an older serial is pushed only with it, and the push without it
    was refused with a hint naming --force, the two hints sending the user back and forth."""
    options = "--force --allow-empty-state" if force else "--allow-empty-state"
    try:
        backend.refuse_a_state_behind_its_history(incoming)
    except StateError as error:
        undone = undone_by_push(current, incoming)
        if undone is not None:
            raise StateError(
                f"the pushed state is older than this environment's: {undone}. Nothing was pushed",
                hint="pull the current state (`customs-batch state pull`), make your change "
                "on that copy and push it (a tombstone of state rm is taken back with "
                "`customs-batch state restore ADDR`); if this copy is meant as it is, push it "
                f"with {options}, then record each object it lacks that exists at the "
                "service with `customs-batch import ADDR ID` before planning",
            ) from None
        raise StateError(
            f"the pushed state is older than this environment's: {error.message}",
            hint="push a copy that holds what those runs created (`customs-batch state pull` "
            f"prints the current state); if it is lost, push this one with {options} "
            "and record each object named above with `customs-batch import ADDR ID` before "
            "planning",
        ) from None


def adopt_object(
    options: StateOptions, address: Address, remote_id: str
) -> tuple[ResourceRecord, Comparison]:
    """``state adopt``: an attempt whose outcome was unknown did create ``remote_id`` (or
    ``remote_id``, which a record apply could not verify holds, is its object); the object
    is read and compared with what the attempt sent before it is recorded."""
    from customs_batch.execution.reconcile import adopt

    typed_id(address, remote_id)
    environment = options.chosen()
    backend = options.backend(environment)
    with locked_session(environment, backend, "state adopt", lock_timeout=options.lock_timeout) as (
        client,
        session,
    ):
        others = objects_held_elsewhere(environment, backend)
        return adopt(session, client, address, remote_id, others=others)


def typed_id(address: Address, remote_id: str) -> str:
    """The ID ``remote_id`` the user typed for ``address`` as the service gives it, or a
    :class:`UsageError` (exit 64) before anything is read or asked of the service: an ID
    written in no form the kind's IDs take (``12x`` for a declaration, ``mov 1``) is a
    mistake on the command line."""
    try:
        return model_of(address.kind).canonical_id(remote_id, address)
    except UsageError:
        raise
    except CustomsBatchError as error:
        raise UsageError(error.message, hint=error.hint) from None


def objects_held_elsewhere(environment: Environment, backend: StateBackend) -> ObjectsHeldElsewhere:
    """The index of what the other states of ``environment``'s service that the tool can
    know hold, read only when first asked: those its backend sees (the other states of a
    PostgreSQL database naming the same service), and the states of the project's other
    environments with the same base_url, in folders or in PostgreSQL.

    Its readers: ``import``, ``state adopt``, ``state push``, and ``state restore`` and
    ``state mv`` of a tombstone refuse an ID one of them holds; ``plan`` and ``apply``
    refuse a document that takes over a tombstone whose object one of them holds, the
    creation of what a record of one of them declares, and an update of an object one of
    them records too; ``apply``
    and ``refresh`` offer none as a lost submission's."""

    def gather() -> list[OtherState]:
        seen = [_whose(environment, other) for other in backend.other_states_of_the_service()]
        return [*seen, *_other_environments_states(environment)]

    return ObjectsHeldElsewhere(gather)


def _whose(environment: Environment, other: OtherState) -> OtherState:
    """``other``, a state of ``environment``'s database, with the name of the project's
    environment whose state it is, if one is (its ``--env`` for the way out)."""
    if environment.state.backend is not StateKind.POSTGRES:
        return other
    for candidate in load_project().environments.values():
        settings = candidate.state
        if (
            settings.backend is StateKind.POSTGRES
            and settings.url_env == environment.state.url_env
            and (settings.name or candidate.name) == other.name
        ):
            return replace(other, environment=candidate.name)
    return other


def _other_environments_states(environment: Environment) -> list[OtherState]:
    """The states of the other environments of ``environment``'s customs-batch.yaml whose
    base_url is the same, each read without its lock: a state folder, or a PostgreSQL
    state whose URL variable is set here (a local environment's import must see what the
    CI's database state records). One not written yet, or that cannot be read or reached,
    is passed over (its own commands say why), as is a PostgreSQL state of the database
    ``environment``'s own backend reads the other states of. None for an environment
    without base_url: each embedded sandbox is a service of its own."""
    service = environment.base_url
    if not service:
        return []
    own = os.path.realpath(environment.state_dir)
    own_database = (
        os.environ.get(environment.state.url_env or "")
        if environment.state.backend is StateKind.POSTGRES
        else None
    )
    found = []
    for other in load_project().environments.values():
        if other.name == environment.name or not same_service(other.base_url, service):
            continue
        if other.state.backend is StateKind.LOCAL:
            if os.path.realpath(other.state_dir) == own:
                continue
            try:
                state: State | None = LocalBackend(other.state_dir, allow_empty_state=True).read()
            except (CustomsBatchError, OSError):
                continue
            where = f"the state of environment {other.name!r} ({other.state_dir})"
        else:
            url = os.environ.get(other.state.url_env or "")
            if not url or url == own_database:
                continue  # not reachable from here; or among the backend's own others
            from customs_batch.state.postgres import PostgresBackend

            name = other.state.name or other.name
            try:
                state = PostgresBackend(url, name).peek()
            except (CustomsBatchError, OSError):
                continue
            where = f"the state of environment {other.name!r} (the PostgreSQL state {name})"
        if state is not None:
            found.append(OtherState(where, service, state, environment=other.name))
    return found


def import_document(
    options: StateOptions,
    address: Address,
    remote_id: str,
    paths: tuple[Path, ...],
    *,
    mrn_check_digit: Severity | None = Severity.ERROR,
) -> tuple[ResourceRecord, Comparison]:
    """``import``: the document ``address`` of the manifests under ``paths`` takes over the
    object ``remote_id`` made elsewhere, once read and compared (the manifests checked as
    ``plan`` checks them, a wrong MRN check character at ``mrn_check_digit``). What the
    environment's history last recorded of ``address`` (its ID) tells an object it stood for
    from another one, where the kind asks (a template group of another code)."""
    from customs_batch.commands._inputs import Inputs
    from customs_batch.execution.reconcile import import_object
    from customs_batch.html_report import location_text

    typed_id(address, remote_id)
    documents = Inputs(paths, mrn_check_digit=mrn_check_digit).documents()
    document = next((d for d in documents if d.address == address), None)
    if document is None:
        raise UsageError(
            f"{address} is not in the manifests",
            hint="write its document first; import connects a document to an existing object",
        )
    environment = options.chosen()
    backend = options.backend(environment)
    with locked_session(environment, backend, "import", lock_timeout=options.lock_timeout) as (
        client,
        session,
    ):
        current = session.state

        def lookup(target: Address, name: str) -> JSON:
            record = current.resources.get(str(target))
            if record is None or record.status is not RecordStatus.APPLIED:
                raise KeyError(name)
            return record.outputs[name]

        spec, _unknown = resolve(dict(document.spec), lookup)

        def where(name: str) -> str:
            # The documents above are kept without the place of each value: the file is
            # read again for the line the field is written on (only for a refusal).
            from customs_batch.manifest import Document, iter_file

            placed = next(
                (
                    item
                    for item in iter_file(Path(document.source.file))
                    if isinstance(item, Document) and item.address == address
                ),
                document,
            )
            return location_text(placed.locate(("spec", name)))

        def last_known() -> frozenset[str]:
            with reading_history(backend) as history:
                return last_ids(history, str(address), session.state.lineage)

        return import_object(
            session,
            client,
            address,
            remote_id,
            spec,
            where=where,
            last_known=last_known,
            others=objects_held_elsewhere(environment, backend),
        )
