"""DepartureDeclaration: a transit declaration submitted for departure.

Submitted by POST; only its parties (Principal, Consignor, Consignee) change in place, by
PATCH, which sends it back to processing. The API offers no idempotency for submissions, so
an unknown outcome is never re-sent blindly. Its service states: processing, then ready, or
invalid / error — in which customs never accepted it, so a corrected document is submitted
again as a new declaration that replaces it (both IDs recorded). A status outside the words
the tool knows (``vocabulary.DONE_TRANSIT_STATUSES`` and the others) is never counted done:
it is undecided, as processing is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict, cast

from customs_batch.errors import ServiceError
from customs_batch.jsontypes import JSON, JSONObject, entries_of
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.actions import Action, Operation
from customs_batch.kinds.checks import (
    COMMODITY,
    COUNTRY,
    CURRENCY,
    GUARANTEE_TYPE,
    OFFICE,
    PACKAGE_KIND,
    PARTY_CODE_FIELDS,
    SECURITY,
    TRANSPORT_MEANS_MODE,
    UNLOCODE,
    CodeFields,
    IdSort,
    OutputId,
    Parties,
    RuleSet,
)
from customs_batch.kinds.model import (
    CLOCK_SKEW,
    STOPPED,
    TIMED_OUT,
    Decision,
    Example,
    Found,
    KindModel,
    LostCreation,
    Outputs,
    Poll,
    Refreshed,
    Request,
    ServiceId,
    UnknownOutcome,
    Waited,
    describe_error,
    identity_of,
    ids_from,
    normal_text,
    number,
    numeric_id,
    outputs_of,
    parse_time,
    refresh_each_declaration,
    repeat_unknown,
)
from customs_batch.vocabulary import (
    CANCELED,
    DONE_TRANSIT_STATUSES,
    FAILED_TRANSIT_STATUSES,
    PROCESSING,
    PROCESSING_TRANSIT_STATUSES,
    StatusWords,
)

if TYPE_CHECKING:
    from customs_batch.client import CustomsClient
    from customs_batch.state.model import ResourceRecord

OUTPUT_TYPES = {"declarationId": "integer", "status": "string"}
"""What its outcome records (the fields ``${ref:DepartureDeclaration/name.field}`` may name), and
their JSON types."""
OUTPUTS = frozenset(OUTPUT_TYPES)
PARTY_FIELDS = frozenset({"Principal", "Consignor", "Consignee"})
Compared = Literal[
    "declarationType", "procedureType", "totalWeight", "departureOffice", "destinationOffice"
]
COMPARED: tuple[Compared, ...] = (
    "declarationType",
    "procedureType",
    "totalWeight",
    "departureOffice",
    "destinationOffice",
)
"""Fields of a submission that the service's detail of a transit declaration gives back."""


class Party(TypedDict):
    """A party of a transit declaration (the schema's ``$defs/party``)."""

    name: NotRequired[str]
    eoriNo: NotRequired[str]
    countryCode: NotRequired[str]
    city: NotRequired[str]
    street: NotRequired[str]
    postcode: NotRequired[str]


class PostalAddress(TypedDict):
    """The postal address of the goods location."""

    street: NotRequired[str]
    city: NotRequired[str]
    postCode: NotRequired[str]
    countryCode: NotRequired[str]


class GoodsLocation(TypedDict):
    """Where the goods can be examined."""

    Address: PostalAddress


class MeansOfTransport(TypedDict):
    """A means of transport (``$defs/transportMeans``)."""

    sequenceNumber: NotRequired[int]
    mode: NotRequired[str]
    transportType: NotRequired[str]
    identificationNumber: NotRequired[str]
    nationality: NotRequired[str]


class Guarantee(TypedDict):
    """A guarantee; its ``accessCode`` is sensitive (a digest in the state and in a plan)."""

    guaranteeType: NotRequired[str]
    guaranteeReferenceNumber: NotRequired[str]
    guaranteeAmount: NotRequired[float]
    currencyCode: NotRequired[str]
    accessCode: NotRequired[str]


class Authorisation(TypedDict):
    """An authorisation."""

    documentCategory: NotRequired[str]
    typeCode: NotRequired[str]
    description: NotRequired[str]


