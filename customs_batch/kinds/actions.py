"""The words of a plan: what it does about an address, and which request it sends.

They live beside the kinds, below planning and execution, because each kind's module says
which of them apply to it and how plan words each of its lifecycle states.
"""

from __future__ import annotations

from enum import StrEnum


class Action(StrEnum):
    """What the plan will do about an address, as a user reads it."""

    CREATE = "create"
    UPDATE = "update"
    RESUBMIT = "resubmit"
    NO_CHANGE = "no-change"
    MOVED = "moved"
    DROP = "drop"
    REFUSED = "refused"
    REJECTED = "rejected"
    ORPHANED = "orphaned"
    NEEDS_DECISION = "needs-decision"
    WAITING = "waiting"
    """Sent and answered, but the service has not decided yet (an export cancellation
    ``cancellation_requested``): apply reads where it stands; it blocks nothing."""

    @property
    def blocks(self) -> bool:
        """Whether a plan holding this action must not pass a pipeline (plan exits 1)."""
        return self in (Action.REFUSED, Action.REJECTED, Action.NEEDS_DECISION)

    @property
    def holds_dependents(self) -> bool:
        """Whether apply leaves this change, and what depends on it, unsent in this run:
        its object was rejected by customs, or its last outcome needs a decision."""
        return self in (Action.REJECTED, Action.NEEDS_DECISION)


class Operation(StrEnum):
    """Which request an apply sends for a change (none for actions that send nothing)."""

    NONE = "none"
    FORGET = "forget"
    MOVE = "move"
    CREATE_TEMPLATE_GROUP = "create-template-group"
    FIND_OR_CREATE_TEMPLATE_GROUP = "find-or-create-template-group"
    UPDATE_TEMPLATE_GROUP = "update-template-group"
    SUBMIT_DEPARTURE = "submit-departure"
    RESUBMIT_DEPARTURE = "resubmit-departure"
    UPDATE_DEPARTURE_PARTIES = "update-departure-parties"
    UPDATE_TRANSIT_PARTIES = "update-transit-parties"
    CREATE_MOVEMENT = "create-movement"
    RESEND_MOVEMENT = "resend-movement"
    DEACTIVATE_HAWB = "deactivate-hawb"
    CANCEL_EXPORT = "cancel-export"
    HAND_OVER = "hand-over"
    """Record that a document no longer writes party fields another document of the same
    declaration takes over in the same plan, at the value the service holds: nothing is
    sent (``planning/diff.py``, ``_hand_over``)."""
    FOLLOW = "follow"
    """Read where an object the service has not decided yet stands, and record it (with
    ``apply --wait``, until it is decided): the kind's ``refresh``, nothing is sent."""

    @property
    def requests(self) -> int:
        """How many requests the operation itself sends: a find-or-create looks its group
        up by code first, and a resubmission reads the rejected declaration it replaces.
        What a kind reads before a write to an object the service holds is the kind's to
        count (``KindModel.requests``, its ``reads_first``)."""
        if self in (Operation.NONE, Operation.FORGET, Operation.MOVE, Operation.HAND_OVER):
            return 0
        if self in (Operation.FIND_OR_CREATE_TEMPLATE_GROUP, Operation.RESUBMIT_DEPARTURE):
            return 2
        return 1

    @property
    def writes_state(self) -> bool:
        """Whether apply changes anything for it (a request, or a record dropped)."""
        return self is not Operation.NONE
