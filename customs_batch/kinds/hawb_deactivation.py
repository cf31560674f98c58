"""HawbDeactivation: a house air waybill deactivated by DELETE (safe to repeat).

The HAWB list read with ``includeInactive=true`` holds deactivated HAWBs too: ``refresh``
reads each recorded one there, a listing per shipment. Its state is the HAWB's ``isActive``
(``inactive``, as deactivated; ``active`` again: the deactivation no longer stands, and plan
sends it again); a HAWB the list no longer holds is noted not found, as any object. The HAWB
is read the same way before its DELETE, and what no call changes of it (its number, packages
and weight) is kept with the record: a HAWB of other ones at the ID later (a sandbox reset
gave it again) is another HAWB, noted so and held as needing a decision, never deactivated."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypedDict, cast

from customs_batch.errors import CustomsBatchError
from customs_batch.jsontypes import JSONObject
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.actions import Operation
from customs_batch.kinds.checks import LaneEnd
from customs_batch.kinds.model import (
    Example,
    Found,
    KindModel,
    Outputs,
    Refreshed,
    Request,
    identity_of,
    outputs_of,
    prefixed_id,
    repeat_unknown,
)
from customs_batch.vocabulary import StatusWords

if TYPE_CHECKING:
    from customs_batch.client import CustomsClient
    from customs_batch.state.model import ResourceRecord

OUTPUT_TYPES = {"hawbId": "string", "shipmentId": "string", "isActive": "boolean"}
"""What its outcome records (the fields ``${ref:HawbDeactivation/name.field}`` may name), and
their JSON types."""
OUTPUTS = frozenset(OUTPUT_TYPES)


class HawbDeactivationSpec(TypedDict):
    """The spec of a HawbDeactivation, as ``schemas/hawb-deactivation.schema.json``
    describes it (``tests/kinds/test_specs.py`` holds the two together)."""

    shipmentId: str
    hawbId: str


def spec_of(spec: JSONObject) -> HawbDeactivationSpec:
    """A HAWB deactivation's spec as its type. Only for a spec its schema has validated (a
    document being planned or applied, the record of one sent): the check is not made
    again."""
    return cast(HawbDeactivationSpec, spec)


def _deactivate(client: CustomsClient, request: Request) -> Outputs:
    spec = spec_of(request.spec)
    hawb = client.deactivate_hawb(str(spec["shipmentId"]), str(spec["hawbId"]))
    return outputs_of(OUTPUTS, hawb)


def _read_back(client: CustomsClient, address: Address, remote_id: str, spec: JSONObject) -> Found:
    """The HAWB ``remote_id`` on the document's shipment, inactive ones included."""
    shipment = str(spec_of(spec).get("shipmentId"))
    for hawb in client.iter_hawbs(shipment, include_inactive=True):
        if hawb.raw.get("hawbId") == remote_id:
            active = hawb.raw.get("isActive")
            return Found(
                outputs=outputs_of(OUTPUTS, hawb),
                remote_spec={"shipmentId": hawb.raw.get("shipmentId"), "hawbId": remote_id},
                not_done=f"HAWB {remote_id} is still active: it was never deactivated, and "
                "`customs-batch apply` deactivates it"
                if active
                else "",
            )
    raise CustomsBatchError(
        f"shipment {shipment} has no HAWB {remote_id}",
        hint=f"`customs-batch get hawbs {shipment} --include-inactive` lists them",
    )


ACTIVE = "active"
INACTIVE = "inactive"
"""The deactivation's state at the service: its HAWB's ``isActive``, in words."""


def _state(active: object) -> str | None:
    return ACTIVE if active is True else INACTIVE if active is False else None


FIXED = ("houseAirWaybillNumber", "packageCount", "grossWeightKg")
"""The fields of a HAWB that no call of the API changes: another value there is another HAWB
at the ID (given again after a sandbox reset, say), which a deactivation is never sent to."""


