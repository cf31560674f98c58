"""DepartureDeclaration: a transit declaration submitted for departure.

Submitted by POST; only its parties (Principal, Consignor, Consignee) change in place, by
PATCH, which sends it back to processing. The API offers no idempotency for submissions, so
an unknown outcome is never re-sent blindly. Its service states: processing, then ready, or
invalid / error — in which customs never accepted it, so a corrected document is submitted
again as a new declaration that replaces it (both IDs recorded).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from customs_batch.client import CustomsClient
from customs_batch.kinds import OUTPUT_FIELDS, Address, Kind
from customs_batch.kinds._base import (
    JSON,
    Decision,
    KindModel,
    Outputs,
    Refreshed,
    Request,
    UnknownOutcome,
    number,
    outputs_of,
    refresh_each_declaration,
    repeat_unknown,
)
from customs_batch.kinds.actions import Action, Operation
from customs_batch.state.model import ResourceRecord
from customs_batch.vocabulary import FAILED_TRANSIT_STATUSES

OUTPUTS = OUTPUT_FIELDS[Kind.DEPARTURE_DECLARATION]
PARTY_FIELDS = frozenset({"Principal", "Consignor", "Consignee"})


def _submit(client: CustomsClient, request: Request) -> Outputs:
    return outputs_of(OUTPUTS, client.submit_departure(request.spec))


def _update_parties(client: CustomsClient, request: Request) -> Outputs:
    body = {k: v for k, v in request.spec.items() if k in PARTY_FIELDS}
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
        "declarations, so it is never re-sent blindly: look for it with `customs-batch get "
        f"transit`, then `customs-batch state adopt {unknown.address} ID` if it was created, "
        f"or `customs-batch state forget {unknown.address}` if it was not (it is then "
        "submitted again)",
    )


def read_transit(
    client: CustomsClient, address: Address, remote_id: str, spec: Mapping[str, JSON]
) -> Outputs:
    """What the service says of the transit declaration ``remote_id``."""
    declaration_id = number(remote_id, address)
    detail = client.get_transit(declaration_id)
    return outputs_of(OUTPUTS, detail, {"declarationId": declaration_id})


def refresh_transit(
    client: CustomsClient, records: Sequence[ResourceRecord]
) -> dict[str, Refreshed | None]:
    """The current status and errors of each recorded transit declaration."""

    def read(record: ResourceRecord, declaration_id: int) -> Refreshed:
        detail = client.get_transit(declaration_id)
        status = detail.raw.get("status")
        return Refreshed(
            service_state=status,
            errors=tuple(detail.raw.get("errors") or ()),
            outputs={**record.outputs, "status": status},
        )

    return refresh_each_declaration(records, read)


MODEL = KindModel(
    kind=Kind.DEPARTURE_DECLARATION,
    outputs=OUTPUTS,
    create=Operation.SUBMIT_DEPARTURE,
    send={
        Operation.SUBMIT_DEPARTURE: _submit,
        Operation.RESUBMIT_DEPARTURE: _submit,
        Operation.UPDATE_DEPARTURE_PARTIES: _update_parties,
    },
    update=Operation.UPDATE_DEPARTURE_PARTIES,
    mutable=PARTY_FIELDS,
    resubmit=Operation.RESUBMIT_DEPARTURE,
    after_unknown=_after_unknown,
    read_back=read_transit,
    refresh=refresh_transit,
    rejected_states=FAILED_TRANSIT_STATUSES,
    waits_after=frozenset(
        {
            Operation.SUBMIT_DEPARTURE,
            Operation.RESUBMIT_DEPARTURE,
            Operation.UPDATE_DEPARTURE_PARTIES,
        }
    ),
    has_status=True,
    immutable="{fields} of a submitted departure declaration cannot change: customs holds "
    "the declaration as sent, and only its parties can be updated. Do not give the document "
    "a new name: that would submit a second declaration and declare the same goods twice. "
    "Revert the change; if the declaration itself is wrong, have it cancelled or amended "
    "with customs first, then `customs-batch state rm {address}` and submit the corrected "
    "document",
)
