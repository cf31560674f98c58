"""plan --format, -o/--output and the GitHub job summary, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import run


def test_every_format_is_offered_and_renders(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "plan", "--help")
    assert "[text|json|markdown|html|mermaid|dot]" in out
    code, out, _ = run(capsys, "plan", "--format", "markdown")
    assert code == 0
    assert "### customs-batch plan for `local`" in out and "| to create | 9 |" in out
    code, out, _ = run(capsys, "plan", "--format", "mermaid")
    assert code == 0 and out.startswith("flowchart LR\n")
    assert '-->|"reference"|' in out and '-->|"same shipment/HAWB"|' in out
    code, out, _ = run(capsys, "plan", "--format", "dot")
    assert code == 0 and out.startswith("digraph plan {") and "same shipment/HAWB" in out


def test_output_writes_the_rendered_plan_to_a_file_and_the_summary_to_stderr(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "plan", "--format", "json", "-o", "plan.json", "-out", "r.plan")
    assert code == 0
    assert out == ""
    assert "Plan: 9 to create" in err
    assert json.loads((project / "plan.json").read_text())["summary"]["create"] == 9
    assert (project / "r.plan").is_file()
    assert run(capsys, "plan", "-o", "plan.txt")[0] == 0
    text = (project / "plan.txt").read_text()
    assert "+ create         TemplateGroup/eu-road" in text and "\x1b[" not in text
    code, _, err = run(capsys, "plan", "--output", "missing/plan.md", "--format", "markdown")
    assert code == 3
    assert "cannot write the plan to missing/plan.md" in err and "folder exists" in err


def test_plan_appends_its_markdown_to_the_github_job_summary(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = project / "summary.md"
    summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, _ = run(capsys, "plan")
    assert code == 0 and "Plan: 9 to create" in out
    text = summary.read_text()
    assert text.startswith("# earlier step\n")
    assert "### customs-batch plan for `local`" in text and "| to create | 9 |" in text


def test_a_summary_file_that_cannot_be_written_is_only_a_warning(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(project / "no" / "such" / "file"))
    code, out, err = run(capsys, "plan", "--detailed-exitcode")
    assert code == 2 and "Plan: 9 to create" in out
    assert "warning: cannot append the job summary" in err


def test_validate_and_apply_append_their_summaries_too(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = project / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert run(capsys, "validate", "manifests")[0] == 0
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    text = summary.read_text()
    assert "### customs-batch validate: passed\n\n**0 errors, 0 warnings in 9 documents" in text
    assert "### customs-batch apply to `local`: succeeded" in text
    assert "| succeeded | 9 |" in text and "| failed | 0 |" in text
    assert text.index("validate: passed") < text.index("apply to `local`")


def test_a_failed_apply_lists_each_failure_in_the_summary(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    movements = project / "manifests" / "movements.yaml"
    movements.write_text(movements.read_text().replace("quantity: 4", "quantity: 5", 1))
    summary = project / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert run(capsys, "apply", "--auto-approve")[0] == 1
    text = summary.read_text()
    assert "apply to `local`: failed" in text
    assert "- skipped **`Movement/mov-a1-storage-in`**: a movement is immutable" in text
    assert "| skipped | 1 |" in text


@pytest.mark.parametrize("format_name", ["text", "json"])
def test_an_apply_that_sends_nothing_still_ends_with_its_summary(
    format_name: str,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Nothing to apply, or stopped by the large-change guard: the job summary says so, and
    # the JSON stream still ends with its summary event.
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    summary = project / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, _ = run(capsys, "apply", "--auto-approve", "--format", format_name)
    assert code == 0
    assert "### customs-batch apply to `local`: nothing to apply" in summary.read_text()
    if format_name == "json":
        last = json.loads(out.splitlines()[-1])
        assert (last["type"], last["ended"], last["ok"]) == ("summary", "nothing-to-do", True)
        assert last["succeeded"] == 0 and last["failed"] == 0
    (project / "customs-batch.yaml").write_text(
        "environments:\n  local:\n"
        "    large_change_guard: {min_records: 1, max_create_share: 0.05}\n",
        encoding="utf-8",
    )
    (project / "manifests" / "new-group.yaml").write_text(  # one create: over 5 % of 9
        "apiVersion: customs-batch/v1\nkind: TemplateGroup\nmetadata: {name: g-new}\n"
        "spec: {name: New, code: NEW-1, companyId: 1}\n",
        encoding="utf-8",
    )
    code, out, err = run(capsys, "apply", "--auto-approve", "--format", format_name)
    assert code == 1, out + err
    assert "stopped by the large-change guard, nothing was sent" in summary.read_text()
    if format_name == "json":
        last = json.loads(out.splitlines()[-1])
        assert (last["type"], last["ended"], last["ok"]) == ("summary", "too-large", False)


@pytest.mark.parametrize(
    ("variable", "value", "coloured"),
    [("NO_COLOR", "1", False), ("TERM", "dumb", False), ("TERM", "xterm-256color", True)],
)
def test_the_plan_on_a_terminal_has_colours_unless_told_not_to(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    coloured: bool,
) -> None:
    # The plan's actions were yellow and green on a terminal under NO_COLOR and TERM=dumb,
    # where the tables and the progress bar of the same run had none.
    import click.utils

    monkeypatch.setattr(click.utils, "should_strip_ansi", lambda *_: False)  # a terminal
    monkeypatch.setenv(variable, value)
    code, out, _ = run(capsys, "plan")
    assert code == 0
    assert "+ create" in out
    assert ("\x1b[" in out) is coloured


def test_the_summary_of_an_apply_that_sends_nothing_says_how_long_it_took(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The JSON summary of a run that sent nothing said "seconds": 0, whatever the run had
    # waited (for the lock, before looking for lost submissions).
    import functools

    import customs_batch.cli.apply
    from customs_batch.commands import apply_changes

    assert run(capsys, "apply", "--auto-approve")[0] == 0
    ticks = iter([100.0, 107.5])
    monkeypatch.setattr(
        customs_batch.cli.apply,
        "apply_changes",
        functools.partial(apply_changes, clock=lambda: next(ticks)),
    )
    code, out, _ = run(capsys, "apply", "--auto-approve", "--format", "json")
    assert code == 0
    last = json.loads(out.splitlines()[-1])
    assert (last["ended"], last["seconds"]) == ("nothing-to-do", 7.5)
