"""What an apply did, as markdown for a GitHub job summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from customs_batch.escaping import markdown_text
from customs_batch.execution.scheduler import NodeStatus
from customs_batch.reports._words import duration

if TYPE_CHECKING:
    from customs_batch.execution.apply import ApplyReport

# The failures listed one by one; the rest are counted (a job summary holds 1 MiB).
LISTED = 200


def apply_markdown(report: ApplyReport, *, environment: str) -> str:
    """The outcome counts, the time taken, and each failed, skipped or waiting change with
    why."""
    if report.fatal is not None:
        outcome = "stopped by an error"
    elif report.stopped:
        outcome = "interrupted"
    elif report.out_of_time is not None:
        left = report.out_of_time.not_started
        outcome = f"out of time, {left} operation(s) left for the next run"
    else:
        outcome = "succeeded" if report.ok else "failed"
    lines = [
        f"### customs-batch apply to `{environment}`: {outcome}",
        "",
        "| outcome | changes |",
        "|---|--:|",
        *(
            f"| {status.value} | {report.count(status)} |"
            for status in NodeStatus
            if status is not NodeStatus.WAITING or report.count(status)
        ),
        f"| **time** | {duration(report.seconds)} |",
        "",
    ]
    if report.fatal is not None:
        lines += [f"> **error:** {_text(str(report.fatal))}", ""]
    problems = [
        outcome
        for outcome in report.outcomes
        if outcome.status in (NodeStatus.FAILED, NodeStatus.SKIPPED, NodeStatus.WAITING)
    ]
    for problem in problems[:LISTED]:
        detail = f": {_text(problem.detail)}" if problem.detail else ""
        lines.append(f"- {problem.status.value} **`{problem.address}`**{detail}")
    if len(problems) > LISTED:
        lines.append(f"- ... and {len(problems) - LISTED} more (the state holds every outcome)")
    return "\n".join(lines).rstrip("\n") + "\n"


def _text(text: str) -> str:
    # The service's words, one line each: control characters escaped, lines kept as <br>,
    # shown as themselves (HTML and markdown escaped, no mention or issue reference).
    return "<br>".join(markdown_text(text, lines=True).splitlines())
