"""``policy test`` as a function: each of the team's policies run on its own examples."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from customs_batch.errors import ExitCode

if TYPE_CHECKING:
    from customs_batch.findings import Finding
    from customs_batch.validation.policies import ExampleFailure
    from customs_batch.validation.policy_files import Policy


@dataclass(frozen=True)
class PolicyTestOptions:
    """``project``: a folder of the project (None: the current one); the folder of its
    customs-batch.yaml is found from there, as validate finds it."""

    project: Path | None = None


@dataclass(frozen=True)
class PolicyOutcome:
    """A policy and its examples that did not behave: a good one it refuses, a bad one it
    lets through."""

    policy: Policy
    failures: tuple[ExampleFailure, ...]


@dataclass(frozen=True)
class PolicyTestResult:
    """``folder``: where the policies are looked for, and whether it holds policy files
    (``found``); ``findings``: problems of the policy files themselves; ``outcomes``: each
    policy read, in order."""

    folder: Path
    found: bool
    findings: tuple[Finding, ...] = ()
    outcomes: tuple[PolicyOutcome, ...] = ()

    @property
    def exit_code(self) -> ExitCode:
        """1 when a policy file has a problem or an example misbehaves, else 0."""
        failed = self.findings or any(outcome.failures for outcome in self.outcomes)
        return ExitCode.FINDINGS if failed else ExitCode.OK


def run_policy_examples(options: PolicyTestOptions) -> PolicyTestResult:
    """Read the project's policies and run each on its own examples: every good one must
    pass, every bad one must fail."""
    from customs_batch.manifest.discover import folder_project_root
    from customs_batch.validation.team_rules import POLICY_DIR, has_policies

    root = folder_project_root(options.project or Path.cwd())
    folder = root / POLICY_DIR
    if not has_policies(root):
        return PolicyTestResult(folder, found=False)
    from customs_batch.validation.policies import run_examples
    from customs_batch.validation.policy_files import project_policies

    loaded = project_policies(root)
    outcomes = tuple(PolicyOutcome(rule, tuple(run_examples(rule))) for rule in loaded.policies)
    return PolicyTestResult(folder, True, tuple(loaded.findings), outcomes)
