"""The plan as GitHub-flavoured markdown, for a pull-request comment or a job summary.

What blocks the plan comes first and open; long sections fold into ``<details>``. GitHub
refuses a comment over 65,536 characters, so past ``max_characters`` the changes are shown by
address only, then counted, and a note says what was left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from customs_batch.escaping import markdown_text, printable
from customs_batch.planning.model import UNKNOWN, Action, PlannedChange
from customs_batch.reports._base import PlanView, register
from customs_batch.reports._mermaid import mermaid
from customs_batch.reports._picture import MAX_NODES, picture
from customs_batch.reports._words import (
    IN_FLIGHT,
    REVIEW_ORDER,
    WORDS,
    changed_values,
    counted,
    declared,
    guard_text,
    only_unknown,
    path_text,
    shown_at,
    tally,
    timing,
)

GITHUB_COMMENT_LIMIT = 65_536
# Room left under GitHub's limit for whatever a workflow puts around the plan.
MAX_CHARACTERS = 60_000
# Sections with more changes than this are folded.
FOLD_AFTER = 10
# A picture longer than this stays out of the markdown (GitHub draws up to 50,000).
MERMAID_MAX = 15_000
MARKER = "<!-- customs-batch plan -->"

_HEADINGS = {
    Action.REFUSED: "Refused",
    Action.REJECTED: "Rejected at the service",
    Action.NEEDS_DECISION: "Needs a decision",
    Action.CREATE: "To create",
    Action.UPDATE: "To update",
    Action.RESUBMIT: "To resubmit",
    Action.MOVED: "Moved (renamed; nothing is sent)",
    Action.DROP: "To drop",
    Action.ORPHANED: "Orphaned",
    Action.NO_CHANGE: "Unchanged",
    Action.WAITING: "Waiting at the service",
}
_IN_FLIGHT_HEADING = "In flight (sent by the run that holds the state's lock, not answered yet)"


@register("markdown")
def render_markdown(view: PlanView) -> str:
    """The plan as markdown that fits in one GitHub comment."""
    return markdown(view)


def markdown(
    view: PlanView, *, max_characters: int = MAX_CHARACTERS, max_nodes: int = MAX_NODES
) -> str:
    """The plan as markdown of at most ``max_characters`` characters."""
    head = _head(view, max_characters, max_nodes)
    sections: list[_Section] = []
    for action in REVIEW_ORDER:
        if not view.plan.counts[action] or (action is Action.NO_CHANGE and not view.show_unchanged):
            continue
        changes = [c for c in view.plan.changes if c.action is action]
        if action is Action.WAITING:  # waiting at the service, then in flight
            sections += [
                _Section(action, part, in_flight=flying)
                for flying in (False, True)
                if (part := [c for c in changes if c.in_flight is flying])
            ]
        else:
            sections.append(_Section(action, changes))
    return _assemble(head, sections, max_characters)


@dataclass
class _Section:
    action: Action
    changes: list[PlannedChange]
    in_flight: bool = False
    """Changes ``waiting`` for the run that holds the state's lock, not at the service."""

    @property
    def opening(self) -> str:
        title = _IN_FLIGHT_HEADING if self.in_flight else _HEADINGS[self.action]
        heading = f"#### {title} ({len(self.changes)})\n\n"
        if self.folded:
            word = IN_FLIGHT if self.in_flight else WORDS[self.action]
            return f"{heading}<details><summary>{len(self.changes)} {word}</summary>\n\n"
        return heading

    @property
    def closing(self) -> str:
        return "\n</details>\n\n" if self.folded else "\n"

    @property
    def folded(self) -> bool:
        return not self.action.blocks and len(self.changes) > FOLD_AFTER


