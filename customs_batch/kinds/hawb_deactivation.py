"""HawbDeactivation: a house air waybill deactivated by DELETE (safe to repeat)."""

from __future__ import annotations

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
    Request,
    identity_of,
    outputs_of,
    repeat_unknown,
)

if TYPE_CHECKING:
    from customs_batch.client import CustomsClient

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
    create=Operation.DEACTIVATE_HAWB,
    send={Operation.DEACTIVATE_HAWB: _deactivate},
    after_unknown=repeat_unknown(Operation.DEACTIVATE_HAWB, None),
    read_back=_read_back,
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
