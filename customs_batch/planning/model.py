"""What a plan is: one planned change per address, in the order they will be applied.

The plan's words (``Action``, ``Operation``) live with the kinds, which say how each of
their lifecycle states is planned; they are re-exported here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from customs_batch.findings import JsonPath
from customs_batch.jsontypes import JSON
from customs_batch.kinds import Address
from customs_batch.kinds.actions import Action as Action
from customs_batch.kinds.actions import Operation as Operation

UNKNOWN = "(known after apply)"
"""How a value that depends on an outcome not known yet is shown."""


@dataclass(frozen=True)
class FieldChange:
    """One value that changes: its path (``Consignee.name``), what is recorded, what the
    manifests ask for. A value absent on one side is ``None`` there."""

    path: str
    old: JSON
    new: JSON


@dataclass(frozen=True, slots=True)
class PlannedChange:
    """The plan for one address.

    ``spec`` is the request body the apply will send, with every reference whose target is
    already recorded resolved; ``unknown`` lists the paths still waiting for an outcome of
    this same run (they show as "known after apply"). ``reason`` says why — for a refusal,
    what the way out is.
    """

    address: Address
    action: Action
    operation: Operation
    reason: str = ""
    spec: Mapping[str, JSON] = field(default_factory=dict)
    unknown: tuple[JsonPath, ...] = ()
    changed: tuple[str, ...] = ()
    depends_on: tuple[Address, ...] = ()
    idempotency_key: str | None = None
    values: tuple[FieldChange, ...] = ()
    origin: str = ""
    """Where the document came from when it is a spreadsheet row (``movements.xlsx, sheet
    'Movements', row 12``), so a failure at apply points at the row to fix."""
    identity: tuple[str, ...] = ()
    """What makes it the same thing at the service (its kind's identity), recorded with it."""
    moved_from: Address | None = None
    """For ``moved``: the address whose record this document takes over (a rename)."""
    lists_first: bool = False
    """Whether its read before the write lists pages for this record alone, not for every
    change of its kind and operation (``KindModel.lists_first``: a party update recorded
    before ``targetSeen`` was kept): one request more is counted, and "at least"."""

    @property
    def requests(self) -> int:
        """The requests it sends, as its kind counts them (``KindModel.requests``), and the
        first page of the list it reads for its record alone (:attr:`lists_first`)."""
        from customs_batch.kinds.registry import model_of  # the kinds: only when counted

        return model_of(self.address.kind).requests(self.operation) + self.listing

    @property
    def listing(self) -> bool:
        """:attr:`lists_first`, while it still sends the write that reads first (not once
        held, refused or needing a decision: nothing sent, nothing listed), or follows an
        object the service still works on (``apply --wait``: when the object at its ID was
        made is listed first, ``KindModel.made_at``)."""
        if not self.lists_first:  # most changes: no import, no look-up
            return False
        from customs_batch.kinds.registry import model_of  # the kinds: only when counted

        return (
            self.operation is Operation.FOLLOW
            or self.operation in model_of(self.address.kind).reads_first
        )

    @property
    def requests_at_least(self) -> bool:
        """Whether :attr:`requests` is the least it sends: its read first lists pages, as
        many as the service's list has (``KindModel.requests_at_least``), or for its record
        alone (:attr:`lists_first`)."""
        from customs_batch.kinds.registry import model_of  # the kinds: only when counted

        return self.listing or model_of(self.address.kind).requests_at_least(self.operation)

    @property
    def in_flight(self) -> bool:
        """Whether it is a request of the run that holds the state's lock whose answer that
        run has not recorded yet: ``waiting`` for that run, with nothing to read (a
        cancellation customs has not decided is ``waiting`` with a read to do)."""
        return self.action is Action.WAITING and self.operation is Operation.NONE


@dataclass(frozen=True)
class LargeChange:
    """Why the guard on the size of a change stops an apply of the plan: ``creates``
    against the ``recorded`` records of the state, past the environment's limits."""

    creates: int
    recorded: int
    min_records: int
    max_create_share: float

    def describe(self) -> str:
        """``120 creates against 100 records in the state: more than 50% of them ...``"""
        share = f"{self.max_create_share:.0%}"
        return (
            f"{self.creates} creates against {self.recorded} records in the state: more than "
            f"{share} of them (the guard applies from {self.min_records} records)"
        )


_BLOCKING = frozenset(action for action in Action if action.blocks)
"""The actions that block a pipeline (``Action.blocks``), as a set: a report asks a plan
of 100,000 changes for them three times."""


@dataclass(frozen=True)
class Plan:
    """Every planned change in dependency order, and the state it was made against.

    ``large_change`` says, when set, that the guard on the size of a change stops an apply
    of this plan (``customs_batch.planning.guard``); it is decided where the environment is
    known, and never saved with the plan (apply decides again)."""

    changes: tuple[PlannedChange, ...]
    lineage: str
    serial: int
    inputs_digest: str = ""
    large_change: LargeChange | None = None
    manifests: tuple[str, ...] = ()
    """For a saved plan: the manifest paths it was made from (as given to ``plan``), read
    again by ``apply`` for the sensitive values the plan file holds only as digests."""
    journal: str = ""
    """The fingerprint of the journal of a run not yet folded that the plan saw (the state's
    ``journal``): the plan is current only after the fold of that very journal."""
    state_at: str = ""
    """For a saved plan made against an empty state (no lineage yet to tell it by): where
    that state is (a local folder, a PostgreSQL state's name), so that the plan is not
    applied to the empty state of another project."""
    mrn_check_digit: str | None = None
    """For a saved plan: the ``--mrn-check-digit`` level it was made with (``error``,
    ``warning``, ``off``), which ``apply`` reads its manifests again with; None: not recorded
    (a plan file written before plans recorded it)."""
    labels: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    """For a saved plan: the ``-l``, ``--target`` and ``--exclude`` it was made with, which
    ``apply`` chooses its manifests' documents with again to check that they are still the
    ones the plan was made from (``inputs_digest``)."""

    @property
    def counts(self) -> Mapping[Action, int]:
        tally = Counter(change.action for change in self.changes)
        return {action: tally.get(action, 0) for action in Action}

    @property
    def in_flight(self) -> int:
        """How many of the ``waiting`` changes are in flight (:attr:`PlannedChange.in_flight`)."""
        if not any(change.action is Action.WAITING for change in self.changes):
            return 0
        return sum(1 for change in self.changes if change.in_flight)

    @property
    def requests(self) -> int:
        from customs_batch.kinds.registry import model_of  # the kinds: only when counted

        # By kind and operation, not change by change: two property calls a change were
        # most of it.
        sent = Counter((change.address.kind, change.operation) for change in self.changes)
        listed = sum(1 for change in self.changes if change.listing)
        return listed + sum(
            model_of(kind).requests(operation) * n for (kind, operation), n in sent.items()
        )

    @property
    def requests_at_least(self) -> bool:
        """Whether :attr:`requests` is the least the changes send: one of them reads a list
        of as many pages as the service holds first (:attr:`PlannedChange.requests_at_least`)."""
        from customs_batch.kinds.registry import model_of  # the kinds: only when counted

        sent = {(change.address.kind, change.operation) for change in self.changes}
        return any(model_of(kind).requests_at_least(operation) for kind, operation in sent) or any(
            change.listing for change in self.changes
        )

    @property
    def has_changes(self) -> bool:
        """True when applying would change anything: send a request or drop a record."""
        return any(change.operation.writes_state for change in self.changes)

    @property
    def blocked(self) -> tuple[PlannedChange, ...]:
        """The changes a pipeline must not pass: refused, rejected at the service, or
        waiting for a decision. ``plan`` exits 1 while there are any."""
        return tuple(change for change in self.changes if change.action in _BLOCKING)

    def seconds_at(self, rate_per_second: float | None) -> float:
        """The least time the requests take at the environment's rate limit (0 without
        one): the first leaves at once, each next one a spacing after the one before, as
        the run's limiter sends them. (Counting a spacing for the first too, 10 requests at
        1/second were "at least 10.0 s" where the run sent them in 9.)"""
        if not rate_per_second or self.requests < 2:
            return 0.0
        return (self.requests - 1) / rate_per_second
