"""plan and apply as functions: typed options in, typed results out, no click involved."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from customs_batch.commands import (
    ApplyOptions,
    ApplyResult,
    ApplyStatus,
    Inputs,
    InvalidManifests,
    PlanOptions,
    apply_changes,
    make_plan,
)
from customs_batch.commands.apply import ApplyProgress
from customs_batch.environments import Environment
from customs_batch.errors import ExitCode, UsageError
from customs_batch.execution.apply import ApplyReport, Outcome
from customs_batch.execution.time_budget import OutOfTime, TimeBudget
from customs_batch.kinds import Address
from customs_batch.kinds.actions import Action
from customs_batch.planning import Plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(
        EXAMPLES / "manifests",
        tmp_path / "manifests",
        ignore=shutil.ignore_patterns("*-sheet.yaml"),
    )
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUSTOMS_BATCH_ENV", raising=False)
    return tmp_path


class Recorder:
    """A script's presenter: remembers what apply showed it and answers as told."""

    def __init__(self, *, can_ask: bool = False, answer: bool = False) -> None:
        self._can_ask = can_ask
        self.answer = answer
        self.plans: list[tuple[Plan, str]] = []
        self.asked = 0
        self.outcomes: list[Outcome] = []
        self.closed = False

    @property
    def can_ask(self) -> bool:
        return self._can_ask

    def planned(self, plan: Plan, environment: Environment) -> None:
        self.plans.append((plan, environment.name))

    def approve(self) -> bool:
        self.asked += 1
        return self.answer

    def progress(self, environment: Environment) -> ApplyProgress:
        return self

    def notice(self, text: str) -> None:
        pass

    def started(self, plan: Plan, operations: int, skipped: int) -> None:
        pass

    def sending(self, address: Address) -> None:
        pass

    def finished_one(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)

    def close(self) -> None:
        self.closed = True


def test_plan_apply_and_plan_again_without_the_cli(project: Path) -> None:
    first = make_plan(PlanOptions(Inputs((Path("manifests"),))))
    assert first.environment.name == "local"
    assert first.plan.counts[Action.CREATE] == len(first.plan.changes) > 0
    assert first.exit_code() is ExitCode.OK
    assert first.exit_code(detailed=True) is ExitCode.CHANGES

    recorder = Recorder()
    applied = apply_changes(ApplyOptions(Inputs((Path("manifests"),)), auto_approve=True), recorder)
    assert applied.status is ApplyStatus.APPLIED
    assert applied.exit_code is ExitCode.OK and applied.message is None
    assert applied.report is not None and applied.report.ok
    assert recorder.asked == 0 and recorder.closed
    assert {o.address for o in recorder.outcomes} == {c.address for c in first.plan.changes}

    again = make_plan(PlanOptions(Inputs((Path("manifests"),))))
    assert not again.plan.has_changes
    assert again.exit_code(detailed=True) is ExitCode.OK
    nothing = apply_changes(
        ApplyOptions(Inputs((Path("manifests"),)), auto_approve=True), Recorder()
    )
    assert nothing.status is ApplyStatus.NOTHING_TO_DO and nothing.report is None
    assert nothing.exit_code is ExitCode.OK


def test_apply_asks_the_presenter_and_a_no_sends_nothing(project: Path) -> None:
    recorder = Recorder(can_ask=True, answer=False)
    result = apply_changes(ApplyOptions(Inputs((Path("manifests"),))), recorder)
    assert recorder.asked == 1 and recorder.outcomes == []
    assert result.status is ApplyStatus.CANCELLED
    assert result.exit_code is ExitCode.FINDINGS
    assert result.message == "Apply cancelled."
    # Nothing was recorded: the next plan still creates everything.
    assert make_plan(PlanOptions(Inputs((Path("manifests"),)))).plan.has_changes


def test_apply_without_a_way_to_ask_needs_approval_beforehand(project: Path) -> None:
    with pytest.raises(UsageError, match="needs confirmation"):
        apply_changes(ApplyOptions(Inputs((Path("manifests"),))), Recorder(can_ask=False))


def test_a_saved_plan_is_applied_without_asking(project: Path) -> None:
    saved = project / "release.plan"
    made = make_plan(PlanOptions(Inputs((Path("manifests"),)), save_to=saved))
    assert made.saved_to == saved and saved.is_file()
    recorder = Recorder(can_ask=True, answer=False)
    result: ApplyResult = apply_changes(ApplyOptions(Inputs((saved,))), recorder)
    assert recorder.asked == 0
    assert result.status is ApplyStatus.APPLIED and result.exit_code is ExitCode.OK


def test_invalid_manifests_raise_with_their_findings(project: Path) -> None:
    broken = project / "manifests" / "broken.yaml"
    broken.write_text("apiVersion: customs-batch/v1\nkind: Nope\nmetadata: {name: x}\n")
    with pytest.raises(InvalidManifests) as raised:
        make_plan(PlanOptions(Inputs((Path("manifests"),))))
    assert raised.value.exit_code is ExitCode.FINDINGS
    details = raised.value.details()
    assert "broken.yaml:2" in details


