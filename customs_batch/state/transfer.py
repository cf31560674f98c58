"""``state push``: when a state brought from elsewhere may replace the one a backend holds.

Terraform's rules: a state of another lineage is another state, and a lower serial is an
older copy of this one; either would undo what was recorded since, so both are refused
unless forced. The serial never goes down in the backend, so a plan saved before the push
is no longer current after it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from customs_batch.errors import StateError
from customs_batch.state.file import loads
from customs_batch.state.model import RecordStatus, State

_FORCE = "pass --force to replace it anyway; what only the current state records is then lost"


def pushed_state(current: State, incoming: State, *, force: bool = False) -> State:
    """The state to write when ``incoming`` replaces ``current``; StateError if refused."""
    empty = not current.lineage and not current.resources
    if not empty and not force:
        if incoming.lineage != current.lineage:
            raise StateError(
                f"the pushed state is another state (lineage {incoming.lineage or 'none'}, "
                f"this one's is {current.lineage or 'none'})",
                hint=f"check the environment (--env) and the file; {_FORCE}",
            )
        if incoming.serial < current.serial:
            raise StateError(
                f"the pushed state is older than this one (serial {incoming.serial}, this "
                f"one's is {current.serial})",
                hint=f"pull the current state and start from it; {_FORCE}",
            )
        if incoming.serial == current.serial and incoming.resources != current.resources:
            raise StateError(
                f"the pushed state has this one's serial ({current.serial}) and other records: "
                "both changed since they parted",
                hint=f"pull the current state and compare; {_FORCE}",
            )
    serial = incoming.serial if empty or incoming.serial > current.serial else current.serial + 1
    return State(lineage=incoming.lineage, serial=serial, resources=dict(incoming.resources))


_NAMED = 5
"""How many addresses of each sort :func:`undone_by_push` names (then how many more)."""


def undone_by_push(current: State, incoming: State) -> str | None:
    """What pushing ``incoming``, an older serial of ``current``'s lineage, would undo of
    what was written since (records it lacks, tombstones it does not hold, records written
    since, records removed since), in words naming the addresses; None when ``incoming`` is
    not such a copy (another lineage, or not older)."""
    if not current.lineage or incoming.lineage != current.lineage:
        return None
    if incoming.serial >= current.serial:
        return None
    lacks: list[str] = []
    tombstones: list[str] = []
    changed: list[str] = []
    for address in current.resources:
        record = current.resources[address]
        before = incoming.resources.get(address)
        if record.status is RecordStatus.FORGOTTEN and (
            before is None or before.status is not RecordStatus.FORGOTTEN
        ):
            tombstones.append(address)
        elif before is None:
            lacks.append(address)
        elif before != record:
            changed.append(address)
    removed = [address for address in incoming.resources if address not in current.resources]
    parts = [
        words.format(_named(addresses))
        for addresses, words in (
            (lacks, "the record(s) of {} (the next plan would send their documents again)"),
            (
                tombstones,
                "the tombstone(s) of {} (forgotten since with state rm: their objects would "
                "be tracked again, or their documents sent again)",
            ),
            (changed, "what was recorded since of {}"),
            (removed, "the removal of {} (by state rm --gone since)"),
        )
        if addresses
    ]
    what = "; ".join(parts) if parts else "nothing but its serial: it holds the same records"
    return (
        f"it is serial {incoming.serial} of this environment's state, which a command has "
        f"written since (serial {current.serial} now); pushed, it would undo {what}"
    )


def _named(addresses: list[str]) -> str:
    shown = ", ".join(sorted(addresses)[:_NAMED])
    more = len(addresses) - _NAMED
    return f"{shown} and {more} more" if more > 0 else shown


def read_pushed(
    data: bytes, *, source: Path, address_error: Callable[[str], str | None] | None = None
) -> State:
    """The state in ``data`` (a file ``state push`` was given), every record parsed, so that
    a damaged one is found before anything is replaced; ``address_error`` says what is wrong
    with a record's address (None: nothing), so that no record lands where no command can
    name it. Its errors say to bring the file again: it is a copy, not the state, so there
    is no backup of it to restore."""
    try:
        state = loads(data, source=source)
        if address_error is not None:
            for address in state.resources:
                why = address_error(address)
                if why is not None:
                    shown = address if len(address) <= 80 else address[:77] + "..."
                    raise StateError(
                        f"{source}: the state record {json.dumps(shown, ensure_ascii=False)} "
                        f"is malformed ({why})"
                    )
        return State(state.lineage, state.serial, {a: state.resources[a] for a in state.resources})
    except StateError as exc:
        raise StateError(
            exc.message,
            hint=f"{source.name} is not a whole state as `customs-batch state pull` prints it; "
            "pull it again from where it is kept, or restore the copy from where you saved it. "
            "The state was not changed",
        ) from None
