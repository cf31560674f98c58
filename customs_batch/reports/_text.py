"""The plan for people: one line per change, its reason and values, then the summary."""

from __future__ import annotations

from collections.abc import Iterator

from customs_batch.escaping import printable, printable_lines
from customs_batch.planning.model import UNKNOWN, Action, PlannedChange
from customs_batch.reports._base import PlanView, in_pieces, register
from customs_batch.reports._words import (
    SYMBOLS,
    changed_values,
    declared,
    guard_text,
    only_unknown,
    path_text,
    shown_at,
    summary_text,
)

_ANSI = {"green": 32, "yellow": 33, "red": 31, "magenta": 35, "cyan": 36}


@register("text")
def render_text(view: PlanView) -> str:
    """The plan in the order it applies (unchanged documents only counted unless
    ``show_unchanged``), the reasons, the values known only after apply, the summary."""
    return "".join(text_pieces(view))


@in_pieces("text")
def text_pieces(view: PlanView) -> Iterator[str]:
    """:func:`render_text` a change at a time, each piece whole lines."""
    plan = view.plan
    state = f"state serial {plan.serial}" if plan.lineage else "no state yet"
    yield f"Plan for environment {view.environment} ({state}), in the order it applies:\n\n"
    shown_any = False
    for change in plan.changes:
        if change.action is Action.NO_CHANGE and not view.show_unchanged:
            continue
        shown_any = True
        yield "\n".join(_change(change, view.colour)) + "\n"
    lines = []
    if not shown_any:
        lines.append("  No changes: the service matches the manifests as far as the state knows.")
    lines += ["", summary_text(plan, view.limit)]
    if plan.large_change is not None:
        lines.append(f"Large change: {guard_text(plan.large_change)}.")
    if plan.blocked:
        lines.append(
            f"{len(plan.blocked)} item(s) refused, rejected at the service or needing a "
            "decision: see the reasons above."
        )
    yield "\n".join(lines) + "\n"


def _change(change: PlannedChange, colour: bool) -> list[str]:
    symbol, fg = SYMBOLS[change.action]
    word = change.action.value.replace("-", " ")
    head = f"  {symbol} {word:<15}"
    if colour:
        code = f"\x1b[{_ANSI[fg]}m" if fg else ""
        head = f"{code}\x1b[1m{head}\x1b[0m"
    lines = [f"{head}{change.address}"]
    # A reason may quote the service or a file name: its later lines stay indented.
    if change.reason:
        lines.append(f"      {printable_lines(change.reason).replace(chr(10), chr(10) + '    ')}")
    for path, old, new in changed_values(change):
        lines.append(f"      {printable(path)}: {printable(old)} -> {printable(new)}")
    waiting = {path_text(path) for path in change.unknown}
    if change.action is Action.CREATE:
        # What will be declared, value by value: a reviewer of a bulk load reads this.
        for where, value in declared(change.spec):
            if where not in waiting:
                lines.append(f"      {printable(where)} = {printable(shown_at(where, value))}")
    for path_shown in only_unknown(change):
        lines.append(f"      {path_shown} = {UNKNOWN}")
    return lines
