"""Apply's progress: a live display on a terminal, one line per operation elsewhere, or a
versioned JSON-lines event stream (``--format json``)."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from customs_batch.cli._plan_view import duration
from customs_batch.execution.apply import ApplyReport, Outcome
from customs_batch.execution.scheduler import NodeStatus
from customs_batch.kinds import Address
from customs_batch.planning import Plan

EVENTS_VERSION = 1

VERBS = {
    NodeStatus.SUCCEEDED: "done",
    NodeStatus.FAILED: "FAILED",
    NodeStatus.SKIPPED: "skipped",
    NodeStatus.NOT_STARTED: "not started",
}


class _Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.total = 0
        self.in_flight = 0
        self.done = 0
        self.failed = 0

    def finished(self, outcome: Outcome) -> None:
        with self.lock:
            if outcome.status in (NodeStatus.SUCCEEDED, NodeStatus.FAILED):
                self.in_flight = max(0, self.in_flight - 1)
            if outcome.status is NodeStatus.SUCCEEDED:
                self.done += 1
            else:
                self.failed += 1

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.done - self.failed - self.in_flight)


def _outputs(outcome: Outcome) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(outcome.outputs.items()))


class LineEvents:
    """Off a terminal: one line per finished operation, nothing that redraws."""

    def __init__(self) -> None:
        self.tally = _Tally()

    def started(self, plan: Plan, operations: int) -> None:
        self.tally.total = operations
        click.echo(f"Applying {operations} operation(s).")

    def sending(self, address: Address) -> None:
        with self.tally.lock:
            self.tally.in_flight += 1

    def finished_one(self, outcome: Outcome) -> None:
        self.tally.finished(outcome)
        line = f"{VERBS[outcome.status]:<8} {outcome.address}"
        extra = outcome.detail
        if outcome.status is NodeStatus.SUCCEEDED:
            extra = f"{_outputs(outcome)}  {outcome.detail}".strip()
        click.echo(f"{line}  {extra}".rstrip())

    def close(self) -> None:
        pass


class RichEvents(LineEvents):
    """On a terminal: a live bar with done / in flight / failed / remaining and time left."""

    def __init__(self, seconds_per_request: float | None) -> None:
        super().__init__()
        self.seconds_per_request = seconds_per_request
        self.console = Console(stderr=False)
        self.progress = Progress(
            TextColumn("[bold]apply"),
            BarColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        self.task = self.progress.add_task("apply", total=0, counts="")

    def started(self, plan: Plan, operations: int) -> None:
        self.tally.total = operations
        self.progress.update(self.task, total=operations, counts=self._counts())
        self.progress.start()

    def sending(self, address: Address) -> None:
        super().sending(address)
        self.progress.update(self.task, counts=self._counts())

    def finished_one(self, outcome: Outcome) -> None:
        self.tally.finished(outcome)
        if outcome.status is not NodeStatus.SUCCEEDED:
            self.progress.console.print(
                f"[red]{VERBS[outcome.status]}[/red] {outcome.address}: {outcome.detail}",
                markup=True,
                highlight=False,
            )
        settled = self.tally.done + self.tally.failed
        self.progress.update(self.task, completed=settled, counts=self._counts())

    def _counts(self) -> str:
        t = self.tally
        text = (
            f"done {t.done} · in flight {t.in_flight} · failed {t.failed} · remaining {t.remaining}"
        )
        if self.seconds_per_request:
            left = (t.remaining + t.in_flight) * self.seconds_per_request
            text += f" · ~{duration(left)} left at the rate limit"
        return text

    def close(self) -> None:
        self.progress.stop()


class JsonEvents:
    """``--format json``: one JSON object per line, each with ``v`` and ``type``."""

    def __init__(self) -> None:
        self.tally = _Tally()
        self.lock = threading.Lock()

    def emit(self, kind: str, **body: Any) -> None:
        line = json.dumps({"v": EVENTS_VERSION, "type": kind, **body}, sort_keys=True, default=str)
        with self.lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def plan(self, plan: Plan, environment: str) -> None:
        self.emit(
            "plan",
            environment=environment,
            lineage=plan.lineage,
            serial=plan.serial,
            counts={a.value: n for a, n in plan.counts.items()},
            requests=plan.requests,
            changes=[
                {"address": str(c.address), "action": c.action.value, "reason": c.reason}
                for c in plan.changes
            ],
        )

    def started(self, plan: Plan, operations: int) -> None:
        self.tally.total = operations
        self.emit("start", operations=operations)

    def sending(self, address: Address) -> None:
        with self.tally.lock:
            self.tally.in_flight += 1

    def finished_one(self, outcome: Outcome) -> None:
        self.tally.finished(outcome)
        self.emit(
            "outcome",
            address=str(outcome.address),
            status=outcome.status.value,
            operation=outcome.operation.value,
            detail=outcome.detail,
            outputs=dict(outcome.outputs),
            remoteStatus=outcome.remote_status,
        )
        t = self.tally
        self.emit(
            "progress", done=t.done, failed=t.failed, inFlight=t.in_flight, remaining=t.remaining
        )

    def summary(self, report: ApplyReport) -> None:
        self.emit("summary", **summary_counts(report))

    def close(self) -> None:
        pass


def summary_counts(report: ApplyReport) -> dict[str, Any]:
    return {
        **{status.value: report.count(status) for status in NodeStatus},
        "interrupted": report.stopped,
        "outOfTime": report.out_of_time is not None,
        "seconds": round(report.seconds, 3),
        "ok": report.ok,
    }


def show_summary(report: ApplyReport, *, terminal: bool) -> None:
    """The closing table: counts by outcome, the time taken, and every failure."""
    counts = summary_counts(report)
    if terminal:
        table = Table(title="Apply summary", show_header=True)
        for status in NodeStatus:
            table.add_column(status.value, justify="right")
        table.add_column("time", justify="right")
        table.add_row(*(str(counts[s.value]) for s in NodeStatus), duration(report.seconds))
        Console().print(table)
    else:
        parts = ", ".join(f"{counts[s.value]} {s.value}" for s in NodeStatus)
        click.echo(f"Apply: {parts} in {duration(report.seconds)}.")
    for outcome in report.outcomes:
        if outcome.status in (NodeStatus.FAILED, NodeStatus.SKIPPED):
            click.echo(f"  {outcome.status.value} {outcome.address}: {outcome.detail}", err=True)