class Packaging(TypedDict):
    """The packaging of a goods item."""

    sequenceNumber: NotRequired[int]
    typeOfPackages: NotRequired[str]
    quantity: NotRequired[int]
    shippingMarks: NotRequired[str]


class GoodsItem(TypedDict):
    """A goods item (``$defs/item``)."""

    description: NotRequired[str]
    commodityCode: NotRequired[str]
    originCountry: NotRequired[str]
    quantity: NotRequired[float]
    grossMass: NotRequired[float]
    netWeight: NotRequired[float]
    netPrice: NotRequired[float]
    currency: NotRequired[str]
    packaging: NotRequired[list[Packaging]]


class DepartureSpec(TypedDict):
    """The spec of a DepartureDeclaration, the body of its submission, as
    ``schemas/departure-declaration.schema.json`` describes it (``tests/kinds/test_specs.py``
    holds the two together)."""

    type: Literal["DEPARTURE"]
    companyId: int
    procedureType: Literal["D1", "D2", "D3", "D4"]
    declarationType: Literal[
        "mixedTransit",
        "tir",
        "externalTransit",
        "internalTransit",
        "internalTransitFiscal",
        "internalTransitSanMarino",
    ]
    additionalDeclarationType: str
    commercialReference: str
    departureOffice: str
    destinationOffice: str
    countryOfDispatch: str
    countryOfDestination: str
    security: str
    totalWeight: float
    goodsLocationType: str
    goodsLocationAddressType: str
    goodsLocationAddress: GoodsLocation
    loadingCountry: str
    loadingLocation: str
    loadingUNLocode: str
    unloadingCountry: NotRequired[str]
    unloadingLocation: NotRequired[str]
    unloadingUNLocode: NotRequired[str]
    Principal: Party
    Consignor: Party
    Consignee: Party
    TransportMeans: NotRequired[list[MeansOfTransport]]
    DeclarationGuarantees: list[Guarantee]
    Authorisations: NotRequired[list[Authorisation]]
    DeclarationItems: list[GoodsItem]


def spec_of(spec: JSONObject) -> DepartureSpec:
    """A departure's spec as its type. Only for a spec its schema has validated (a document
    being planned or applied, the record of one sent): the check is not made again."""
    return cast(DepartureSpec, spec)


def _identity(spec: JSONObject) -> tuple[str, ...]:
    """The declarant, the commercial reference, the offices and the goods (each item's
    commodity code and origin): the same again is the same goods declared twice."""
    items = spec_of(spec).get("DeclarationItems")
    goods = sorted(
        f"{_goods_word(item.get('commodityCode'))}/{_goods_word(item.get('originCountry'))}"
        for item in (items if isinstance(items, list) else ())
        if isinstance(item, Mapping)
    )
    return (
        *identity_of("companyId", "commercialReference", "departureOffice", "destinationOffice")(
            spec
        ),
        f"goods={','.join(goods)}",
    )


def _goods_word(value: object) -> str:
    return normal_text(value) if isinstance(value, str) else str(value)


def _submit(client: CustomsClient, request: Request) -> Outputs:
    return outputs_of(OUTPUTS, client.submit_departure(spec_of(request.spec)))


def _update_parties(client: CustomsClient, request: Request) -> Outputs:
    """The parties that changed, each whole (what the plan shows it sends); all of the
    document's when the plan names none (an update repeated after an unknown outcome).
    A party left as it was is not sent: another client's change to it is not overwritten
    without a word."""
    parties = {k: v for k, v in spec_of(request.spec).items() if k in PARTY_FIELDS}
    changed = {k: v for k, v in parties.items() if k in request.changed}
    body = changed or parties
    answer = client.update_departure_parties(int(request.outputs["declarationId"]), body)
    return outputs_of(OUTPUTS, answer, request.outputs)