def _head(view: PlanView, max_characters: int, max_nodes: int) -> str:
    plan = view.plan
    lines = [MARKER, f"### customs-batch plan for `{view.environment}`", ""]
    if plan.large_change is not None:
        lines += [f"> **Large change:** {_prose(guard_text(plan.large_change))}.", ""]
    if plan.blocked:
        lines += [
            f"> **{len(plan.blocked)} blocking:** refused, rejected at the service or needing "
            "a decision. `plan` fails until they are resolved; the reasons are below.",
            "",
        ]
    elif not plan.has_changes:
        lines += ["No changes: the service matches the manifests as far as the state knows.", ""]
    lines += ["| action | documents |", "|---|--:|"]
    lines += [f"| {word} | {count} |" for word, count in tally(plan, REVIEW_ORDER)]
    lines += [
        f"| **requests** | **{counted(plan)}** |",
        f"| **time** | {timing(plan, view.limit)} |",
        "",
    ]
    state = f"state serial {plan.serial}" if plan.lineage else "no state yet"
    lines += [f"Against {state}.", ""]
    drawing = picture(view, max_nodes)
    chart = mermaid(drawing)
    changing = any(change.action is not Action.NO_CHANGE for change in plan.changes)
    if changing and len(chart) <= min(MERMAID_MAX, max_characters // 4):
        grouped = f", grouped by {drawing.grouped_by}" if drawing.grouped_by else ""
        lines += [
            f"<details><summary>Dependency graph ({drawing.documents} documents{grouped})"
            "</summary>",
            "",
            "```mermaid",
            chart.rstrip("\n"),
            "```",
            "",
            "</details>",
            "",
        ]
    return "\n".join(lines) + "\n"


_MORE = "- ... and {} more\n"
_NOTE = "> This plan is too long for one comment: {}. The whole plan: `customs-batch plan --format json`.\n"


def _assemble(head: str, sections: list[_Section], max_characters: int) -> str:
    out = [head]
    used = len(head)
    # What must still fit after the current section: the rest of the headings, a "more"
    # line per section and the closing note.
    fixed = [len(s.opening) + len(s.closing) + len(_MORE) + 12 for s in sections]
    reserve = sum(fixed) + len(_NOTE) + 80
    shortened = omitted = 0
    for number, (section, size) in enumerate(zip(sections, fixed, strict=True)):
        reserve -= size
        out.append(section.opening)
        used += len(section.opening)
        room = max_characters - reserve - len(section.closing) - len(_MORE) - 12
        if not section.action.blocks:
            # Share what is left between this section and the ones after it, so a long
            # list of new documents does not crowd out the updates; what a section leaves
            # unused goes to the next.
            room = used + (room - used) // (len(sections) - number)
        for index, change in enumerate(section.changes):
            text = _full(change)
            if used + len(text) > room:
                text = _short(change)
                shortened += 1
            if used + len(text) > room:
                shortened -= 1
                omitted += len(section.changes) - index
                more = _MORE.format(len(section.changes) - index)
                out.append(more)
                used += len(more)
                break
            out.append(text)
            used += len(text)
        out.append(section.closing)
        used += len(section.closing)
    if shortened or omitted:
        parts = [f"{_changes(shortened)} shown by address only"] if shortened else []
        parts += [f"{_changes(omitted)} not listed"] if omitted else []
        out.append(_NOTE.format(", ".join(parts)))
    return "".join(out).rstrip("\n") + "\n"


def _changes(count: int) -> str:
    return "1 change" if count == 1 else f"{count} changes"


def _full(change: PlannedChange) -> str:
    lines = [_short(change).rstrip("\n")]
    for path, old, new in changed_values(change, 200):
        shown_new = new if new == UNKNOWN else _code(new)
        lines.append(f"  - {_code(path)}: {_code(old)} → {shown_new}")
    for path_shown in only_unknown(change):
        lines.append(f"  - {_code(path_shown)}: {UNKNOWN}")
    waiting = {path_text(path) for path in change.unknown}
    if change.action is Action.CREATE:
        # What will be declared, folded: a bulk load's review opens the ones it checks.
        values = [
            f"    - {_code(where)}: {_code(shown_at(where, value, 200))}"
            for where, value in declared(change.spec)
            if where not in waiting
        ]
        if values:
            count = "1 value" if len(values) == 1 else f"{len(values)} values"
            lines += ["", f"  <details><summary>{count} declared</summary>", "", *values]
            lines += ["", "  </details>", ""]
    return "\n".join(lines) + "\n"


def _short(change: PlannedChange) -> str:
    reason = f": {_prose(change.reason)}" if change.reason else ""
    return f"- **{_code(str(change.address))}**{reason}\n"


def _code(text: str) -> str:
    """``text`` as an inline code span, whatever backticks it holds (and on one line, its
    control characters escaped)."""
    text = printable(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest or text.startswith(" ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _prose(text: str) -> str:
    """A reason inside a list item, lines kept: its `code spans` as they are, the text
    outside them shown as itself (HTML and markdown escaped, no mention or issue reference:
    a reason may quote the service's words or a value)."""
    parts = re.split(r"(`[^`\n]*`)", printable(text, lines=True))
    escaped = "".join(
        part
        if part.startswith("`") and part.endswith("`") and len(part) > 1
        else markdown_text(part, lines=True)
        for part in parts
    )
    return "<br>".join(line.strip() for line in escaped.splitlines())
