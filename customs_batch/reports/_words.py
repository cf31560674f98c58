"""The words, symbols and figures every plan format shares."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from customs_batch.client import RateLimit
from customs_batch.findings import JsonPath
from customs_batch.kinds.model import INVISIBLE
from customs_batch.planning.model import UNKNOWN, Action, LargeChange, Plan, PlannedChange
from customs_batch.sensitive import SENSITIVE, is_sensitive

SYMBOLS = {
    Action.CREATE: ("+", "green"),
    Action.UPDATE: ("~", "yellow"),
    Action.RESUBMIT: ("+/-", "yellow"),
    Action.NO_CHANGE: ("=", None),
    Action.MOVED: (">", "cyan"),
    Action.DROP: ("x", None),
    Action.REFUSED: ("!", "red"),
    Action.REJECTED: ("!", "red"),
    Action.ORPHANED: ("-", "magenta"),
    Action.NEEDS_DECISION: ("?", "red"),
    Action.WAITING: ("*", "cyan"),
}
WORDS = {
    Action.CREATE: "to create",
    Action.UPDATE: "to update",
    Action.RESUBMIT: "to resubmit",
    Action.NO_CHANGE: "unchanged",
    Action.MOVED: "moved",
    Action.DROP: "to drop",
    Action.REFUSED: "refused",
    Action.REJECTED: "rejected",
    Action.ORPHANED: "orphaned",
    Action.NEEDS_DECISION: "need a decision",
    Action.WAITING: "waiting at the service",
}
# What a reviewer must see first: what stops the pipeline, then changes to what exists (with
# their old and new values), then what is new, then the rest.
REVIEW_ORDER = (
    Action.REFUSED,
    Action.REJECTED,
    Action.NEEDS_DECISION,
    Action.UPDATE,
    Action.RESUBMIT,
    Action.MOVED,
    Action.DROP,
    Action.WAITING,
    Action.ORPHANED,
    Action.CREATE,
    Action.NO_CHANGE,
)


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


def counted(plan: Plan) -> str:
    """The plan's requests: ``9``, or ``at least 9`` when a read first lists pages, as many
    as the service's list has (:attr:`Plan.requests_at_least`)."""
    return f"at least {plan.requests}" if plan.requests_at_least else str(plan.requests)


def timing(plan: Plan, limit: RateLimit) -> str:
    """``about 5.4 s at 100/minute`` (``at least 5.4 s`` with requests counted at least),
    or ``no rate limit``."""
    rate = rate_per_second(limit)
    if not rate:
        return "no rate limit"
    about = "at least" if plan.requests_at_least else "about"
    return f"{about} {duration(plan.seconds_at(rate))} at {limit}"


OCCASIONAL = frozenset(
    {Action.RESUBMIT, Action.MOVED, Action.DROP, Action.REJECTED, Action.WAITING}
)
"""Actions the summary counts only when there are any: most plans have none."""


IN_FLIGHT = "in flight"
"""What the summary calls a ``waiting`` change that is a request of the run holding the
state's lock, not answered yet (:attr:`PlannedChange.in_flight`): it may not even have
reached the service."""


def tally(plan: Plan, order: Iterable[Action], *, every: bool = False) -> list[tuple[str, int]]:
    """The summary's words and counts in ``order``: those of the actions present (with
    ``every``, also the actions not in :data:`OCCASIONAL` when there are none), the
    ``waiting`` changes parted into those waiting at the service and those in flight."""
    counts = plan.counts
    parts: list[tuple[str, int]] = []
    for action in order:
        count = counts[action]
        if action is Action.WAITING and count:
            flying = plan.in_flight
            if count > flying:
                parts.append((WORDS[action], count - flying))
            if flying:
                parts.append((IN_FLIGHT, flying))
        elif count or (every and action not in OCCASIONAL):
            parts.append((WORDS[action], count))
    return parts


def summary_text(plan: Plan, limit: RateLimit) -> str:
    """``Plan: 2 to create, …`` and the requests with the time they take at the limit."""
    parts = [f"{count} {word}" for word, count in tally(plan, Action, every=True)]
    rate = rate_per_second(limit)
    figures = f", {timing(plan, limit)}" if rate else " (no rate limit)"
    return f"Plan: {', '.join(parts)}.\nRequests: {counted(plan)}{figures}."


def shown(value: Any, width: int = 80) -> str:
    """A value as JSON, cut short when long (the JSON plan carries it whole). A character
    that prints as nothing (a zero-width space) is written as its escape (``\\u200b``): a
    change of that character alone would read ``"A-1" -> "A-1"``."""
    text = "(none)" if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)
    if not text.isascii():
        text = INVISIBLE.sub(_escape, text)
    return text if len(text) <= width else text[: width - 3] + "..."


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def sensitive(path: str) -> bool:
    """Whether the value at ``path`` (``DeclarationGuarantees[0].accessCode``) is secret: a
    field the schemas mark ``x-sensitive``. A plan never prints one: it goes into
    pull-request comments and job summaries."""
    return is_sensitive(path)


def shown_at(path: str, value: Any, width: int = 80) -> str:
    """:func:`shown`, but ``(sensitive)`` for a secret field."""
    return SENSITIVE if value is not None and sensitive(path) else shown(value, width)


def declared(spec: Any, path: str = "") -> list[tuple[str, Any]]:
    """Every value a request declares, by its path (``DeclarationItems[0].netPrice``): what a
    reviewer reads of a creation."""
    found: list[tuple[str, Any]] = []
    if isinstance(spec, dict) and spec:
        for name, value in spec.items():
            found += declared(value, f"{path}.{name}" if path else str(name))
    elif isinstance(spec, list) and spec:
        for index, value in enumerate(spec):
            found += declared(value, f"{path}[{index}]")
    elif path:
        found.append((path, spec))
    return found


def changed_values(change: PlannedChange, width: int = 80) -> list[tuple[str, str, str]]:
    """Each value a change changes as (path, old, new), shown; a new value that comes from
    another document's outcome (its ``${ref:…}`` text, in ``change.unknown``) shows as
    ``(known after apply)``, never as the reference written in the manifest."""
    waiting = {path_text(path) for path in change.unknown} if change.unknown else set()
    return [
        (
            value.path,
            shown_at(value.path, value.old, width),
            UNKNOWN if value.path in waiting else shown_at(value.path, value.new, width),
        )
        for value in change.values
    ]


def only_unknown(change: PlannedChange) -> list[str]:
    """The paths of values known only after apply that :func:`changed_values` does not
    already show as the new value of a change."""
    if not change.unknown:
        return []
    changed = {value.path for value in change.values}
    return [text for text in map(path_text, change.unknown) if text not in changed]


def path_text(path: JsonPath) -> str:
    """``Consignee.name``, ``DeclarationItems[0].grossMass``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def guard_text(large: LargeChange) -> str:
    """What the guard on the size of a change says of a plan it would stop."""
    return (
        f"apply stops before sending anything: {large.describe()}. "
        "`customs-batch apply --allow-large-change` applies it if it is meant"
    )