def _after_unknown(unknown: UnknownOutcome) -> Decision:
    if unknown.exists:
        return repeat_unknown(Operation.SUBMIT_DEPARTURE, Operation.UPDATE_DEPARTURE_PARTIES)(
            unknown
        )
    return Decision(
        Action.NEEDS_DECISION,
        Operation.NONE,
        "the submission's outcome is unknown and the API offers no idempotency for departure "
        "declarations, so it is never re-sent blindly. `customs-batch apply` (or `refresh`) "
        "first looks at the service: when no transit declaration created since the attempt "
        "could be it, the request never arrived and it is submitted again. Otherwise decide: "
        f"`customs-batch state adopt {unknown.address} ID` if one of them is it, or "
        f"`customs-batch state forget {unknown.address}` if none is (it is then submitted "
        "again)",
    )


def _look_for(
    client: CustomsClient, lost: Sequence[LostCreation], recorded: Sequence[ResourceRecord]
) -> dict[str, tuple[str, ...]]:
    """The transit declarations created since each lost submission that could be it.

    Declarations another document's record holds are not candidates, unless the service
    made the one at that ID after the record's write (more than :data:`CLOCK_SKEW` after):
    that is another declaration given the record's ID again (a sandbox reset), and may be
    the lost one. The others must agree with the submission on every field the service's
    detail gives back.
    """
    from customs_batch.client import TransitFilter

    known = _recorded_times(recorded)
    own = _recorded_ids([creation.record for creation in lost])
    since = min(creation.since for creation in lost)
    created: list[tuple[int, str, str | None]] = []
    for entry in client.iter_transit(TransitFilter(start_date=since.date())):
        ident = entry.declaration_id
        if ident is None:
            continue
        made = str(entry.raw.get("createdAt") or "")
        if ident in known and (ident in own or not _made_after(made, known[ident])):
            continue
        created.append((ident, made, entry.declaration_type))
    details: dict[int, JSONObject] = {}
    found: dict[str, tuple[str, ...]] = {}
    for creation in lost:
        candidates: list[str] = []
        asked = spec_of(creation.record.spec).get("declarationType")
        for ident, created_at, listed_type in created:
            when = parse_time(created_at)
            if when is not None and when < creation.since:
                continue
            if listed_type is not None and asked is not None and listed_type != asked:
                # Another type, which the list already gives: no read (the detail would
                # disagree the same way; the look may go a day back on a busy account).
                continue
            if ident not in details:
                details[ident] = client.get_transit(ident).raw
            if creation.standing_only and _declares_nothing(details[ident]):
                continue
            if _could_be(spec_of(creation.record.spec), details[ident]):
                candidates.append(str(ident))
        found[creation.record.address] = tuple(candidates)
    return found


def _recorded_ids(records: Sequence[ResourceRecord]) -> set[int]:
    known: set[int] = set()
    for record in records:
        for outputs in (record.outputs, *(s.get("outputs") or {} for s in record.superseded)):
            ident = outputs.get("declarationId")
            if isinstance(ident, int):
                known.add(ident)
    return known


def _recorded_times(records: Sequence[ResourceRecord]) -> dict[int, datetime | None]:
    """Each declaration the records hold (theirs, and the rejected ones they replaced),
    with the latest time a record holding it was written (None: a record without one,
    which holds it whenever it was made). A record whose object ``refresh`` or ``apply``
    no longer found at its ID (or found another object there) holds that ID no more."""
    times: dict[int, datetime | None] = {}
    for record in records:
        held = [(record.outputs, record.updated_at)] if record.not_found_at is None else []
        held += [(s.get("outputs") or {}, s.get("updatedAt")) for s in record.superseded]
        for outputs, written in held:
            ident = outputs.get("declarationId") if isinstance(outputs, Mapping) else None
            if not isinstance(ident, int):
                continue
            at = parse_time(written) if isinstance(written, str) else None
            before = times.get(ident, at)
            times[ident] = None if at is None or before is None else max(at, before)
    return times


