"""What a plan is: one planned change per address, in the order they will be applied."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from customs_batch.findings import JsonPath
from customs_batch.kinds import Address

JSON = Any


class Action(StrEnum):
    """What the plan will do about an address, as a user reads it."""

    CREATE = "create"
    UPDATE = "update"
    NO_CHANGE = "no-change"
    REFUSED = "refused"
    ORPHANED = "orphaned"
    NEEDS_DECISION = "needs-decision"


class Operation(StrEnum):
    """Which request an apply sends for a change (none for actions that send nothing)."""

    NONE = "none"
    CREATE_TEMPLATE_GROUP = "create-template-group"
    FIND_OR_CREATE_TEMPLATE_GROUP = "find-or-create-template-group"
    UPDATE_TEMPLATE_GROUP = "update-template-group"
    SUBMIT_DEPARTURE = "submit-departure"
    UPDATE_DEPARTURE_PARTIES = "update-departure-parties"
    UPDATE_TRANSIT_PARTIES = "update-transit-parties"
    CREATE_MOVEMENT = "create-movement"
    RESEND_MOVEMENT = "resend-movement"
    DEACTIVATE_HAWB = "deactivate-hawb"
    CANCEL_EXPORT = "cancel-export"

    @property
    def requests(self) -> int:
        """How many requests the operation sends (a lookup by code is one more)."""
        if self is Operation.NONE:
            return 0
        if self is Operation.FIND_OR_CREATE_TEMPLATE_GROUP:
            return 2
        return 1


UNKNOWN = "(known after apply)"
"""How a value that depends on an outcome not known yet is shown."""


@dataclass(frozen=True)
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

    @property
    def requests(self) -> int:
        return self.operation.requests


@dataclass(frozen=True)
class Plan:
    """Every planned change in dependency order, and the state it was made against."""

    changes: tuple[PlannedChange, ...]
    lineage: str
    serial: int
    inputs_digest: str = ""

    @property
    def counts(self) -> Mapping[Action, int]:
        tally = Counter(change.action for change in self.changes)
        return {action: tally.get(action, 0) for action in Action}

    @property
    def requests(self) -> int:
        return sum(change.requests for change in self.changes)

    @property
    def has_changes(self) -> bool:
        """True when applying would send anything."""
        return self.requests > 0

    def seconds_at(self, rate_per_second: float | None) -> float:
        """How long the requests take at the environment's rate limit (0 without one)."""
        if not rate_per_second:
            return 0.0
        return self.requests / rate_per_second
