"""TransitPartyUpdate: the parties of a transit declaration made elsewhere, set by PATCH.

Every field is re-applied in place (a PATCH sets the same values again, so it is safe to
repeat after an unknown outcome). The departure variant sends the declaration back to
processing, which ``apply --wait`` follows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict, cast

from customs_batch.jsontypes import JSONObject
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.actions import Operation
from customs_batch.kinds.checks import (
    PARTY_CODE_FIELDS,
    IdSort,
    OutputId,
    Parties,
    RuleSet,
    TakesId,
    VariantRule,
)
from customs_batch.kinds.departure import (
    PARTY_FIELDS,
    Party,
    read_transit,
    refresh_transit,
    wait_transit,
)
from customs_batch.kinds.model import (
    Example,
    Found,
    KindModel,
    Outputs,
    Refreshed,
    Request,
    Restated,
    ServiceId,
    identity_of,
    ids_from,
    numeric_id,
    outputs_of,
    parse_time,
    repeat_unknown,
)
from customs_batch.vocabulary import (
    CANCELED,
    DONE_TRANSIT_STATUSES,
    FAILED_TRANSIT_STATUSES,
    PROCESSING_TRANSIT_STATUSES,
)

if TYPE_CHECKING:
    from customs_batch.client import CustomsClient
    from customs_batch.state.model import ResourceRecord

OUTPUT_TYPES = {"declarationId": "integer", "status": "string"}
"""What its outcome records (the fields ``${ref:TransitPartyUpdate/name.field}`` may name), and
their JSON types."""
OUTPUTS = frozenset(OUTPUT_TYPES)


class TransitPartyUpdateSpec(TypedDict):
    """The spec of a TransitPartyUpdate, as ``schemas/transit-party-update.schema.json``
    describes it (``tests/kinds/test_specs.py`` holds the two together)."""

    declarationId: int | str
    """The declaration's number, or a ``${ref:…}`` to it until the reference is resolved."""
    variant: NotRequired[Literal["departure", "arrival"]]
    Principal: NotRequired[Party]
    Consignor: NotRequired[Party]
    Consignee: NotRequired[Party]


def spec_of(spec: JSONObject) -> TransitPartyUpdateSpec:
    """A party update's spec as its type. Only for a spec its schema has validated (a
    document being planned or applied, the record of one sent): the check is not made
    again."""
    return cast(TransitPartyUpdateSpec, spec)


def _update_parties(client: CustomsClient, request: Request) -> Outputs:
    spec = spec_of(request.spec)
    body = {k: v for k, v in spec.items() if k in PARTY_FIELDS}
    declaration_id = int(spec["declarationId"])
    if spec.get("variant") == "arrival":
        answer = client.update_arrival_parties(declaration_id, body)
    else:
        answer = client.update_departure_parties(declaration_id, body)
    return outputs_of(OUTPUTS, answer, {"declarationId": declaration_id})


def _identity(spec: JSONObject) -> tuple[str, ...]:
    """The declaration, the variant, and the party fields it writes (``Consignee.city``).
    A party PATCH writes only the fields it names (docs/api-choices.md), and each field has
    one writer (``project.two-owners``): two updates of other fields of one party are two
    writes, not one update sent twice."""
    written = ",".join(
        sorted(
            f"{role}.{name}"
            for role in PARTY_FIELDS
            if isinstance(party := spec.get(role), Mapping)
            for name in party
        )
    )
    return (*identity_of("declarationId", "variant")(spec), f"fields={written}")


def _identity_outdated(words: Sequence[str]) -> bool:
    """Words kept before the identity named the fields written: ``parties=ROLES``."""
    return any(word.startswith("parties=") for word in words)


def _read_back(client: CustomsClient, address: Address, remote_id: str, spec: JSONObject) -> Found:
    """The declaration it updates; the service does not give its parties back."""
    found = read_transit(client, address, remote_id, spec)
    return Found(
        outputs=found.outputs,
        remote_spec={"declarationId": found.outputs["declarationId"]},
        unread="the service does not give a declaration's parties back",
        service_state=found.service_state,
        errors=found.errors,
    )


def _declaration(record: ResourceRecord) -> int | None:
    """The declaration the update writes to: as its spec names it (its reference resolved:
    where the PATCH goes), else as its answer gave it. The intent of an update that follows
    its resubmitted departure still holds the answer of its last PATCH, the rejected
    declaration's number, while its spec names the replacement."""
    for declaration_id in (
        spec_of(record.spec).get("declarationId"),
        record.outputs.get("declarationId"),
    ):
        if (
            isinstance(declaration_id, str)
            and declaration_id.isascii()
            and declaration_id.isdigit()
        ):
            return int(declaration_id)
        if type(declaration_id) is int:
            return declaration_id
    return None