def made_at(client: CustomsClient, record: ResourceRecord) -> tuple[str | None, str | None]:
    """Before a write to the declaration a departure's record holds (its own parties' PATCH,
    a party update's): when the service made the declaration now at its ID, from the
    transit list (the detail gives no creation time), listed from the day before the
    record's last write. A declaration made after that write is another one, its ID given
    again (a sandbox reset), though it may agree in every field the detail gives back (the
    same offices, weight and procedure: another environment's copy of the same manifests).
    (None, None): the list of declarations made since does not hold it, so it was made
    before; (None, what was not verified) where the pages read do not end the list and do
    not hold it (a busy account): apply then goes by the detail alone, as before."""
    from customs_batch.kinds import transit_party_update

    unknown = (
        f"the service gives a declaration's creation time only in the transit list, the "
        f"only way to tell the declaration {record.address} submitted from another given "
        "its ID since"
    )
    return transit_party_update.created_since(client, record, unknown)


def _made_after(created_at: str, written: datetime | None) -> bool:
    """Whether an object the service says it made at ``created_at`` was made after a
    record holding its ID was ``written`` (and the clocks' skew): another object."""
    made = parse_time(created_at)
    return made is not None and written is not None and made > written + CLOCK_SKEW


def _held(record: ResourceRecord) -> frozenset[str]:
    """Its declaration, and the rejected ones it replaced: those are its submissions too."""
    return frozenset(str(ident) for ident in _recorded_ids([record]))


_DECLARING_NOTHING = FAILED_TRANSIT_STATUSES | {CANCELED}
"""The states of a declaration customs rejected or cancelled: it declares no goods."""


def _declares_nothing(detail: JSONObject) -> bool:
    """Whether customs rejected (``invalid``, ``error``) or cancelled the declaration."""
    return detail.get("status") in _DECLARING_NOTHING


def _could_be(spec: DepartureSpec, detail: JSONObject) -> bool:
    """Whether the detail agrees with the submission wherever both give a field."""
    return all(
        spec[name] == detail[name]
        for name in COMPARED
        if name in spec and detail.get(name) is not None
    )


def read_transit(
    client: CustomsClient, address: Address, remote_id: str, spec: JSONObject
) -> Found:
    """What the service holds of the transit declaration ``remote_id``: its state, and of
    the submission's fields those its detail gives back (:data:`COMPARED`)."""
    declaration_id = number(remote_id, address)
    detail = client.get_transit(declaration_id)
    return Found(
        outputs=outputs_of(OUTPUTS, detail, {"declarationId": declaration_id}),
        remote_spec={k: detail.raw[k] for k in COMPARED if detail.raw.get(k) is not None},
        unread="the detail of a transit declaration gives back only " + ", ".join(COMPARED),
        service_state=detail.raw.get("status"),
        errors=entries_of(detail.raw.get("errors")),
    )


def refresh_transit(
    client: CustomsClient, records: Sequence[ResourceRecord]
) -> dict[str, Refreshed | None]:
    """The current status and errors of each recorded transit declaration, with the fields
    of a submission its detail gives back (:data:`COMPARED`: none of them can change, so
    another value there is another declaration at the recorded ID)."""

    def read(record: ResourceRecord, declaration_id: int) -> Refreshed:
        detail = client.get_transit(declaration_id)
        status = detail.raw.get("status")
        return Refreshed(
            service_state=status,
            errors=entries_of(detail.raw.get("errors")),
            outputs={**record.outputs, "status": status},
            remote_spec={k: detail.raw[k] for k in COMPARED if detail.raw.get(k) is not None},
        )

    return refresh_each_declaration(records, read)


@dataclass
class _Polled:
    """What the last read of a transit declaration said (``wait_transit``)."""

    status: str | None = PROCESSING
    errors: tuple[JSON, ...] = ()
    failure: str | None = None
    not_found: bool = False


