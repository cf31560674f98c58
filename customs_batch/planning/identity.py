"""Identity: which documents and records declare the same thing at the service.

An address (``Kind/name``) is only what the manifests call a document. What the service holds
is known by what was declared: each kind's model names the fields that make two requests the
same thing (``KindModel.identity``). Before a document is created, plan compares its identity
with the other documents of the batch and with every record of the state, tombstones of
``state rm`` included, so that a renamed, duplicated or forgotten document is never sent a
second time:

- the same identity as a record the manifests no longer name, and the same request: the
  document was renamed; the record moves to the new name (``moved``) and nothing is sent;
- the same identity and another request, or the same identity as another document of the
  batch: refused, naming both, with the ways out.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise

import orjson

from customs_batch.jsontypes import JSON
from customs_batch.kinds import MAX_NAME, Address, Kind
from customs_batch.kinds.actions import Action
from customs_batch.kinds.model import (
    Decision,
    Identity,
    KindModel,
    normal_identity,
    normal_value,
)
from customs_batch.kinds.registry import model_of
from customs_batch.kinds.retyped import retyped_fields, retyped_key
from customs_batch.manifest.document import Document
from customs_batch.manifest.text_pool import TextPool
from customs_batch.planning.model import Operation
from customs_batch.state.model import RecordStatus, ResourceRecord, State
from customs_batch.state.records import Records

UNKNOWN_PLACE = "place=?"
"""The place in its lane of a record written before identities were kept: such a record
matches a document of the same lane only when the requests are the same."""


def _key(kind: Kind, words: Identity) -> bytes:
    # A digest per document, not its words: a bulk load of 100,000 documents keeps these.
    # (``_value_``: the enum's ``value`` property costs a call each time.)
    return hashlib.blake2b("\x1f".join((kind._value_, *words)).encode(), digest_size=16).digest()


class Identities:
    """The identities of one plan's batch, and, when a creation first needs them, of the
    state's records."""

    def __init__(
        self,
        documents: Sequence[Document],
        state: State,
        recorded: Callable[[str], ResourceRecord | None],
        named: set[str],
        *,
        whole: bool,
        spec_of: Callable[[str], Mapping[str, JSON] | None] = lambda _: None,
        asked_by: Callable[[Kind, Mapping[str, JSON]], str | None] = lambda _kind, _spec: None,
    ) -> None:
        """``spec_of``: what the document of the batch at an address asks (its spec, None
        when not known), asked only when a new movement asks what a record of its HAWB
        named by another document recorded. ``asked_by``: a document still to plan that
        asks exactly for a request (a kind with lanes), for the words of a refusal."""
        self._state = state
        self._asked_by = asked_by
        self._recorded = recorded
        self._named = named
        self._whole = whole
        self._spec_of = spec_of
        self._words = TextPool()
        self._places: dict[int, int] = {}
        """By a hash of lane and identity, how many documents of it were planned so far:
        only for the lanes more than one document of the batch is on (``_shared_lanes``).
        A lane of one document needs no count (nothing after it counts on from it), and a
        bulk load of 100,000 movements, each on its own HAWB, held 8 MB of counts while it
        was planned."""
        self._shared_lanes: frozenset[int] = frozenset()
        """The hashes (of the kind's value and the lane) of the lanes more than one
        document of the batch is on; a lane named in no two documents is in none of them
        (two lanes of one hash are both counted: a count kept that was not needed)."""
        self._duplicates: dict[str, list[str]] = {}
        self._declared: dict[bytes, Address] = {}
        """By identity, the first document of the batch declaring it (kinds without lanes),
        kept only when the state holds records (a first bulk load has none to compare)."""
        self._index: dict[bytes, list[str]] | None = None
        self._lanes: dict[int, list[str]] = {}
        """By a hash of kind and identity without the place, the records of a kind with
        lanes (built with ``_index``; two lanes that share a hash only cost a comparison:
        a record's request names its lane)."""
        self._taken: set[str] = set()
        self.takers: dict[Address, tuple[str, Decision]] = {}
        """By address, each new document created only as the taker of the fields another
        document of the batch stopped writing (``_taking_over``): that document, and the
        refusal the new one gets unless the plan hands it those fields."""
        self._renamed_by: dict[str, str] = {}
        """By the record taken over, the document of this plan that took it (a rename)."""
        self._retyped: dict[tuple[Kind, tuple[str, ...]], list[str]] | None = None
        """By kind and :func:`retyped_key`, the records the manifests no longer name whose
        identity holds a number (built on the first creation that needs them)."""
        self._read_batch(documents)

    def _read_batch(self, documents: Sequence[Document]) -> None:
        """Documents of the batch that declare the same thing: a digest per document, not its
        words (a bulk load of 100,000 documents passes here), kept for the plan only when
        the state holds records to compare them with (``decide_identity_change``).
        Documents of a kind with lanes never do: each has its own place in its lane."""
        first: dict[bytes, Address] = {}
        lanes = array("q")
        for doc in documents:
            model = model_of(doc.kind)
            if model.identity is None:
                continue
            if model.lane is not None:
                lanes.append(hash((doc.kind._value_, *model.lane(doc.spec))))
                continue
            address = doc.address
            other = first.setdefault(_key(doc.kind, model.identity(doc.spec)), address)
            if other is not address:
                mine, theirs = str(address), str(other)
                self._duplicates.setdefault(theirs, []).append(mine)
                self._duplicates.setdefault(mine, []).append(theirs)
        if self._named:
            self._declared = first
        # Sorted, equal hashes are neighbours: no table of every lane.
        ordered = sorted(lanes)
        del lanes
        self._shared_lanes = frozenset(a for a, b in pairwise(ordered) if a == b)

    def take(self, address: str, by: str) -> None:
        """``address``'s record is taken over by the document ``by`` (a declared rename)."""
        self._taken.add(address)
        self._renamed_by[address] = by

    def place(self, doc: Document) -> int | None:
        """``doc``'s place among the documents of its identity in its lane (the first
        arrival of a HAWB: 0), for a kind with lanes: :meth:`placed`'s first."""
        return self.placed(doc)[0]

    def placed(self, doc: Document) -> tuple[int | None, int | None]:
        """``doc``'s place among the documents of its identity in its lane (the first
        arrival of a HAWB: 0), for a kind with lanes, and the place its own record says it
        was sent at (None: no record of its identity holds one). Called once per document,
        in the order the plan goes, which keeps each lane's order (or :meth:`count` in its
        stead).

        A document whose own record was sent at a place keeps that place, and the next
        documents of its lane count on from it: a movement sent before it and no longer in
        the manifests (orphaned, or forgotten by ``state rm``) still holds its place at the
        service, so a new movement after it comes after every one sent, not at its place."""
        model = model_of(doc.kind)
        if model.identity is None or model.lane is None:
            return None, None
        identity = model.identity(doc.spec)
        lane_is = model.lane(doc.spec)
        address = str(doc.address)
        recorded = self._recorded_place(address, identity)
        if hash((doc.kind._value_, *lane_is)) not in self._shared_lanes:
            # Alone on its lane in the batch: its own place if its record was sent at one.
            sent = self._sent(address, recorded, 0)
            return (0 if sent is None else sent), recorded
        lane = hash((doc.kind, *lane_is, *identity))
        place = self._places.get(lane, 0)
        sent = self._sent(address, recorded, place)
        if sent is not None:
            self._places[lane] = max(place, sent) + 1
            return sent, recorded
        self._places[lane] = place + 1
        return place, recorded

    def count(self, doc: Document, sent: int | None) -> None:
        """What :meth:`placed` does for the next documents of ``doc``'s lane, for a document
        an earlier plan found unchanged against a record (the same text) sent at ``sent``
        (what :meth:`placed` said then): neither the record nor its identity is read again."""
        model = model_of(doc.kind)
        if model.identity is None or model.lane is None:
            return
        lane_is = model.lane(doc.spec)
        if hash((doc.kind._value_, *lane_is)) not in self._shared_lanes:
            return  # alone on its lane: nothing after it counts on from it
        lane = hash((doc.kind, *lane_is, *model.identity(doc.spec)))
        place = self._places.get(lane, 0)
        self._places[lane] = (place if sent is None or sent == place else max(place, sent)) + 1

    def _sent(self, address: str, recorded: int | None, counted: int) -> int | None:
        """The place the record of ``address`` was sent at (``recorded``), when it differs
        from the ``counted`` one and the record's object was created (else None)."""
        if recorded is None or recorded == counted or self._read(address).never_created:
            return None
        return recorded

    def _recorded_place(self, address: str, identity: Identity) -> int | None:
        """The place in its lane that the record of ``address`` says it was sent at, when
        it is of this ``identity`` (else None: nothing of it was sent, or another thing). A
        record still held as its text is read for its identity only."""
        resources = self._state.resources
        if address not in resources:
            return None
        text = resources.text_of(address) if isinstance(resources, Records) else None
        words = _recorded_identity(text) if text is not None else None
        if words is None:
            if text is not None and b'"identity"' not in _bytes(text):
                return None  # written before identities were kept: no place known
            words = self._read(address).identity
        if len(words) != len(identity) + 1 or normal_identity(words[:-1]) != tuple(identity):
            return None
        head, _, number = words[-1].partition("=")
        if head != "place" or not number.isdigit():
            return None
        return int(number)

    def of(self, doc: Document, spec: Mapping[str, JSON], place: int | None) -> Identity:
        """The identity of ``doc`` with its references resolved as far as known.

        A word many documents share (``action=ISL``, ``place=0``, a shipment) is one string
        for all of them: a plan of 100,000 creations keeps every identity, and its words
        were 31 MB of it (measured)."""
        identify = model_of(doc.kind).identity
        if identify is None:
            return ()
        words = identify(spec)
        if place is not None:
            words = (*words, f"place={place}")
        shared = self._words.shared
        return tuple([shared(at, word) for at, word in enumerate(words)])

    def moved_to(
        self, doc: Document, spec: Mapping[str, JSON], place: int | None, taken: ResourceRecord
    ) -> Identity:
        """The identity of ``doc``, which takes over the record ``taken`` (a rename, by
        ``metadata.previousNames`` or by the same request): at the place in its lane that
        record's movement was sent at, as :meth:`place` gives a document its own record's
        place, and the next documents of its lane count on from it. Counted under its new
        name, it had the place of its row: after an earlier movement of the lane was
        orphaned, a renamed one took that movement's place, and the next one its own."""
        sent = _place_in(taken.identity) if place is not None else None
        if sent is None or sent == place:
            return self.of(doc, spec, place)
        model = model_of(doc.kind)
        if model.identity is not None and model.lane is not None:
            lane_is = model.lane(doc.spec)
            if hash((doc.kind._value_, *lane_is)) in self._shared_lanes:
                lane = hash((doc.kind, *lane_is, *model.identity(doc.spec)))
                self._places[lane] = max(self._places.get(lane, 0), sent + 1)
        return self.of(doc, spec, sent)

    def decide_declared_rename(
        self, address: Address, spec: Mapping[str, JSON], earlier: ResourceRecord
    ) -> Decision | None:
        """A refusal when the record a document names in ``metadata.previousNames``
        declares something else than the document does: a rename keeps what is declared,
        so a name given there by mistake (another declaration's, a forgotten one's) would
        otherwise turn that object into this document. None when both declare the same."""
        model = model_of(address.kind)
        if model.identity is None or model.lane is not None:
            return None  # a movement cannot change: any change of it is refused anyway
        mine = kept_identity(model, earlier)
        new = tuple(model.identity(spec))
        if mine == new:
            return None
        ident = model.identifier(earlier)
        held = f" ({ident} at the service)" if ident is not None else ""
        forgotten = (
            ", forgotten by `customs-batch state rm`,"
            if earlier.status is RecordStatus.FORGOTTEN
            else ""
        )
        return _refused(
            f"metadata.previousNames names {earlier.address}{forgotten} whose record{held} "
            f"declares {', '.join(mine)}, and this document declares {', '.join(new)}: a "
            "rename keeps what is declared, and taking that record over would turn its object "
            "into this declaration. If the name is there by mistake, remove it from "
            f"previousNames (this document is then created). If this document really is "
            f"{earlier.address} renamed, move its record first, `customs-batch state mv "
            f"{earlier.address} {address}` (or rename it with what it declared and apply, "
            "which moves it unless the plan holds it for a decision or as rejected), then "
            "change it"
        )

    def decide_identity_change(
        self, address: Address, spec: Mapping[str, JSON], record: ResourceRecord
    ) -> Decision | None:
        """A refusal when a document with a record of its own now declares what another
        record holds, or its record holds what another document now declares: the names
        moved from one declaration to another (renamed into each other, a row inserted,
        removed or reordered in a sheet whose documents are named by their row), and an
        update would turn one object at the service into another's declaration. None
        otherwise (the ordinary comparison decides)."""
        model = model_of(address.kind)
        if model.identity is not None and model.lane is not None:
            return self._request_handed_on(model, address, spec, record)
        if model.identity is None or model.lane is not None:
            return None  # a movement's place in its lane is compared on creation
        mine = kept_identity(model, record)
        new = model.identity(spec)
        if tuple(mine) == tuple(new):
            return None
        same = model.object_identity
        if same is not None and tuple(same(record.spec)) == tuple(same(spec)):
            return None  # still to the object its record went to (a party field added)
        own = model.identifier(record)
        own_held = f" ({own} at the service)" if own is not None else ""
        retyped = retyped_fields(new, mine)
        if retyped is not None and all(name in model.mutable for name, _, _ in retyped):
            # A field the API changes in place (a template group's code): sent, the update
            # would write the number as the export re-typed it (a field that cannot change
            # is refused by the comparison, saying so).
            said = ", ".join(f"{name} {now!r} where it has {was!r}" for name, now, was in retyped)
            return _refused(
                f"it declares what its record{own_held} declares but for numbers written "
                f"another way: {said}. That is how a spreadsheet program re-types a column it "
                "read as numbers (leading zeros dropped, `.0` added, a long number shown as "
                "`1.23457E+17`): the row's key was probably changed by the export, and the "
                "update would write it so at the service. Put the cells back as they were "
                "(format the column as Text and type the values again); if the value is really "
                "meant to change so, change it to another value first, then to this one"
            )
        new_what, mine_what = ", ".join(new), ", ".join(mine)
        moved = (
            "The names of the documents have moved from one declaration to another (renamed "
            "into each other's names, or a row inserted, removed or reordered in a sheet "
            "whose documents are named by their row number?)"
        )
        others = [
            other
            for other in sorted(self._records_like(address, tuple(new)))
            if other not in self._taken and not self._read(other).never_created
        ]
        if others:
            other = others[0]
            ident = model.identifier(self._read(other))
            held = f" ({ident} at the service)" if ident is not None else ""
            if other in self._named:
                # Its document is in the manifests, refused the same way when the names went
                # round (A to B, B to C, C to A): its own way out moves its record aside
                # first, and a `state mv OTHER ADDR` after that would move another record.
                way = (
                    f"`customs-batch state mv {address} {self._aside(address)}`, and the "
                    "same for each document refused so (each record moved aside to a name "
                    "no document has), then plan again: it gives each record moved aside to "
                    "the document that now declares it (moved, nothing sent)"
                )
            else:
                way = (
                    f"`customs-batch state mv {address} {self._aside(address)}`, then "
                    f"`customs-batch state mv {other} {address}` (state mv moves only to a "
                    "name the state does not hold)"
                )
            return _refused(
                f"it declares what {other}{held} recorded ({new_what}), not what its own "
                f"record{own_held} declares ({mine_what}): sent as an update, that object "
                f"would become the declaration {other} already is. {moved}. Put the names "
                f"back, or give each record to the name that now declares it: {way}"
            )
        if not self._whole:
            return _refused(
                f"it changes what it declares ({mine_what} -> {new_what}), and the selection "
                "(-l, --target, --exclude) leaves out documents that may now declare what its "
                f"record{own_held} holds: a name moved from one declaration to another would turn "
                "that object into this declaration. Plan without a selection to see whether "
                "another document declares it"
            )
        declared = self._declared.get(_key(address.kind, tuple(mine)))
        if declared is None or declared == address:
            return None
        declarer = str(declared)
        if declarer not in self._state.resources:
            way = f"`customs-batch state mv {address} {declarer}`"
        else:
            # ``declarer`` declares what this record holds, not what its own record does: it
            # is refused too, its way out moving its record aside (the names went round).
            way = (
                f"`customs-batch state mv {address} {self._aside(address)}`, and the same "
                "for each document refused so (each record moved aside to a name no document "
                "has), then plan again: it gives each record moved aside to the document that "
                "now declares it (moved, nothing sent)"
            )
        return _refused(
            f"its record{own_held} declares {mine_what}, which {declarer} now declares, "
            f"and this document declares {new_what}: sent as an update, that object would "
            f"stop being the declaration {declarer} asks for. {moved}. Put the names back, "
            f"or give each record to the name that now declares it: {way}. If this document "
            f"really changes to {new_what}, apply that change before adding {declarer}"
        )

    def _request_handed_on(
        self, model: KindModel, address: Address, spec: Mapping[str, JSON], record: ResourceRecord
    ) -> Decision | None:
        """For a kind with lanes: a refusal when this document asks for something else than
        its sent record, whose very request a later document of the batch now asks for (a
        row inserted above it, in a sheet whose documents are named by their row number):
        the record is that document's, and this one is a new movement. None otherwise (the
        ordinary comparison refuses the change of a sent movement)."""
        if record.status is not RecordStatus.APPLIED or self._asks(record, address.kind, spec):
            return None
        lane = model.lane
        assert lane is not None
        if tuple(lane(spec)) == tuple(lane(record.spec)):
            return None  # a movement put before sent ones of its own lane: refused as ever
        asker = self._asked_by(address.kind, record.spec)
        if asker is None or asker == str(address):
            return None
        ident = model.identifier(record)
        held = f" ({ident} at the service)" if ident is not None else ""
        if asker in self._state.resources:
            way = (
                f"`customs-batch state mv {address} {self._aside(address)}`, and the same for "
                "each document refused so (each record moved aside to a name no document "
                "has), then plan again: it gives each record moved aside to the document that "
                "now asks for it (moved, nothing sent), and creates the new movements"
            )
        else:
            way = (
                f"`customs-batch state mv {address} {asker}`; the next plan then creates this "
                "document as a new movement"
            )
        return _refused(
            f"its record{held} asks for exactly what {asker} now asks for, and this document "
            "for something else: the requests of this lane have moved from one document to "
            "the next (a row inserted or removed above them, in a sheet whose documents are "
            "named by their row number?), and a sent movement cannot change. Put the rows "
            f"back, or give the record to the document that now asks for it: {way}"
        )

    def _declares_another_record(
        self, model: KindModel, other: str, theirs: Mapping[str, JSON]
    ) -> bool:
        """Whether the document ``other``, which no longer declares what its record holds,
        declares what another record holds: refused so (``decide_identity_change``), its
        way out moves its record aside."""
        if model.identity is None:
            return False
        return any(
            found != other and found not in self._taken and not self._read(found).never_created
            for found in self._records_like(_parsed(other), tuple(model.identity(theirs)))
        )

    def _aside(self, address: Address) -> str:
        """A name to move ``address``'s record aside to, for a refusal's way out: one
        ``state mv`` takes (a document's name, at most ``MAX_NAME`` long) that neither the
        state nor the batch holds, so the next plan gives the record to the document that
        declares it. ``NAME-previous`` when that is free, shortened to fit, else numbered."""
        number = 1
        while True:
            suffix = "-previous" if number == 1 else f"-previous-{number}"
            name = f"{address.name[: MAX_NAME - len(suffix)]}{suffix}"
            aside = f"{address.kind._value_}/{name}"
            if aside not in self._state.resources and aside not in self._named:
                return aside
            number += 1

    def decide_creation(
        self,
        address: Address,
        spec: Mapping[str, JSON],
        identity: Identity,
        record: ResourceRecord | None,
    ) -> tuple[Decision, ResourceRecord | None]:
        """What to do about a document nothing of which exists at the service under its own
        name: create it, move a record to it (returned), or refuse."""
        model = model_of(address.kind)
        create = Decision(Action.CREATE, model.create)
        if record is not None:  # refused by the service: nothing was created
            message = record.error.message if record.error else "unknown error"
            create = Decision(
                Action.CREATE, model.create, f"the last attempt was refused: {message}"
            )
        if not identity:
            return create, None
        what = ", ".join(word for word in identity if not word.startswith("place="))
        twins = self._duplicates.get(str(address))
        if twins:
            return (
                Decision(
                    Action.REFUSED,
                    Operation.NONE,
                    f"it declares the same as {', '.join(sorted(twins))} in the manifests "
                    f"({what}): sending both would declare it twice. Remove one of them; if "
                    "they are really different, make them differ in these fields",
                ),
                None,
            )
        candidates = [
            c
            for c in self._records_like(address, identity)
            if c not in self._taken and self._comparable(model, c, address.kind, spec)
        ]
        if (
            candidates
            and model.lane is not None
            and not any(self._asks(self._read(c), address.kind, spec) for c in candidates)
        ):
            # The record at its place asks for something else: when a record of the lane no
            # document names asked for this very request, this is that record's document,
            # moved up by a row removed above it (a name that counts rows).
            elsewhere = self._same_request_in_lane(model, address, spec, what, identity)
            if elsewhere is not None and elsewhere[0].action is Action.MOVED:
                return elsewhere
        if candidates:
            refused, found = self._against(model, address, spec, what, candidates)
            giver = (
                self._taking_over(model, spec, candidates[0])
                if len(candidates) == 1 and refused.action is Action.REFUSED
                else None
            )
            if giver is None:
                return refused, found
            self.takers[address] = (giver, refused)
            return create, None
        if model.lane is not None:
            elsewhere = self._same_request_in_lane(model, address, spec, what, identity)
            if elsewhere is not None:
                return elsewhere
        retyped = self._retyped_twin(model, address, identity, what)
        if retyped is not None:
            return retyped, None
        return create, None

    def _retyped_twin(
        self, model: KindModel, address: Address, identity: Identity, what: str
    ) -> Decision | None:
        """A refusal when a record the manifests no longer name declares what this new
        document declares but for numbers written another way (``12`` for ``0012``,
        ``1.23457E+17`` for a long reference: a spreadsheet export that read the column as
        numbers): created, the row's declaration would be sent a second time."""
        key = retyped_key(identity)
        if key is None or not self._named:
            return None
        index = self._retyped if self._retyped is not None else self._build_retyped()
        for other in sorted(index.get((address.kind, key), ())):
            if other == str(address) or other in self._taken or other in self._named:
                continue
            found = self._read(other)
            forgotten = found.status is RecordStatus.FORGOTTEN
            if found.never_created or not (
                found.status is RecordStatus.APPLIED
                or found.status.outcome_unknown
                or (forgotten and found.forgotten_from == RecordStatus.APPLIED.value)
            ):
                continue
            fields = retyped_fields(identity, kept_identity(model, found))
            if fields is None:
                continue
            ident = model.identifier(found)
            held = f" ({ident} at the service)" if ident is not None else ""
            said = ", ".join(f"{name} {new!r} where it has {old!r}" for name, new, old in fields)
            # A tombstone too: `state rm` of the orphan (as its plan line offers) must not
            # let the re-typed row through as a second declaration.
            where = (
                "forgotten by `customs-batch state rm`"
                if forgotten
                else "no longer in the manifests"
            )
            gone = (
                f"; or, only if it no longer exists at the service, `customs-batch state rm "
                f"--gone {other}`"
                if model.refresh is not None
                else ""
            )
            if not self._whole:
                return _refused(
                    f"it declares what {other}{held} recorded ({what}) but for numbers written "
                    f"another way ({said}), and the selection (-l, --target, --exclude) leaves "
                    f"{other} out: plan without a selection to see whether it is that row "
                    "re-typed by a spreadsheet export"
                )
            return _refused(
                f"it declares what {other}{held} recorded ({what}), {where}, but for numbers "
                f"written another way: {said}. That is how a "
                "spreadsheet program re-types a column it read as numbers (leading zeros "
                "dropped, `.0` added, a long number shown as `1.23457E+17` or with its last "
                "digits turned to zeros): the row's key was probably changed by the export, "
                "and creating this document would send that declaration a second time. If it "
                f"is {other}'s row, put the cells back as they were (format the column as "
                "Text in the spreadsheet and type the values again, or export again from the "
                "file that still holds them): plan then finds the record as it was. If it is "
                "really another declaration, make it differ in one of the identifying fields "
                f"above by more than how a number is written{gone}"
            )
        return None

    def _build_retyped(self) -> dict[tuple[Kind, tuple[str, ...]], list[str]]:
        """The records :meth:`_retyped_twin` compares with: named by no document of the
        batch, their identity holding a number (their status is asked of the few found). A
        record still held as its text gives its identity without being parsed (a plan with a
        selection leaves most of a big state's records unnamed)."""
        index: dict[tuple[Kind, tuple[str, ...]], list[str]] = {}
        resources = self._state.resources
        texts = resources.text_of if isinstance(resources, Records) else None
        for address in resources:
            if address in self._named:
                continue
            parsed = Address.parse(address)
            if parsed is None:
                continue
            model = model_of(parsed.kind)
            if model.identity is None:
                continue
            words = kept_identity_read(model, texts(address)) if texts is not None else None
            if words is None:
                words = kept_identity(model, self._read(address))
            key = retyped_key(words)
            if key is not None:
                index.setdefault((parsed.kind, key), []).append(address)
        self._retyped = index
        return index

    def kept_attempt(
        self, address: Address, spec: Mapping[str, JSON], identity: Identity
    ) -> ResourceRecord | Decision | None:
        """The record of an attempt ``state forget`` took back keeping its Idempotency-Key
        (``ResourceRecord.kept_key``), of this very request, that no document of the batch
        names: this document is that one renamed (or put back under another name), and is
        sent under that key (returned, taken over), so that if the attempt did make its
        object, the service answers with that one instead of making a second. With a
        selection, such a record is refused rather than taken (a document left out may
        still name it). None when there is none."""
        model = model_of(address.kind)
        if not identity or not model.idempotency_keys:
            return None
        pool = set(self._records_like(address, identity))
        if model.lane is not None:
            # The key binds the request, not its place: a place moved by an edit above it
            # is the same request all the same.
            pool.update(self._lanes.get(hash((address.kind._value_, *identity[:-1])), ()))
        for other in sorted(pool):
            if other == str(address) or other in self._named or other in self._taken:
                continue
            found = self._read(other)
            if found.kept_key is None or not self._asks(found, address.kind, spec):
                continue
            if not self._whole:
                return _refused(
                    f"it asks for exactly what {other} sent under an Idempotency-Key before "
                    "`customs-batch state forget` took its attempt back, which the selection "
                    "(-l, --target, --exclude) leaves out: created under a new key, it could "
                    "make that attempt's object twice. Plan without a selection, where it is sent "
                    "under that key"
                )
            self._taken.add(other)
            self._renamed_by[other] = str(address)
            return found
        return None

    def _taking_over(self, model: KindModel, spec: Mapping[str, JSON], other: str) -> str | None:
        """``other`` when a new document declaring what ``other``'s record holds may be
        another writer of the same object rather than ``other`` renamed or declared twice:
        ``other`` is still in the manifests, goes to that same object, and now declares
        something else (a party update split in two, the old one writing other fields
        instead). The plan creates it only if ``other`` hands it what it declares
        (``takers``); None otherwise."""
        same = model.object_identity
        if same is None or model.lane is not None or model.identity is None:
            return None
        if other not in self._named or other in self._taken:
            return None
        found = self._read(other)
        theirs = self._spec_of(other)
        if (
            theirs is None
            or found.status is not RecordStatus.APPLIED
            or found.not_found_at is not None
            or tuple(model.identity(theirs)) == kept_identity(model, found)
        ):
            return None
        aimed = tuple(same(spec))
        if tuple(same(theirs)) != aimed or tuple(same(found.spec)) != aimed:
            return None
        return other

    def _same_request_in_lane(
        self,
        model: KindModel,
        address: Address,
        spec: Mapping[str, JSON],
        what: str,
        identity: Identity,
    ) -> tuple[Decision, ResourceRecord | None] | None:
        """For a kind with lanes, whose place nothing recorded holds: a record of the same
        lane and identity, at another place, that recorded this very request.

        The place of a document moves when a document before it in its lane is added or
        removed, and so does its name when names count rows (``row_number``): the sheet's
        rows then hand each recorded request to the next name, and the last name is new.
        Created, that request would be declared a second time. So: a record whose own
        document still asks for it is another movement of the same request (created, as
        before); one no document names is this one renamed (moved, as at its own place);
        one whose document now asks for something else was handed on (refused)."""
        self._records_like(address, identity)  # the indexes, built on the first creation
        lane = self._lanes.get(hash((address.kind._value_, *identity[:-1])), ())
        for other in sorted(lane):
            if other == str(address) or other in self._taken:
                continue
            found = self._read(other)
            if found.never_created:
                continue
            if not self._asks(found, address.kind, spec):
                continue
            if other not in self._named:
                return self._against(model, address, spec, what, [other])
            theirs = self._spec_of(other)
            if theirs is not None and self._asks(found, address.kind, theirs):
                continue  # its own document asks for it still: this is a second one
            ident = model.identifier(found)
            held = f" ({ident} at the service)" if ident is not None else ""
            return _refused(
                f"it asks for exactly what {other} recorded{held} ({what}), and the document "
                f"{other} now asks for something else: the requests of this lane have moved "
                "from one document to the next (a row inserted or removed above them, in a "
                "sheet whose documents are named by their row number?), and creating this "
                f"one would declare that movement twice. If this document is {other}'s "
                f"request under a new name, `customs-batch state mv {other} {address}` (and "
                "the same for each document before it whose request moved); or put the rows "
                "back, and name documents by something a row keeps when rows move"
            ), None
        return None

    def _asks(self, record: ResourceRecord, kind: Kind, spec: Mapping[str, JSON]) -> bool:
        """Whether ``record`` recorded this very request (``spec``)."""
        return dict(record.spec) == dict(self._like(kind, spec, record))

    def _like(self, kind: Kind, spec: Mapping[str, JSON], record: ResourceRecord) -> JSON:
        """``spec`` as ``record`` would keep it (sensitive values as digests), to compare."""
        sealer = self._state.sealer
        if sealer is None:
            return spec
        return sealer.compared(kind, spec, record.spec, self._state.lineage)

    def _comparable(
        self, model: KindModel, address: str, kind: Kind, spec: Mapping[str, JSON]
    ) -> bool:
        """Whether the record at ``address`` can tell anything about a new document of its
        identity. A record written before identities were kept, of a kind with lanes, knows
        no place in its lane: only the same request counts. A forgotten record of a kind
        that is corrected by a new object is no obstacle to another request."""
        record = self._read(address)
        if record.never_created:
            return False  # nothing of it exists at the service
        if self._asks(record, kind, spec):
            return True
        if not record.identity and model.lane is not None:
            return False
        return not (record.status is RecordStatus.FORGOTTEN and model.corrected_by_a_new_one)

    def _against(
        self,
        model: KindModel,
        address: Address,
        spec: Mapping[str, JSON],
        what: str,
        candidates: list[str],
    ) -> tuple[Decision, ResourceRecord | None]:
        records = [(c, self._read(c)) for c in sorted(candidates)]
        for other, found in records:
            if other in self._named and model.lane is not None and found.identity:
                ident = model.identifier(found)
                held = f" ({ident})" if ident is not None else ""
                theirs = self._spec_of(other)
                if (
                    found.status is RecordStatus.APPLIED
                    and theirs is not None
                    and model.lane is not None
                    and tuple(model.lane(theirs)) != tuple(model.lane(found.spec))
                    and self._asks(found, address.kind, spec)
                ):
                    # ``other``'s document asks for something else now: the requests moved
                    # from one name to the next (a row inserted above, names by row number).
                    return _refused(
                        f"it asks for exactly what {other}{held} recorded ({what}, "
                        f"{_said_place(found.identity)}), and the document {other} now asks "
                        "for something else: the requests of this lane have moved from one "
                        "document to the next (a row inserted or removed above them, in a "
                        "sheet whose documents are named by their row number?), and creating "
                        "this one would send that movement twice. Put the rows back, or give "
                        f"the record to this document: `customs-batch state mv {other} "
                        f"{address}`; the next plan then creates {other} as a new movement"
                    ), None
                return _refused(
                    f"it comes where {other}{held} was sent among the same movements of its "
                    f"lane ({what}, {_said_place(found.identity)}), and {other} is still in the "
                    "manifests: the movements of a lane are sent in manifest order, and a "
                    "sent one keeps its place. If this is a new movement, put its document "
                    f"after {other} and the lane's other movements already sent; if it is "
                    f"{other} renamed, remove one of the two documents"
                ), None
            if other in self._named:
                ident = model.identifier(found)
                held = f", recorded as {ident}" if ident is not None else ""
                theirs = self._spec_of(other)
                if (
                    model.lane is None
                    and model.identity is not None
                    and theirs is not None
                    and tuple(model.identity(theirs)) != kept_identity(model, found)
                    and found.identity
                ):
                    at = f" ({ident} at the service)" if ident is not None else ""
                    if self._declares_another_record(model, other, theirs):
                        # ``other`` is refused too, its way out moving its record aside: a
                        # `state mv OTHER ADDR` after that would move another record here.
                        way = (
                            f"once {other}'s record is moved aside as its own refusal says "
                            f"(`customs-batch state mv {other} "
                            f"{self._aside(_parsed(other))}`), plan again: the "
                            "record moved aside goes to this document (moved, nothing sent)"
                        )
                    else:
                        way = f"`customs-batch state mv {other} {address}`"
                    return _refused(
                        f"it declares what {other}{at} recorded ({what}), and the document "
                        f"{other} now declares something else: the names of the documents "
                        "have moved from one declaration to another (renamed into each "
                        "other's names, or a row inserted, removed or reordered in a sheet "
                        "whose documents are named by their row number?), and creating this "
                        "one would declare it twice. Put the names back, or give the record "
                        f"to the name that now declares it: {way}"
                    ), None
                return _refused(
                    f"it declares the same as {other}, which is in the manifests{held} "
                    f"({what}): creating it would declare it twice. Remove one of the two "
                    "documents; if they are really different, make them differ in these fields"
                ), None
        if not self._whole:
            listed = ", ".join(other for other, _ in records)
            return _refused(
                f"the state records {listed} with the same identity ({what}), which the "
                "selected documents do not include: plan without a selection (-l, --target, "
                "--exclude) to see whether this document is that one renamed"
            ), None
        for other, found in records:
            if found.status is RecordStatus.FORGOTTEN:
                movable = found.forgotten_from == RecordStatus.APPLIED.value
            else:
                # A record of unknown outcome too: asked for again under a new name, it is
                # held as under its own (a decision to make, its record left where it is).
                movable = found.status is RecordStatus.APPLIED or found.status.outcome_unknown
            if movable and self._asks(found, address.kind, spec):
                self._taken.add(other)
                self._renamed_by[other] = str(address)
                return _moved(model, found), found
        other, found = records[0]
        ident = model.identifier(found)
        held = f" ({ident} at the service)" if ident is not None else ""
        if found.status is RecordStatus.FORGOTTEN:
            where = "forgotten by `customs-batch state rm`"
            # `--gone` asks the service first; a kind it cannot read back is refused there.
            gone = (
                f"; or, only if it no longer exists at the service, `customs-batch state rm "
                f"--gone {other}`"
                if model.refresh is not None
                else ""
            )
        else:
            where = "recorded in the state and no longer in the manifests"
            gone = ""
        if found.status.outcome_unknown or (
            found.status is RecordStatus.FORGOTTEN and found.forgotten_from != "applied"
        ):
            # A tombstone is tracked again before anything is decided of it (adopt and
            # forget refuse one, and say to restore it).
            restore = (
                f"`customs-batch state restore {other}`, then "
                if found.status is RecordStatus.FORGOTTEN
                else ""
            )
            return _refused(
                f"it declares the same as {other}{held} ({what}), {where}, whose last "
                f"request has an unknown outcome: decide that first ({restore}`customs-batch "
                f"state adopt {other} ID` or `customs-batch state forget {other}`), or "
                f"`customs-batch state mv {other} {address}` if this document is that one renamed"
            ), None
        later = self._asked_by(address.kind, found.spec) if model.lane is not None else None
        if later is not None and later != str(address) and found.identity:
            # Its record goes to a later document of the batch, asking for its very request:
            # this new movement was put before a sent one of its lane.
            return _refused(
                f"it comes where {other}{held} was sent among the same movements of its lane "
                f"({what}, {_said_place(found.identity)}), and that request is now asked for by "
                f"{later} (a row inserted above it, in a sheet whose documents are named by "
                "their row number?): the movements of a lane are sent in manifest order, and "
                "a sent one keeps its place. If this is a new movement, put its document after "
                f"{later} and the lane's other movements already sent"
            ), None
        like = self._like(address.kind, spec, found)
        changed = sorted(
            name for name in set(found.spec) | set(like) if found.spec.get(name) != like.get(name)
        )
        respelled = [
            name
            for name in changed
            if (was := found.spec.get(name)) is not None
            and (now := like.get(name)) is not None
            and normal_value(was) == normal_value(now)
        ]
        spelling = (
            f"; {', '.join(respelled)} only written differently (another Unicode form of the "
            "same letters, spaces around it, or characters that print as nothing: a zero-width "
            "space), which plan takes for the same"
            if respelled
            else ""
        )
        if model.lane is not None and found.identity and found.status is RecordStatus.APPLIED:
            return _refused(self._sent_place(model, address, other, found, what, changed)), None
        missing = [name for name in changed if name not in found.spec]
        if missing:
            # Fields the record never held (an import records only what the service gives
            # back; the next apply sends the rest): no revert makes the requests the same.
            return _refused(
                f"it declares the same as {other}{held} ({what}), {where}, whose record "
                f"holds no {', '.join(missing)} (an import records only what the service "
                "gives back, and the next apply sends the rest): the requests differ in "
                "them though this document changed nothing there, and creating it would "
                f"declare it twice. If it is {other} renamed, `customs-batch state mv {other} {address}` "
                "moves the record (the next plan shows what it still sends); if it is really "
                f"another declaration, make it differ in one of the identifying fields above{gone}"
            ), None
        return _refused(
            f"it declares the same as {other}{held} ({what}), {where}, with other values "
            f"({', '.join(changed)}{spelling}): creating it would declare it twice. If it is {other} "
            f"renamed, revert those changes (plan then moves the record to the new name), or "
            f"`customs-batch state mv {other} {address}` to plan them as changes of it; if it "
            "is really another declaration, make it differ in one of the identifying fields "
            f"above{gone}"
        ), None

    def _sent_place(
        self,
        model: KindModel,
        address: Address,
        other: str,
        found: ResourceRecord,
        what: str,
        changed: Sequence[str],
    ) -> str:
        """Why a new movement is refused at the place of its lane where ``other``, no
        longer in the manifests, was sent with another request, and the true ways out: a
        sent movement cannot change, so its record given to this document (``state mv``)
        would only be refused as a change. When a document of this plan took over another
        record of ``other``'s very request (a rename found by the same request), it may be
        ``other`` renamed: said in its ``previousNames``, it takes ``other``'s place."""
        ident = model.identifier(found)
        held = f" ({ident} at the service)" if ident is not None else ""
        renamed = ""
        words = kept_identity(model, found)
        for taken in sorted(self._lanes.get(hash((address.kind._value_, *words[:-1])), ())):
            renamer = self._renamed_by.get(taken)
            if renamer is None or dict(self._read(taken).spec) != dict(found.spec):
                continue
            name = other.partition("/")[2]
            renamed = (
                f"{renamer} takes over {taken}, whose request is the same as {other}'s: if it "
                f"is {other} renamed, say so with `metadata.previousNames: [{name}]` in "
                f"{renamer}, which then takes {other}'s record and place, and this one comes "
                "after it, created. Otherwise, "
            )
            break
        way = "i" if renamed else "I"
        return (
            f"it comes where {other}{held} was sent among the same movements of its lane "
            f"({what}, {_said_place(found.identity)}), and {other}, no longer in the "
            f"manifests, sent another request ({', '.join(changed)}): creating this one could "
            f"be {other} changed and sent twice. A sent movement stays at the service and "
            "cannot change "
            f"(moving {other}'s record to this document, `state mv`, would only be refused as "
            f"a change). {renamed}{way}f this is a new movement, or one correcting {other}: "
            f"`customs-batch state rm {other}` (its movement stays at the service; a "
            "tombstone keeps its record), and the next plan creates this one"
        )

    def _read(self, address: str) -> ResourceRecord:
        record = self._recorded(address)
        return record if record is not None else self._state.resources[address]

    def _records_like(self, address: Address, identity: Identity) -> list[str]:
        index = self._index if self._index is not None else self._build_index()
        found = [a for a in index.get(_key(address.kind, identity), ()) if a != str(address)]
        if identity and identity[-1].startswith("place="):
            # Records written before identities were kept know no place in their lane.
            legacy = (*identity[:-1], UNKNOWN_PLACE)
            found += [a for a in index.get(_key(address.kind, legacy), ()) if a != str(address)]
        return found

    def _build_index(self) -> dict[bytes, list[str]]:
        """Every record's identity, on the first creation that needs them. A record still
        held as its text gives its recorded identity without being parsed (a run of ten
        creations on a state of 100,000 would otherwise parse every record)."""
        index: dict[bytes, list[str]] = {}
        lanes: dict[int, list[str]] = {}
        resources = self._state.resources
        peek = resources.peek if isinstance(resources, Records) else resources.__getitem__
        texts = resources.text_of if isinstance(resources, Records) else None
        # The kind and model of each kind's spelling, looked up once (asked of 100,000
        # records: parsing each address cost a fifth of this pass, measured).
        kinds: dict[str, tuple[Kind, KindModel] | None] = {}
        for address in resources:
            kind_text, _, name = address.partition("/")
            if kind_text not in kinds:
                parsed = Kind.parse(kind_text)
                kinds[kind_text] = None if parsed is None else (parsed, model_of(parsed))
            known = kinds[kind_text]
            if known is None or not name:
                continue
            kind, model = known
            if model.identity is None:
                continue
            words = kept_identity_read(model, texts(address) if texts is not None else None)
            if words is not None:
                # (A record refused with nothing created is passed over when compared.)
                index.setdefault(_key(kind, words), []).append(address)
                if model.lane is not None and words[-1].startswith("place="):
                    lanes.setdefault(hash((kind._value_, *words[:-1])), []).append(address)
                continue
            record = peek(address)
            if record.never_created and record.kept_key is None:
                continue  # nothing of it exists at the service, and no key to hand on
            words = kept_identity(model, record) if record.identity else ()
            if not words:
                words = model.identity(record.spec)
                if model.lane is not None:
                    words = (*words, UNKNOWN_PLACE)
            index.setdefault(_key(kind, words), []).append(address)
            if model.lane is not None and words[-1].startswith("place="):
                lanes.setdefault(hash((kind._value_, *words[:-1])), []).append(address)
        self._index = index
        self._lanes = lanes
        return index


