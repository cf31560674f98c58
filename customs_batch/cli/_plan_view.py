"""How a plan is shown: text for people, a versioned JSON object for machines."""

from __future__ import annotations

import json
from typing import Any

import click

from customs_batch.client import RateLimit
from customs_batch.planning import Action, Plan, PlannedChange
from customs_batch.planning.model import UNKNOWN

PLAN_JSON_VERSION = 1

SYMBOLS = {
    Action.CREATE: ("+", "green"),
    Action.UPDATE: ("~", "yellow"),
    Action.RESUBMIT: ("+/-", "yellow"),
    Action.NO_CHANGE: ("=", None),
    Action.DROP: ("x", None),
    Action.REFUSED: ("!", "red"),
    Action.REJECTED: ("!", "red"),
    Action.ORPHANED: ("-", "magenta"),
    Action.NEEDS_DECISION: ("?", "red"),
}
WORDS = {
    Action.CREATE: "to create",
    Action.UPDATE: "to update",
    Action.RESUBMIT: "to resubmit",
    Action.NO_CHANGE: "unchanged",
    Action.DROP: "to drop",
    Action.REFUSED: "refused",
    Action.REJECTED: "rejected",
    Action.ORPHANED: "orphaned",
    Action.NEEDS_DECISION: "need a decision",
}


OCCASIONAL = frozenset({Action.RESUBMIT, Action.DROP, Action.REJECTED})
"""Actions the summary counts only when there are any: most plans have none."""


def rate_per_second(limit: RateLimit) -> float | None:
    """Requests per second of a limit, or None when unlimited."""
    return None if limit.requests is None else limit.requests / limit.period


def duration(seconds: float) -> str:
    """``2 h 5 min``, ``3 min 20 s``, ``4.2 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def summary_text(plan: Plan, limit: RateLimit) -> str:
    """``Plan: 2 to create, …`` and the requests with the time they take at the limit."""
    counts = plan.counts
    parts = [
        f"{counts[action]} {WORDS[action]}"
        for action in Action
        if counts[action] or action not in OCCASIONAL
    ]
    rate = rate_per_second(limit)
    timing = f", about {duration(plan.seconds_at(rate))} at {limit}" if rate else " (no rate limit)"
    return f"Plan: {', '.join(parts)}.\nRequests: {plan.requests}{timing}."


def show_plan(plan: Plan, *, environment: str, limit: RateLimit, verbose: bool = False) -> None:
    """Print the plan for people: one line per change (unchanged ones only counted unless
    ``verbose``), the reasons, the values known only after apply, then the summary."""
    state = f"state serial {plan.serial}" if plan.lineage else "no state yet"
    click.echo(f"Plan for environment {environment} ({state}), in the order it applies:")
    click.echo()
    shown = 0
    for change in plan.changes:
        if change.action is Action.NO_CHANGE and not verbose:
            continue
        shown += 1
        _show_change(change)
    if not shown:
        click.echo("  No changes: the service matches the manifests as far as the state knows.")
    click.echo()
    click.echo(summary_text(plan, limit))
    if plan.blocked:
        click.echo(
            f"{len(plan.blocked)} item(s) refused, rejected at the service or needing a "
            "decision: see the reasons above."
        )


def _show_change(change: PlannedChange) -> None:
    symbol, colour = SYMBOLS[change.action]
    word = change.action.value.replace("-", " ")
    head = click.style(f"  {symbol} {word:<15}", fg=colour, bold=True)
    click.echo(f"{head}{change.address}")
    if change.reason:
        click.echo(f"      {change.reason}")
    for value in change.values:
        click.echo(f"      {value.path}: {_shown(value.old)} -> {_shown(value.new)}")
    for path in change.unknown:
        click.echo(f"      {_path(path)} = {UNKNOWN}")


def _shown(value: Any) -> str:
    """A value as JSON, cut short when long (the JSON plan carries it whole)."""
    text = "(none)" if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _path(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def plan_json(plan: Plan, *, environment: str, limit: RateLimit) -> str:
    """The plan as one stable JSON object (``formatVersion`` 1)."""
    rate = rate_per_second(limit)
    body: dict[str, Any] = {
        "formatVersion": PLAN_JSON_VERSION,
        "environment": environment,
        "lineage": plan.lineage,
        "serial": plan.serial,
        "changes": [
            {
                "address": str(change.address),
                "action": change.action.value,
                "operation": change.operation.value,
                "reason": change.reason,
                "changed": list(change.changed),
                "values": [
                    {"path": value.path, "old": value.old, "new": value.new}
                    for value in change.values
                ],
                "knownAfterApply": [_path(p) for p in change.unknown],
                "dependsOn": [str(a) for a in change.depends_on],
                "requests": change.requests,
                "spec": change.spec,
            }
            for change in plan.changes
        ],
        "summary": {
            **{action.value: count for action, count in plan.counts.items()},
            "requests": plan.requests,
            "rateLimit": str(limit),
            "seconds": round(plan.seconds_at(rate), 3),
            "blocked": len(plan.blocked),
        },
    }
    return json.dumps(body, indent=2, sort_keys=True)
