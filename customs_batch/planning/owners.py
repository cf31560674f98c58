"""One owner per party field, once the IDs are known.

``validate`` refuses two documents writing one party field of one declaration when it can
tell they name the same one: a departure and a party update naming it by
``${ref:DepartureDeclaration/….declarationId}``, two updates naming it the same way
(``validation/ownership.py``). Offline it cannot tell that a ``${ref:}`` and a literal ID
name one declaration, nor that a literal ID is a departure of the manifests: the plan can,
from the state. Both would be sent, the last one would win at the service, and the next plan
would call both unchanged. The plan refuses the party update that comes second instead
(a departure owns what it writes; between two updates, the one whose address sorts last).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from customs_batch.jsontypes import JSON
from customs_batch.kinds import Address
from customs_batch.kinds.actions import Action, Operation
from customs_batch.kinds.registry import KINDS, model_of
from customs_batch.planning.model import PlannedChange
from customs_batch.planning.references import REF
from customs_batch.state.model import RecordStatus, ResourceRecord
from customs_batch.validation.ownership import Field, party_fields

_NOT_WRITTEN = frozenset({Action.REFUSED, Action.ORPHANED, Action.DROP})
"""Changes whose party fields nothing writes now, or ever again."""


def refuse_second_writers(
    changes: list[PlannedChange], recorded: Callable[[str], ResourceRecord | None]
) -> None:
    """Refuse, in place, each party update writing a party field that another change of the
    plan writes to the same declaration, known by its ID."""
    kinds = {kind for kind, model in KINDS.items() if model.parties is not None}
    writers = [
        (at, change)
        for at, change in enumerate(changes)
        if change.address.kind in kinds and change.action not in _NOT_WRITTEN
    ]
    if len(writers) < 2:
        return
    # Owners (departures) first, then updates by address: the first writer of a field keeps it.
    writers.sort(key=lambda item: (_updates(item[1]) is not None, str(item[1].address)))
    owned: dict[tuple[str, str], dict[Field, Address]] = {}
    for at, change in writers:
        target = declaration_of(change, recorded)
        if target is None:
            continue
        fields = owned.setdefault(target, {})
        clashes: dict[Address, list[Field]] = {}
        for written in party_fields(change.spec):
            owner = fields.setdefault(written, change.address)
            if owner != change.address:
                clashes.setdefault(owner, []).append(written)
        if clashes and _updates(change) is not None:
            owner, clashed = next(iter(clashes.items()))
            changes[at] = _refused(change, owner, clashed, target[1])


def _updates(change: PlannedChange) -> str | None:
    parties = model_of(change.address.kind).parties
    return None if parties is None else parties.updates


def declaration_of(
    change: PlannedChange, recorded: Callable[[str], ResourceRecord | None]
) -> tuple[str, str] | None:
    """The declaration whose party fields ``change`` writes, by variant and ID, when known:
    an owner's recorded ID, an update's ID (given, or resolved from the record of what its
    reference names)."""
    parties = model_of(change.address.kind).parties
    if parties is None:
        return None
    if parties.updates is None:
        record = recorded(str(change.address))
        if record is None or record.status is not RecordStatus.APPLIED:
            return None
        return _id("departure", record.outputs.get(parties.id_output))
    value: JSON = change.spec.get(parties.updates)
    if isinstance(value, str) and (found := REF.fullmatch(value)) is not None:
        named = recorded(found.group(1))
        if named is None or named.status is not RecordStatus.APPLIED:
            return None  # not created yet: nothing can name its ID
        value = named.outputs.get(found.group(2))
    return _id(str(change.spec.get("variant", "departure")), value)


def _id(variant: str, value: JSON) -> tuple[str, str] | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    if isinstance(value, float):
        if not value.is_integer():
            return None
        value = int(value)
    text = str(value).strip()
    return (variant, text) if text else None


def _refused(
    change: PlannedChange, owner: Address, fields: list[Field], declaration: str
) -> PlannedChange:
    names = ", ".join(f"{role}.{name}" for role, name in fields)
    return replace(
        change,
        action=Action.REFUSED,
        operation=Operation.NONE,
        reason=(
            f"{names} of declaration {declaration} {'is' if len(fields) == 1 else 'are'} "
            f"written by {owner} too (one names the declaration by its ID, the other by a "
            "reference or as its own): each would take the field as its own, the last sent "
            "would win at the service, and the next plan would call both unchanged. Write "
            "each party field in one document only (a party update writes what its "
            "departure leaves out)"
        ),
        idempotency_key=None,
    )