def kept_identity(model: KindModel, record: ResourceRecord) -> Identity:
    """The identity ``record`` kept, compared as the kind's identity gives it now: its words
    normalised (:func:`normal_identity`), or, when it kept none or words of an earlier
    definition (``identity_outdated``), the identity of the request it recorded."""
    assert model.identity is not None
    words = record.identity
    if not words or (model.identity_outdated is not None and model.identity_outdated(words)):
        return model.identity(record.spec)
    return normal_identity(words)


def kept_identity_read(model: KindModel, text: bytes | str | None) -> Identity | None:
    """The identity a record still held as its ``text`` (a state file's entry, a database's
    row) kept, as :func:`kept_identity` gives it, read without parsing the record; None when
    the record must be parsed for it: no text, no identity recorded or none readable so, or
    the words of an earlier definition (``identity_outdated``)."""
    words = _recorded_identity(text) if text is not None else None
    if words is None or (model.identity_outdated is not None and model.identity_outdated(words)):
        return None
    return normal_identity(words)  # recorded before identities were normal


_IDENTITY = re.compile(rb'"identity"\s*:\s*(\[[^\]]*\])')


def _bytes(text: bytes | str) -> bytes:
    return text.encode() if isinstance(text, str) else text


def _recorded_identity(text: bytes | str) -> tuple[str, ...] | None:
    """The identity a record's text holds, read without parsing the record; None when it
    holds none or it cannot be read this way (the record is then parsed)."""
    found = _IDENTITY.search(_bytes(text))
    if found is None:
        return None
    try:
        words = orjson.loads(found.group(1))  # the state's own parser (state/records.py)
    except orjson.JSONDecodeError:
        return None
    if not words:
        return None
    for word in words:  # a loop, not all(): asked of each of 100,000 records
        if type(word) is not str:
            return None
    return tuple(words)


