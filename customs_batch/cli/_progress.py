"""Apply's progress: a live display on a terminal, one line per operation elsewhere, or a
versioned JSON-lines event stream (``--format json``)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

import click
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from customs_batch.cli._command_line import with_env
from customs_batch.cli._files import append_step_summary
from customs_batch.cli._plan_view import duration, rate_per_second, show_plan
from customs_batch.commands.apply import ApplyProgress, ApplyResult, ApplyStatus
from customs_batch.environments import Environment
from customs_batch.errors import ExitCode
from customs_batch.escaping import printable
from customs_batch.execution.apply import ApplyReport, Outcome
from customs_batch.execution.scheduler import NodeStatus
from customs_batch.formats import VERSION_KEY, Formats
from customs_batch.kinds import Address
from customs_batch.planning import Plan
from customs_batch.reports import apply_markdown

EVENTS_VERSION = 2
"""2: the version is under ``formatVersion`` (1 had ``v``), as in every JSON output."""

VERBS = {
    NodeStatus.SUCCEEDED: "done",
    NodeStatus.FAILED: "FAILED",
    NodeStatus.SKIPPED: "skipped",
    NodeStatus.NOT_STARTED: "not started",
    NodeStatus.WAITING: "waiting",
}
_SETTLED = (NodeStatus.SUCCEEDED, NodeStatus.FAILED, NodeStatus.WAITING)


class _Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.total = 0
        self.in_flight = 0
        self.done = 0
        self.failed = 0
        self.skipped = 0
        """Not sent: refused by the plan, or depending on what failed (as the summary)."""
        self.waiting = 0
        """Answered, not decided yet at the service (a cancellation requested): never done,
        as the summary counts it."""

    def finished(self, outcome: Outcome) -> None:
        with self.lock:
            if outcome.status in _SETTLED:
                self.in_flight = max(0, self.in_flight - 1)
            if outcome.status is NodeStatus.SUCCEEDED:
                self.done += 1
            elif outcome.status is NodeStatus.WAITING:
                self.waiting += 1
            elif outcome.status is NodeStatus.FAILED:
                self.failed += 1
            else:
                self.skipped += 1

    @property
    def settled(self) -> int:
        """The operations with an outcome: done, waiting at the service, failed or skipped."""
        return self.done + self.waiting + self.failed + self.skipped

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.settled - self.in_flight)


def _skipped_words(skipped: int) -> str:
    """What the run reports without sending it, said with the operations it sends, so that
    the outcomes that follow add up to what was announced."""
    if not skipped:
        return ""
    return f"; {skipped} skipped (refused, rejected at the service or needing a decision)"


def _outputs(outcome: Outcome) -> str:
    return " ".join(f"{k}={printable(str(v))}" for k, v in sorted(outcome.outputs.items()))


class LineEvents:
    """Off a terminal: one line per finished operation, nothing that redraws."""

    def __init__(self) -> None:
        self.tally = _Tally()

    def started(self, plan: Plan, operations: int, skipped: int) -> None:
        self.tally.total = operations + skipped
        click.echo(f"Applying {operations} operation(s){_skipped_words(skipped)}.")

    def sending(self, address: Address) -> None:
        with self.tally.lock:
            self.tally.in_flight += 1

    def finished_one(self, outcome: Outcome) -> None:
        self.tally.finished(outcome)
        line = f"{VERBS[outcome.status]:<8} {outcome.address}"
        # The service's words and values: printable, so none can start a line of its own.
        extra = printable(outcome.detail)
        if outcome.status in (NodeStatus.SUCCEEDED, NodeStatus.WAITING):
            extra = f"{_outputs(outcome)}  {extra}".strip()
        click.echo(with_env(f"{line}  {extra}".rstrip()))

    def close(self) -> None:
        pass


class _CountsBelow(Progress):
    """The bar on one line, its counts on the lines below, wrapped at the terminal's width:
    in one row with the bar, an 80-column terminal cut the label to "a…" and the time left
    to "~6…", and one 20 columns wide showed "a… done 0 · waitin…" and nothing more."""

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        for task in self.tasks:
            yield Text(str(task.fields.get("counts", "")))


class RichEvents(LineEvents):
    """On a terminal: a live bar with done / waiting / in flight / failed / remaining and
    time left."""

    def __init__(self, seconds_per_request: float | None) -> None:
        super().__init__()
        self.seconds_per_request = seconds_per_request
        self.console = Console(stderr=False)
        self.progress = _CountsBelow(
            TextColumn("[bold]apply"),
            BarColumn(bar_width=None),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
            expand=True,
        )
        self.task = self.progress.add_task("apply", total=0, counts="")

    def started(self, plan: Plan, operations: int, skipped: int) -> None:
        self.tally.total = operations + skipped
        self.progress.update(self.task, total=self.tally.total, counts=self._counts())
        self.progress.start()

    def sending(self, address: Address) -> None:
        super().sending(address)
        self.progress.update(self.task, counts=self._counts())

    def finished_one(self, outcome: Outcome) -> None:
        self.tally.finished(outcome)
        if outcome.status is not NodeStatus.SUCCEEDED:
            self.progress.console.print(
                f"[red]{VERBS[outcome.status]}[/red] {outcome.address}: "
                f"{escape(printable(outcome.detail))}",
                markup=True,
                highlight=False,
            )
        self.progress.update(self.task, completed=self.tally.settled, counts=self._counts())

    def _counts(self) -> str:
        t = self.tally
        waiting = f" · waiting {t.waiting}" if t.waiting else ""
        skipped = f" · skipped {t.skipped}" if t.skipped else ""
        text = (
            f"done {t.done}{waiting} · in flight {t.in_flight} · failed {t.failed}{skipped} · "
            f"remaining {t.remaining}"
        )
        if self.seconds_per_request:
            left = (t.remaining + t.in_flight) * self.seconds_per_request
            text += f" · ~{duration(left)} left at the rate limit"
        return text

    def close(self) -> None:
        self.progress.stop()


class JsonEvents:
    """``--format json``: one JSON object per line, each with ``formatVersion`` and ``type``."""

    def __init__(self) -> None:
        self.tally = _Tally()
        self.lock = threading.Lock()

    def emit(self, kind: str, **body: Any) -> None:
        line = json.dumps(
            {VERSION_KEY: EVENTS_VERSION, "type": kind, **body}, sort_keys=True, default=str
        )
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
            requestsAtLeast=plan.requests_at_least,
            largeChange=None if plan.large_change is None else plan.large_change.describe(),
            changes=[
                # The commands a reason gives to go on name this run's --env, as the text's.
                {"address": str(c.address), "action": c.action.value, "reason": with_env(c.reason)}
                for c in plan.changes
            ],
        )

    def started(self, plan: Plan, operations: int, skipped: int) -> None:
        self.tally.total = operations + skipped
        self.emit("start", operations=operations, skipped=skipped)

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
            detail=with_env(outcome.detail),
            outputs=dict(outcome.outputs),
            remoteStatus=outcome.remote_status,
        )
        t = self.tally
        self.emit(
            "progress",
            done=t.done,
            waiting=t.waiting,
            failed=t.failed,
            skipped=t.skipped,
            inFlight=t.in_flight,
            remaining=t.remaining,
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
    # Waiting (decided later at the service) is shown only when there is any.
    shown = [s for s in NodeStatus if s is not NodeStatus.WAITING or counts[s.value]]
    table = Table(title="Apply summary", show_header=True)
    for status in shown:
        table.add_column(status.value, justify="right")
    table.add_column("time", justify="right")
    table.add_row(*(str(counts[s.value]) for s in shown), duration(report.seconds))
    console = Console() if terminal else None
    if console is not None and _fits(table, console):
        console.print(table)
    else:
        parts = ", ".join(f"{counts[s.value]} {s.value}" for s in shown)
        click.echo(f"Apply: {parts} in {duration(report.seconds)}.")
    for outcome in report.outcomes:
        if outcome.status in (NodeStatus.FAILED, NodeStatus.SKIPPED, NodeStatus.WAITING):
            detail = printable(outcome.detail)
            click.echo(with_env(f"  {outcome.status.value} {outcome.address}: {detail}"), err=True)


def _fits(table: Table, console: Console) -> bool:
    """Whether ``table`` fits the terminal whole: on one too narrow (20 columns) its
    headers were cut to "…" and its time left empty, numbers without names."""
    unbounded = console.options.update_width(10_000)
    return console.measure(table, options=unbounded).maximum <= console.width


def _ask(*, err: bool) -> bool:
    """The question on the terminal (on stderr with ``err``, so that stdout stays the JSON
    event stream): yes (``y``, ``yes``) applies; anything else, and the end of input
    (Ctrl-D), declines (Ctrl-C interrupts, exit 130)."""
    click.echo("\nApply these changes? [y/N]: ", nl=False, err=err)
    answer = sys.stdin.readline()
    if not answer:
        click.echo(err=err)  # the end of input: the terminal's line was not ended
        return False
    return answer.strip().lower() in ("y", "yes")


class TextPresenter:
    """Apply for people: the plan as text, a question on a terminal (``interactive``), a
    live bar there or one line per operation elsewhere, and the closing summary."""

    def __init__(self, interactive: bool) -> None:
        self.interactive = interactive

    @property
    def can_ask(self) -> bool:
        return self.interactive

    def planned(self, plan: Plan, environment: Environment) -> None:
        show_plan(plan, environment=environment.name, limit=environment.rate_limit)

    def approve(self) -> bool:
        return _ask(err=False)

    def progress(self, environment: Environment) -> ApplyProgress:
        rate = rate_per_second(environment.rate_limit)
        if self.interactive:
            return RichEvents(1 / rate if rate else None)
        return LineEvents()

    def notice(self, text: str) -> None:
        click.echo(with_env(text), err=True)

    def finished(self, result: ApplyResult) -> None:
        """The end: "Nothing to apply.", or the summary, the step summary and what to do."""
        if result.status is ApplyStatus.NOTHING_TO_DO:
            click.echo("Nothing to apply.")
        if result.report is not None:
            show_summary(result.report, terminal=self.interactive)
        _step_summary(result)
        if result.message:
            click.echo(with_env(result.message), err=True)


class JsonPresenter:
    """``apply --format json``: the plan, progress and summary as JSON lines; on a terminal
    (``interactive``) it asks after the plan event, as the text format does, the question
    on stderr (declined: a ``summary`` whose ``ended`` is ``cancelled``)."""

    def __init__(self, interactive: bool = False) -> None:
        self.events = JsonEvents()
        self.interactive = interactive

    @property
    def can_ask(self) -> bool:
        return self.interactive

    def planned(self, plan: Plan, environment: Environment) -> None:
        self.events.plan(plan, environment.name)

    def approve(self) -> bool:
        return self.interactive and _ask(err=True)

    def progress(self, environment: Environment) -> ApplyProgress:
        return self.events

    def notice(self, text: str) -> None:
        click.echo(with_env(text), err=True)

    def finished(self, result: ApplyResult) -> None:
        """The summary event (every run ends with one, also one that sent nothing), then
        the step summary and what to do on stderr."""
        if result.report is not None:
            self.events.summary(result.report)
        else:
            self.events.emit(
                "summary",
                **{status.value: 0 for status in NodeStatus},
                interrupted=False,
                outOfTime=False,
                seconds=round(result.seconds, 3),
                ok=result.exit_code is ExitCode.OK,
                ended=result.status.value,
            )
        _step_summary(result)
        if result.message:
            click.echo(with_env(result.message), err=True)


def _step_summary(result: ApplyResult) -> None:
    report = result.report
    environment = result.environment.name
    if report is not None:
        append_step_summary(lambda: apply_markdown(report, environment=environment))
        return
    said = {
        ApplyStatus.NOTHING_TO_DO: "nothing to apply",
        ApplyStatus.CANCELLED: "cancelled, nothing was sent",
        ApplyStatus.TOO_LARGE: "stopped by the large-change guard, nothing was sent",
    }.get(result.status, result.status.value)
    why = f"\n\n{result.message}" if result.message else ""
    append_step_summary(lambda: f"### customs-batch apply to `{environment}`: {said}{why}\n")


APPLY_FORMATS: Formats[Callable[[bool], TextPresenter | JsonPresenter]] = Formats(
    "apply", ("text", "json")
)
"""``apply --format``: each a presenter, made knowing whether the run is on a terminal."""
APPLY_FORMATS.register("text")(TextPresenter)
APPLY_FORMATS.register("json")(JsonPresenter)