def wait_transit(client: CustomsClient, record: ResourceRecord, poll: Poll) -> Waited:
    """``apply --wait`` on a transit declaration just sent: read it while it is undecided
    (``processing``, or a status the kind does not know: :func:`_undecided`), until it is
    done (:data:`DONE_TRANSIT_STATUSES`, which ends the change well), rejected or cancelled
    (which fails it), the time is up (which fails it), or the run stops (which leaves it
    done, still undecided). An answer that already says where it stands is not read."""
    declaration_id = int(str(record.outputs["declarationId"]))
    answered = record.outputs.get("status")
    if answered is not None and not _undecided(answered):  # an arrival's parties
        # A rejection the answer already gives fails the change, as a polled one does.
        done = answered in DONE_TRANSIT_STATUSES
        return Waited(str(answered), (), done, f"declaration {declaration_id} is {answered}")
    from customs_batch.client import NotFoundError, is_transient

    last = _Polled()

    def read() -> bool:
        try:
            detail = client.get_transit(declaration_id)
        except ServiceError as exc:
            last.failure = f"could not poll declaration {declaration_id}: {exc.message}"
            last.not_found = isinstance(exc, NotFoundError)
            # A 5xx or a lost connection that outlasted the client's own retries is asked
            # again at the next interval, until the wait's time is up; a refusal ends it.
            return not is_transient(exc)
        last.failure = None
        last.status = detail.raw.get("status")
        last.errors = entries_of(detail.raw.get("errors"))
        return not _undecided(last.status)

    ended = poll(read)
    status, errors = last.status, last.errors
    said = f"{status}{MODEL.unknown_words(status)}"
    if last.failure is not None:
        if last.not_found:
            return Waited(status, errors, False, last.failure, not_found=True)
        ok, detail = False, last.failure
    elif ended == TIMED_OUT:  # the executor adds how long it waited
        ok, detail = False, f"declaration {declaration_id} still {said}"
    elif ended == STOPPED:
        # Ctrl-C ends the wait, not the submission: it was answered and stands, undecided,
        # as after an apply without --wait (the run's exit code says it was interrupted).
        ok = True
        detail = (
            f"declaration {declaration_id} still {said}: stopped waiting before customs "
            "decided; `customs-batch refresh` reads where it stands"
        )
    elif status in DONE_TRANSIT_STATUSES:
        ok, detail = True, f"declaration {declaration_id} is {status}"
    else:  # rejected (invalid, error) or cancelled: customs decided, and not for it
        shown = "; ".join(describe_error(e) for e in errors) or "no errors given"
        ok, detail = False, f"declaration {declaration_id} is {status}: {shown}"
    outputs = dict(record.outputs)
    if status is not None:
        outputs["status"] = status
    return Waited(status, errors, ok, detail, outputs, timed_out=ended == TIMED_OUT)


def _undecided(status: object) -> bool:
    """Whether a transit declaration in ``status`` is not decided as far as the tool can
    tell: still processing, no status given, or a status the kind does not know (never
    counted done nor failed: ``KindModel.done_states``). A party update knows the same
    words (``tests/kinds/test_departure.py`` holds the two together)."""
    if not isinstance(status, str):
        return True
    return status in MODEL.processing_states or MODEL.unknown_state(status)


CODE_FIELDS: CodeFields = (
    (("departureOffice",), OFFICE),
    (("destinationOffice",), OFFICE),
    (("countryOfDispatch",), COUNTRY),
    (("countryOfDestination",), COUNTRY),
    (("loadingCountry",), COUNTRY),
    (("unloadingCountry",), COUNTRY),
    (("loadingUNLocode",), UNLOCODE),
    (("unloadingUNLocode",), UNLOCODE),
    (("security",), SECURITY),
    (("goodsLocationAddress", "Address", "countryCode"), COUNTRY),
    *PARTY_CODE_FIELDS,
    (("TransportMeans", "*", "nationality"), COUNTRY),
    (("TransportMeans", "*", "transportType"), TRANSPORT_MEANS_MODE),
    (("DeclarationGuarantees", "*", "guaranteeType"), GUARANTEE_TYPE),
    (("DeclarationGuarantees", "*", "currencyCode"), CURRENCY),
    (("DeclarationItems", "*", "commodityCode"), COMMODITY),
    (("DeclarationItems", "*", "originCountry"), COUNTRY),
    (("DeclarationItems", "*", "currency"), CURRENCY),
    (("DeclarationItems", "*", "packaging", "*", "typeOfPackages"), PACKAGE_KIND),
)
"""Which field of a departure holds which sort of code (``validate`` checks each)."""