def _restates(record: ResourceRecord) -> Restated | None:
    """The departure of the state whose parties the update changes: its answer (and a wait
    on it) tells that declaration's state, and apply checks before the update that the
    service still holds that departure there. An arrival declaration is no departure."""
    declaration_id = _declaration(record)
    if spec_of(record.spec).get("variant") == "arrival" or declaration_id is None:
        return None
    return Restated(Kind.DEPARTURE_DECLARATION, "declarationId", declaration_id)


def _read_declaration(
    client: CustomsClient, records: Sequence[ResourceRecord]
) -> dict[str, Refreshed | None]:
    """The declaration each update writes to, read before its PATCH (``reads_first``),
    given the record with the time of its last write (none where a departure's record of
    the state stands for the declaration: that record tells it). For a record written before
    ``targetSeen`` was kept (it holds nothing of its declaration), with the time the
    service says that declaration was created (:func:`created_since`): a declaration made
    after the record's last write is another one, given the number since (a reset), and
    nothing is sent to it (``KindModel.another_than_recorded``); one the bounded listing
    does not reach is not taken either (``Refreshed.unverified``)."""
    named = []
    for record in records:
        declaration_id = _declaration(record)
        if declaration_id is not None:
            outputs = {**record.outputs, "declarationId": declaration_id}
            named.append(record.with_changes(outputs=outputs))
    found = refresh_transit(client, named)
    for record in named:
        read = found.get(record.address)
        if read is None or not _lists_first(record):
            continue
        made, unverified = created_since(client, record)
        if made is not None or unverified is not None:
            found[record.address] = replace(read, created_at=made, unverified=unverified)
    return found


CREATION_MARGIN = timedelta(days=1)
"""How much earlier than a record's last write the list of declarations created since is
read from: its date filter is a day, counted on the service's calendar, which may be
another time zone's."""

PAGE_SIZE = 100
"""Declarations a page of the transit list holds, as listed here (the API's most)."""
LISTED_PAGES = 5
"""At most how many pages of the transit list (100 a page) are read for one record written
before ``targetSeen`` was kept, before its first PATCH: the declarations created since its
last write may be thousands on a busy account. Its declaration not among them is not
taken as the record's (:func:`created_since`)."""


def _lists_first(record: ResourceRecord) -> bool:
    """Whether the read before this record's next PATCH lists the transit declarations
    created since its last write: a record of an update applied by a version that kept
    nothing of its declaration (no ``targetSeen``). Only these pay the listing, once: the
    first PATCH keeps ``targetSeen``. (apply gives the record no time, and nothing is
    listed, where a departure's record of the state stands for the declaration.)"""
    return (
        not record.target_seen
        and bool(record.outputs)
        and bool(record.updated_at)
        and parse_time(record.updated_at) is not None
    )


def created_since(
    client: CustomsClient, record: ResourceRecord, unknown: str | None = None
) -> tuple[str | None, str | None]:
    """For a record of an update written before ``targetSeen`` was kept: the ``createdAt``
    the transit list gives its declaration, where the list of declarations created since
    the record's last write (the day before, by :data:`CREATION_MARGIN`) holds it; else,
    where that list has more than :data:`LISTED_PAGES` pages and they do not hold it, what
    could not be verified. The detail of a transit declaration gives no creation time; its
    list entry does (one that gives no time there is not verified either). (None, None):
    the list ends without it, so it was created before (taken as the record's, as before).
    A departure's record is read so too before a write to its declaration (``unknown``:
    what is said of it, :func:`customs_batch.kinds.departure.made_at`)."""
    from customs_batch.client import TransitFilter

    written = parse_time(record.updated_at)
    declaration_id = record.outputs.get("declarationId")
    if written is None or type(declaration_id) is not int:
        return None, None
    filters = TransitFilter(start_date=(written - CREATION_MARGIN).date())
    if unknown is None:
        unknown = (
            f"its record, written at {record.updated_at!r} by a version that kept nothing of "
            "its declaration, holds nothing to tell it by, and the service gives a "
            "declaration's creation time only in the transit list"
        )
    for number in range(1, LISTED_PAGES + 1):
        page = client.list_transit(filters, page=number, page_size=PAGE_SIZE)
        for entry in page.records:
            if entry.declaration_id == declaration_id:
                made = entry.raw.get("createdAt")
                if isinstance(made, str) and parse_time(made) is not None:
                    return made, None
                return None, f"{unknown}, whose entry of {declaration_id} gives none"
        if page.is_last():
            return None, None
    return None, (
        f"{unknown}, whose first {LISTED_PAGES * PAGE_SIZE} declarations created since the "
        f"day before that write ({LISTED_PAGES} pages, the most read) do not hold "
        f"{declaration_id}: it may have been made before that write, or after it"
    )


