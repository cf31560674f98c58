"""``policy test`` as a function: each policy with its examples that misbehave."""

from __future__ import annotations

from pathlib import Path

from customs_batch.commands.policy import PolicyTestOptions, run_policy_examples
from customs_batch.errors import ExitCode

POLICY = """\
id: team.declaration-range
severity: error
kinds: [ExportCancellation]
expression: spec.declarationId < 1000
message: our declarations are numbered below 1000
examples:
  good: [{kind: ExportCancellation, metadata: {name: a}, spec: {declarationId: GOOD}}]
  bad: [{kind: ExportCancellation, metadata: {name: a}, spec: {declarationId: BAD}}]
"""


def _project(root: Path, good: int, bad: int) -> None:
    (root / "policies").mkdir(parents=True)
    (root / "customs-batch.yaml").write_text("default_environment: local\n", encoding="utf-8")
    text = POLICY.replace("GOOD", str(good)).replace("BAD", str(bad))
    (root / "policies" / "team.yaml").write_text(text, encoding="utf-8")


def test_a_project_without_policies_has_nothing_to_test(tmp_path: Path) -> None:
    (tmp_path / "customs-batch.yaml").write_text("default_environment: local\n", encoding="utf-8")
    result = run_policy_examples(PolicyTestOptions(tmp_path))
    assert not result.found and result.folder == tmp_path / "policies"
    assert result.exit_code is ExitCode.OK


def test_examples_that_behave(tmp_path: Path) -> None:
    _project(tmp_path, good=5, bad=5000)
    result = run_policy_examples(PolicyTestOptions(tmp_path))
    assert result.found and result.findings == ()
    [outcome] = result.outcomes
    assert outcome.policy.id == "team.declaration-range"
    assert outcome.failures == ()
    assert result.exit_code is ExitCode.OK


def test_examples_that_misbehave_exit_1(tmp_path: Path) -> None:
    _project(tmp_path, good=5000, bad=5)
    [outcome] = run_policy_examples(PolicyTestOptions(tmp_path)).outcomes
    assert [(f.which, f.number) for f in outcome.failures] == [("good", 1), ("bad", 1)]
    assert run_policy_examples(PolicyTestOptions(tmp_path)).exit_code is ExitCode.FINDINGS


def test_a_policy_file_with_a_problem_is_a_finding(tmp_path: Path) -> None:
    _project(tmp_path, good=5, bad=5000)
    (tmp_path / "policies" / "broken.yaml").write_text("id: [\n", encoding="utf-8")
    result = run_policy_examples(PolicyTestOptions(tmp_path))
    assert result.findings and result.exit_code is ExitCode.FINDINGS
