"""Apply's progress and summary lines: what the service said cannot start a line or carry
rich markup."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from customs_batch.cli import _progress
from customs_batch.cli._progress import JsonEvents, LineEvents, show_summary
from customs_batch.execution.apply import ApplyReport, Outcome
from customs_batch.execution.scheduler import NodeStatus
from customs_batch.kinds import Address, Kind
from customs_batch.planning.model import Operation, Plan

DETAIL = "refused\nfailed   Movement/fake  [bold red]forged[/bold red]\x1b[2J"


def _failed() -> Outcome:
    return Outcome(
        Address(Kind.MOVEMENT, "m1"), NodeStatus.FAILED, Operation.CREATE_MOVEMENT, DETAIL
    )


def test_a_line_per_operation_and_the_summary_keep_the_detail_on_its_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    LineEvents().finished_one(_failed())
    show_summary(ApplyReport([_failed()], False, None, 1.0), terminal=False)
    captured = capsys.readouterr()
    escaped = "refused\\nfailed   Movement/fake  [bold red]forged[/bold red]\\x1b[2J"
    assert captured.out.splitlines()[0] == f"FAILED   Movement/m1  {escaped}"
    assert captured.err.splitlines() == [f"  failed Movement/m1: {escaped}"]


def test_the_live_display_prints_the_detail_as_text_not_markup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    console = Console(file=out, width=300, color_system=None)
    monkeypatch.setattr(_progress, "Console", lambda **_: console)
    _progress.RichEvents(None).finished_one(_failed())
    assert "[bold red]forged[/bold red]" in out.getvalue()
    assert "\x1b" not in out.getvalue()


def test_the_live_display_counts_an_operation_waiting_at_the_service_waiting_not_done(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cancellation answered cancellation_requested: the bar says waiting, as the summary
    does, and counts it settled (nothing remains of it for this run)."""
    out = io.StringIO()
    console = Console(file=out, width=300, color_system=None)
    monkeypatch.setattr(_progress, "Console", lambda **_: console)
    events = _progress.RichEvents(None)
    address = Address(Kind.EXPORT_CANCELLATION, "c1")
    events.tally.total = 2
    events.sending(address)
    events.finished_one(Outcome(address, NodeStatus.WAITING, Operation.CANCEL_EXPORT, "pending"))
    assert (events.tally.done, events.tally.waiting, events.tally.remaining) == (0, 1, 1)
    assert events._counts() == "done 0 · waiting 1 · in flight 0 · failed 0 · remaining 1"


def test_the_start_announces_the_skipped_changes_apart_and_they_count_in_what_remains(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A plan holding a refused or held change: the start says the run sends 1 operation and
    skips 2, so the outcomes that follow (3) add up to what was announced, and what remains
    counts both."""
    plan = Plan((), "lineage-1", 1)
    skip = Outcome(
        Address(Kind.MOVEMENT, "m1"), NodeStatus.SKIPPED, Operation.CREATE_MOVEMENT, "refused"
    )
    lines = LineEvents()
    lines.started(plan, 1, 2)
    lines.finished_one(skip)
    assert lines.tally.remaining == 2
    assert capsys.readouterr().out.splitlines()[0] == (
        "Applying 1 operation(s); 2 skipped (refused, rejected at the service or needing a "
        "decision)."
    )
    lines.started(plan, 3, 0)
    assert capsys.readouterr().out == "Applying 3 operation(s).\n"

    events = JsonEvents()
    events.started(plan, 0, 2)
    events.finished_one(skip)
    start, _, progress = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert (start["type"], start["operations"], start["skipped"]) == ("start", 0, 2)
    assert (progress["skipped"], progress["remaining"]) == (1, 1)


@pytest.mark.parametrize("width", [20, 200])
def test_the_summary_on_a_terminal_names_every_count_whatever_its_width(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], width: int
) -> None:
    """At 20 columns the table cut every header to "…" and left the time empty: four
    numbers without names. A terminal too narrow for the table gets the summary line."""
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None)
    monkeypatch.setattr(_progress, "Console", lambda **_: console)
    done = Outcome(
        Address(Kind.MOVEMENT, "m2"), NodeStatus.SUCCEEDED, Operation.CREATE_MOVEMENT, ""
    )
    show_summary(ApplyReport([done], False, None, 3.25), terminal=True)
    shown = out.getvalue() + capsys.readouterr().out
    assert "…" not in shown
    for word in ("succeeded", "failed", "skipped", "not-started", "3.2 s"):
        assert word in shown


@pytest.mark.parametrize("width", [20, 80])
def test_the_live_display_shows_every_count_whatever_the_terminal_s_width(
    monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """In one row with the bar, the counts were cut: at 80 columns the label and the time
    left ("a…", "~6…"), at 20 everything after "waitin…"."""
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    monkeypatch.setattr(_progress, "Console", lambda **_: console)
    events = _progress.RichEvents(0.6)
    events.started(Plan((), "lineage-1", 1), 11, 1)
    events.tally.waiting = events.tally.skipped = 1
    events.sending(Address(Kind.MOVEMENT, "m1"))
    events.close()
    shown = " ".join(out.getvalue().rsplit("\x1b[2K", 1)[-1].split())
    assert "…" not in shown
    assert shown.startswith("apply ")
    assert (
        "done 0 · waiting 1 · in flight 1 · failed 0 · skipped 1 · remaining 9 · ~6.0 s "
        "left at the rate limit"
    ) in shown, shown