EXAMPLE = Example(
    "departure",
    """\
apiVersion: customs-batch/v1
kind: DepartureDeclaration
metadata:
  name: my-departure
template: rotterdam
values: {destination_office: DE004073, destination_country: DE}
spec:
  commercialReference: MY-0001
  totalWeight: 125.5
  Consignor: {name: Acme Export BV, eoriNo: NL123456789, countryCode: NL}
  Consignee: {name: Globex GmbH, countryCode: DE, city: Hamburg, street: Kai 1, postcode: "20457"}
  DeclarationItems:
    - description: Steel bolts
      commodityCode: "731815"
      originCountry: NL
      quantity: 100
      grossMass: 125.5
      netWeight: 120.0
      netPrice: 250
      currency: EUR
      packaging:
        - {sequenceNumber: 1, typeOfPackages: PX, quantity: 2, shippingMarks: MY-0001}
""",
)
"""What ``customs-batch init`` writes: ``manifests/departure.yaml``."""


MODEL = KindModel(
    kind=Kind.DEPARTURE_DECLARATION,
    spec_type=DepartureSpec,
    schema="departure-declaration",
    example=EXAMPLE,
    outputs=OUTPUTS,
    output_types=OUTPUT_TYPES,
    id_field="declarationId",
    typed_id=numeric_id,
    service_ids=ids_from(declarationId=ServiceId.DECLARATION),
    held_ids=_held,
    processing_states=PROCESSING_TRANSIT_STATUSES,
    # The transit statuses have no meaning in the API document: only the words it knows
    # are done, rejected or ended; any other is never counted done (nor failed).
    done_states=DONE_TRANSIT_STATUSES,
    create=Operation.SUBMIT_DEPARTURE,
    send={
        Operation.SUBMIT_DEPARTURE: _submit,
        Operation.RESUBMIT_DEPARTURE: _submit,
        Operation.UPDATE_DEPARTURE_PARTIES: _update_parties,
    },
    update=Operation.UPDATE_DEPARTURE_PARTIES,
    updates_recorded_id=True,
    reads_first=frozenset({Operation.UPDATE_DEPARTURE_PARTIES}),
    # The detail tells too little of a declaration: its creation time, in the list, tells
    # another made at its ID since (one page at least, before each write to it).
    made_at=made_at,
    lists_first=lambda record: parse_time(record.updated_at) is not None,
    mutable=PARTY_FIELDS,
    kept_when_left_out=PARTY_FIELDS,
    resubmit=Operation.RESUBMIT_DEPARTURE,
    after_unknown=_after_unknown,
    look_for=_look_for,
    read_back=read_transit,
    refresh=refresh_transit,
    rejected_states=FAILED_TRANSIT_STATUSES,
    ended_states=StatusWords({CANCELED}),
    ended_words="{ident} is {state} at the service: customs cancelled it, so it no longer "
    "stands, and nothing is sent to it (its parties cannot change any more). If its goods are "
    "still to be declared, `customs-batch state rm --gone {address}` removes its record and "
    "the next apply submits the document as a new declaration; if not, remove the document, "
    "then `customs-batch state rm --gone {address}`",
    wait=wait_transit,
    waits_after=frozenset(
        {
            Operation.SUBMIT_DEPARTURE,
            Operation.RESUBMIT_DEPARTURE,
            Operation.UPDATE_DEPARTURE_PARTIES,
        }
    ),
    has_status=True,
    identity=_identity,
    code_fields=CODE_FIELDS,
    rules=(RuleSet.DEPARTURE,),
    immutable="{fields} of a submitted departure declaration cannot change: customs holds "
    "the declaration as sent, and only its parties can be updated. Do not give the document "
    "a new name: that would submit a second declaration and declare the same goods twice. "
    "Revert the change. If the declaration itself is wrong, have customs cancel it: once "
    "the service holds it as canceled, `customs-batch state rm --gone {address}` removes its "
    "record and the next apply submits the corrected document as a new declaration (a plain "
    "`state rm` keeps a tombstone that refuses it). A declaration customs amended stays this "
    "one: keep the document as it was submitted",
    output_ids={"declarationId": OutputId(IdSort.TRANSIT_DEPARTURE)},
    # It owns every party field it writes (a party update of it may write the others).
    parties=Parties(),
)