def test_a_target_selects_what_it_needs_and_leaves_the_rest_out(project: Path) -> None:
    everything = make_plan(PlanOptions(Inputs((Path("manifests"),)))).plan
    movement = next(c.address for c in everything.changes if c.address.kind.value == "Movement")
    part = make_plan(PlanOptions(Inputs((Path("manifests"),), targets=(str(movement),)))).plan
    addresses = {c.address for c in part.changes}
    assert movement in addresses and len(addresses) < len(everything.changes)


def _out_of_time(created: int, left: int) -> tuple[Plan, ApplyReport]:
    from customs_batch.execution.scheduler import NodeStatus
    from customs_batch.kinds import Kind
    from customs_batch.planning import Operation, PlannedChange

    addresses = [Address(Kind.TEMPLATE_GROUP, f"g-{n}") for n in range(created + left)]
    plan = Plan(
        tuple(PlannedChange(a, Action.CREATE, Operation.CREATE_TEMPLATE_GROUP) for a in addresses),
        "lineage",
        0,
    )
    outcomes = [
        Outcome(a, NodeStatus.SUCCEEDED if n < created else NodeStatus.NOT_STARTED, Operation.NONE)
        for n, a in enumerate(addresses)
    ]
    return plan, ApplyReport(outcomes, False, None, 1.0, OutOfTime(TimeBudget(60.0, "60s"), left))


@pytest.mark.parametrize(
    ("created", "left", "allowed"),
    [(60, 40, True), (60, 30, False), (40, 60, False)],
)
def test_the_command_that_goes_on_lets_the_rest_of_a_bulk_load_through_the_guard(
    tmp_path: Path, created: int, left: int, allowed: bool
) -> None:
    from customs_batch.commands.apply import _allowing_the_rest
    from customs_batch.environments._environment import local_environment

    # A first bulk load into an empty state passes the guard (defaults: 50 records, half);
    # once 60 are recorded, 40 more would not, although they are the rest of the same load.
    # (40 recorded: too few for the guard to apply.)
    plan, report = _out_of_time(created, left)
    environment = local_environment(tmp_path)
    command = "customs-batch apply --auto-approve --time-budget 1h"
    resume = _allowing_the_rest(command, plan, report, created, environment)
    assert resume == (f"{command} --allow-large-change" if allowed else command)
    assert _allowing_the_rest(f"{command} --allow-large-change", plan, report, 60, environment) == (
        f"{command} --allow-large-change"
    )


def test_a_renamed_document_held_for_a_decision_is_listed_where_its_record_is() -> None:
    """A rename of a record held for a decision leaves the record under its old name until
    it is sorted out: the run's notification lists that name (its ways out, `state adopt`
    and `state rm --gone`, take it), and as no longer found when it is."""
    from customs_batch.commands.apply import _not_found, _undecided
    from customs_batch.planning import Operation, PlannedChange
    from customs_batch.state import RecordStatus, ResourceRecord, State

    state = State(lineage="lin", serial=2)
    lost = ResourceRecord(
        "DepartureDeclaration/old",
        RecordStatus.APPLIED,
        "submit-departure",
        {},
        outputs={"declarationId": 7003},
        not_found_at="2026-11-21T11:00:00Z",
    )
    state.apply(lost.address, lost)
    held = PlannedChange(
        address=Address.parse("DepartureDeclaration/new") or pytest.fail("an address"),
        action=Action.NEEDS_DECISION,
        operation=Operation.NONE,
        moved_from=Address.parse("DepartureDeclaration/old"),
    )
    plan = Plan((held,), "lin", 2)
    report = ApplyReport([], False, None, 0.0)
    assert _undecided(plan, report, state) == ("DepartureDeclaration/old",)
    assert _not_found(plan, state) == ("DepartureDeclaration/old",)


def test_apply_reads_the_state_file_once(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under the lock, the plan is made from the state the session read: a second read of an
    # 88 MB state would come before the first request (and could differ from what is locked).
    from customs_batch.load_cache import CACHE_DIR_VARIABLE
    from customs_batch.sensitive import Sealer
    from customs_batch.state import file
    from customs_batch.state.model import State

    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(tmp_path / "cache"))
    reads: list[Path] = []
    read_state = file.read_state

    def counted(path: Path, sealer: Sealer | None = None) -> State | None:
        reads.append(path)
        return read_state(path, sealer)

    monkeypatch.setattr("customs_batch.state.backend.read_state", counted)
    for status in (ApplyStatus.APPLIED, ApplyStatus.NOTHING_TO_DO):
        reads.clear()
        options = ApplyOptions(Inputs((Path("manifests"),), cache=True), auto_approve=True)
        assert apply_changes(options, Recorder()).status is status
        assert [path.name for path in reads] == ["state.json"]
