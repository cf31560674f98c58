"""ExportCancellation: an export declaration cancelled by DELETE (safe to repeat).

Not yet submitted to customs, it is cancelled at once (``canceled: true``); already
submitted, the service records the request (``canceled: false``, ``cancellation_requested``)
and customs decides later: the declaration becomes ``canceled``, or the cancellation is
refused and the declaration keeps another status of a submitted one. A declaration read
back not yet submitted (``ready``) had its cancellation undone there (a reset): it is sent
again, and cancelled at once. So had one read in a status of a submitted declaration after
its cancellation was read granted (``canceled``: the record's ``done_at``): customs never
takes a cancellation back, so the service's data was reset, and it is sent again rather
than said refused (``reads_record``). Until the decision is read the
cancellation is pending, never done: plan shows it waiting, apply reads where it stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypedDict, cast

from customs_batch.jsontypes import JSONObject
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.actions import Operation
from customs_batch.kinds.checks import IdSort, OutputId, TakesId
from customs_batch.kinds.model import (
    Example,
    Found,
    KindModel,
    Outputs,
    Reading,
    Refreshed,
    Request,
    ServiceId,
    identity_of,
    ids_from,
    number,
    numeric_id,
    outputs_of,
    refresh_each_declaration,
    repeat_unknown,
)
from customs_batch.vocabulary import DECLARATION_STATUSES, StatusWords, same_status

if TYPE_CHECKING:
    from customs_batch.client import CustomsClient
    from customs_batch.state.model import ResourceRecord

OUTPUT_TYPES = {"declarationId": "integer", "canceled": "boolean"}
"""What its outcome records (the fields ``${ref:ExportCancellation/name.field}`` may name), and
their JSON types."""
OUTPUTS = frozenset(OUTPUT_TYPES)
CANCELED = "canceled"
REQUESTED = "cancellation_requested"
NOT_SUBMITTED = StatusWords({"processing", "ready", "invalid", "error"})
"""The statuses of an export declaration not yet submitted to customs, which a DELETE
cancels at once (API document): read after its cancellation, the cancellation was undone at
the service (its data reset, say), never refused by customs, and plan sends it again."""
REFUSED_STATES = StatusWords(set(DECLARATION_STATUSES) - {CANCELED, REQUESTED} - NOT_SUBMITTED)
"""After a request: any status of a submitted declaration but these two means customs
refused the cancellation."""


class ExportCancellationSpec(TypedDict):
    """The spec of an ExportCancellation, as ``schemas/export-cancellation.schema.json``
    describes it (``tests/kinds/test_specs.py`` holds the two together)."""

    declarationId: int | str
    """The declaration's number, or a ``${ref:…}`` to it until the reference is resolved."""


def spec_of(spec: JSONObject) -> ExportCancellationSpec:
    """A cancellation's spec as its type. Only for a spec its schema has validated (a
    document being planned or applied, the record of one sent): the check is not made
    again."""
    return cast(ExportCancellationSpec, spec)


def _cancel(client: CustomsClient, request: Request) -> Outputs:
    return outputs_of(
        OUTPUTS, client.cancel_declaration(int(spec_of(request.spec)["declarationId"]))
    )


def _read_back(client: CustomsClient, address: Address, remote_id: str, spec: JSONObject) -> Found:
    """The declaration ``remote_id``: cancelled, or its cancellation requested, is what the
    document asks for; any other status (an import declaration, which cannot be cancelled,
    an export one never asked to be, or whose cancellation customs refused) is not, and
    nothing is recorded: recorded, its status would be taken as a cancellation waiting for
    customs, then as one customs refused, and apply would never request it."""
    declaration = client.get_declaration(number(remote_id, address))
    status = declaration.raw.get("status")
    ident = declaration.raw.get("declarationId")
    kind = declaration.raw.get("type")
    not_done = ""
    if isinstance(kind, str) and kind.upper() != "EXPORT":
        not_done = (
            f"declaration {remote_id} is an {kind.lower()} declaration at the service, which "
            "an ExportCancellation does not cancel (only export declarations are); correct "
            "the document's declarationId"
        )
    elif not (same_status(status, CANCELED) or same_status(status, REQUESTED)):
        said = status if isinstance(status, str) and status else "of no status"
        not_done = (
            f"export declaration {remote_id} is {said} at the service: it was not cancelled "
            "and no cancellation of it is waiting for customs (never requested, or refused), "
            "and `customs-batch apply` requests it"
        )
    return Found(
        outputs={"declarationId": ident, "canceled": same_status(status, CANCELED)},
        remote_spec={"declarationId": ident},
        not_done=not_done,
    )


FIXED = ("type", "shipmentId", "referenceNumber", "lrn")
"""The fields of an export declaration's detail that a cancellation cannot change: another
value there is another declaration at the number (given again after a reset, say)."""


