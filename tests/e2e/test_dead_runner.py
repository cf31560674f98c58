"""A CI runner whose apply is killed, under the recipe of examples/ci: the workflow's step
that commits the state (``if: always()``) is run as it is written, a fresh clone of what it
pushed plans nothing that was sent as a create, and applying from that clone ends with one
declaration per document at the emulator."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e import batches
from tests.e2e.conftest import Project, Running, Sandbox
from tests.e2e.gate import GatedProxy
from tests.e2e.recovery import apply_until_done, departure_weights

pytestmark = pytest.mark.e2e

WORKFLOW = Path(__file__).resolve().parents[2] / "examples/ci/.github/workflows/customs-batch.yml"
DEPARTURES = 8
ENVIRONMENT = yaml.safe_load(WORKFLOW.read_text())["env"]["CUSTOMS_BATCH_ENV"]
"""The environment the workflow applies to."""
EXPRESSIONS = {"${{ env.CUSTOMS_BATCH_ENV }}": ENVIRONMENT, "${{ github.sha }}": "0" * 40}
"""What the runner fills in for the expressions of a step."""


class Checkout(Project):
    """A checkout of the repository whose environment is the workflow's, at the emulator."""

    def write_config(self) -> None:
        config = {
            "default_environment": ENVIRONMENT,
            "environments": {ENVIRONMENT: self.environment()},
        }
        (self.root / "customs-batch.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")

    @property
    def state_dir(self) -> Path:
        return Path(self.root, ".customs-batch", ENVIRONMENT)


def _submits_a_departure(method: str, path: str) -> bool:
    return method == "POST" and path == "/v1/declarations/transit"


def _commit_step() -> dict[str, Any]:
    """The apply job's step that commits the state, as the workflow writes it."""
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["apply"]["steps"]
    names = [step.get("name") for step in steps]
    step: dict[str, Any] = steps[names.index("commit the state")]
    assert names.index("commit the state") > names.index("apply")
    # Runs when apply failed or was cancelled (!cancelled() would skip it on a cancel).
    assert step["if"] == "always()"
    return step


def _git_env(home: Path) -> dict[str, str]:
    """git with no configuration but the test's own (an empty home)."""
    return {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}


