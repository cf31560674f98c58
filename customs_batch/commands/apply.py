"""``apply`` as a function: take the lock, plan (or check a saved plan), send, record."""

from __future__ import annotations

import os
import shlex
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from customs_batch.backends import sealer_for
from customs_batch.commands._inputs import Inputs, Loaded
from customs_batch.commands._notify import notify
from customs_batch.commands.plan import guarded
from customs_batch.commands.session import locked_session
from customs_batch.commands.state import objects_held_elsewhere
from customs_batch.environments import Environment, env_words
from customs_batch.errors import CustomsBatchError, ExitCode, UsageError
from customs_batch.execution.apply import ApplyEvents, ApplyReport, apply_plan
from customs_batch.execution.history import RunHistory, manifests_commit, operator
from customs_batch.execution.interrupt import Sending, graceful_stop, terminate_as_interrupt
from customs_batch.execution.reconcile import (
    refuse_creations_held_elsewhere,
    refuse_tombstones_held_elsewhere,
    refuse_writes_held_elsewhere,
)
from customs_batch.execution.scheduler import NodeStatus
from customs_batch.execution.settle import (
    Settled,
    hold_what_a_lost_run_may_have_made,
    put_back_held,
    settle_lost_creations,
)
from customs_batch.execution.time_budget import TimeBudget
from customs_batch.execution.waiting import WaitOptions
from customs_batch.manifest import Document
from customs_batch.planning import Action, Plan, plan_changes
from customs_batch.planning.diff import following_processing, in_flight_ended
from customs_batch.planning.guard import large_change
from customs_batch.planning.model import PlannedChange
from customs_batch.planning.planfile import (
    MRN_CHECK_WORDS,
    PlanFileError,
    check_current,
    check_inputs,
    digest_documents,
    mrn_check_word,
    needs_manifests,
    read_plan,
    restore_sensitive,
    saved_plan_among,
)
from customs_batch.sensitive import has_sensitive
from customs_batch.state.history import history_for, reading_history
from customs_batch.state.model import RecordStatus, ResourceRecord, State

if TYPE_CHECKING:
    from customs_batch.reports.results_workbook import ResultsFile

ALLOW_LARGE_CHANGE = "--allow-large-change"


class ApplyProgress(ApplyEvents, Protocol):
    """Apply's events, and the end of them (a live display stops drawing)."""

    def close(self) -> None: ...


class ApplyPresenter(Protocol):
    """How an apply is shown and approved: a terminal, a JSON event stream, or a script."""

    @property
    def can_ask(self) -> bool:
        """Whether :meth:`approve` can ask someone (a terminal); without it, apply needs
        ``auto_approve`` or a saved plan."""
        ...

    def planned(self, plan: Plan, environment: Environment) -> None:
        """Show the plan before anything is sent."""
        ...

    def approve(self) -> bool:
        """Ask whether to apply the plan just shown; False cancels."""
        ...

    def progress(self, environment: Environment) -> ApplyProgress:
        """Where the run's events go."""
        ...

    def notice(self, text: str) -> None:
        """Tell the user something while the run goes on (e.g. that Ctrl-C was seen)."""
        ...


@dataclass(frozen=True)
class ApplyOptions:
    """What ``apply`` is asked.

    ``inputs.paths`` are manifests, or one saved plan (``plan -out``), which is applied
    exactly, without asking. ``parallelism`` defaults to the environment's; ``wait`` follows
    submitted departures until they leave processing, and those recorded processing by an
    earlier run; ``lock_timeout`` is how long to wait
    for another run's lock, in seconds; ``time_budget`` stops starting operations that would
    not end inside it (counted from when it was made: waiting for the lock and planning are
    part of it). ``command`` is the command line that runs this apply again, which the
    result gives as the way to go on. ``allow_large_change`` lets through a plan the
    environment's guard on the size of a change would stop.
    """

    inputs: Inputs = field(default_factory=Inputs)
    auto_approve: bool = False
    parallelism: int | None = None
    wait: WaitOptions | None = None
    lock_timeout: float = 0.0
    time_budget: TimeBudget | None = None
    command: str = "customs-batch apply"
    allow_large_change: bool = False
    annotate_results: Path | None = None
    """The folder to write the results copies of the spreadsheets in once the run ends
    (see :mod:`customs_batch.commands.results`); None: none are written."""
    go_on_words: Callable[[str], str] | None = None
    """How those copies write a command they give to go on (``ResultsOptions.go_on_words``)."""
    mrn_check_digit_given: bool = False
    """Whether ``inputs.mrn_check_digit`` was asked for (``--mrn-check-digit`` given) rather
    than left at its default: a saved plan is read with the level it was made with, and one
    asked for that differs is refused (:func:`_as_the_plan_was_made`)."""

    @property
    def plan_file(self) -> Path | None:
        """The saved plan to apply, when the only path is one (known by its content); a
        file that is neither a saved plan nor a manifest is a usage error."""
        return saved_plan_among(self.inputs.paths)


