"""The plan for machines: one stable, versioned JSON object."""

from __future__ import annotations

import json
from typing import Any

from customs_batch.formats import VERSION_KEY
from customs_batch.planning.model import Action, PlannedChange
from customs_batch.reports._base import PlanView, register
from customs_batch.reports._words import guard_text, path_text, rate_per_second
from customs_batch.sensitive import masked

PLAN_JSON_VERSION = 1


def _values(change: PlannedChange) -> list[dict[str, Any]]:
    """Each value the change changes: ``path``, ``old``, ``new``. A new value that comes
    from another document's outcome not known yet (its path in ``knownAfterApply``) has
    ``new`` null and ``knownAfterApply`` true, as the text plan shows ``(known after
    apply)``: never the ``${ref:…}`` the manifest writes, which is not what apply sends."""
    waiting = {path_text(path) for path in change.unknown} if change.unknown else set()
    return [
        {"path": value.path, "old": value.old, "new": None, "knownAfterApply": True}
        if value.path in waiting
        else {"path": value.path, "old": value.old, "new": value.new}
        for value in change.values
    ]


@register("json")
def render_json(view: PlanView) -> str:
    """The plan as one stable JSON object (``formatVersion`` 1)."""
    plan, limit = view.plan, view.limit
    rate = rate_per_second(limit)
    body: dict[str, Any] = {
        VERSION_KEY: PLAN_JSON_VERSION,
        "environment": view.environment,
        "lineage": plan.lineage,
        "serial": plan.serial,
        "changes": [
            {
                "address": str(change.address),
                "action": change.action.value,
                "operation": change.operation.value,
                "reason": change.reason,
                "changed": list(change.changed),
                "values": _values(change),
                "knownAfterApply": [path_text(p) for p in change.unknown],
                "dependsOn": [str(a) for a in change.depends_on],
                "requests": change.requests,
                # True: the least it sends (its read first lists pages, as many as the
                # service's list has).
                "requestsAtLeast": change.requests_at_least,
                "inFlight": change.in_flight,
                # Sensitive values (a guarantee's access code) never: "(sensitive)".
                "spec": masked(change.address.kind, change.spec),
                **({"movedFrom": str(change.moved_from)} if change.moved_from else {}),
            }
            for change in plan.changes
        ],
        "largeChange": None
        if plan.large_change is None
        else {
            "stopsApply": True,
            "creates": plan.large_change.creates,
            "records": plan.large_change.recorded,
            "minRecords": plan.large_change.min_records,
            "maxCreateShare": plan.large_change.max_create_share,
            "message": guard_text(plan.large_change),
        },
        "summary": {
            **{action.value: count for action, count in plan.counts.items()},
            # As the text and markdown summaries: a request in flight may not have reached
            # the service, so it is counted in flight, not waiting there.
            Action.WAITING.value: plan.counts[Action.WAITING] - plan.in_flight,
            "inFlight": plan.in_flight,
            "requests": plan.requests,
            "requestsAtLeast": plan.requests_at_least,
            "rateLimit": str(limit),
            "seconds": round(plan.seconds_at(rate), 3),
            "blocked": len(plan.blocked),
        },
    }
    return json.dumps(body, indent=2, sort_keys=True) + "\n"
