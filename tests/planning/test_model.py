from __future__ import annotations

from customs_batch.kinds import Address, Kind
from customs_batch.kinds.registry import KINDS
from customs_batch.planning.model import Action, Operation, Plan, PlannedChange


def _plan(pairs: list[tuple[Action, Operation]], kind: Kind = Kind.MOVEMENT) -> Plan:
    changes = tuple(
        PlannedChange(Address(kind, f"m{i}"), action, operation)
        for i, (action, operation) in enumerate(pairs)
    )
    return Plan(changes, lineage="l", serial=1)


def test_a_plan_counts_the_requests_of_every_change_as_its_kind_does() -> None:
    for kind, model in KINDS.items():
        pairs = [(Action.CREATE, operation) for operation in Operation for _ in range(3)]
        plan = _plan(pairs, kind)
        assert plan.requests == 3 * sum(model.requests(operation) for operation in Operation)
        assert plan.requests == sum(change.requests for change in plan.changes)
    # The read before a party update's PATCH is counted (its kind reads first).
    update = _plan([(Action.UPDATE, Operation.UPDATE_TRANSIT_PARTIES)], Kind.TRANSIT_PARTY_UPDATE)
    assert update.requests == 2
    assert _plan([]).requests == 0


def test_a_plan_is_blocked_by_exactly_the_changes_whose_action_blocks() -> None:
    plan = _plan([(action, Operation.NONE) for action in Action for _ in range(2)])
    assert [change.action for change in plan.blocked] == [
        action for action in Action for _ in range(2) if action.blocks
    ]
    assert {change.action for change in plan.blocked} == {
        Action.REFUSED,
        Action.REJECTED,
        Action.NEEDS_DECISION,
    }