def _refresh(
    client: CustomsClient, records: Sequence[ResourceRecord]
) -> dict[str, Refreshed | None]:
    """Each recorded HAWB as the list of its shipment holds it, inactive ones included (one
    listing per shipment, read until each is found); None for one the list no longer
    holds."""
    from customs_batch.client import NotFoundError

    by_shipment: dict[str, list[tuple[ResourceRecord, str]]] = {}
    for record in records:
        spec = spec_of(record.spec)
        hawb_id = record.outputs.get("hawbId") or spec.get("hawbId")
        shipment = record.outputs.get("shipmentId") or spec.get("shipmentId")
        if isinstance(hawb_id, str) and hawb_id and isinstance(shipment, str) and shipment:
            by_shipment.setdefault(shipment, []).append((record, hawb_id))
    found: dict[str, Refreshed | None] = {}
    for shipment, wanted in by_shipment.items():
        ids = {hawb_id for _, hawb_id in wanted}
        held: dict[str, tuple[Outputs, JSONObject, str | None]] = {}
        try:
            for hawb in client.iter_hawbs(shipment, include_inactive=True):
                listed = hawb.raw.get("hawbId")
                if isinstance(listed, str) and listed in ids:
                    kept = {k: hawb.raw[k] for k in FIXED if hawb.raw.get(k) not in (None, "")}
                    made = hawb.raw.get("createdAt")
                    created = made if isinstance(made, str) and made else None
                    held[listed] = (outputs_of(OUTPUTS, hawb), kept, created)
                    if len(held) == len(ids):
                        break  # every one found: the pages after it are not asked for
        except NotFoundError:  # the shipment itself is gone: so are its HAWBs
            held = {}
        for record, hawb_id in wanted:
            listed_so = held.get(hawb_id)
            if listed_so is None:
                found[record.address] = None
                continue
            outputs, fixed, created = listed_so
            found[record.address] = Refreshed(
                service_state=_state(outputs.get("isActive")),
                outputs=outputs,
                remote_spec=fixed,
                created_at=created,
            )
    return found


def service_words(record: ResourceRecord) -> str | None:
    """The deactivation's state: as refreshed, else from the answer's ``isActive``."""
    return _state(record.outputs.get("isActive")) or record.remote_status


EXAMPLE = Example(
    "hawb-deactivation",
    """\
apiVersion: customs-batch/v1
kind: HawbDeactivation
metadata:
  name: my-hawb-a2
spec:
  shipmentId: shp_7Hk2Lm
  hawbId: hawb_a2
""",
)
"""What ``customs-batch init`` writes: ``manifests/hawb-deactivation.yaml``."""


MODEL = KindModel(
    kind=Kind.HAWB_DEACTIVATION,
    spec_type=HawbDeactivationSpec,
    schema="hawb-deactivation",
    example=EXAMPLE,
    outputs=OUTPUTS,
    output_types=OUTPUT_TYPES,
    id_field="hawbId",
    typed_id=prefixed_id("hawb_", "a HAWB ID", "hawb_a1"),
    create=Operation.DEACTIVATE_HAWB,
    send={Operation.DEACTIVATE_HAWB: _deactivate},
    after_unknown=repeat_unknown(Operation.DEACTIVATE_HAWB, None),
    read_back=_read_back,
    refresh=_refresh,
    # The HAWB is read before it is deactivated: what it is then (its number, packages and
    # weight) is kept with the record (``target_seen``), so that a deactivation sent again
    # (active again at the service) never goes to another HAWB given its ID.
    reads_first=frozenset({Operation.DEACTIVATE_HAWB}),
    # The API reads no single HAWB: that read lists the shipment's HAWBs, 100 a request.
    reads_a_list=frozenset({Operation.DEACTIVATE_HAWB}),
    sent_again="deactivate the HAWB a second time",
    names_its_object="the document's `shipmentId` and `hawbId`",
    service_words=service_words,
    # Active again (not through this API, which cannot reactivate one): the deactivation
    # no longer stands; plan sends it again, and `state rm --gone` may remove its record.
    undone_states=StatusWords({ACTIVE}),
    ended_states=StatusWords({ACTIVE}),
    identity=identity_of("shipmentId", "hawbId"),
    immutable="a HAWB deactivation cannot be changed once done (changed: {fields}): the API "
    "cannot reactivate a HAWB. Revert the change",
    ends_lanes=LaneEnd(
        of=Kind.MOVEMENT,
        fields=("shipmentId", "hawbId"),
        rule="project.hawb-deactivated-with-movements",
        message="HAWB {1} of {0} is deactivated in the same batch that moves it with "
        "{first}{more}: the order matters",
        more=" (and {count} more movements)",
        hint="once a movement on the HAWB is sent the service refuses the deactivation, and a "
        "deactivated HAWB is not moved: apply them in separate batches, or make the order "
        "explicit with dependsOn",
    ),
)