def _refused(reason: str) -> Decision:
    return Decision(Action.REFUSED, Operation.NONE, reason)


def _moved(model: KindModel, record: ResourceRecord) -> Decision:
    taken = (
        "it is tracked again under this name"
        if record.status is RecordStatus.FORGOTTEN
        else "so its record moves to this name"
    )
    return Decision(
        Action.MOVED, Operation.MOVE, f"{moved_words(model, record)}: {taken}; nothing is sent"
    )


def moved_words(model: KindModel, record: ResourceRecord) -> str:
    """Whose record a document with the same request under a new name takes over."""
    ident = model.identifier(record)
    held = f" ({ident} at the service)" if ident is not None else ""
    if record.status is RecordStatus.FORGOTTEN:
        return f"the same request as {record.address}{held}, forgotten by `customs-batch state rm`"
    return f"renamed from {record.address}{held}: the same request"


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def _said_place(identity: Sequence[str]) -> str:
    """The place a recorded identity ends with, in words: ``place=1`` is the second movement
    of its HAWB and action (the recorded word counts from 0, and ``state show`` prints it
    so)."""
    place = _place_in(identity)
    if place is None:
        return "its place not recorded"
    nth = _ORDINALS[place] if place < len(_ORDINALS) else f"number {place + 1}"
    return f"the {nth} of them, place={place} counted from 0"


def _place_in(identity: Sequence[str]) -> int | None:
    """The place a recorded identity ends with (``place=2``), if any."""
    if not identity:
        return None
    head, _, number = identity[-1].partition("=")
    return int(number) if head == "place" and number.isdigit() else None


def _parsed(address: str) -> Address:
    """The address of a record of the state (its keys are addresses)."""
    parsed = Address.parse(address)
    assert parsed is not None, address
    return parsed
