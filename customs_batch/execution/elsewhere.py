"""The objects the other states of the same service stand for, looked up by kind and ID.

Several environments may name one service (the same base_url, or states of one PostgreSQL
database). An object a record of one of their states stands for is that environment's: a
command here must not take it over (``import``, ``state adopt``, ``state restore``/``mv``
of a tombstone, ``state push``, a rename in ``plan``/``apply``), nor create it again (a
creation in ``plan``/``apply`` of what one of their records declares), nor write it while
a record here stands for it too (an update in ``plan``/``apply``), and a lost
submission's search offers none as a candidate. :class:`ObjectsHeldElsewhere` reads those states once,
when first asked, and indexes each kind's records the first time that kind is looked up:
a run that asks about many IDs (a lost departure's candidates, a pushed state's records)
pays one pass over the records of the kind, not one a question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from customs_batch.errors import CustomsBatchError
from customs_batch.kinds import Kind
from customs_batch.kinds.model import normal_identity
from customs_batch.kinds.registry import model_of
from customs_batch.planning.identity import kept_identity, kept_identity_read
from customs_batch.state.backend import OtherState
from customs_batch.state.model import RecordStatus, ResourceRecord
from customs_batch.state.records import Records


@dataclass(frozen=True)
class HeldElsewhere:
    """A record of another state of the same service that stands for an object."""

    address: str
    other: OtherState

    @property
    def release(self) -> str:
        """How that environment stops writing the object."""
        env = self.other.environment
        rm = f"customs-batch state rm {self.address}"
        command = f"`{rm} --env {env}`" if env is not None else f"`{rm}` with its --env"
        return f"release it there ({command}: its record becomes a tombstone, which sends nothing)"

    def __str__(self) -> str:
        return f"{self.address} in {self.other.where}, a state of the same service ({self.other.service})"


class ObjectsHeldElsewhere:
    """By kind and ID, the live record of another state of the same service that stands
    for that object (each kind says which IDs its records hold); tombstones there aside
    (``state rm`` is how that environment lets an object go). ``others`` is read once, when
    a lookup first needs it; a state whose records of a kind cannot be read is passed over
    from the record that fails (its own commands say why; a record indexed by the identity
    its text holds is parsed only when that identity is asked for, and passed over alone if
    it cannot be). Where several records hold one
    ID, the first is given: the states in the order ``others`` gives them, each state's
    records by address."""

    def __init__(self, others: Callable[[], Iterable[OtherState]] = tuple) -> None:
        self._others = others
        self._states: list[tuple[OtherState, list[str]]] | None = None
        self._kinds: dict[Kind, dict[str, tuple[int, HeldElsewhere]]] = {}
        self._identities: dict[Kind, dict[tuple[str, ...], list[tuple[OtherState, str]]]] = {}

    def holder(self, kind: Kind, ident: str) -> HeldElsewhere | None:
        """The record of ``kind`` elsewhere that holds ``ident`` (as ``held`` gives it)."""
        found = self._index(kind).get(ident)
        return None if found is None else found[1]

    def holding(self, kind: Kind, wanted: Iterable[str]) -> HeldElsewhere | None:
        """The first record of ``kind`` elsewhere that holds one of ``wanted``; nothing is
        read when ``wanted`` is empty."""
        wanted = tuple(wanted)
        if not wanted:
            return None
        index = self._index(kind)
        found = [index[ident] for ident in wanted if ident in index]
        return min(found, key=lambda entry: entry[0])[1] if found else None

    def declaring(
        self, kind: Kind, identity: tuple[str, ...]
    ) -> tuple[HeldElsewhere, ResourceRecord] | None:
        """The record of ``kind`` elsewhere, tombstones aside, that recorded ``identity``
        (what makes it the same thing at the service), with that record; records of a
        creation the service refused (nothing of it exists there) are passed over, and so
        is one of a kind with lanes that kept no identity (its place is not known). Nothing
        is read when ``identity`` is empty."""
        if not identity:
            return None
        words = tuple(normal_identity(identity))
        for other, address in self._by_identity(kind).get(words, ()):
            try:
                record = other.state.resources[address]
            except CustomsBatchError:
                continue  # its state's own commands say why
            if record.status is RecordStatus.FORGOTTEN or record.never_created:
                continue
            if not record.identity and model_of(kind).lane is not None:
                continue  # its place in its lane is not known (an import, an old one)
            return HeldElsewhere(address, other), record
        return None

    def _by_identity(self, kind: Kind) -> dict[tuple[str, ...], list[tuple[OtherState, str]]]:
        """By identity, the records of ``kind`` elsewhere that kept it, in the order
        :meth:`declaring` takes the first of. A record still held as its text (most of a
        state never used) is indexed by the identity its text holds, unparsed: a plan's
        creations compared with another state of 100,000 records parsed every one (3.6 s,
        docs/benchmarks.md); its status is read when its identity is asked for."""
        index = self._identities.get(kind)
        if index is not None:
            return index
        index = {}
        model = model_of(kind)
        if model.identity is None:
            self._identities[kind] = index
            return index
        prefix = f"{kind.value}/"
        for other, addresses in self._read():
            resources = other.state.resources
            texts = resources.text_of if isinstance(resources, Records) else None
            try:
                for address in addresses:
                    if not address.startswith(prefix):
                        continue
                    words = kept_identity_read(model, texts(address) if texts else None)
                    if words is None:
                        record = resources[address]
                        if record.status is RecordStatus.FORGOTTEN or record.never_created:
                            continue
                        if not record.identity and model.lane is not None:
                            continue  # its place in its lane is not known
                        # Compared as this state's records are: an import, or a record
                        # written before identities were kept, by its request's identity.
                        words = tuple(kept_identity(model, record))
                    index.setdefault(tuple(words), []).append((other, address))
            except CustomsBatchError:
                continue
        self._identities[kind] = index
        return index

    def _read(self) -> list[tuple[OtherState, list[str]]]:
        if self._states is None:
            states = []
            for other in self._others():
                try:
                    addresses = sorted(other.state.resources)
                except CustomsBatchError:
                    addresses = []
                states.append((other, addresses))
            self._states = states
        return self._states

    def _index(self, kind: Kind) -> dict[str, tuple[int, HeldElsewhere]]:
        index = self._kinds.get(kind)
        if index is not None:
            return index
        index = {}
        model = model_of(kind)
        prefix = f"{kind.value}/"
        order = 0
        for other, addresses in self._read():
            resources = other.state.resources
            try:
                for address in addresses:
                    if not address.startswith(prefix):
                        continue
                    record = resources[address]
                    if record.status is RecordStatus.FORGOTTEN:
                        continue
                    order += 1
                    for ident in model.held(record):
                        index.setdefault(ident, (order, HeldElsewhere(address, other)))
            except CustomsBatchError:
                continue
        self._kinds[kind] = index
        return index
