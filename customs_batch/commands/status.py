"""``status`` and ``refresh`` as functions: where the recorded declarations stand, as last
known (no network) or as the service says now."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from customs_batch.backends import backend_for
from customs_batch.commands.session import locked_session
from customs_batch.environments import Environment, load_project
from customs_batch.errors import CustomsBatchError, ExitCode
from customs_batch.escaping import printable
from customs_batch.execution.reconcile import Drift, StatusEntry, status_entries
from customs_batch.execution.results import RowPlace, spreadsheet_rows
from customs_batch.kinds import Address
from customs_batch.kinds.registry import model_of
from customs_batch.state import RecordStatus, StateBackend
from customs_batch.state.lock import in_flight_of
from customs_batch.state.model import State


@dataclass(frozen=True)
class StatusOptions:
    """``environment``: a name from customs-batch.yaml (None: the default);
    ``allow_empty_state``: read a local state that starts empty although traces of an
    earlier one are there; ``paths``: the manifests whose spreadsheet rows ``status``
    groups the documents by (default: the ``manifests:`` of customs-batch.yaml, else the
    current folder, read leniently: manifests that cannot be read group nothing)."""

    environment: str | None = None
    allow_empty_state: bool = False
    paths: tuple[Path, ...] = ()

    def chosen(self) -> tuple[Environment, StateBackend]:
        environment = load_project().select(self.environment)
        return environment, backend_for(environment, allow_empty_state=self.allow_empty_state)


@dataclass(frozen=True)
class StatusResult:
    """Every recorded declaration and cancellation with where it stands."""

    environment: str
    entries: tuple[StatusEntry, ...]
    rows: Mapping[str, RowPlace] = field(default_factory=dict)
    """The spreadsheet row of each address that came from one (``forEach``)."""

    def by_row(self) -> tuple[list[StatusEntry], dict[tuple[str, str], list[StatusEntry]]]:
        """The entries that came from no spreadsheet row (in address order), and the others
        by file and sheet, each group in row order."""
        alone: list[StatusEntry] = []
        groups: dict[tuple[str, str], list[StatusEntry]] = {}
        for entry in self.entries:
            place = self.rows.get(entry.address)
            if place is None:
                alone.append(entry)
            else:
                groups.setdefault((place.file, place.sheet), []).append(entry)
        for entries in groups.values():
            entries.sort(key=lambda entry: (self.rows[entry.address].row, entry.address))
        return alone, dict(sorted(groups.items()))

    @property
    def blocking(self) -> tuple[StatusEntry, ...]:
        """Rejected at the service, or waiting for a decision of the user's."""
        return tuple(entry for entry in self.entries if entry.blocks)

    @property
    def pending(self) -> tuple[StatusEntry, ...]:
        """Not decided by customs yet."""
        return tuple(entry for entry in self.entries if entry.pending)


def read_status(options: StatusOptions) -> StatusResult:
    """The last known status of every recorded declaration (no network). The state is
    read without its lock: a request of a run that holds it, whose answer that run has
    not recorded yet, is ``in-flight``."""
    environment, backend = options.chosen()
    state = backend.read()
    entries = tuple(status_entries(state, in_flight_of(backend.running_holder())))
    return StatusResult(environment.name, entries, _rows(options.paths, state) if entries else {})


def _rows(paths: tuple[Path, ...], state: State) -> dict[str, RowPlace]:
    """Where each record's declaration came from (the row of a spreadsheet that declares
    it); manifests named on the command line must be there, the configured ones may not be
    (status then groups nothing)."""
    if paths:
        return spreadsheet_rows(paths, state)
    try:
        return spreadsheet_rows(load_project().manifest_paths(), state)
    except CustomsBatchError:
        return {}


@dataclass(frozen=True)
class RefreshOptions(StatusOptions):
    """``lock_timeout``: how long to wait for the state's lock, in seconds."""

    lock_timeout: float = 0.0


