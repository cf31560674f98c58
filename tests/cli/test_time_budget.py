"""``apply --time-budget`` through the CLI, on the built-in local environment held to one
request a second: a budget of one second fits not even the first operation (1.02 s), so the
run stops before sending anything, whatever the machine's speed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import run


@pytest.fixture
def slow_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (project / "customs-batch.yaml").write_text(
        "environments:\n  local:\n    rate_limit: 1/second\n", encoding="utf-8"
    )
    monkeypatch.chdir(project)
    return project


def test_a_budget_too_short_for_the_next_operation_stops_with_exit_4_and_the_command_to_resume(
    slow_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "apply", "manifests", "--auto-approve", "--time-budget", "1s")
    assert code == 4, err
    assert "Apply: 0 succeeded, 0 failed, 0 skipped, 9 not-started" in out
    assert "Time budget of 1s used up: 9 operation(s) not started" in err
    assert "customs-batch apply manifests --auto-approve --time-budget 1s" in err

    code, out, err = run(capsys, "apply", "manifests", "--auto-approve")
    assert code == 0, err
    assert "Apply: 9 succeeded, 0 failed" in out


def test_the_json_summary_says_the_budget_ran_out(
    slow_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "apply", "--auto-approve", "--time-budget", "1s", "--format", "json"
    )
    assert code == 4
    summary = json.loads(out.splitlines()[-1])
    assert summary["type"] == "summary"
    assert summary["outOfTime"] is True and summary["not-started"] == 9
    assert "customs-batch apply --auto-approve --time-budget 1s --format json" in err


def test_a_saved_plan_resumes_through_a_new_plan(
    slow_project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(capsys, "plan", "-out", "release.plan")[0] == 0
    code, _, err = run(capsys, "apply", "release.plan", "--time-budget", "1s")
    assert code == 4
    # Commands that run as printed: the paths the plan read (none: the default) and the
    # environment when a command without --env would pick another.
    assert (
        "customs-batch plan -out release.plan, then "
        "customs-batch apply release.plan --time-budget 1s\n"
    ) in err
    assert run(capsys, "plan", "manifests", "-out", "release.plan")[0] == 0
    monkeypatch.setenv("CUSTOMS_BATCH_ENV", "local")
    code, _, err = run(capsys, "apply", "release.plan", "--time-budget", "1s")
    assert code == 4
    assert (
        "customs-batch plan manifests -out release.plan --env local, then "
        "customs-batch apply release.plan --time-budget 1s --env local\n"
    ) in err


@pytest.mark.parametrize("text", ["5x", "1.5h", "30m5h", "0s"])
def test_a_bad_budget_is_a_usage_error_before_anything_starts(
    slow_project: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    code, _, err = run(capsys, "apply", "--auto-approve", "--time-budget", text)
    assert code == 64
    assert f"--time-budget {text!r}" in err and "hint:" in err
    assert not (slow_project / ".customs-batch" / "local" / "state.json").exists()


def test_a_budget_too_long_to_be_a_number_is_a_usage_error_not_an_internal_error(
    slow_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "apply", "--auto-approve", "--time-budget", "1" + "0" * 400 + "h")
    assert code == 64, out + err
    assert "is longer than 8784h (366 days)" in err and "hint:" in err
    assert "internal error" not in err and "OverflowError" not in err
    assert len(err.splitlines()) == 2
    assert not (slow_project / ".customs-batch" / "local" / "state.json").exists()


def test_help_shows_the_option_and_its_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "apply", "--help")
    assert code == 0
    assert "--time-budget DURATION" in out and "exit 4" in out


def test_a_saved_plan_resumes_through_a_new_plan_at_its_mrn_check_level(
    slow_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The plan made again is made as the saved one was: at its --mrn-check-digit level.
    assert run(capsys, "plan", "--mrn-check-digit", "warning", "-out", "release.plan")[0] == 0
    code, _, err = run(capsys, "apply", "release.plan", "--time-budget", "1s")
    assert code == 4
    assert (
        "customs-batch plan --mrn-check-digit warning -out release.plan, then "
        "customs-batch apply release.plan --time-budget 1s\n"
    ) in err


def test_a_saved_plan_of_a_part_resumes_through_a_new_plan_of_that_part(
    slow_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The plan made again was one of the whole batch, whatever part the saved plan was of.
    part = ["-l", "lane=rtm-ham", "--exclude", "TemplateGroup/eu-road"]
    assert run(capsys, "plan", *part, "-out", "release.plan")[0] == 0
    code, _, err = run(capsys, "apply", "release.plan", "--time-budget", "1s")
    assert code == 4
    assert (
        "customs-batch plan -l lane=rtm-ham --exclude TemplateGroup/eu-road -out release.plan, "
        "then customs-batch apply release.plan --time-budget 1s\n"
    ) in err
