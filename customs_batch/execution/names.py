"""Names that moved from one declaration to another, as the reports see them.

A document of a ``forEach`` sheet named by its row (``dep-{{ row_number }}``) takes the
name of the row above it when that row is deleted (and so on, for an inserted or reordered
row): its name's record is then the declaration another row asks for. ``plan`` refuses
such a document (:meth:`customs_batch.planning.identity.Identities.decide_identity_change`);
``results`` and ``status``, which join rows and records by name, must not give the row that
record's ID either. :func:`moved_names` finds them, by each kind's identity, without the
network.

A document whose identity changed while no other document or record has what either
declares (a template group's code changed in place) is not one of them: its record is still
its object, and the next apply changes it. A kind with lanes (a movement, known by its place
among the movements of its HAWB, which only the plan counts) is compared by its request: a
document asking another request than its name's record, while another record holds the one
it asks or another document asks for the one its record holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import orjson

from customs_batch.jsontypes import JSON
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.model import Identity
from customs_batch.kinds.registry import model_of
from customs_batch.manifest import Document
from customs_batch.planning.identity import kept_identity
from customs_batch.planning.references import resolve
from customs_batch.state.model import RecordStatus, ResourceRecord, State


@dataclass(frozen=True)
class MovedName:
    """A document whose name's record declares something else than the document does,
    while the names moved: ``holder`` is the record that holds what the document declares
    (None: none does yet), ``declarer`` the document of the batch that declares what its
    name's record holds (None: none does)."""

    address: str
    record: ResourceRecord | None
    """None: nothing is recorded under the name, and ``holder`` is the record of another
    document's name (the last name of a sheet whose rows moved down one)."""
    holder: ResourceRecord | None
    declarer: Document | None

    def words(self) -> str:
        """Why the row is not its name's record, and what to do, for the user."""
        model = model_of(self.record_kind)
        if self.record is None:
            assert self.holder is not None
            theirs = model.identifier(self.holder)
            at = f" ({theirs} at the service)" if theirs is not None else ""
            return (
                f"what this row declares is recorded as {self.holder.address}{at}, a name "
                "another row has now: the names moved with the rows (a row inserted, removed "
                "or reordered in a sheet whose documents are named by their row number?). "
                "`customs-batch plan` refuses it and says how to give each record to the "
                "name that now declares it (`customs-batch state mv`)"
            )
        ident = model.identifier(self.record)
        held = f" ({ident} at the service)" if ident is not None else ""
        what = (
            "another request"
            if model.lane is not None
            else ", ".join(kept_identity(model, self.record))
        )
        text = (
            f"the record of {self.address}{held} declares {what}, not what this row "
            "declares: the names moved with the rows "
            "(a row inserted, removed or reordered in a sheet whose documents are named by "
            "their row number?)"
        )
        if self.holder is not None:
            theirs = model.identifier(self.holder)
            at = f" ({theirs} at the service)" if theirs is not None else ""
            text += f"; what this row declares is recorded as {self.holder.address}{at}"
        return (
            f"{text}. `customs-batch plan` refuses it and says how to give each record to "
            "the name that now declares it (`customs-batch state mv`)"
        )

    @property
    def record_kind(self) -> Kind:
        address = Address.parse(self.address)
        assert address is not None
        return address.kind


def moved_names(documents: Sequence[Document], state: State) -> dict[str, MovedName]:
    """By address, the documents whose name's record holds another declaration than they
    declare while another document declares that one, or another record holds theirs."""
    changed: list[tuple[Document, ResourceRecord, Identity]] = []
    unrecorded: list[tuple[Document, Identity]] = []
    declared: dict[tuple[Kind, Identity], Document] = {}
    asks: dict[str, Identity] = {}
    for doc in documents:
        model = model_of(doc.kind)
        if model.identity is None:
            continue
        spec = _resolved(doc.spec, state)
        if spec is None:
            continue
        mine = _declares(doc.kind, spec)
        declared.setdefault((doc.kind, mine), doc)
        asks[str(doc.address)] = mine
        record = state.resources.get(str(doc.address))
        if record is None or record.never_created:
            unrecorded.append((doc, mine))
            continue
        if record.status is RecordStatus.FORGOTTEN:
            continue
        if _recorded(doc.kind, record) == mine:
            continue
        same = model.object_identity
        if same is not None and tuple(same(record.spec)) == tuple(same(spec)):
            continue  # still to the object its record went to (a party field added)
        changed.append((doc, record, mine))
    if not changed:
        return {}
    wanted = {(doc.kind, mine) for doc, _, mine in changed}
    holders = _holders(state, wanted | {(doc.kind, mine) for doc, mine in unrecorded})
    moved: dict[str, MovedName] = {}
    for doc, mine in unrecorded:
        # Nothing under its name, and what it declares recorded under the name of another
        # document that now asks for something else: that record's row moved to this one.
        holder = next(
            (
                r
                for r in holders.get((doc.kind, mine), ())
                if r.address in asks and asks[r.address] != _recorded(doc.kind, r)
            ),
            None,
        )
        if holder is not None:
            moved[str(doc.address)] = MovedName(str(doc.address), None, holder, None)
    for doc, record, mine in changed:
        address = str(doc.address)
        holder = next((r for r in holders.get((doc.kind, mine), ()) if r.address != address), None)
        other = declared.get((doc.kind, _recorded(doc.kind, record)))
        declarer = other if other is not None and other.address != doc.address else None
        if holder is not None or declarer is not None:
            moved[address] = MovedName(address, record, holder, declarer)
    return moved