@dataclass(frozen=True)
class RefreshResult:
    """What refresh found: the changes at the service, the lost submissions looked for
    (each described for the user), and where everything stands afterwards."""

    drifts: tuple[Drift, ...]
    lost: tuple[str, ...]
    status: StatusResult
    settled_changes: int = field(default=0)
    undone: tuple[str, ...] = ()
    """The records ``status`` does not list (a HAWB deactivation's) whose object this
    refresh left undone at the service (a HAWB active again): the next apply sends them
    again, and they count with :attr:`StatusResult.blocking`, as an undone cancellation
    does."""

    @property
    def changes(self) -> tuple[Drift, ...]:
        """What changed at the service and was recorded."""
        return tuple(drift for drift in self.drifts if not drift.missing)

    @property
    def missing(self) -> tuple[Drift, ...]:
        """The recorded objects the service no longer holds, or holds another object in
        place of: each for the user to decide on (``state rm --gone`` once confirmed)."""
        return tuple(drift for drift in self.drifts if drift.missing)

    @property
    def not_found(self) -> tuple[Drift, ...]:
        """Of :attr:`missing`, those the service holds nothing at the recorded ID of."""
        return tuple(drift for drift in self.missing if not drift.another)

    @property
    def another_object(self) -> tuple[Drift, ...]:
        """Of :attr:`missing`, those the service holds another object at the recorded ID
        of (its data reset and the ID given again, say)."""
        return tuple(drift for drift in self.missing if drift.another)

    def exit_code(self, *, detailed: bool) -> ExitCode:
        """0, or with ``detailed``: 1 while anything is rejected at the service, undone
        there, no longer found there or needs a decision, else 2 when something changed at the service or a
        lost submission was taken back (the state changed: the next apply submits it),
        else 0."""
        if not detailed:
            return ExitCode.OK
        if self.status.blocking or self.undone or self.missing:
            return ExitCode.FINDINGS
        if self.changes or self.settled_changes:
            return ExitCode.CHANGES
        return ExitCode.OK


def refresh_environment(
    options: RefreshOptions, notice: Callable[[str], None] = lambda text: None
) -> RefreshResult:
    """Poll what the state knows and record what changed at the service (under the lock);
    lost submissions are looked for first. ``notice`` receives progress for the user."""
    from customs_batch.commands.state import objects_held_elsewhere
    from customs_batch.execution.reconcile import refresh
    from customs_batch.execution.settle import settle_lost_creations
    from customs_batch.state.history import reading_history

    environment, backend = options.chosen()
    with locked_session(environment, backend, "refresh", lock_timeout=options.lock_timeout) as (
        client,
        session,
    ):
        with reading_history(backend) as lookup:
            settled = settle_lost_creations(
                session,
                client,
                answered_within=environment.timeouts.answered_within,
                notice=notice,
                history=lookup,
                others=objects_held_elsewhere(environment, backend),
                take_back_held=False,  # nothing submits it here: apply takes it back
            )
        drifts: list[Drift] = []
        try:
            refresh(session, client, drifts)
        except Exception:
            # What was recorded before the failed read is saved: the error alone would
            # leave it untold (a lost submission taken back, the next plan's `+ create`).
            told = [lost.describe(applying=False) for lost in settled]
            told += [f"{drift.address}: {drift.message}" for drift in drifts]
            for line in told:
                notice(printable(line))
            if told:
                notice(
                    f"{len(told)} change(s) recorded before the error stopped the refresh; "
                    "the rest of the state was not read: run `customs-batch refresh` again"
                )
            raise
        entries = tuple(status_entries(session.state))
        undone = _undone_unlisted(session.state)
    return RefreshResult(
        tuple(drifts),
        tuple(lost.describe(applying=False) for lost in settled),
        StatusResult(environment.name, entries),
        settled_changes=len(settled),
        undone=undone,
    )


def _undone_unlisted(state: State) -> tuple[str, ...]:
    """The applied records of the kinds ``status`` does not list (``has_status`` false: a
    HAWB deactivation) whose object the service holds undone (its kind's
    ``undone_states``: a HAWB active again after its deactivation), in address order."""
    undone: list[str] = []
    for address, record in sorted(state.resources.items()):
        parsed = Address.parse(address)
        if parsed is None or record.status is not RecordStatus.APPLIED:
            continue
        model = model_of(parsed.kind)
        if model.has_status or record.not_found_at is not None or record.unverified is not None:
            continue
        if model.undone(model.service_words(record), record):
            undone.append(address)
    return tuple(undone)