class ApplyStatus(StrEnum):
    """How an apply ended, before its operations are counted."""

    NOTHING_TO_DO = "nothing-to-do"
    CANCELLED = "cancelled"
    TOO_LARGE = "too-large"
    """Stopped by the guard on the size of a change, before anything was sent."""
    APPLIED = "applied"


@dataclass(frozen=True)
class ApplyResult:
    """An apply's end: the plan it ran and, when it sent anything, the report."""

    status: ApplyStatus
    environment: Environment
    plan: Plan
    report: ApplyReport | None = None
    resume: str = ""
    """The command that goes on after the time budget ran out."""
    undecided: tuple[str, ...] = ()
    """The addresses whose outcome is unknown after the run (needs a decision): those the
    plan held back, and those this run's requests left unknown."""
    not_found: tuple[str, ...] = ()
    """The addresses the plan held back because ``refresh`` found their objects no longer
    at the service (a decision too: ``state rm --gone`` once confirmed gone)."""
    another_at_id: tuple[str, ...] = ()
    """Those of ``undecided`` whose last request was an update whose answer was lost, and
    whose object the service no longer holds, or holds another object at its ID: not
    adopted (``state adopt`` refuses an update), their ways out are ``state forget``, then
    ``import`` for an object that is their own."""
    annotated: tuple[ResultsFile, ...] = ()
    """The results copies of the spreadsheets written after the run (``annotate_results``)."""
    annotation_error: str = ""
    """Why the results copies could not be written (the run itself is recorded as it went)."""
    seconds: float = 0.0
    """How long the run took, from the start of apply to the end of its last operation, or
    to the decision to send nothing (the report's ``seconds`` when it sent anything)."""

    @property
    def exit_code(self) -> ExitCode:
        """0 when everything planned is done; 1 when cancelled, stopped by the guard on
        the size of a change, or anything failed or was skipped; 3 when an error stopped
        the run, or the results copies asked for could not be written (when nothing else
        went wrong); 4 when the time budget ran out; 130 when interrupted."""
        code = self._run_exit_code
        if self.annotation_error and code is ExitCode.OK:
            return ExitCode.ERROR
        return code

    @property
    def _run_exit_code(self) -> ExitCode:
        if self.status in (ApplyStatus.CANCELLED, ApplyStatus.TOO_LARGE):
            return ExitCode.FINDINGS
        if self.report is None:
            return ExitCode.OK
        if self.report.fatal is not None:
            return ExitCode.ERROR
        if self.report.stopped:
            return ExitCode.INTERRUPTED
        if self.report.out_of_time is not None:
            return ExitCode.OUT_OF_TIME
        return ExitCode.OK if self.report.ok else ExitCode.FINDINGS

    @property
    def message(self) -> str | None:
        """What the user must be told at the end, beyond the counts (an error, a stop)."""
        if self.status is ApplyStatus.CANCELLED:
            return "Apply cancelled."
        if self.status is ApplyStatus.TOO_LARGE and self.plan.large_change is not None:
            return (
                "Apply stopped by the large-change guard; nothing was sent: "
                f"{self.plan.large_change.describe()}. If the change is meant (the rest of "
                "a bulk load an earlier apply did not finish counts as new creates too), run "
                f"again with {ALLOW_LARGE_CHANGE}; the limits are "
                f"environments.{self.environment.name}.large_change_guard in customs-batch.yaml"
            )
        if self.report is None:
            return None
        if self.report.fatal is not None:
            return f"error: {self.report.fatal}"
        if self.report.stopped:
            return "Interrupted: what was in flight is recorded; run apply again to go on."
        if self.report.out_of_time is not None:
            return self.report.out_of_time.describe(self.resume)
        return None