def _git(home: Path, cwd: Path, *argv: str) -> None:
    done = subprocess.run(
        ["git", *argv], cwd=cwd, env=_git_env(home), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"git {' '.join(argv)}: {done.stdout}{done.stderr}"


def _run_commit_step(home: Path, checkout: Path) -> None:
    """The step, run in ``checkout`` as the runner runs a ``run:`` step (bash -e)."""
    step = _commit_step()
    env = _git_env(home) | {"GITHUB_SHA": "0" * 40, "CUSTOMS_BATCH_ENV": ENVIRONMENT}
    script = _filled(step["run"])
    for name, value in step.get("env", {}).items():
        env[name] = _filled(value)
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"the commit step failed: {done.stdout}{done.stderr}"


def _filled(text: str) -> str:
    for expression, value in EXPRESSIONS.items():
        text = text.replace(expression, value)
    assert "${{" not in text, f"an expression the test cannot fill: {text}"
    return text


def _clone(home: Path, origin: Path, sandbox: Sandbox, name: str) -> Checkout:
    """A fresh clone of the repository, as the next run's checkout."""
    _git(home, origin.parent, "clone", "--quiet", str(origin), name)
    return Checkout(origin.parent / name, sandbox)


def _state_files(project: Checkout) -> list[str]:
    return sorted(path.name for path in project.state_dir.iterdir())


@pytest.mark.parametrize(
    "applied_before",
    [0, 4],
    ids=["a first run killed", "a later run killed"],
)
def test_a_runner_killed_mid_apply_leaves_a_state_the_next_clone_reads(
    tmp_path: Path, sandbox: Sandbox, applied_before: int
) -> None:
    home = tmp_path / "git-home"
    home.mkdir()
    origin = tmp_path / "origin.git"
    _git(home, tmp_path, "init", "--quiet", "--bare", "--initial-branch=main", str(origin))
    _git(home, tmp_path, "clone", "--quiet", str(origin), "runner")
    sandbox.start()
    # One worker: when the gate holds the eighth submission, the seven before it are
    # answered and recorded, and nothing else is on its way.
    runner = Checkout(tmp_path / "runner", sandbox, parallelism=1)
    runner.write(".gitignore", ".customs-batch/\n")
    _git(home, runner.root, "symbolic-ref", "HEAD", "refs/heads/main")
    who = ("-c", "user.name=dev", "-c", "user.email=dev@example.com")
    if applied_before:
        # An earlier merge applied the first departures, and its run committed the state.
        runner.write("manifests/departures.yaml", batches.departures(applied_before))
        _git(home, runner.root, "add", "-A")
        _git(home, runner.root, *who, "commit", "--quiet", "-m", "the first departures")
        applied = runner.run("apply", "--auto-approve")
        assert applied.returncode == 0, applied.stdout + applied.stderr
        _run_commit_step(home, runner.root)
    runner.write("manifests/departures.yaml", batches.departures(DEPARTURES))
    _git(home, runner.root, "add", "-A")
    _git(home, runner.root, *who, "commit", "--quiet", "-m", "eight departures")
    _git(home, runner.root, "push", "--quiet", "-u", "origin", "main")

    # The apply step of the workflow, killed while the eighth submission is at the service.
    held = DEPARTURES - applied_before
    try:
        with GatedProxy(sandbox.url, hold=held, select=_submits_a_departure) as gate:
            runner.edit("customs-batch.yaml", sandbox.url, gate.url)
            run = runner.start("apply", "--auto-approve")
            assert gate.held.wait(timeout=60), "the apply never sent its last departure"
            run.kill()
            gate.open()  # the service creates it; nobody reads the answer
            assert gate.forwarded.wait(timeout=60)
    finally:
        Running.reap_all()
    runner.write_config()
    assert len(sandbox.created_transit()) == DEPARTURES
    # The records of the run that never ended are in the journal alone; a first run left
    # no state.json at all.
    kept = ["journal.jsonl", "state.json"] if applied_before else ["journal.jsonl"]
    kept = sorted([*kept, "environment", "history.jsonl"])
    assert _state_files(runner) == sorted([*kept, "state.lock", "state.lock.info"])

    _run_commit_step(home, runner.root)

    fresh = _clone(home, origin, sandbox, "fresh")
    assert _state_files(fresh) == kept
    # The history came with the state: the killed request is there, its answer unknown.
    shown = fresh.run("history", "DepartureDeclaration/dep-e2e-08", "--format", "json")
    [lost] = json.loads(shown.stdout)["entries"]
    assert (lost["operation"], lost["status"]) == ("submit-departure", "unknown")
    plan = fresh.run("plan", "--detailed-exitcode")
    assert plan.returncode == 1, plan.stdout + plan.stderr
    assert "+ create" not in plan.stdout
    assert "? needs decision DepartureDeclaration/dep-e2e-08" in plan.stdout
    summary = (
        "Plan: 0 to create, 0 to update, 7 unchanged, 0 refused, 0 orphaned, 1 need a decision."
    )
    assert summary in plan.stdout, plan.stdout
    listed = fresh.run("status")
    assert listed.returncode == 0 and listed.stdout.count("DepartureDeclaration/") == 8

    # The next run, from the clone: apply finds the eighth at the service, a person adopts
    # it, and nothing is submitted twice.
    runs = apply_until_done(fresh)
    assert runs == 2, fresh.outputs
    created = fresh.sandbox.created_transit()
    assert sorted(d["totalWeight"] for d in created.values()) == departure_weights(DEPARTURES)
    records = fresh.state()
    assert {r["outputs"]["declarationId"] for r in records.values()} == set(created)

    # That run's step commits the folded state, which the clone after it plans as done.
    _run_commit_step(home, fresh.root)
    after = _clone(home, origin, sandbox, "after")
    assert _state_files(after) == [
        "environment",
        "history.jsonl",
        "journal.jsonl",
        "state.json",
        "state.json.backup",
    ]
    done = after.run("plan", "--detailed-exitcode")
    assert done.returncode == 0, done.stdout + done.stderr
    verified = after.run("history", "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
