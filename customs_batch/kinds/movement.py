"""Movement: an RTO movement of goods in a shipment, created by POST with an Idempotency-Key.

Immutable once created, and the API can neither read one back by ID nor delete it. After an
unknown outcome it is re-sent with its recorded key while the service honours it (24 h): the
service replays the first answer instead of creating a second movement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict, cast

from customs_batch.errors import CustomsBatchError
from customs_batch.jsontypes import JSONObject
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.actions import Action, Operation
from customs_batch.kinds.checks import RuleSet
from customs_batch.kinds.lanes import movement_lane
from customs_batch.kinds.model import (
    Decision,
    Example,
    Found,
    KindModel,
    Outputs,
    Request,
    ServiceId,
    UnknownOutcome,
    identity_of,
    outputs_of,
    prefixed_id,
)

if TYPE_CHECKING:
    from customs_batch.client import CustomsClient
    from customs_batch.state.model import ResourceRecord, Scalar

OUTPUT_TYPES = {"movementId": "string", "shipmentId": "string", "status": "string"}
"""What its outcome records (the fields ``${ref:Movement/name.field}`` may name), and
their JSON types."""
OUTPUTS = frozenset(OUTPUT_TYPES)


class CustomsDeclaration(TypedDict):
    """The customs declaration covering a movement."""

    source: Literal["INTERNAL", "EXTERNAL", "RTO_LICENSE", "DECO", "ENTREPOT"]
    declarationId: NotRequired[str]
    documentType: NotRequired[str]
    declarationType: NotRequired[str]
    declarationNumber: NotRequired[str]
    """The MRN or other customs reference of an external declaration."""


class MovementSpec(TypedDict):
    """The spec of a Movement, as ``schemas/movement.schema.json`` describes it: the body of
    its creation and the shipment it is created on (``tests/kinds/test_specs.py`` holds the
    two together)."""

    shipmentId: str
    action: Literal["VAH", "VAB", "ISL", "USL", "ISC", "USC"]
    quantity: int
    grossWeightKg: float
    customsSupervision: Literal["Y", "N"]
    goodsHandlingCode: Literal["N", "A", "H", "B", "G", "C"]
    hawbId: NotRequired[str]
    partyId: NotRequired[str]
    customsDeclaration: NotRequired[CustomsDeclaration]


def spec_of(spec: JSONObject) -> MovementSpec:
    """A movement's spec as its type. Only for a spec its schema has validated (a document
    being planned or applied, the record of one sent): the check is not made again."""
    return cast(MovementSpec, spec)


def _create(client: CustomsClient, request: Request) -> Outputs:
    if request.idempotency_key is None:
        raise ValueError("a movement is never sent without its recorded Idempotency-Key")
    spec = spec_of(request.spec)
    body = {k: v for k, v in spec.items() if k != "shipmentId"}
    movement = client.create_movement(
        str(spec["shipmentId"]), body, idempotency_key=request.idempotency_key
    )
    return outputs_of(OUTPUTS, movement)


def _after_unknown(unknown: UnknownOutcome) -> Decision:
    address = unknown.address
    adopt = (
        f"check the shipment's movements, then `customs-batch state adopt {address} "
        f"MOVEMENT_ID` or `customs-batch state forget {address}`"
    )
    if unknown.edited:
        # The key is bound to the body first sent: with another body the service refuses
        # it (422), and a new key would create a second movement if the first was made.
        return Decision(
            Action.NEEDS_DECISION,
            Operation.NONE,
            "the outcome of the last attempt is unknown and the document changed since "
            f"(changed: {', '.join(unknown.edited)}), so it cannot be re-sent with its "
            f"Idempotency-Key: revert the change to re-send it, or {adopt}",
        )
    if unknown.key_valid:
        return Decision(
            Action.CREATE,
            Operation.RESEND_MOVEMENT,
            "the outcome of the last attempt is unknown; it is re-sent with its recorded "
            "Idempotency-Key, so the service replays it instead of creating a second one",
            idempotency_key=unknown.record.idempotency_key,
        )
    return Decision(
        Action.NEEDS_DECISION,
        Operation.NONE,
        f"the outcome of the last attempt is unknown and its Idempotency-Key has expired (24 h): {adopt}",
    )


def _read_back(client: CustomsClient, address: Address, remote_id: str, spec: JSONObject) -> Found:
    # The API cannot read a movement back by ID: its ID is taken as given (``typed_id``).
    if not remote_id.startswith("mov_"):
        raise CustomsBatchError(f"{remote_id!r} is not a movement ID (mov_…)")
    return Found(
        outputs={"movementId": remote_id, "shipmentId": spec_of(spec).get("shipmentId")},
        unread="the API cannot read a movement back by ID",
    )


def _service_ids(record: ResourceRecord) -> dict[ServiceId, Scalar]:
    """The movement's ID, and the MRN (or other customs reference) of the external
    declaration it was sent under, as its request gave it."""
    ids: dict[ServiceId, Scalar] = {}
    if record.outputs.get("movementId"):
        ids[ServiceId.MOVEMENT] = record.outputs["movementId"]
    declaration = spec_of(record.spec).get("customsDeclaration")
    if isinstance(declaration, Mapping) and declaration.get("declarationNumber"):
        ids[ServiceId.MRN] = str(declaration["declarationNumber"])
    return ids


EXAMPLE = Example(
    "movement",
    """\
apiVersion: customs-batch/v1
kind: Movement
metadata:
  name: my-arrival
spec:
  shipmentId: shp_9Xc4Rt
  hawbId: hawb_b1
  action: VAH
  quantity: 6
  grossWeightKg: 60.0
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: rpty_p3
  customsDeclaration:
    source: EXTERNAL
    documentType: X
    declarationType: IM
    declarationNumber: 24NLR1234567890120
""",
)
"""What ``customs-batch init`` writes: ``manifests/movement.yaml``."""


MODEL = KindModel(
    kind=Kind.MOVEMENT,
    spec_type=MovementSpec,
    schema="movement",
    example=EXAMPLE,
    outputs=OUTPUTS,
    output_types=OUTPUT_TYPES,
    id_field="movementId",
    typed_id=prefixed_id("mov_", "a movement ID", "mov_00000001", opaque=True),
    service_ids=_service_ids,
    create=Operation.CREATE_MOVEMENT,
    send={Operation.CREATE_MOVEMENT: _create, Operation.RESEND_MOVEMENT: _create},
    after_unknown=_after_unknown,
    read_back=_read_back,
    idempotency_keys=True,
    lane=movement_lane,
    # With the lane: the first arrival of a HAWB, the second, and so on.
    identity=identity_of("shipmentId", "hawbId", "action"),
    corrected_by_a_new_one=True,
    rules=(RuleSet.MOVEMENT,),
    immutable="a movement is immutable once created (changed: {fields}), and the API cannot "
    "delete it. Revert the change. Only if the movement itself was wrong: record the "
    "correcting movement as a new document, remove this one from the manifests and "
    "`customs-batch state rm {address}` to stop tracking it (it stays at the service)",
    lane_fields=("shipmentId", "hawbId"),
    lane_left_out="without a hawbId a movement is about the whole shipment (its master AWB), "
    "not about a HAWB",
    duplicate_meant="if both movements are meant, ignore this warning",
)