def _arrival(spec: JSONObject) -> IdSort | None:
    return IdSort.TRANSIT_ARRIVAL if spec.get("variant") == "arrival" else None


EXAMPLE = Example(
    "party-update",
    """\
apiVersion: customs-batch/v1
kind: TransitPartyUpdate
metadata:
  name: my-departure-consignee
spec:
  declarationId: ${ref:DepartureDeclaration/my-departure.declarationId}
  # The departure owns the party fields it writes: this adds one it leaves out.
  Consignee: {eoriNo: DE123456789012345}
""",
)
"""What ``customs-batch init`` writes: ``manifests/party-update.yaml``."""


MODEL = KindModel(
    kind=Kind.TRANSIT_PARTY_UPDATE,
    spec_type=TransitPartyUpdateSpec,
    schema="transit-party-update",
    example=EXAMPLE,
    outputs=OUTPUTS,
    output_types=OUTPUT_TYPES,
    id_field="declarationId",
    typed_id=numeric_id,
    service_ids=ids_from(declarationId=ServiceId.DECLARATION),
    # The declaration is another's (a departure's, or made elsewhere), and several updates
    # may write its parties: the document names it, and import compares that. Two of them
    # writing one party are refused by validate (project.two-owners).
    held_ids=lambda record: frozenset(),
    # The update sends the declaration back to processing.
    processing_states=PROCESSING_TRANSIT_STATUSES,
    # As its declaration's: a transit status the tool does not know is never done.
    done_states=DONE_TRANSIT_STATUSES,
    create=Operation.UPDATE_TRANSIT_PARTIES,
    send={Operation.UPDATE_TRANSIT_PARTIES: _update_parties},
    update=Operation.UPDATE_TRANSIT_PARTIES,
    mutable=PARTY_FIELDS | {"variant"},
    kept_when_left_out=PARTY_FIELDS,
    after_unknown=repeat_unknown(
        Operation.UPDATE_TRANSIT_PARTIES,
        Operation.UPDATE_TRANSIT_PARTIES,
        mutable=PARTY_FIELDS | {"variant"},
    ),
    read_back=_read_back,
    refresh=refresh_transit,
    # The update stands as long as its declaration does.
    ended_states=FAILED_TRANSIT_STATUSES | {CANCELED},
    wait=wait_transit,
    waits_after=frozenset({Operation.UPDATE_TRANSIT_PARTIES}),
    restates=_restates,
    # `status` lists it with its declaration's state (as its departure's record holds it,
    # where the state records that departure).
    has_status=True,
    reads_first=frozenset({Operation.UPDATE_TRANSIT_PARTIES}),
    # A record written before targetSeen was kept lists the declarations created since its
    # last write first (the detail gives no creation time): 100 a request, at most
    # LISTED_PAGES.
    lists_first=_lists_first,
    read_target=_read_declaration,
    sent_again="send its parties to the declaration a second time",
    names_its_object="the document's `declarationId`",
    identity=_identity,
    identity_outdated=_identity_outdated,
    object_identity=identity_of("declarationId", "variant"),
    code_fields=PARTY_CODE_FIELDS,
    rules=(RuleSet.PARTY_UPDATE,),
    immutable="{fields} of a party update cannot change: it names the declaration it updates. "
    "Write a new TransitPartyUpdate document for another declaration, and `customs-batch "
    "state rm {address}` to forget this one",
    # Its declarationId is the declaration it updates: a departure's of the batch, or an
    # arrival's when it says so.
    output_ids={"declarationId": OutputId(repeats="declarationId", otherwise=_arrival)},
    takes_id=TakesId(
        field="declarationId",
        accepts=frozenset({IdSort.TRANSIT_DEPARTURE, IdSort.TRANSIT_ARRIVAL}),
        purpose="a TransitPartyUpdate updates the parties of a transit declaration",
        hint="write the ID of the transit declaration whose parties change",
        variants=(
            VariantRule(
                value="arrival",
                refuses=frozenset({IdSort.TRANSIT_DEPARTURE}),
                rule="project.party-update-variant",
                says="updates an arrival declaration (PATCH /transit-declarations/{id}/parties)",
                hint="write variant: departure (or leave variant out) to update the "
                "departure's parties; for an arrival, write the arrival declaration's ID",
            ),
        ),
    ),
    parties=Parties(updates="declarationId"),
)