def apply_changes(
    options: ApplyOptions,
    presenter: ApplyPresenter,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> ApplyResult:
    """Make the chosen environment match the manifests (or apply a saved plan).

    Takes the state lock, settles departures whose submission was lost (see
    :mod:`customs_batch.execution.settle`), plans against the locked state (or checks that a
    saved plan was made against it), shows the plan, asks unless approved beforehand, then sends in
    dependency order under the rate limit, recording every intent before it is sent and
    every outcome after, and each request in the environment's history (with the operator
    and the commit of the manifests). The first SIGINT/SIGTERM stops starting new work. At
    the end, the environment's notifications are sent (``notify:``): what cannot be
    delivered is a warning through ``presenter.notice``, and changes nothing of the result.
    SIGTERM before the requests (waiting for the lock, planning, asking) is Ctrl-C: a
    ``KeyboardInterrupt``, exit 130; after them (every request sent and recorded) it is
    noted, and the run finishes (notifications, results copies, summary).

    The result's ``seconds`` (and its report's) are the run's, on ``clock``: from this call
    to the end of the last operation (or to the decision to send nothing), with the wait
    for the lock, the wait before looking for lost submissions (``sleep``), planning and
    the question, as the time budget counts them.
    """
    started = clock()
    with terminate_as_interrupt(presenter.notice) as sending:
        result = _apply(options, presenter, sending, sleep)
        seconds = clock() - started
        report = None if result.report is None else replace(result.report, seconds=seconds)
        result = replace(result, report=report, seconds=seconds)
        notify(result, presenter.notice)
        if options.annotate_results is not None:
            try:
                result = replace(result, annotated=_annotate_results(options, result))
            except CustomsBatchError as exc:
                # The run is done and recorded: say why the copies are missing, keep its result.
                why = f"the results copies were not written: {exc.message}"
                presenter.notice(f"error: {why}" + (f"\n  hint: {exc.hint}" if exc.hint else ""))
                result = replace(result, annotation_error=why)
    return result


def _annotate_results(options: ApplyOptions, result: ApplyResult) -> tuple[ResultsFile, ...]:
    """The results copies, written from the state as the run left it: the manifests of
    the run (a saved plan's own), its selection and its environment."""
    # openpyxl: only for a run that writes the copies.
    from customs_batch.commands.results import ResultsOptions, collect_results

    inputs = options.inputs
    if options.plan_file is not None:
        manifests = tuple(Path(path) for path in result.plan.manifests)
        inputs = replace(inputs, paths=manifests)
        if result.plan.mrn_check_digit is not None:
            inputs = replace(inputs, mrn_check_digit=MRN_CHECK_WORDS[result.plan.mrn_check_digit])
    annotate = ResultsOptions(
        replace(inputs, environment=result.environment.name),
        options.annotate_results,
        option="--annotate-results",
        go_on_words=options.go_on_words,
    )
    return collect_results(annotate).written


def _apply(
    options: ApplyOptions,
    presenter: ApplyPresenter,
    sending: Sending,
    sleep: Callable[[float], None],
) -> ApplyResult:
    plan_path = options.plan_file
    if plan_path is None and not options.auto_approve and not presenter.can_ask:
        raise UsageError(
            "apply needs confirmation, and this is not an interactive terminal",
            hint="pass --auto-approve, or apply a reviewed plan: `customs-batch plan -out FILE` "
            "then `customs-batch apply FILE`",
        )
    inputs = options.inputs
    if plan_path is not None and not inputs.selection().everything:
        raise UsageError(
            f"{plan_path} is a saved plan, applied whole: -l, --target and --exclude choose "
            "among manifests",
            hint=f"make the plan with them: `customs-batch plan ... -out {plan_path}`",
        )
    environment = inputs.chosen_environment()
    saved = read_plan(plan_path, environment=environment.name) if plan_path else None
    if saved is not None and plan_path is not None:
        inputs = _as_the_plan_was_made(inputs, saved, plan_path, options.mrn_check_digit_given)
    loaded = inputs.loaded() if saved is None else Loaded([])
    documents = loaded.documents
    unchanged = loaded.unchanged(environment)
    # The documents the plan was made from, read again: they must still be those (a
    # departure corrected since is never declared as it was), and the plan file holds the
    # sensitive values it sends (a guarantee's access code) only as digests.
    made_from = (
        [] if plan_path is None or saved is None else _documents_of(saved, inputs, plan_path)
    )
    if options.annotate_results is not None:
        # Before anything is sent: a folder the copies cannot be written in is refused now.
        from customs_batch.manifest.spreadsheet.copy import check_copy_folder

        check_copy_folder(
            loaded.spreadsheets
            | {doc.source.file for doc in made_from if doc.source.sheet is not None},
            options.annotate_results,
            option="--annotate-results",
        )
    if saved is not None and plan_path is not None and needs_manifests(saved):
        specs = {str(doc.address): doc.spec for doc in made_from}
        saved = restore_sensitive(
            saved,
            specs,
            sealer_for(environment),
            source=plan_path,
            environment=environment.name,
        )
    backend = inputs.backend(environment)
    if options.lock_timeout > 0:
        # A run that waits for another's lock says so, and whose it is, before it waits
        # (it had waited in silence, up to --lock-timeout, then said "Nothing to apply").
        holder = backend.running_holder()
        if holder is not None:
            presenter.notice(
                f"waiting up to {options.lock_timeout:g} s for the state lock: {holder.describe()}"
            )
    with (
        ExitStack() as after_the_run,
        locked_session(environment, backend, "apply", lock_timeout=options.lock_timeout) as (
            client,
            session,
        ),
    ):
        backend.refuse_a_state_behind_its_history(session.state)
        # What the other states of the service hold: read once a run, if ever asked.
        elsewhere = objects_held_elsewhere(environment, backend)
        found: list[Settled] = []  # what the search for lost submissions settled
        going_on = False  # until then, a held creation settling took back is put back
        try:
            if saved is not None and plan_path is not None:
                check_current(saved, session.state, source=plan_path, state_at=backend.location)
                check_inputs(
                    saved,
                    digest_documents(made_from, sealer_for(environment), saved.lineage),
                    source=plan_path,
                    keyed=any(has_sensitive(doc.kind) for doc in made_from),
                )
                # Holding the lock, this run knows that what the plan saw in flight is not.
                plan = in_flight_ended(saved, session.state)
            else:
                # A departure whose submission was lost is searched for at the service first:
                # one that never arrived is planned again as a creation.
                with reading_history(backend) as lookup:
                    found = settle_lost_creations(
                        session,
                        client,
                        answered_within=environment.timeouts.answered_within,
                        notice=presenter.notice,
                        sleep=sleep,
                        history=lookup,
                        others=elsewhere,
                    )
                for settled in found:
                    presenter.notice(settled.describe())
                # No inputs digest: it is written only into a saved plan (`plan -out`).
                plan = plan_changes(
                    documents,
                    session.state,
                    orphans=inputs.selection().everything,
                    consume=True,  # nothing below needs the documents again
                    unchanged=unchanged,
                )
                if unchanged is not None:
                    # Kept for the next plan once the run has ended (or stopped), the state
                    # written and the lock released: nothing sent needs it, and writing it
                    # (1.6 MB for 100,000 documents) had come before the first request.
                    after_the_run.callback(unchanged.save)
            if options.wait is not None:
                # What earlier runs left processing is followed too, as after a submission.
                plan = following_processing(plan, session.state)
            # As plan does: a tombstone tracked again whose object another environment took
            # over is refused (a saved plan too: that environment may have taken it since).
            plan = refuse_tombstones_held_elsewhere(plan, session.state, elsewhere)
            # And a creation of what another environment of the service recorded.
            plan = refuse_creations_held_elsewhere(plan, elsewhere)
            # And an update of an object another environment of the service records too.
            plan = refuse_writes_held_elsewhere(plan, session.state, elsewhere)
            # And a departure a run whose records were not kept (a lost CI runner) may have
            # submitted: held for a decision, and recorded so once the run is approved.
            plan, held = hold_what_a_lost_run_may_have_made(
                plan, session, client, others=elsewhere, settled=found
            )
            plan = guarded(plan, len(session.state.resources), environment)
            presenter.planned(plan, environment)
            if not plan.has_changes and not _must_report(plan):
                return ApplyResult(ApplyStatus.NOTHING_TO_DO, environment, plan)
            if plan.large_change is not None and not options.allow_large_change:
                return ApplyResult(ApplyStatus.TOO_LARGE, environment, plan)
            if saved is None and not options.auto_approve and not presenter.approve():
                return ApplyResult(ApplyStatus.CANCELLED, environment, plan)
            for record in held:
                session.record(record)
            going_on = True
        finally:
            if not going_on:
                # Nothing sent: a held departure keeps the time `state forget` set.
                put_back_held(session, found)
        events = presenter.progress(environment)
        stop = threading.Event()
        store = history_for(backend)
        history = RunHistory(
            store,
            operator(),
            manifests_commit(_manifests_folder(inputs)),
            sealer_for(environment),
            state=lambda: session.state,
        )
        with graceful_stop(stop, presenter.notice):
            # Only where graceful_stop holds the signals: a SIGTERM between the two would
            # have been taken for one after the run, and the whole plan sent.
            sending.start()
            try:
                report = apply_plan(
                    plan,
                    session,
                    client,
                    parallelism=options.parallelism or environment.parallelism,
                    stop=stop,
                    events=events,
                    wait=options.wait,
                    budget=options.time_budget,
                    history=history,
                    elsewhere=elsewhere,
                )
            finally:
                events.close()
                store.close()
        recorded = len(session.state.resources)
        undecided = _undecided(plan, report, session.state)
        not_found = _not_found(plan, session.state)
        another_at_id = tuple(
            a for a in undecided if a not in not_found and _noted_lost(session.state, a)
        )
    # A saved plan is spent once part of it is applied: the state has moved on.
    resume = options.command
    if report.out_of_time is not None:
        resume = _allowing_the_rest(resume, plan, report, recorded, environment)
    if plan_path is not None:
        # The plan made again is for this environment: its command names it, as apply does.
        env = env_words(environment.name)
        if env and "--env" not in shlex.split(resume):
            resume = shlex.join([*shlex.split(resume), *env])
        # Made again as it was made: at its --mrn-check-digit level (error unless told),
        # for the part of the manifests it was made for.
        level = plan.mrn_check_digit
        checks = [] if level in (None, "error") else ["--mrn-check-digit", str(level)]
        checks += [
            *(word for label in plan.labels for word in ("-l", label)),
            *(word for target in plan.targets for word in ("--target", target)),
            *(word for left in plan.excluded for word in ("--exclude", left)),
        ]
        again = shlex.join(
            ["customs-batch", "plan", *_paths_named(plan), *checks, "-out", str(plan_path), *env]
        )
        resume = f"{again}, then {resume}"
    return ApplyResult(
        ApplyStatus.APPLIED,
        environment,
        plan,
        report,
        resume,
        tuple(address for address in undecided if address not in not_found),
        not_found=not_found,
        another_at_id=another_at_id,
    )


def _as_the_plan_was_made(inputs: Inputs, plan: Plan, source: Path, given: bool) -> Inputs:
    """``inputs`` with the options the saved ``plan`` was made with (its ``--mrn-check-digit``
    level, which its manifests are read again with): one given to apply that contradicts
    the plan's is refused, as a plan for another environment is."""
    if plan.mrn_check_digit is None:  # a plan file from before plans recorded it
        return inputs
    level = MRN_CHECK_WORDS[plan.mrn_check_digit]
    if given and inputs.mrn_check_digit != level:
        asked = mrn_check_word(inputs.mrn_check_digit)
        raise UsageError(
            f"{source} was made with --mrn-check-digit {plan.mrn_check_digit}, not {asked}: "
            "a saved plan is applied as it was made, with the options it was made with",
            hint=f"leave out --mrn-check-digit (apply uses the plan's), or make the plan again "
            f"with it: `customs-batch plan ... --mrn-check-digit {asked} -out {source}`",
        )
    return replace(inputs, mrn_check_digit=level)


def _documents_of(plan: Plan, inputs: Inputs, source: Path) -> list[Document]:
    """The documents the saved ``plan`` (read from ``source``) was made from, as its
    manifests give them now: read from its paths, chosen by its selection, at the
    ``--mrn-check-digit`` level of ``inputs`` (the plan's)."""
    missing = [path for path in plan.manifests if not os.path.lexists(path)]
    if missing:  # the paths are relative to the folder plan ran in
        raise PlanFileError(
            f"{source}: the plan was made from {', '.join(plan.manifests)}, and "
            f"{', '.join(missing)} is not in this folder ({Path.cwd()}): apply reads them "
            "again to check that they still give what the plan sends",
            hint="run `customs-batch apply` with the plan from the folder it was made in; "
            "if they were removed since, make a new plan with `customs-batch plan -out FILE`",
        )
    try:
        return Inputs(
            paths=tuple(Path(path) for path in plan.manifests),
            labels=plan.labels,
            targets=plan.targets,
            excluded=plan.excluded,
            mrn_check_digit=inputs.mrn_check_digit,
        ).documents()
    except UsageError as exc:  # a document the plan was made for is gone: not a usage error
        raise PlanFileError(
            f"{source}: the plan was made for a part of the manifests that they no longer "
            f"hold ({exc.message}): they changed since the plan was made",
            hint="make a new plan with `customs-batch plan -out FILE` and review it",
        ) from exc


def _paths_named(plan: Plan) -> list[str]:
    """The manifests a saved plan was made from, as ``plan`` is to be given them again:
    none when they are what it reads without PATHS."""
    manifests = list(plan.manifests)
    return [] if manifests == [str(p) for p in Inputs().manifest_paths()] else manifests


def _undecided(plan: Plan, report: ApplyReport, state: State) -> tuple[str, ...]:
    """The addresses whose outcome is unknown after the run, in plan order: held back by the
    plan (needs a decision), or left unknown by this run's request."""
    addresses = [_held_at(c, state)[0] for c in plan.changes if c.action is Action.NEEDS_DECISION]
    for outcome in report.outcomes:
        record = state.resources.get(str(outcome.address))
        if record is not None and record.status.outcome_unknown:
            addresses.append(str(outcome.address))
    return tuple(dict.fromkeys(addresses))


def _not_found(plan: Plan, state: State) -> tuple[str, ...]:
    """The addresses the plan held for a decision because ``refresh`` found their objects
    no longer at the service, in plan order."""
    found: list[str] = []
    for change in plan.changes:
        if change.action is not Action.NEEDS_DECISION:
            continue
        address, record = _held_at(change, state)
        if (
            record is not None
            and record.status is RecordStatus.APPLIED
            and record.not_found_at is not None
        ):
            found.append(address)
    return tuple(found)


def _noted_lost(state: State, address: str) -> bool:
    """Whether the record of ``address`` is of a request whose outcome is unknown, and its
    object was found no longer at the service, or another object at its ID."""
    record = state.resources.get(address)
    return record is not None and record.status.outcome_unknown and record.not_found_at is not None


def _held_at(change: PlannedChange, state: State) -> tuple[str, ResourceRecord | None]:
    """The address of the record a change held for a decision is about, and the record: a
    renamed document's record stays under its earlier name until the decision is made
    (``moved_from``), and the ways out (`state adopt`, `state rm --gone`) name it there."""
    address = str(change.address)
    record = state.resources.get(address)
    if record is None and change.moved_from is not None:
        address = str(change.moved_from)
        record = state.resources.get(address)
    return address, record


def _allowing_the_rest(
    command: str, plan: Plan, report: ApplyReport, recorded: int, environment: Environment
) -> str:
    """The command that goes on after the time budget ran out, with --allow-large-change
    when the guard would stop what is left: the rest of a change this run was let through
    with (a first bulk load into a small state, say) is not a new large change."""
    if ALLOW_LARGE_CHANGE in command.split():
        return command
    creating = {c.address for c in plan.changes if c.action is Action.CREATE}
    left = sum(
        1
        for outcome in report.outcomes
        if outcome.status is NodeStatus.NOT_STARTED and outcome.address in creating
    )
    guard = environment.large_change_guard
    stops = large_change(
        left, recorded, min_records=guard.min_records, max_create_share=guard.max_create_share
    )
    return command if stops is None else f"{command} {ALLOW_LARGE_CHANGE}"


def _manifests_folder(inputs: Inputs) -> Path:
    """The folder whose git commit the history names: that of the first path (a saved
    plan's folder when applying one), the current folder by default."""
    first = inputs.paths[0] if inputs.paths else Path(".")
    return first if first.is_dir() else first.parent


def _must_report(plan: Plan) -> bool:
    """Whether the plan holds changes that apply reports on although it sends nothing for
    them (refused, rejected at the service, needs-decision: what plan exits 1 for): apply
    runs so that they are counted and exit 1."""
    return bool(plan.blocked)
