"""What one kind is to the planner, the executor and the reconciler: a ``KindModel``.

Each kind's module builds one (its outputs, which fields change through which call, how it
is created, read back, refreshed and reconciled after an unknown outcome, its service states
and how plan words them); ``customs_batch.kinds.registry`` holds them all. The generic code
asks the model and never which kind it holds.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import unicodedata
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from customs_batch.escaping import quoted_head
from customs_batch.findings import a_or_an
from customs_batch.jsontypes import JSON, JSONObject, by_value, compact_by_value
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.actions import Action, Operation
from customs_batch.kinds.checks import (
    CodeFields,
    LaneEnd,
    OutputId,
    Parties,
    RuleSet,
    TakesId,
    UniqueField,
)
from customs_batch.kinds.readback import Found as Found
from customs_batch.vocabulary import NO_STATUS_WORDS, StatusWords

if TYPE_CHECKING:
    from customs_batch.client import CustomsClient, Record
    from customs_batch.state.model import ResourceRecord, Scalar

Outputs = dict[str, "Scalar"]

IDEMPOTENCY_WINDOW = timedelta(hours=24)
"""How long the service honours an Idempotency-Key (API document, Limits)."""

KEY_MARGIN = timedelta(minutes=30)
"""How much sooner than the service this tool takes a key to have expired: the service
counts its 24 hours by its own clock, which may run ahead of the runner's, and a request
takes time to get there. A key re-sent one minute too late creates a second object."""


def new_idempotency_key(now: datetime | None = None) -> str:
    """A new Idempotency-Key: a UUID (version 7, as the API recommends a UUID) whose first
    48 bits are the time it was made, in milliseconds since the epoch. The key itself so
    says when its 24 hours began, however often it is re-sent later (a record's time is
    that of its last attempt). Earlier versions of this tool sent such keys, which records
    may still hold; apply now derives its keys (:func:`derived_idempotency_key`)."""
    millis = int((now or datetime.now(UTC)).timestamp() * 1000) & ((1 << 48) - 1)
    value = (
        millis << 80
        | 0x7 << 76  # version 7
        | secrets.randbits(12) << 64
        | 0b10 << 62  # the RFC 4122 variant
        | secrets.randbits(62)
    )
    return str(uuid.UUID(int=value))


def derived_idempotency_key(
    lineage: str, serial: int, address: str, body: Mapping[str, JSON]
) -> str:
    """The Idempotency-Key of a creation that no earlier attempt holds a key for: a UUID
    (as the API recommends) of version 8 (RFC 9562's custom version) made of a SHA-256 of
    the state's lineage, the serial of the state the run started from, the document's
    address and the request body it sends (canonical JSON, each number by its value, as
    the service compares bodies).

    A run that starts again from the same state and sends the same request sends the same
    key: a run whose runner was lost before the state it wrote was kept (a CI machine gone)
    is run again from the state kept before it, and the service answers with the movements
    the lost run made, within 24 hours of it, instead of making them twice. A later state
    (anything recorded since, a ``state forget``, a ``state rm``) or another body gives
    another key, so a movement meant to be sent again is sent as new, and a key is never
    sent with two bodies. The lineage (drawn at random) is in the hash, so that the key
    tells nothing of the body to whoever would guess it.

    The key holds no time (:func:`key_made_at` is None): its 24 hours are counted from the
    time of the record that holds it (:func:`key_honoured_until`). The service counts them
    from the key's first use, which may be a lost run's, earlier."""
    text = json.dumps(
        [lineage, serial, address, by_value(dict(body))],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    digest = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16])
    value = (
        digest & ~(0xF << 76 | 0b11 << 62)
        | 0x8 << 76  # version 8
        | 0b10 << 62  # the RFC 4122 variant
    )
    return str(uuid.UUID(int=value))


def key_made_at(key: str) -> datetime | None:
    """When a key of :func:`new_idempotency_key` was made (None: a key that holds no time,
    such as the version 4 UUIDs of earlier versions of this tool and the version 8 ones of
    :func:`derived_idempotency_key`)."""
    try:
        parsed = uuid.UUID(key)
    except ValueError:
        return None
    if parsed.version != 7:
        return None
    return datetime.fromtimestamp((parsed.int >> 80) / 1000, UTC)


def key_honoured_until(key: str | None, last_sent: str) -> datetime | None:
    """Until when the service honours ``key``, so that a request re-sent under it is
    replayed instead of processed again: 24 hours (less :data:`KEY_MARGIN`) from the time
    it holds or ``last_sent``, the time of the record that holds it, whichever is earlier
    (a key that holds no time counts from its record's, which its re-sends keep). None: no
    key, or no time to count from."""
    if not key:
        return None
    # The earlier of the two: a key made on a machine whose clock ran ahead looks younger
    # than it is, and its record's time (of its first request, or kept) is no later.
    times = [t for t in (key_made_at(key), parse_time(last_sent)) if t is not None]
    return min(times) + IDEMPOTENCY_WINDOW - KEY_MARGIN if times else None


def key_honoured(key: str | None, last_sent: str, now: datetime) -> bool:
    """Whether the service still honours ``key`` at ``now`` (:func:`key_honoured_until`)."""
    until = key_honoured_until(key, last_sent)
    return until is not None and now < until


class ServiceId(StrEnum):
    """The IDs an analyst looks a result up by, as ``results`` shows them (a column each)."""

    DECLARATION = "declarationId"
    """A declaration's ID at the service (a departure, an export declaration)."""
    MRN = "mrn"
    """The customs reference number (MRN) the object is declared under, where known."""
    MOVEMENT = "movementId"
    """A movement's ID (``mov_…``)."""
    OTHER = "id"
    """Any other ID the service gave (a template group's, a HAWB's)."""


ServiceIds = Callable[["ResourceRecord"], dict[ServiceId, "Scalar"]]
"""The IDs of a recorded object, by what they are (none that is not known)."""

HeldIds = Callable[["ResourceRecord"], frozenset[str]]
"""The IDs of the objects at the service a record stands for, as text."""


def ids_from(**fields: ServiceId) -> ServiceIds:
    """Service IDs read from the record's outputs: ``ids_from(movementId=ServiceId.MOVEMENT)``."""

    def ids(record: ResourceRecord) -> dict[ServiceId, Scalar]:
        return {
            what: record.outputs[name]
            for name, what in fields.items()
            if record.outputs.get(name) not in (None, "")
        }

    return ids


@dataclass(frozen=True)
class Request:
    """One operation about to be sent: its resolved body, what is already known of the
    object (``outputs``), the Idempotency-Key of a movement, and the fields that changed."""

    kind: Kind
    spec: Mapping[str, JSON]
    outputs: Mapping[str, JSON]
    idempotency_key: str | None = None
    changed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Decision:
    """What the plan does about one address, and why."""

    action: Action
    operation: Operation
    reason: str = ""
    idempotency_key: str | None = None


@dataclass(frozen=True)
class UnknownOutcome:
    """An earlier write whose outcome was never recorded, as the planner sees it."""

    address: Address
    record: ResourceRecord
    edited: tuple[str, ...]
    now: datetime

    @property
    def exists(self) -> bool:
        """Whether the object existed before that write (an update, not a creation)."""
        return bool(self.record.outputs)

    @property
    def key_valid(self) -> bool:
        """Whether the recorded Idempotency-Key is still honoured by the service
        (:func:`key_honoured`)."""
        return key_honoured(self.record.idempotency_key, self.record.updated_at, self.now)


@dataclass(frozen=True)
class Refreshed:
    """What the service says now of one recorded object; None fields are unchanged."""

    service_state: str | None = None
    errors: tuple[JSON, ...] = ()
    outputs: Mapping[str, Scalar] = field(default_factory=dict)
    remote_spec: Mapping[str, JSON] = field(default_factory=dict)
    created_at: str | None = None
    """When the service says the object was created (its ``createdAt``), where the read
    gives it: an object made after a record's last write to its ID is another object (see
    ``KindModel.another_than_recorded``)."""
    unverified: str | None = None
    """Where the read could not tell whether the object at the ID is the record's (a party
    update written before ``targetSeen`` was kept, whose declaration's creation time the
    bounded listing did not reach): what was not verified, in words. apply sends nothing
    and notes it on the record (``ResourceRecord.unverified``), held for a decision."""


Identity = tuple[str, ...]
"""What makes two requests the same thing at the service, as ``field=value`` words
(``commercialReference=CR-1``): two documents of one identity declare the same thing."""
IdentityFunction = Callable[[Mapping[str, JSON]], Identity]

SendFunction = Callable[["CustomsClient", Request], Outputs]
ReadBack = Callable[["CustomsClient", Address, str, Mapping[str, JSON]], Found]
"""Reads the object given by ID (``import``, ``state adopt``): its outputs and what the
service holds of the document's fields (see ``kinds/readback.py``)."""
RefreshFunction = Callable[
    ["CustomsClient", Sequence["ResourceRecord"]], dict[str, Refreshed | None]
]
"""Reads every recorded object of a kind at once: what the service says of each, by address
(None: no longer found)."""
ConflictFunction = Callable[["CustomsClient", Address, Request], "Conflict"]


@dataclass(frozen=True)
class ImportAt:
    """An ``import`` of the document ``address`` at ``remote_id`` (or a ``state adopt`` of
    it, ``sent``), once read and compared: the document's ``spec`` (adopt: what the last
    request of ``address`` sent), what the service holds there (``held``: the document's
    fields as it gives them back)."""

    address: Address
    remote_id: str
    spec: Mapping[str, JSON]
    held: Mapping[str, JSON]
    where: Callable[[str], str] | None
    """Where the document writes one of its spec's fields (its file and line; the
    document's own place for a field written in none). None for adopt."""
    its_own: Callable[[], bool]
    """Whether the state says ``address`` stood for ``remote_id`` (the ID its newest answer
    gave it, kept in the history when its record was removed for good by ``state rm
    --gone``). Asked only when needed: it reads the history."""
    sent: bool = False
    """Whether ``spec`` is what the last request of ``address`` sent (``state adopt``: an
    attempt whose outcome is unknown did create ``remote_id``), not the document."""


@dataclass(frozen=True)
class ImportRefused:
    """Why an ``import`` is refused, though the comparison found nothing that cannot
    change: what, where, and what to do (``hint``)."""

    message: str
    hint: str


ImportCheck = Callable[[ImportAt], ImportRefused | None]


CLOCK_SKEW = timedelta(minutes=10)
"""How far the service's clock may be behind or ahead of ours: objects created up to this
long before an intent are still searched for it, and an object created up to this long
after a record's write may still be the one it records."""

MADE_SINCE = "createdAt "
"""How the words of another object at a record's ID, told by when it was made (made after
the record's last write: :meth:`KindModel.another_than_recorded`), begin."""

WRITE_SKEW = timedelta(seconds=2)
"""How much later than a record's last write (our clock) the service may stamp the object
that write made (its clock, ahead of ours, and the time the answer took to come back):
an object at the record's ID made later still is another one
(:meth:`KindModel.another_than_recorded`). Far narrower than :data:`CLOCK_SKEW`: taking another client's object for the
record's own records its status and writes into it, so only what clocks kept in time by
NTP and a network round trip make is forgiven (a look-alike made after a reset is
seconds later at least: the restart alone takes that)."""


@dataclass(frozen=True)
class LostCreation:
    """A creation whose outcome is unknown, as the service is searched for it: the record
    (its intent), and the earliest time at which the service could have made the object."""

    record: ResourceRecord
    since: datetime
    standing_only: bool = False
    """Only objects that still stand are candidates (not one the service refused, or one
    cancelled): for a creation held because a run whose records were lost may have made
    it, an object that declares nothing does not stop the document being sent."""


LookFor = Callable[
    ["CustomsClient", Sequence[LostCreation], Sequence["ResourceRecord"]],
    dict[str, tuple[str, ...]],
]
"""Searches the service for the objects lost creations may have made, given every recorded
object of the kind (theirs are not candidates): by address, the IDs of the objects created
since that could be it. None found means the request never reached the service."""


@dataclass(frozen=True)
class Conflict:
    """What a 409 on creation turned out to be: the existing object (its outputs, when one
    was found), and whether the manifests describe it exactly (then it is adopted) or what
    to do about it."""

    outputs: Outputs | None
    identical: bool
    message: str


Poll = Callable[[Callable[[], bool]], str]
"""The executor's polling loop, handed to a kind's ``wait``: it calls ``read`` now and again
every interval of ``--wait`` until ``read`` says the object is settled (True: ``"settled"``),
the time is up (``"timed-out"``) or the run is stopped (``"stopped"``)."""

SETTLED, TIMED_OUT, STOPPED = "settled", "timed-out", "stopped"


@dataclass(frozen=True)
class Waited:
    """Where ``apply --wait`` left an object: its state at the service and its errors, whether
    that ends the change well, what the user reads, and the outputs to record (None: the
    service was not read again, nothing changes)."""

    status: str | None
    errors: tuple[JSON, ...]
    ok: bool
    detail: str
    outputs: Mapping[str, Scalar] | None = None
    timed_out: bool = False
    """The time of ``--wait`` ran out first (the executor says how long it waited)."""
    not_found: bool = False
    """The service answered that it holds no such object (404): the executor notes it on
    the record, as ``refresh`` does (``not_found_at``)."""


@dataclass(frozen=True)
class Restated:
    """Which recorded object an answer tells the state of (``KindModel.restates``): those of
    ``kind`` whose output ``output`` is ``value``."""

    kind: Kind
    output: str
    value: Scalar


WaitFunction = Callable[["CustomsClient", "ResourceRecord", Poll], Waited]
"""How ``apply --wait`` follows an object just sent, through the executor's ``Poll``."""


@dataclass(frozen=True)
class Example:
    """One document of a kind as ``init`` writes it: ``manifests/<file>.yaml`` holding
    ``text``. It uses only IDs of the sandbox's built-in seed (and, for a departure, the
    project's ``rotterdam`` template), so a new project validates, plans and applies clean
    against the embedded ``local`` environment."""

    file: str
    text: str


class Reading(StrEnum):
    """What a state read at the service means for an object of a kind
    (:meth:`KindModel.reading`)."""

    DONE = "done"
    """Done: what the document asks for holds (a cancellation granted)."""
    PENDING = "pending"
    """Not decided yet (a cancellation requested), or a word the kind does not know."""
    PROCESSING = "processing"
    """Still being processed (a departure just submitted)."""
    REJECTED = "rejected"
    """Refused at the service (a departure invalid, a cancellation customs refused)."""
    UNDONE = "undone"
    """Done once, undone at the service since (its data reset): sent again."""
    ENDED = "ended"
    """No longer standing though the service still shows it (a departure cancelled)."""


@dataclass(frozen=True)
class KindModel:
    """Everything the generic planner, executor and reconciler know of one kind."""

    kind: Kind
    spec_type: type[JSONObject]
    """The type of its spec, a ``TypedDict`` written in the kind's module beside the
    ``spec_of`` that narrows a validated spec to it (``tests/kinds/test_specs.py`` holds it
    to the kind's JSON Schema)."""
    outputs: frozenset[str]
    create: Operation
    send: Mapping[Operation, SendFunction]
    after_unknown: Callable[[UnknownOutcome], Decision]
    read_back: ReadBack
    immutable: str
    """Why a change the API cannot make is refused, and the real ways out. ``{address}`` and
    ``{fields}`` are filled in."""
    schema: str
    """The name of the JSON Schema of its spec: ``schemas/<schema>.schema.json`` (its
    ``$id`` ends so too). Nothing else maps kinds to schema files."""
    example: Example
    """The document of this kind that ``customs-batch init`` writes into a new project."""
    update: Operation | None = None
    updates_recorded_id: bool = False
    """Whether ``update`` is sent to the recorded object, by its ``id_field`` output (a
    template group's PATCH): a record without that ID cannot be updated. A party update is
    sent to the declaration its spec names instead."""
    mutable: frozenset[str] = frozenset()
    kept_when_left_out: frozenset[str] = frozenset()
    """Fields the update call changes value by value, keeping at the service what it is not
    sent (a party's fields: the parties PATCH removes none): a value the document no longer
    writes would stay there, so plan refuses to say it is removed."""
    left_out_means: Mapping[str, JSON] = field(default_factory=dict)
    """What a field a document leaves out means at the service (its default: a template
    group's ``isDefault`` false): a document that stops writing a field recorded at that
    value asks for nothing the service does not hold, and is unchanged."""
    resubmit: Operation | None = None
    refresh: RefreshFunction | None = None
    rejected_states: StatusWords = NO_STATUS_WORDS
    """Service states in which the service never accepted the object (a departure
    ``invalid`` or ``error``): plan shows them as rejected until the document is corrected.
    Like every set of status words here, it finds the service's word in either case (a
    departure ``INVALID``, as the API document's transit status list writes it)."""
    ended_states: StatusWords = NO_STATUS_WORDS
    """Service states in which the object no longer stands although the service still shows
    it (a declaration customs cancelled): with the ``rejected_states``, the states in which
    ``state rm --gone`` takes the object to be gone."""
    ended_words: str | None = None
    """What plan, ``status`` and ``results`` say of an object in one of its
    ``ended_states`` (``{ident}``, ``{state}`` and ``{address}`` filled in), which plan then
    holds for a decision whatever its document changes: nothing can be sent to it (a
    departure customs cancelled). None: its ended states are not for plan to hold (a party
    update's, which follows its declaration)."""
    undone_states: StatusWords = NO_STATUS_WORDS
    """Service states in which what the object's creation did has been undone at the
    service (a HAWB active again after its deactivation, as ``refresh`` read it): plan sends
    the creation again, so it must be safe to repeat."""
    reads_record: Callable[[ResourceRecord, str | None], Reading | None] | None = None
    """Where the state word alone does not tell what the object's state means: what it
    means, read with what its record keeps (an export cancellation whose declaration reads
    ``submitted``: refused by customs, or, the record keeping that customs had granted it
    (``done_at``), undone at the service). None, or None returned: the state lists tell
    (:meth:`reading`)."""
    rejected_way_out: str = (
        "Correct the document (it is then submitted again, replacing it), or remove the "
        "document from the manifests and `customs-batch state rm {address}` to stop "
        "tracking it"
    )
    """What to do about an object in a rejected state (``{address}`` is filled in). Both
    ways out, followed as written, leave nothing refused: ``state rm`` alone, the document
    still in the manifests, leaves a tombstone that plan refuses the document for."""
    sent_again: str = "declare it twice"
    """What sending a document's request again would do while the service still holds what
    its first one made (a record ``state rm`` left as a tombstone): the reason plan does not."""
    pending_states: StatusWords = NO_STATUS_WORDS
    """Service states in which the service has not decided yet (an export cancellation
    ``cancellation_requested``): plan shows the object as waiting, apply reads where it
    stands with the kind's ``refresh`` (``--wait`` follows it until decided), ``status``
    calls it pending."""
    done_states: StatusWords | None = None
    """Service states in which the object is done (an export cancellation: ``canceled``; a
    departure: ``ready`` and the few transit words that say customs took it), for a kind
    whose states the tool knows. A word in none of its state lists (a status the document
    does not give, such as ``cancellation_pending``, or a transit word it gives without a
    meaning, such as ``BLOCKED``) is then never counted done: it is taken as undecided (see
    ``undecided``) and said to be unknown.
    None: every state not rejected, pending or processing is done."""
    waits_after: frozenset[Operation] = frozenset()
    """Operations after which ``apply --wait`` polls until the object leaves processing (a
    departure, through ``wait``) or its pending states (a cancellation, through
    ``refresh``)."""
    wait: WaitFunction | None = None
    """How ``apply --wait`` follows the object after one of ``waits_after`` when the answer
    is not one of its ``pending_states`` (a departure: read until it leaves processing)."""

    restates: Callable[[ResourceRecord], Restated | None] | None = None
    """The object of another kind whose service state this one's answer tells (a party
    update's: the departure whose parties it changed, sent back to processing). apply
    records that state on the other's record too, so ``status`` and ``results`` tell what
    the service holds until the next ``refresh``."""

    reads_first: frozenset[Operation] = frozenset()
    """Operations that write to an object the service already holds (a template group's
    PATCH, a party PATCH): apply first reads that object (``read_target``) and sends
    nothing when the service no longer holds it, or holds another object at its ID than
    the record of the write, or of the object it ``restates`` (a party update's departure),
    recorded (``another_object``): the ID may have been given again since (a sandbox
    reset). The answer of such a write is checked the same way. Each read is one request
    more (:meth:`requests`)."""
    reads_a_list: frozenset[Operation] = frozenset()
    """Of ``reads_first``, the operations whose read is a listing the API pages, for want of
    a read of the one object (a HAWB's: its shipment's HAWBs; a template group's: its
    company's groups), 100 a request: as many requests as the list has pages, which the
    state cannot know. The plan counts one and says "at least" (:meth:`requests_at_least`)."""
    lists_first: Callable[[ResourceRecord], bool] | None = None
    """Of ``reads_first``, for a kind whose read lists pages for some records only (a party
    update written before ``targetSeen`` was kept: the transit declarations created since
    its last write), whether it does for this one: the plan counts one page for it and says
    "at least" for that change alone (``PlannedChange.requests_at_least``)."""
    made_at: Callable[[CustomsClient, ResourceRecord], tuple[str | None, str | None]] | None = None
    """For a kind whose own request made the object and whose read of it tells too little
    to know it from another object given its ID since (a departure: the detail gives only
    offices, weight and procedure, which another environment's copy of the same manifests
    shares): when the service made the object now at the record's ID (its ``createdAt``;
    None when made before the record's last write), or what could not be verified. apply
    asks it before each write to that object (``reads_first``, or a write of another kind
    that ``restates`` it): one made after the record's last write is another one, and
    nothing is sent to it (``another_than_recorded``)."""
    read_target: RefreshFunction | None = None
    """How the object a write of ``reads_first`` goes to is read, given the intent of the
    write (its spec resolved): by address, what the service holds there (None: not found;
    absent: nothing to read). None: the kind's ``refresh`` of the record (by its recorded
    ID)."""

    on_conflict: ConflictFunction | None = None
    told_after_loss: frozenset[str] = frozenset()
    """Fields that, while the outcome of a record's last request is unknown (an update whose
    answer was lost), also tell its object from another object at its ID that the kind's
    identity alone takes for it (a template group's name: after a reset, the ID may be given
    to a colleague's group of the very code the lost request sent). The object is then
    taken for the record's only where these are as its last answer or the request left
    them; otherwise nothing is sent and a decision is asked (``another_than_recorded``)."""
    names_its_object: str | None = None
    """For a write to an object the document names by a literal ID it did not create (a
    party update's or a cancellation's ``declarationId``, a deactivation's HAWB): what the
    document names it by, in words (``the document's `declarationId```). Another object
    found at that ID is then not its object changed (which ``import`` takes back, a template
    group's way out) but the document naming the wrong one: the way out said is to correct
    that (``another_object_words``). None: the object is the one the record's request made
    or took over."""
    import_check: ImportCheck | None = None
    """What ``import`` and ``state adopt`` refuse beyond a field that cannot change: an
    object at the ID whose fields that name it at the service differ, though its update
    could change them (a template group's code: the next apply would rewrite another group
    into the document's), unless the state says the address stood for that ID
    (``ImportAt.its_own``). None: the comparison alone decides."""
    service_words: Callable[[ResourceRecord], str | None] = lambda record: record.remote_status
    """The object's own state at the service as last recorded (``ready``, ``canceled``)."""
    has_status: bool = False
    """Whether ``status`` lists the kind (it has a state at the service worth following)."""
    idempotency_keys: bool = False
    """Whether it is created with an Idempotency-Key: a new key per creation, recorded with
    the intent and sent again with a re-send; a 409 then means the keyed request is still
    being handled, so its outcome is unknown, not refused."""
    look_for: LookFor | None = None
    """How the service is searched for what a creation with an unknown outcome made, for a
    kind whose creation cannot simply be repeated (a departure). With it, apply and refresh
    tell a request that never reached the service (sent again) from one that may have."""
    lane: Callable[[Mapping[str, JSON]], tuple[str, ...]] | None = None
    """Documents of the kind in one lane are applied one after another, in manifest order
    (movements on one shipment and HAWB)."""

    identity: IdentityFunction | None = None
    """The fields of a request that make it the same thing at the service (a departure's
    declarant, commercial reference, offices and goods). Plan compares every creation with
    the batch and the state by it, so that a renamed or forgotten document is never sent
    twice. For a kind with a ``lane``, the planner adds the document's place among the
    documents of one identity in its lane (the first arrival of a HAWB, the second…)."""

    object_identity: IdentityFunction | None = None
    """The part of ``identity`` that names the object at the service the request goes to,
    where the identity holds more (a party update: its declaration and variant, beside the
    fields it writes). A document whose identity changes in the rest alone still goes to
    the same object: an ordinary change, never a name moved from one declaration to
    another. None: the whole identity names the object."""

    identity_outdated: Callable[[Identity], bool] | None = None
    """Whether identity words a record kept were made by an earlier definition of
    ``identity`` (a party update's named the party roles it writes; it now names their
    fields). Such a record is compared by the identity of the request it recorded, as
    ``identity`` gives it now; the record is not rewritten. None: every kept identity is
    current."""

    corrected_by_a_new_one: bool = False
    """Whether a document of the same identity as a record forgotten by ``state rm``, with
    another request, is a correction sent as a new object rather than a second declaration
    (a movement: immutable, so the correcting movement is new and the wrong one stays)."""

    id_field: str | None = None
    """The output that is the service's ID of the object (``declarationId``, ``movementId``)."""

    typed_id: Callable[[str, Address], str] | None = None
    """The ID a user typed (``import ADDR ID``, ``state adopt ADDR ID``) written as the
    service gives it, the form records hold and are compared in (a number: ``02`` is the
    object ``2``), or a :class:`~customs_batch.errors.CustomsBatchError` saying why it is no
    ID of the kind. None: the text as typed."""

    service_ids: ServiceIds | None = None
    """What ``results`` shows of a recorded object's IDs, by what they are (a declaration ID,
    an MRN, a movement ID); None: the ``id_field`` output, as another ID."""

    held_ids: HeldIds | None = None
    """The objects at the service a record of the kind stands for, which no other record of
    the kind may stand for too: ``import`` and ``state adopt`` refuse an ID another record
    holds (the next apply would send one document's values to another's object). None: its
    ``identifier``."""

    processing_states: StatusWords = NO_STATUS_WORDS
    """Service states in which the service is still working on the object (a departure
    ``processing``): ``results`` and ``status`` call it pending, like the ``pending_states``."""

    code_fields: CodeFields = ()
    """Which fields of its spec hold which sort of code (``validate`` checks each: a country,
    an office, a UN/LOCODE...; see ``kinds/checks.py``)."""

    rules: tuple[RuleSet, ...] = ()
    """The customs rule sets ``validate`` checks its documents with, beyond the schema."""

    # What validate's project-wide checks (validation/project.py and the modules it calls)
    # learn of the kind; the words are in kinds/checks.py.

    output_types: Mapping[str, str] = field(default_factory=dict)
    """The JSON type of each of its ``outputs`` (``integer``, ``string``, ``boolean``):
    ``validate`` checks that a ``${ref:}`` to one fits the field it feeds."""

    output_ids: Mapping[str, OutputId] = field(default_factory=dict)
    """What its outputs that are IDs are the IDs of (a departure's ``declarationId``: the
    transit departure declaration), for the kinds that take an ID (``takes_id``)."""

    takes_id: TakesId | None = None
    """A spec field that must hold the ID of certain sorts of object (an export
    cancellation's ``declarationId``: an export declaration's)."""

    parties: Parties | None = None
    """The party fields of a transit declaration it writes, its own (a departure) or
    another's (a party update): each has one owner."""

    unique: UniqueField | None = None
    """A field the service keeps unique (a template group's code within its company).
    Two documents of such a kind with one request share it, so they are reported by that
    check, not as a duplicated request."""

    duplicate_meant: str | None = None
    """Two documents of the kind sending the same request may both be meant (two loads of
    one size): then a warning, whose hint ends with these words; None: an error."""

    lane_fields: tuple[str, ...] = ()
    """The spec fields its ``lane`` is made of: a document with a reference in one has no
    lane ``validate`` can know (``project.movement-order``)."""

    lane_left_out: str | None = None
    """What a document of the kind is when a spreadsheet row leaves out a field of its lane
    that other rows of the sheet give (a movement without its HAWB is the shipment's, of
    its master AWB): a warning of validate (``project.lane-left-out``) says so, since an
    empty cell leaves its field out."""

    ends_lanes: LaneEnd | None = None
    """The lanes of another kind its documents end (a HAWB deactivation: the movements of
    that HAWB), so that both in one batch is a warning."""

    def requests(self, operation: Operation) -> int:
        """How many requests ``operation`` of this kind sends in all: what the operation
        sends itself (``Operation.requests``), and the read before it when the kind reads
        the object a write goes to first (``reads_first``). The plan's request count, and
        the time it takes at the rate limit, are made of these."""
        return operation.requests + (operation in self.reads_first)

    def requests_at_least(self, operation: Operation) -> bool:
        """Whether :meth:`requests` is the least ``operation`` sends, not what it sends: its
        read first lists pages, as many as the service's list has (``reads_a_list``)."""
        return operation in self.reads_a_list

    def lists_for(
        self,
        operation: Operation,
        record: ResourceRecord | None,
        depends_on: Sequence[Address] = (),
    ) -> bool:
        """Whether ``operation`` of ``record``'s object, unlike the kind's others, reads a
        list of pages first (``lists_first``): the plan says "at least" for it. Not where
        the change refers to a record of the object it ``restates`` (a party update of a
        departure of the state): that record tells the object, and apply lists what that
        kind's record needs (``made_at``: a departure's, the declarations made since)."""
        if operation not in self.reads_first:
            return False
        told = self.restates(record) if self.restates is not None and record else None
        if self.restates is not None:
            from customs_batch.kinds.registry import model_of

            for address in depends_on:
                model = model_of(address.kind)
                if model.made_at is not None and (told is None or address.kind is told.kind):
                    return True
        if record is None or self.lists_first is None or not self.lists_first(record):
            return False
        return told is None or all(address.kind is not told.kind for address in depends_on)

    def last_known_state(self, record: ResourceRecord) -> str | None:
        """The object's state at the service as last recorded: its ``service_words``, else
        the ``status`` its answer gave (a departure just submitted: ``processing``)."""
        words = self.service_words(record) or record.outputs.get("status")
        return None if words is None else str(words)

    def ended(self, record: ResourceRecord) -> str | None:
        """What to say of the recorded object if it is in one of its ``ended_states`` and
        plan holds it for that (``ended_words``); None otherwise."""
        state = self.service_words(record)
        if self.ended_words is None or state not in self.ended_states:
            return None
        ident = self.identifier(record)
        return self.ended_words.format(ident=ident, state=state, address=record.address)

    def reading(self, state: str | None, record: ResourceRecord | None = None) -> Reading:
        """What ``state``, read of ``record``'s object, means for the kind: the one place
        plan, apply, refresh, ``status``, ``results`` and the notifications ask it. The
        kind's ``reads_record`` first (the record may tell what the word alone does not),
        else its state lists."""
        if record is not None and self.reads_record is not None:
            said = self.reads_record(record, state)
            if said is not None:
                return said
        if state in self.rejected_states:
            return Reading.REJECTED
        if state in self.undone_states:
            return Reading.UNDONE
        if state in self.ended_states:
            return Reading.ENDED
        if self.undecided(state):
            return Reading.PENDING
        if state in self.processing_states:
            return Reading.PROCESSING
        return Reading.DONE

    def rejected(self, state: str | None, record: ResourceRecord | None = None) -> bool:
        """Whether ``state`` of ``record``'s object means the service refused it."""
        return self.reading(state, record) is Reading.REJECTED

    def undone(self, state: str | None, record: ResourceRecord | None = None) -> bool:
        """Whether ``state`` of ``record``'s object means what it did is undone there."""
        return self.reading(state, record) is Reading.UNDONE

    def noting_done(self, record: ResourceRecord, at: str) -> ResourceRecord:
        """``record``, with ``done_at`` set when its state as recorded is one of the kind's
        ``done_states`` (a cancellation granted) and none is set yet: kept by later reads,
        until its request is sent again (the intent is a new record), so a later state may
        be read as undone rather than refused (``reads_record``). ``at``: when it was read.
        Only for a kind with a ``reads_record`` (no other reads it): others' records stay
        as they were."""
        if (
            self.reads_record is None
            or record.done_at is not None
            or self.done_states is None
            or self.service_words(record) not in self.done_states
        ):
            return record
        return record.with_changes(done_at=at)

    def unknown_state(self, state: str | None) -> bool:
        """Whether ``state`` is a status word the kind does not know (only a kind with
        ``done_states`` tells): neither done, pending, processing, rejected, ended nor
        undone."""
        if self.done_states is None or state is None:
            return False
        return not any(
            state in words
            for words in (
                self.done_states,
                self.pending_states,
                self.processing_states,
                self.rejected_states,
                self.ended_states,
                self.undone_states,
            )
        )

    def undecided(self, state: str | None) -> bool:
        """Whether the object in ``state`` is not decided at the service as far as the tool
        can tell: in one of its ``pending_states``, or in a state it does not know (never
        counted done). plan shows it waiting, apply follows it, ``status`` calls it pending."""
        return state in self.pending_states or self.unknown_state(state)

    def unknown_words(self, state: str | None) -> str:
        """What is said after a state the kind does not know (nothing after one it knows)."""
        if not self.unknown_state(state):
            return ""
        return " (a status customs-batch does not know for it: never counted as done)"

    def identifier(self, record: ResourceRecord) -> Scalar:
        """The service's ID of the recorded object, if known."""
        return record.outputs.get(self.id_field) if self.id_field else None

    def lacks_id(self, record: ResourceRecord) -> bool:
        """Whether the record holds no ID of its object fit to send a request to (absent,
        empty, or not of its ``output_types`` type): a state edited by hand. Asked only of
        a kind that ``updates_recorded_id``."""
        if self.id_field is None or not self.updates_recorded_id:
            return False
        ident = self.identifier(record)
        wanted = self.output_types.get(self.id_field)
        if wanted == "integer":  # digits as text too: sent as int(...) all the same
            return type(ident) is not int and not (isinstance(ident, str) and ident.isdigit())
        return not isinstance(ident, str) or not ident

    def canonical_id(self, text: str, address: Address) -> str:
        """The ID ``text`` typed by a user, as the service gives it (see ``typed_id``)."""
        if self.typed_id is not None:
            return self.typed_id(text, address)
        return text

    def held(self, record: ResourceRecord) -> frozenset[str]:
        """The IDs of the objects the record stands for (see ``held_ids``), as text."""
        if self.held_ids is not None:
            return self.held_ids(record)
        ident = self.identifier(record)
        return frozenset() if ident in (None, "") else frozenset({str(ident)})

    def unknown_outcome(self, address: Address, record: ResourceRecord, now: datetime) -> Decision:
        """What the next plan does with ``record``, whose last outcome is unknown, while its
        document is as it was sent: re-send it (a movement with its recorded key, a
        cancellation again), or hold it for a decision (a departure): how ``status``,
        ``state list`` and the results name it."""
        return self.decide_unknown(UnknownOutcome(address, record, (), now))

    def not_found_words(
        self, address: str, record: ResourceRecord, since: str, instead: str | None = None
    ) -> str:
        """What refresh, status, plan and apply say of ``record``'s object no longer held
        (``instead``: another object at its ID, differing so), with this kind's ways out:
        those of an unknown outcome when its last request's is (``not_found_words``,
        ``unknown_not_found_words``)."""
        said = unknown_not_found_words if record.status.outcome_unknown else not_found_words
        return said(
            address,
            self.identifier(record),
            since,
            instead,
            self.names_its_object,
            self.restates(record) if self.restates is not None else None,
        )

    def decide_unknown(self, unknown: UnknownOutcome) -> Decision:
        """What a plan does with a record whose last outcome is unknown: held for a
        decision once apply found the service no longer holding its object, or another
        object at its ID (``not_found_at``, ``found_instead``: a repeat of the update read
        it first and sent nothing); otherwise as the kind decides (``after_unknown``)."""
        record = unknown.record
        if record.not_found_at is None:
            return self.after_unknown(unknown)
        words = self.not_found_words(
            str(unknown.address), record, record.not_found_at, record.found_instead
        )
        return Decision(Action.NEEDS_DECISION, Operation.NONE, words)

    def as_answered(self, spec: Mapping[str, JSON], outputs: Mapping[str, JSON]) -> JSONObject:
        """``spec`` with the fields an answer gives back (a template group's name) as the
        service holds them, where they differ: another client changed one since, and a
        PATCH writes only the fields it names. Recorded so, the next plan shows the field
        as a change to send back, where the manifests' value would have hidden it. A field
        of the kind's identity is left as sent (another value there is another object,
        which ``refresh`` tells)."""
        held = {
            name: outputs[name]
            for name in self.mutable
            if name in outputs and name in spec and outputs[name] != spec[name]
        }
        if self.identity is not None:
            mine = self.identity(spec)
            held = {k: v for k, v in held.items() if self.identity({**spec, k: v}) == mine}
        return {**spec, **held}

    def another_object(self, spec: Mapping[str, JSON], held: Mapping[str, JSON]) -> str | None:
        """How ``held``, the document's fields as the service holds them at a recorded ID,
        shows another object than the one ``spec`` recorded: a field no call can change,
        or one of the kind's identity (a template group's code), that differs. None: it
        may be the recorded object (what differs there is drift the next apply changes)."""
        differing = [name for name, value in held.items() if name in spec and spec[name] != value]
        if not differing:
            return None
        mine = self.identity(spec) if self.identity is not None else ()
        other = [
            name
            for name in differing
            if name not in self.mutable
            or (self.identity is not None and self.identity({**spec, name: held[name]}) != mine)
        ]
        return (
            ", ".join(f"{name} {held[name]!r} there, {spec[name]!r} recorded" for name in other)
            or None
        )

    def another_than_recorded(
        self, record: ResourceRecord, held: Mapping[str, JSON], created_at: str | None = None
    ) -> str | None:
        """``another_object`` for the object ``record`` stands for. While the outcome of
        its last request is unknown (an update whose answer was lost), that object is
        either as its last answer gave it (its outputs) or as the request would have made
        it (its spec): a template group whose code the request changed is the same group
        under either code. None: it may be the recorded object. What a write to an object
        its spec does not describe read of that object before (``target_seen``: a party
        update's declaration made elsewhere) is compared too."""
        recorded = {**record.target_seen, **record.spec}
        instead = self.another_object(recorded, held) or self._made_since(record, created_at)
        if not record.status.outcome_unknown:
            return instead
        answered = {**recorded, **{k: v for k, v in record.outputs.items() if k in record.spec}}
        # Or as an earlier request whose answer was lost too left it (``maybe_held``).
        earlier = [{**recorded, **left} for left in record.maybe_held if isinstance(left, Mapping)]
        for could_be in (recorded, answered, *earlier):
            if self.another_object(could_be, held) is None and not self._told_apart(could_be, held):
                return None
        return instead or ", ".join(
            f"{name} {held[name]!r} there, {recorded[name]!r} recorded"
            for name in sorted(self.told_after_loss)
            if name in held and name in recorded and held[name] != recorded[name]
        )

    def _made_since(self, record: ResourceRecord, created_at: str | None) -> str | None:
        """For a record of a write to an object its document names by ID and did not make
        (``names_its_object``) that holds nothing of that object (written before
        ``target_seen`` was kept): the object at the ID, made (``created_at``) after the
        record's last write, is another one, given the ID since (a sandbox reset). None
        when nothing tells (the object made earlier, or a time unknown)."""
        if self.made_at is None and (
            self.names_its_object is None or record.target_seen or not record.outputs
        ):
            return None
        made, written = _instant(created_at), _instant(record.updated_at)
        if made is None or written is None or made <= written + WRITE_SKEW:
            return None
        return (
            f"{MADE_SINCE}{created_at!r} there, after its write recorded at {record.updated_at!r}"
        )

    def _told_apart(self, could_be: Mapping[str, JSON], held: Mapping[str, JSON]) -> bool:
        """Whether a field of ``told_after_loss`` differs between ``held`` and what the
        object could be (text compared as the identity compares it)."""

        def plain(value: JSON) -> JSON:
            return normal_text(value) if isinstance(value, str) else value

        return any(
            name in held and name in could_be and plain(held[name]) != plain(could_be[name])
            for name in self.told_after_loss
        )

    def known_by(self, spec: Mapping[str, JSON], lost: Mapping[str, JSON]) -> dict[str, JSON]:
        """What the request ``lost`` (an update whose answer was lost) would have left of
        what the object is known by where a request of ``spec`` leaves another value: the
        fields it can change (``mutable``) that change the kind's identity (a template
        group's code). Empty: the object is known alike under either."""
        if self.identity is None:
            return {}
        mine = self.identity(spec)
        return {
            name: value
            for name, value in lost.items()
            if name in self.mutable
            and spec.get(name) != value
            and self.identity({**spec, name: value}) != mine
        }

    def ids(self, record: ResourceRecord) -> dict[ServiceId, Scalar]:
        """The recorded object's IDs, by what they are (only those known)."""
        if self.service_ids is not None:
            return self.service_ids(record)
        ident = self.identifier(record)
        return {} if ident in (None, "") else {ServiceId.OTHER: ident}


def outputs_of(
    model_outputs: frozenset[str], record: Record, known: Mapping[str, JSON] | None = None
) -> Outputs:
    """The fields of the service's answer that others may refer to, over what was known.

    Only a text, a number, true, false or null is taken: a list or an object answered for
    one (a service out of its contract) is left out, and what was known stays. Recorded, it
    would make the state record malformed, and every later command refuse the state."""
    merged: Outputs = dict(known or {})
    raw = record.raw
    for name in model_outputs:
        if name in raw:
            value = raw[name]
            if value is None or isinstance(value, str | int | float):
                merged[name] = value
    return merged


def refresh_each_declaration(
    records: Sequence[ResourceRecord], read: Callable[[ResourceRecord, int], Refreshed]
) -> dict[str, Refreshed | None]:
    """Read each recorded object by its ``declarationId`` (None: no longer found)."""
    from customs_batch.client import NotFoundError

    found: dict[str, Refreshed | None] = {}
    for record in records:
        declaration_id = record.outputs.get("declarationId")
        if not isinstance(declaration_id, int):
            continue
        try:
            found[record.address] = read(record, declaration_id)
        except NotFoundError:
            found[record.address] = None
    return found


def not_found_words(
    address: str,
    ident: Scalar,
    since: str,
    instead: str | None = None,
    names_its_object: str | None = None,
    follows: Restated | None = None,
) -> str:
    """What refresh, status and plan say of an object the service no longer holds
    (``instead``: how the other object the service holds at its ID differs from it;
    ``names_its_object``: the kind's, when the document names that object by a literal ID
    it did not create; ``follows``: the object of another kind a ``${ref:}`` of the
    document may name it as, ``KindModel.restates``)."""
    named = "its object" if ident in (None, "") else str(ident)
    if instead is not None and names_its_object is not None:
        return (
            f"the service holds another object at {named} than the one recorded ({instead}; "
            f"seen since {since}): its ID was given again, after a sandbox reset say, and "
            f"nothing is sent to it. `customs-batch state rm --gone {address}` removes its "
            f"record; {_correct_the_document(named, names_its_object, follows)}"
        )
    if instead is not None and instead.startswith(MADE_SINCE):
        # Told by when it was made: not the recorded object changed there (nothing to
        # `import`: that would take another client's object for this record's).
        return (
            f"the service holds another object at {named} than the one recorded ({instead}; "
            f"seen since {since}): made after this record's last write, it is not the "
            "recorded one (its ID was given again, after a sandbox reset say), and nothing is "
            f"sent to it. If the recorded object is gone, `customs-batch state rm --gone "
            f"{address}` removes its record, and the next apply sends the document again; if "
            "the service should still hold it, check the environment, then `customs-batch "
            "refresh` reads it again"
        )
    if instead is not None:
        return (
            f"the service holds another object at {named} than the one recorded ({instead}; "
            f"seen since {since}): its ID was given again, after a "
            "sandbox reset say, or someone changed what it is known by there (a template "
            "group's code), and nothing is sent to it. If it is the recorded object, changed "
            f"there, `customs-batch state rm --gone {address}`, then `customs-batch import "
            f"{address} {named}` takes it back as the service holds it (a template group "
            "under another code than its document's only when this environment's history "
            f"holds an answer that gave {address} {named}; else `import` says how), and the "
            "next plan changes it back (an apply after `--gone` alone would create a second "
            f"one); if the recorded object is gone, `customs-batch state rm --gone {address}` "
            "removes its record, and the next apply sends the document again; if the service "
            "should still hold it, check the environment, then `customs-batch refresh` reads "
            "it again"
        )
    return (
        f"{named} was not found at the service (since {since}): "
        f"if it is gone for good (a sandbox reset, an object deleted), `customs-batch state "
        f"rm --gone {address}` removes its record, and the next apply sends it again; if "
        "the service should still hold it, check the environment, then `customs-batch "
        "refresh` reads it again"
    )


def unverified_words(address: str, ident: Scalar, what: str) -> str:
    """What plan and apply say of a record whose object apply could not tell from another
    at its ID (``ResourceRecord.unverified``: ``what`` was not verified), with the ways
    out."""
    named = "its object" if ident in (None, "") else str(ident)
    return (
        f"not verified that {named} is the object it was written to: {what}. Nothing is sent "
        f"to it. Check at the service that {named} is that object (a sandbox reset may have "
        f"given its ID to another client's): if it is, `customs-batch state adopt {address} "
        f"{named}` records it as its own (what the service gives of it kept to tell it by), "
        "and the next apply sends the document; if it is not, `customs-batch state rm "
        f"{address}` stops tracking it; then remove its document, or write it again under "
        "another name with the ID of the object meant"
    )


def _correct_the_document(named: str, names_its_object: str, follows: Restated | None) -> str:
    """The way out of a record whose document names by a literal ID an object it did not
    create (``names_its_object``: the kind's words for that ID), once another object is at
    that ID: once its record is dropped, the document's ID is corrected or the document
    removed, since as it is it goes to ``named`` again. A document that names it by a
    ``${ref:}`` to an object of the state (``follows``: a party update's departure) follows
    that object's record instead: sent again once that record is confirmed gone too, this
    one goes to the new object, and there is nothing to correct."""
    correct = (
        f"correct {names_its_object} to the object meant, or remove the document, before "
        f"the next apply (left as it is, the document is sent to {named} again, which is not "
        "the object it was written to)"
    )
    if follows is not None:
        kind = follows.kind._value_
        correct = (
            f"where the document names it by a `${{ref:{kind}/NAME.{follows.output}}}`, it "
            f"follows that {kind}: once that one's record is removed too (`customs-batch "
            f"state rm --gone {kind}/NAME`, the service holding another object at {named}), "
            f"the next apply submits that {kind} again and sends this document to the new "
            f"{follows.output}, nothing to correct; where it names {named} itself, {correct}"
        )
    else:
        correct = f"then {correct}"
    return (
        f"{correct}; if the service should still hold the recorded one, check the "
        "environment, then `customs-batch refresh` reads it again"
    )


def unknown_not_found_words(
    address: str,
    ident: Scalar,
    since: str,
    instead: str | None = None,
    names_its_object: str | None = None,
    follows: Restated | None = None,
) -> str:
    """What apply, refresh, status and plan say of a record whose last request's outcome is
    unknown (an update whose answer was lost) when the service no longer holds its object
    (``instead``: holds another object at its ID, differing so from what the record says
    it is, under either outcome): nothing is sent to it, and its ways out are not those of
    an applied record (``state rm --gone`` refuses an unknown outcome)."""
    named = "its object" if ident in (None, "") else str(ident)
    there = (
        f"{named} was not found at the service (since {since})"
        if instead is None
        else f"the service holds another object at {named} than the one recorded ({instead}; "
        f"seen since {since}): its ID was given again, after a sandbox reset say"
        + (
            ""
            if names_its_object
            else ", or someone changed what it is known by there (a template group's code)"
        )
    )
    if instead is not None and names_its_object is not None:
        return (
            f"{there}, and the outcome of the last request to {address} is unknown, so "
            f"nothing is sent to it. `customs-batch state forget {address}` drops its record; "
            f"{_correct_the_document(named, names_its_object, follows)}"
        )
    return (
        f"{there}, and the outcome of the last request to {address} is unknown, so nothing "
        f"is sent to it. If its object is gone, `customs-batch state forget {address}`, and "
        f"the next apply sends its document as new; if the object at {named} is its own, "
        f"changed there, `customs-batch state forget {address}`, then `customs-batch import "
        f"{address} {named}` takes it back as the service holds it (a template group under "
        "another code than its document's only when this environment's history holds an "
        f"answer that gave {address} {named}; else `import` says how; an apply after `state "
        "forget` alone would create a second one); if the service should still hold it, "
        "check the environment, then `customs-batch refresh` reads it again"
    )


def _instant(text: str | None) -> datetime | None:
    """An ISO 8601 time as the service and the state write it (``...Z``), else None."""
    if not text:
        return None
    try:
        instant = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return instant if instant.tzinfo is not None else None


def describe_error(error: JSON) -> str:
    """One of the service's validation errors as a short phrase: ``CODE field: message``
    where it has them (docs/api-choices.md), in every command that shows one."""
    if not isinstance(error, dict):
        return str(error)
    code, where, message = error.get("code"), error.get("field"), error.get("message")
    head = " ".join(str(part) for part in (code, where) if part)
    if message:
        return f"{head}: {message}" if head else str(message)
    return head or str(error)


INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
"""The characters that print as nothing: the soft hyphen, zero-width spaces and joiners,
the word joiner, the byte-order mark (U+FEFF, which a spreadsheet export may leave in a cell)
and the marks of writing direction."""


def normal_text(text: str) -> str:
    """``text`` as identities compare it: in Unicode's composed form (NFC), without the
    characters that print as nothing (:data:`INVISIBLE`) and without the whitespace around
    it. "MÜLLER-0001" typed on one machine and exported decomposed (U+0055 U+0308, as macOS
    file names and some spreadsheets write it) on another, a cell re-exported with a trailing
    space, or one that picked up a zero-width space when pasted, print the same and name the
    same declaration; compared byte by byte, plan would send it twice. Case is kept: the API
    does not say that references or codes are case-insensitive."""
    if not text.isascii():  # an ASCII text is in every normal form (a quick test)
        text = unicodedata.normalize("NFC", INVISIBLE.sub("", text))
    return text.strip()


def normal_value(value: object) -> object:
    """``value`` with each text in it as :func:`normal_text` gives it, at any depth (mappings
    as dicts, sequences as lists): a party or a list of items whose only difference is how
    some text of it is written compares equal."""
    if isinstance(value, str):
        return normal_text(value)
    if isinstance(value, Mapping):
        return {key: normal_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [normal_value(item) for item in value]
    return value


def normal_identity(words: Sequence[str]) -> Identity:
    """Identity words (``field=value``) with each value as :func:`normal_text` gives it. An
    identity function gives them so; a record's identity, written before identities were
    normalised, is compared through this (the state keeps the words it recorded)."""
    normal = []
    for word in words:
        head, equals, value = word.partition("=")
        text = normal_text(value)
        normal.append(word if text == value else f"{head}{equals}{text}")
    return tuple(normal)


def identity_of(*names: str) -> IdentityFunction:
    """An identity made of the spec's fields ``names`` (each text as :func:`normal_text`
    gives it, anything else as compact JSON)."""

    heads = tuple((name, f"{name}=") for name in names)

    def identity(spec: Mapping[str, JSON]) -> Identity:
        # A plain text (most fields) joined without _word's call, an ASCII one without
        # normal_text's: a plan asks the identity of every document with a lane
        # (measured: half the time).
        return tuple(
            [
                head + (value.strip() if value.isascii() else normal_text(value))
                if type(value := spec.get(name)) is str
                else f"{head}{_word(value)}"
                for name, head in heads
            ]
        )

    return identity


def _word(value: JSON) -> str:
    if isinstance(value, str):
        return normal_text(value)
    # Numbers by value: a declarationId written 501.0 is declaration 501 at the service.
    return compact_by_value(value)


_MAX_ID_DIGITS = 19
_DIGITS = re.compile(rf"0*[0-9]{{1,{_MAX_ID_DIGITS}}}")
"""A numeric ID as the service's paths read one: the digits 0-9 (no sign, no ``_``, none
of another script), at most as many as the largest ID it gives (a 64-bit integer)."""
_ONLY_DIGITS = re.compile(r"[0-9]+")


def number(text: str, address: Address) -> int:
    """A numeric service ID given on the command line, or a clear error. Read as the
    service reads its paths (``02`` is 2), not as Python's ``int`` (which takes ``1_2`` for
    12, ``+2`` and Arabic-Indic digits for 2)."""
    return service_number(text, a_or_an(address.kind.value))


def service_number(text: str, what: str) -> int:
    """A numeric ID of ``what`` (``a declaration``) typed by a user, read as the service
    reads its paths (see :func:`number`): the digits 0-9 with spaces around them, or a
    :class:`~customs_batch.errors.CustomsBatchError` saying why it is none."""
    from customs_batch.errors import CustomsBatchError

    digits = text.strip()
    if _ONLY_DIGITS.fullmatch(digits) is not None and _DIGITS.fullmatch(digits) is None:
        # Written in the digits 0-9, but longer than any ID the service gives: saying it
        # is not written in them would be untrue.
        significant = len(digits.lstrip("0"))
        raise CustomsBatchError(
            f"{digits[:24]}{'…' if len(digits) > 24 else ''} ({significant:,} digits) is not "
            f"an ID of {what}: its IDs have at most {_MAX_ID_DIGITS} digits (a 64-bit integer)",
            hint="write the ID as the service gives it",
        )
    if _DIGITS.fullmatch(digits) is None:
        raise CustomsBatchError(
            f"{quoted_head(text)} is not an ID of {what}: its IDs are whole numbers "
            "written in the digits 0-9 (such as 7003)",
            hint="write the ID as the service gives it",
        )
    return int(digits)


MAX_ID_LENGTH = 128
"""The most characters an ID of the form ``prefix`` then letters and digits (``shp_7Hk2Lm``,
``hawb_a1``, ``mov_00000001``) is taken with: far past any the service gives, short enough
for a URL path. The shipped schemas give the same ``maxLength`` to every field of such an
ID (a test holds them to it); ``get`` and ``import`` refuse a longer one before any request,
which was sent and failed as the service's "URL too long", or for a movement, recorded."""


def too_long_an_id(text: str, what: str) -> str | None:
    """Why ``text`` (without the spaces around it) is no ID of ``what``, by its length
    alone, or None when it is short enough (:data:`MAX_ID_LENGTH`)."""
    if len(text) <= MAX_ID_LENGTH:
        return None
    return f"{quoted_head(text)} is not {what}: its IDs have at most {MAX_ID_LENGTH} characters"


def prefixed_id(
    prefix: str, what: str, example: str, *, opaque: bool = False
) -> Callable[[str, Address], str]:
    """The ``typed_id`` of a kind whose IDs are ``prefix`` followed by letters and digits
    (``hawb_a1``), or with ``opaque`` by any characters a URL path takes unescaped (the API
    document calls the rest of a movement ID an opaque string: ``mov_V1St_Z5j-myT``): the
    text without the spaces around it, as the service gives it (``mov_00000001 `` is
    ``mov_00000001``); anything else is refused, as no ID of it, and so is one longer than
    :data:`MAX_ID_LENGTH`."""
    rest = "[A-Za-z0-9._~-]+" if opaque else "[A-Za-z0-9]+"
    form = re.compile(re.escape(prefix) + rest, re.ASCII)

    def typed(text: str, address: Address) -> str:
        from customs_batch.errors import CustomsBatchError

        ident = text.strip()
        if form.fullmatch(ident) is None:
            raise CustomsBatchError(
                f"{quoted_head(text)} is not {what} ({prefix} followed by letters and digits"
                f"{', dots, dashes, underscores or tildes' if opaque else ''}, such as "
                f"{example})",
                hint=f"give the ID of the object {address} stands for, as the service gives it",
            )
        too_long = too_long_an_id(ident, what)
        if too_long is not None:
            raise CustomsBatchError(
                too_long,
                hint=f"give the ID of the object {address} stands for, as the service gives it",
            )
        return ident

    return typed


def numeric_id(text: str, address: Address) -> str:
    """A numeric service ID typed by a user, as the service gives it: ``02`` and `` 2 ``
    are the object ``2``, as the service reads them (``typed_id`` of a kind whose IDs are
    numbers)."""
    return str(number(text, address))


def repeat_unknown(
    model_create: Operation, update: Operation | None, mutable: frozenset[str] = frozenset()
) -> Callable[[UnknownOutcome], Decision]:
    """The policy of a kind whose requests are safe to repeat after an unknown outcome, as
    long as they go where the first went: a document whose fields outside ``mutable`` (what
    it names: the declaration, the HAWB) changed since needs a decision."""

    def decide(unknown: UnknownOutcome) -> Decision:
        retargeted = [name for name in unknown.edited if name not in mutable]
        if retargeted:
            return unknown_and_retargeted(unknown, retargeted)
        if unknown.exists and update is not None:
            operation = _recorded(unknown.record, update)
            return Decision(Action.UPDATE, operation, _REPEAT)
        return Decision(Action.CREATE, model_create, _REPEAT)

    return decide


_REPEAT = "the outcome of the last attempt is unknown; the request is safe to repeat"


def unknown_and_retargeted(unknown: UnknownOutcome, changed: Sequence[str]) -> Decision:
    """A write whose outcome is unknown, by a document that now names something else: the
    first request may have taken effect where it went, and the changed one would go to
    another object, leaving the first untracked."""
    address = unknown.address
    return Decision(
        Action.NEEDS_DECISION,
        Operation.NONE,
        f"the outcome of the last attempt is unknown and the document changed since (changed: "
        f"{', '.join(changed)}): the first request may have taken effect as it was sent "
        f"(`customs-batch state show {address}` shows it), and the changed one would not go "
        "where it went. Revert the change to repeat it as it was; or check the service, "
        f"then `customs-batch state forget {address}` to send the changed document as new",
    )


def _recorded(record: ResourceRecord, default: Operation) -> Operation:
    try:
        return Operation(record.operation)
    except ValueError:
        return default


def parse_time(text: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
