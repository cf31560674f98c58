"""Plans built change by change, for the report format tests."""

from __future__ import annotations

from typing import Any

from customs_batch.client import RateLimit
from customs_batch.kinds import Address, Kind
from customs_batch.planning.graph import Edge, EdgeReason
from customs_batch.planning.model import Action, FieldChange, Operation, Plan, PlannedChange
from customs_batch.reports import PlanView

LIMIT = RateLimit(100, 60.0)


def address(kind: Kind, name: str) -> Address:
    return Address(kind, name)


def change(
    kind: Kind,
    name: str,
    action: Action,
    *,
    reason: str = "",
    values: tuple[tuple[str, Any, Any], ...] = (),
    depends_on: tuple[Address, ...] = (),
    spec: dict[str, Any] | None = None,
    unknown: tuple[tuple[str | int, ...], ...] = (),
) -> PlannedChange:
    operation = {
        Action.CREATE: Operation.CREATE_MOVEMENT,
        Action.UPDATE: Operation.UPDATE_TEMPLATE_GROUP,
        Action.DROP: Operation.FORGET,
    }.get(action, Operation.NONE)
    return PlannedChange(
        address=Address(kind, name),
        action=action,
        operation=operation,
        reason=reason,
        spec=spec or {},
        unknown=unknown,
        depends_on=depends_on,
        values=tuple(FieldChange(path, old, new) for path, old, new in values),
    )


def view(
    *changes: PlannedChange,
    edges: dict[Address, tuple[Edge, ...]] | None = None,
    show_unchanged: bool = False,
) -> PlanView:
    plan = Plan(changes=tuple(changes), lineage="lin-1", serial=4)
    return PlanView(plan, "sandbox", LIMIT, show_unchanged=show_unchanged, edges=edges)


def big_view(documents: int = 10_000) -> PlanView:
    """A plan of ``documents`` movements on 40 shipments: most to create, some updates with
    values, a few refused and a few needing a decision, chained by shipment and HAWB."""
    changes: list[PlannedChange] = []
    edges: dict[Address, tuple[Edge, ...]] = {}
    last: dict[str, Address] = {}
    for index in range(documents):
        shipment = f"shp_{index % 40:04d}"
        spec = {"shipmentId": shipment, "hawbId": f"hawb_{index % 40}", "quantity": index}
        name = f"mov-{index:05d}-a-rather-long-name-as-real-batches-have"
        if index % 100 == 7:
            item = change(
                Kind.MOVEMENT,
                name,
                Action.REFUSED,
                reason="a movement is immutable: the service cannot change it; to correct it, "
                "record a correcting movement (`customs-batch state rm` does not undo it)",
                values=(("quantity", index, index + 1), ("grossWeightKg", 1.5, 2.5)),
                spec=spec,
            )
        elif index % 250 == 3:
            item = change(
                Kind.MOVEMENT,
                name,
                Action.NEEDS_DECISION,
                reason="the outcome of the last request is unknown and its key has expired",
                spec=spec,
            )
        elif index % 10 == 1:
            item = change(
                Kind.MOVEMENT,
                name,
                Action.UPDATE,
                values=(("quantity", index, index * 2), ("partyId", "rpty_a", "rpty_b")),
                spec=spec,
            )
        else:
            item = change(Kind.MOVEMENT, name, Action.CREATE, spec=spec)
        previous = last.get(shipment)
        edges[item.address] = (Edge(previous, (EdgeReason.SAME_LANE,)),) if previous else ()
        last[shipment] = item.address
        changes.append(item)
    return view(*changes, edges=edges)