def _refresh(
    client: CustomsClient, records: Sequence[ResourceRecord]
) -> dict[str, Refreshed | None]:
    def read(record: ResourceRecord, declaration_id: int) -> Refreshed:
        detail = client.get_declaration(declaration_id).raw
        status = detail.get("status")
        outputs = {**record.outputs, "canceled": same_status(status, CANCELED)}
        fixed = {k: detail[k] for k in FIXED if detail.get(k) not in (None, "")}
        created = detail.get("createdAt")
        return Refreshed(
            service_state=status,
            outputs=outputs,
            remote_spec=fixed,
            created_at=created if isinstance(created, str) and created else None,
        )

    return refresh_each_declaration(records, read)


def _read_declaration(
    client: CustomsClient, records: Sequence[ResourceRecord]
) -> dict[str, Refreshed | None]:
    """The declaration each cancellation cancels, read before its DELETE (``reads_first``):
    by its answer's number, else (a first cancellation) by the number its spec names."""
    named = []
    for record in records:
        declaration_id = record.outputs.get("declarationId", record.spec.get("declarationId"))
        if isinstance(declaration_id, str) and declaration_id.isdigit():
            declaration_id = int(declaration_id)
        if type(declaration_id) is int:
            named.append(
                record.with_changes(outputs={**record.outputs, "declarationId": declaration_id})
            )
    return _refresh(client, named)


def service_words(record: ResourceRecord) -> str | None:
    """The cancellation's state: as refreshed, else from the service's ``canceled`` answer."""
    if record.remote_status:
        return record.remote_status
    canceled = record.outputs.get("canceled")
    if canceled is True:
        return CANCELED
    if canceled is False:
        return REQUESTED
    return None


def reads_record(record: ResourceRecord, state: str | None) -> Reading | None:
    """A status of a submitted declaration (``REFUSED_STATES``) read after customs granted
    the cancellation (the record's ``done_at``: read ``canceled`` since its request was
    sent) is no refusal: customs never takes a cancellation back, so the service holds the
    declaration as before it (its data reset) and the cancellation is undone there, sent
    again by the next apply. Any other state: as the state lists say (None)."""
    if record.done_at is not None and state in REFUSED_STATES:
        return Reading.UNDONE
    return None


EXAMPLE = Example(
    "export-cancellation",
    """\
apiVersion: customs-batch/v1
kind: ExportCancellation
metadata:
  name: my-cancel-501
spec:
  declarationId: 501
""",
)
"""What ``customs-batch init`` writes: ``manifests/export-cancellation.yaml``."""


MODEL = KindModel(
    kind=Kind.EXPORT_CANCELLATION,
    spec_type=ExportCancellationSpec,
    schema="export-cancellation",
    example=EXAMPLE,
    outputs=OUTPUTS,
    output_types=OUTPUT_TYPES,
    id_field="declarationId",
    typed_id=numeric_id,
    service_ids=ids_from(declarationId=ServiceId.DECLARATION),
    create=Operation.CANCEL_EXPORT,
    send={Operation.CANCEL_EXPORT: _cancel},
    after_unknown=repeat_unknown(Operation.CANCEL_EXPORT, None),
    read_back=_read_back,
    refresh=_refresh,
    # The declaration is read before it is cancelled: what it is then is kept with the
    # record (``target_seen``), so that a cancellation sent again (undone at the service)
    # never goes to another declaration given its number.
    reads_first=frozenset({Operation.CANCEL_EXPORT}),
    read_target=_read_declaration,
    names_its_object="the document's `declarationId`",
    service_words=service_words,
    has_status=True,
    identity=identity_of("declarationId"),
    pending_states=StatusWords({REQUESTED}),
    # The export statuses are a closed list: a word outside it is never taken as cancelled.
    done_states=StatusWords({CANCELED}),
    rejected_states=REFUSED_STATES,
    undone_states=NOT_SUBMITTED,
    reads_record=reads_record,
    rejected_way_out="customs refused the cancellation, so the declaration stands. Remove the "
    "document, then `customs-batch state rm {address}` to stop tracking it",
    sent_again="ask for its cancellation a second time",
    waits_after=frozenset({Operation.CANCEL_EXPORT}),
    immutable="a cancellation cannot be changed once sent (changed: {fields}). Revert the "
    "change; to cancel another declaration, write a new document",
    output_ids={"declarationId": OutputId(IdSort.EXPORT)},
    takes_id=TakesId(
        field="declarationId",
        accepts=frozenset({IdSort.EXPORT}),
        purpose="an ExportCancellation cancels an export declaration "
        "(DELETE /v1/declarations/{id})",
        hint="write the ID of the export declaration to cancel; a transit declaration is not "
        "cancelled by an ExportCancellation",
    ),
)
