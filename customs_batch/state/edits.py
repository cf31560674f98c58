"""The state edits a person makes: forget (leaving a tombstone), remove for good, move a
record to a new name, track a forgotten one again. Each checks what it is given and says
the way out when it cannot be done; the caller holds the session (and so the lock)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from customs_batch.errors import StateError, UsageError
from customs_batch.state.backend import StateSession
from customs_batch.state.model import RecordStatus, ResourceRecord, ServiceFailure


@dataclass(frozen=True)
class Forgotten:
    """What ``state rm`` did to one address: left a tombstone, or removed it outright
    (nothing of it ever existed at the service, or the user said it is gone)."""

    address: str
    tombstone: bool
    checked: str = ""
    """For a record removed for good: what the service said of its object (or why it was
    not asked)."""
    confirmable: bool = True
    """For a tombstone: whether ``state rm --gone`` can ever confirm its object gone (the API
    reads its kind back); a movement's stays."""


def not_recorded(
    address: str, hint: str = "`customs-batch state list` shows what is"
) -> UsageError:
    """The error of an address the state does not record, named on the command line: the
    user's mistake (exit 64, nothing was asked of the service), not a state that cannot be
    used (a lost or unreadable state is a :class:`StateError`, exit 3)."""
    return UsageError(f"{address} is not in the state", hint=hint)


def _record(session: StateSession, address: str) -> ResourceRecord:
    record = session.state.resources.get(address)
    if record is None:
        raise not_recorded(address)
    return record


_STAYS = (
    "it stays forgotten for good: the API cannot read it back, so nothing can confirm it "
    "gone (`customs-batch state restore {address}` tracks it again)"
)


def check_forgettable(
    session: StateSession, address: str, *, gone: bool, confirmable: bool = True
) -> None:
    """Refuse what ``state rm`` cannot do, before anything is written (``confirmable``:
    whether the API reads the record's kind back, so that ``--gone`` can be asked)."""
    record = _record(session, address)
    if record.status is RecordStatus.FORGOTTEN and not gone:
        raise StateError(
            f"{address} is already forgotten (a tombstone keeps its identity)",
            hint=f"`customs-batch state rm --gone {address}` once it no longer exists at the "
            "service, so that the same declaration may be submitted again"
            if confirmable
            else _STAYS.format(address=address),
        )


def forget(session: StateSession, address: str, *, gone: bool) -> Forgotten:
    """Stop tracking ``address``. What exists at the service leaves a tombstone: plan then
    never submits the same thing again under any name. With ``gone`` (the user says it no
    longer exists at the service: cancelled, or never accepted) the record goes for good."""
    record = _record(session, address)
    if gone or record.never_created:
        session.forget(address)
        return Forgotten(address, tombstone=False)
    session.record(
        record.with_changes(status=RecordStatus.FORGOTTEN, forgotten_from=record.status.value)
    )
    return Forgotten(address, tombstone=True)


KEPT_KEY = (
    "taken back by `customs-batch state forget`: its outcome was unknown and nothing is "
    "known to have been made; its Idempotency-Key is kept while the service honours it"
)
"""The error of a record :func:`forget_attempt` keeps for its Idempotency-Key."""


def forget_attempt(
    session: StateSession,
    address: str,
    *,
    confirmable: bool = True,
    keep_key: Callable[[ResourceRecord], bool] = lambda record: False,
) -> bool:
    """Take back an attempt whose outcome is unknown (found not to have created anything),
    so that the next apply sends it again. Refused for what was applied or forgotten
    (``confirmable``: as for :func:`check_forgettable`). An attempt sent under an
    Idempotency-Key the service still honours (``keep_key``) keeps it: its record stays,
    as a request that made nothing (``failed``, nothing recorded made), with the key, so that a forget made by mistake is harmless: the next apply sends
    it under that key, and the service answers with what the attempt made, if it made
    anything, instead of making it twice (``ResourceRecord.kept_key``). True when the key
    is kept."""
    record = _record(session, address)
    if record.status is RecordStatus.APPLIED:
        raise StateError(
            f"{address} was applied: forgetting it would send it again",
            hint=f"use `customs-batch state rm {address}` to stop tracking an applied object",
        )
    if record.status is RecordStatus.FORGOTTEN:
        raise StateError(
            f"{address} was forgotten by `customs-batch state rm`: it exists at the service",
            hint=f"`customs-batch state rm --gone {address}` once it no longer does"
            if confirmable
            else _STAYS.format(address=address),
        )
    if record.idempotency_key and not record.outputs and keep_key(record):
        session.record(
            record.with_changes(
                status=RecordStatus.FAILED,
                error=ServiceFailure(None, KEPT_KEY),
                forgotten_from=record.status.value,
            )
        )
        return True
    if record.look_since is not None:
        # Held unsent by apply for what a lost run may have made: what the service made
        # until now is, the user says, none of it. Removed, the record would be held again
        # by the next apply for the same objects; kept, the next apply looks only at what
        # the service makes from now, and submits it when none of that could be it.
        now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        session.record(record.with_changes(look_since=now, updated_at=now))
        return False
    session.forget(address)
    return False


def restore(session: StateSession, address: str) -> ResourceRecord:
    """Track a forgotten address again, with the status it had."""
    record = _record(session, address)
    if record.status is not RecordStatus.FORGOTTEN:
        raise StateError(
            f"{address} is not forgotten (its status is {record.status.value})",
            hint=f"`customs-batch state restore {address}` takes back a `customs-batch state "
            f"rm {address}`: there is nothing to take back while it is {record.status.value}",
        )
    restored = record.with_changes(
        status=RecordStatus(record.forgotten_from or RecordStatus.APPLIED.value),
        forgotten_from=None,
    )
    session.record(restored)
    return restored


def check_movable(old: str, new: str) -> None:
    """Refuse a move to an address of another kind: a usage mistake (exit 64), seen from the
    two addresses alone, before the state is opened."""
    if old.partition("/")[0] != new.partition("/")[0]:
        raise UsageError(
            f"{old} and {new} are of different kinds",
            hint="a record moves only to a new name of the same kind",
        )


def move(session: StateSession, old: str, new: str) -> ResourceRecord:
    """Record that the document ``old`` is now called ``new`` (Terraform's ``moved``): the
    record moves, nothing is sent. Written under the new name first, so that a run killed
    between the two writes leaves it twice, never lost."""
    check_movable(old, new)
    record = _record(session, old)
    existing = session.state.resources.get(new)
    if existing is not None:
        why = (
            "a tombstone of a forgotten object"
            if existing.status is RecordStatus.FORGOTTEN
            else "recorded"
        )
        raise StateError(
            f"{new} is already in the state ({why})",
            hint=f"`customs-batch state show {new}`; move to a name the state does not hold",
        )
    status = record.status
    if status is RecordStatus.FORGOTTEN:
        status = RecordStatus(record.forgotten_from or RecordStatus.APPLIED.value)
    moved = record.with_changes(address=new, status=status, forgotten_from=None)
    session.record(moved)
    session.forget(old)
    return moved
