"""``plan`` as a function: compare the manifests with the recorded state, send nothing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from customs_batch.backends import rate_limit_note, sealer_for
from customs_batch.commands._inputs import Inputs
from customs_batch.environments import Environment, StateKind, load_project
from customs_batch.errors import ExitCode
from customs_batch.kinds import Address
from customs_batch.planning import Action, Plan, plan_changes
from customs_batch.planning.diff import tombstone_take_overs
from customs_batch.planning.graph import Edge, dependency_edges
from customs_batch.planning.guard import large_change
from customs_batch.planning.planfile import digest_documents, mrn_check_word, write_plan
from customs_batch.service_address import same_service
from customs_batch.state.backend import PUSHED_SERVICE
from customs_batch.state.lock import in_flight_of


@dataclass(frozen=True)
class PlanOptions:
    """What ``plan`` is asked: the inputs, and where to save the plan for ``apply`` (if at
    all)."""

    inputs: Inputs = field(default_factory=Inputs)
    save_to: Path | None = None


@dataclass(frozen=True)
class PlanResult:
    """A plan, the environment it was made for and what a report of it needs.

    ``edges`` are the documents' dependency edges with their reasons (for the graph
    formats); ``rate_limit_note`` says, when true, that the rate limit is this process's own;
    ``saved_to`` is where the plan was saved, if asked.
    """

    plan: Plan
    environment: Environment
    edges: Mapping[Address, tuple[Edge, ...]]
    rate_limit_note: str | None = None
    saved_to: Path | None = None
    sensitive_note: str | None = None
    """Set when sensitive values (access codes) could not be compared: no API key here."""
    service_note: str | None = None
    """Set when the state was written for another service than the environment now names."""

    def exit_code(self, *, detailed: bool = False) -> ExitCode:
        """1 while anything is refused, rejected at the service or needs a decision; with
        ``detailed``, 2 when there are changes; else 0."""
        if self.plan.blocked:
            return ExitCode.FINDINGS
        if detailed and self.plan.has_changes:
            return ExitCode.CHANGES
        return ExitCode.OK


def make_plan(options: PlanOptions) -> PlanResult:
    """Plan the selected documents against the chosen environment's state.

    Reads the manifests (:class:`~customs_batch.commands.InvalidManifests` when any has an
    error) and the state, takes no lock and needs no network. A partial selection leaves
    the state's other records out of the plan instead of calling them orphaned.
    """
    inputs = options.inputs
    loaded = inputs.loaded()
    documents = loaded.documents
    environment = inputs.chosen_environment()
    unchanged = loaded.unchanged(environment)
    backend = inputs.backend(environment)
    state = backend.read()
    backend.refuse_a_state_behind_its_history(state)
    # The edges' tables are built and dropped before the planned changes exist: with
    # 100,000 documents, the two at once were the peak of a plan's memory.
    holder = backend.running_holder()
    edges = dependency_edges(documents)
    # The digest lets apply check that a saved plan's manifests did not change since: only a
    # saved plan needs it (about 15 us a document).
    saving = options.save_to is not None
    plan = plan_changes(
        documents,
        state,
        inputs_digest=(
            digest_documents(documents, sealer_for(environment), state.lineage) if saving else ""
        ),
        orphans=inputs.selection().everything,
        consume=True,  # nothing below needs the documents again
        edges=edges,
        unchanged=unchanged,
        in_flight=in_flight_of(holder),
    )
    if unchanged is not None:
        unchanged.save()
    # A tombstone tracked again (a rename) whose object another environment took over, and
    # a creation of what another environment of the service recorded (its document applied
    # there). What compares with the other states brings the client with it: imported only
    # for a plan that takes a tombstone over or creates something (plan sends nothing, and
    # starts faster without it); the other states are read only if there are any.
    if tombstone_take_overs(plan, state) or (
        any(
            (change.action is Action.CREATE and change.identity)
            or change.action in (Action.UPDATE, Action.RESUBMIT)
            for change in plan.changes
        )
        and _other_states_may_exist(environment)
    ):
        from customs_batch.commands.state import objects_held_elsewhere
        from customs_batch.execution.reconcile import (
            refuse_creations_held_elsewhere,
            refuse_tombstones_held_elsewhere,
            refuse_writes_held_elsewhere,
        )

        others = objects_held_elsewhere(environment, backend)
        plan = refuse_tombstones_held_elsewhere(plan, state, others)
        plan = refuse_creations_held_elsewhere(plan, others)
        # And an update of an object another environment of the service records too.
        plan = refuse_writes_held_elsewhere(plan, state, others)
    plan = guarded(plan, len(state.resources), environment)
    if options.save_to is not None:
        if not plan.lineage:  # nothing else tells this empty state from another project's
            plan = replace(plan, state_at=backend.location)
        # apply reads the manifests again as this plan read them (a guarantee's access code,
        # and the documents the inputs digest was taken over).
        plan = replace(
            plan,
            mrn_check_digit=mrn_check_word(inputs.mrn_check_digit),
            labels=inputs.labels,
            targets=inputs.targets,
            excluded=inputs.excluded,
        )
        write_plan(
            options.save_to,
            plan,
            environment=environment.name,
            sealer=sealer_for(environment),
            manifests=[str(path) for path in inputs.manifest_paths()],
        )
    uncompared = state.sealer.uncompared if state.sealer is not None else 0
    moved_from = backend.service_moved_from
    return PlanResult(
        plan,
        environment,
        edges,
        rate_limit_note=rate_limit_note(environment),
        saved_to=options.save_to,
        service_note=_service_note(moved_from, environment),
        sensitive_note=(
            f"{uncompared} recorded access code(s) were taken as unchanged without being "
            f"compared: the state keeps them as digests keyed by the API key, and "
            f"{environment.credential.describe()} cannot be read here. A plan where the key "
            "is set (apply's) compares them"
            if uncompared
            else None
        ),
    )


def _service_note(moved_from: str | None, environment: Environment) -> str | None:
    """What plan says of a state written for another service than the environment's."""
    if moved_from is None:
        return None
    here = environment.base_url or "the built-in sandbox"
    if moved_from == PUSHED_SERVICE:
        written = (
            "the state was pushed here (`customs-batch state push`) from a service not checked yet"
        )
    else:
        written = f"the state was written for the service at {moved_from}"
    return (
        f"{written}, and {environment.name!r} names {here}: this plan compares the manifests "
        "with records that may be another service's. apply first reads some of them back "
        "here, and sends nothing unless this service holds them as recorded"
    )


def guarded(plan: Plan, recorded: int, environment: Environment) -> Plan:
    """The plan, saying whether the environment's guard on the size of a change stops an
    apply of it to a state of ``recorded`` records."""
    guard = environment.large_change_guard
    verdict = large_change(
        plan.counts[Action.CREATE],
        recorded,
        min_records=guard.min_records,
        max_create_share=guard.max_create_share,
    )
    return replace(plan, large_change=verdict)


def _other_states_may_exist(environment: Environment) -> bool:
    """Whether another state of ``environment``'s service may exist for plan to compare
    its creations with: a PostgreSQL state (its database may hold others), or another
    environment of customs-batch.yaml at the same base_url. Tells a plan of the usual
    project, one environment a service, not to load what compares (a fifth of a second)."""
    if not environment.base_url:
        return False  # each built-in sandbox is a service of its own
    if environment.state.backend is StateKind.POSTGRES:
        return True
    return any(
        other.name != environment.name and same_service(other.base_url, environment.base_url)
        for other in load_project().environments.values()
    )