def renamed_records(documents: Sequence[Document], state: State) -> dict[str, ResourceRecord]:
    """By address, the documents with no record under their name whose declaration the
    record of a name no document has holds: renamed since the last apply (a name column
    edited, ``metadata.previousNames``), the record under the old name until the next apply
    moves it. A row's document is that record's declaration at the service, not one never
    sent. Only a record one document alone declares (two renamed alike are the plan's to
    tell apart), preferring the one its ``previousNames`` lists. A reference to a renamed
    document resolves through its record (a party update of a renamed departure)."""
    if not state.resources:
        return {}
    named = {str(doc.address) for doc in documents}
    left = [
        doc
        for doc in documents
        if model_of(doc.kind).identity is not None
        and ((own := state.resources.get(str(doc.address))) is None or own.never_created)
    ]
    found: dict[str, ResourceRecord] = {}
    while left:
        wanted: dict[str, tuple[Kind, Identity]] = {}
        unresolved: list[Document] = []
        for doc in left:
            spec = _resolved(doc.spec, state, found)
            if spec is None:
                unresolved.append(doc)
            else:
                wanted[str(doc.address)] = (doc.kind, _declares(doc.kind, spec))
        if not wanted:
            break
        holders = _holders(state, set(wanted.values()))
        earlier = {
            str(doc.address): {f"{doc.kind.value}/{name}" for name in doc.previous_names}
            for doc in left
        }
        for address, key in wanted.items():
            candidates = [r for r in holders.get(key, ()) if r.address not in named]
            if len(candidates) > 1:
                candidates = [r for r in candidates if r.address in earlier[address]]
            if len(candidates) == 1:
                found[address] = candidates[0]
        taken = Counter(record.address for record in found.values())
        found = {address: r for address, r in found.items() if taken[r.address] == 1}
        left = unresolved
    return found


def _declares(kind: Kind, spec: Mapping[str, JSON]) -> Identity:
    """What a request declares, as compared here: the kind's identity, or for a kind with
    lanes the request itself (its place in the lane is the plan's to count)."""
    model = model_of(kind)
    assert model.identity is not None
    if model.lane is not None:
        return (orjson.dumps(spec, option=orjson.OPT_SORT_KEYS).decode(),)
    return tuple(model.identity(spec))


def _recorded(kind: Kind, record: ResourceRecord) -> Identity:
    """What ``record`` declares, as :func:`_declares` gives it."""
    model = model_of(kind)
    if model.lane is not None:
        return _declares(kind, record.spec)
    return tuple(kept_identity(model, record))


def _resolved(
    spec: Mapping[str, JSON],
    state: State,
    renamed: Mapping[str, ResourceRecord] | None = None,
) -> Mapping[str, JSON] | None:
    """``spec`` with its references resolved from the recorded outcomes (of a document
    ``renamed`` since the last apply, from its record under the old name); None when one is
    not known (its identity cannot be told)."""

    def lookup(address: Address, name: str) -> JSON:
        record = state.resources.get(str(address))
        if (record is None or record.never_created) and renamed:
            record = renamed.get(str(address), record)
        if record is None:
            raise KeyError(name)
        return record.outputs[name]

    resolved, unknown = resolve(dict(spec), lookup)
    if unknown or not isinstance(resolved, Mapping):
        return None
    return resolved


def _holders(
    state: State, wanted: Iterable[tuple[Kind, Identity]]
) -> dict[tuple[Kind, Identity], list[ResourceRecord]]:
    """The records (created, not forgotten) of each wanted kind and identity."""
    kinds = {kind for kind, _ in wanted}
    wanted = set(wanted)
    found: dict[tuple[Kind, Identity], list[ResourceRecord]] = {}
    for text in state.resources:
        address = Address.parse(text)
        if address is None or address.kind not in kinds:
            continue
        record = state.resources[text]
        if record.never_created or record.status is RecordStatus.FORGOTTEN:
            continue
        key = (address.kind, _recorded(address.kind, record))
        if key in wanted:
            found.setdefault(key, []).append(record)
    return found
