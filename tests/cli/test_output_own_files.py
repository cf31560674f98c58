"""-o FILE and plan -out FILE never replace what the run reads (a manifest, a template, a
spreadsheet, a policy file, customs-batch.yaml) nor the tool's own records (the state, its
backup, the journal, the history, the lock, the load cache): the command is refused, nothing
is written, the file is left byte for byte as it was. An earlier report or saved plan, which
the run does not read, is replaced as before."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import EXAMPLES, run

STATE = Path(".customs-batch/local/state.json")
HISTORY = Path(".customs-batch/local/history.jsonl")
USAGE = 64


@pytest.fixture
def applied(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The examples' project (manifests, spreadsheets, templates, policies, settings) in
    ``tmp_path``, applied once to the built-in environment: it has a state and a history."""
    for name in ("manifests", "templates", "data", "policies"):
        shutil.copytree(EXAMPLES / name, tmp_path / name)
    shutil.copy(EXAMPLES / "customs-batch.yaml", tmp_path / "customs-batch.yaml")
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, out + err
    assert (tmp_path / STATE).is_file() and (tmp_path / HISTORY).is_file()
    return tmp_path


def _refused(capsys: pytest.CaptureFixture[str], target: Path, *argv: str, says: str) -> str:
    """Run ``argv``; assert it is refused saying ``says`` and ``target`` is untouched."""
    before = target.read_bytes() if target.exists() else None
    mode = target.stat().st_mode if target.exists() else None
    code, out, err = run(capsys, *argv)
    assert code == USAGE, out + err
    assert says in err, err
    assert "name another file" in err, err
    assert "Traceback" not in err
    if before is None:
        assert not target.exists()
    else:
        assert target.read_bytes() == before
        assert target.stat().st_mode == mode
    return err


def test_validate_o_the_state_is_refused_and_plan_still_reads_it(
    applied: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(
        capsys,
        applied / STATE,
        "validate",
        "-o",
        str(STATE),
        says="is the state of environment local",
    )
    assert f"cannot write the report to {STATE}" in err
    code, out, err = run(capsys, "plan")
    assert code == 0, out + err


def test_validate_o_the_history_is_refused_and_it_still_verifies(
    applied: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _refused(
        capsys,
        applied / HISTORY,
        "validate",
        "-o",
        str(HISTORY),
        says="is the history of environment local",
    )
    code, out, err = run(capsys, "history", "verify")
    assert code == 0, out + err


def test_plan_out_the_state_is_refused(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _refused(
        capsys,
        applied / STATE,
        "plan",
        "-out",
        str(STATE),
        says="is the state of environment local",
    )
    assert run(capsys, "plan")[0] == 0


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("state.json.backup", "is the state's backup of environment local"),
        ("journal.jsonl", "is the journal of environment local"),
        ("state.lock", "is the lock of environment local"),
        ("a-new-report.txt", "is in .customs-batch, customs-batch's own folder"),
    ],
)
def test_the_other_records_are_refused_whether_they_exist_or_not(
    applied: Path, capsys: pytest.CaptureFixture[str], name: str, says: str
) -> None:
    target = applied / ".customs-batch" / "local" / name
    _refused(capsys, target, "plan", "-o", str(target), says=says)


def test_the_load_cache_is_refused(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entry = next(p for p in (applied / ".customs-batch" / "cache").iterdir() if p.name[0] != ".")
    _refused(capsys, entry, "validate", "-o", str(entry), says="customs-batch's own folder")


def test_a_state_kept_outside_customs_batch_is_refused_too(
    applied: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = applied / "customs-batch.yaml"
    settings.write_text(
        settings.read_text() + "environments:\n  local:\n    state_dir: records/here\n"
    )
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    state = applied / "records" / "here" / "state.json"
    assert state.is_file()
    _refused(
        capsys,
        state,
        "validate",
        "-o",
        "records/here/state.json",
        says="is the state of environment local",
    )
    backup = applied / "records" / "here" / "state.json.backup"
    _refused(
        capsys,
        backup,
        "plan",
        "-out",
        str(backup),
        says="is the state's backup of environment local",
    )
    # Anything else in that folder is the user's own.
    assert run(capsys, "validate", "-o", "records/here/report.txt")[0] == 0


def test_a_manifest_named_on_the_command_line_is_refused(
    applied: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = applied / "manifests" / "movements.yaml"
    manifest.chmod(0o644)
    _refused(
        capsys,
        manifest,
        "validate",
        "manifests/movements.yaml",
        "-o",
        "manifests/movements.yaml",
        says="is a manifest this run reads",
    )


def test_a_spreadsheet_a_for_each_reads_is_refused(
    applied: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sheet = applied / "data" / "movements.xlsx"
    _refused(
        capsys,
        sheet,
        "validate",
        "manifests/movements-sheet.yaml",
        "--format",
        "html",
        "-o",
        "data/movements.xlsx",
        says="is a spreadsheet this run reads",
    )


def test_the_settings_a_template_and_a_policy_file_are_refused(
    applied: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _refused(
        capsys,
        applied / "customs-batch.yaml",
        "validate",
        "-o",
        "customs-batch.yaml",
        says="it is the project's settings (customs-batch.yaml)",
    )
    _refused(
        capsys,
        applied / "templates" / "rotterdam-export.yaml.j2",
        "plan",
        "-o",
        "templates/rotterdam-export.yaml.j2",
        says="is a template this run reads",
    )
    _refused(
        capsys,
        applied / "policies" / "lanes.yaml",
        "validate",
        "-o",
        "policies/lanes.yaml",
        says="is a policy file this run reads",
    )


def test_a_link_to_a_manifest_or_a_roundabout_name_for_it_is_refused(
    applied: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = applied / "manifests" / "movements.yaml"
    (applied / "latest.yaml").symlink_to("manifests/movements.yaml")
    os.link(manifest, applied / "hard.yaml")
    for name in ("latest.yaml", "hard.yaml", "./manifests/../manifests/movements.yaml"):
        _refused(
            capsys,
            manifest,
            "validate",
            "manifests",
            "-o",
            name,
            says="is a manifest this run reads",
        )
    assert (applied / "latest.yaml").is_symlink()


def test_inputs_are_refused_when_the_load_cache_answers_for_them(
    applied: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # apply filled the cache: this run reads neither the manifest nor its spreadsheet.
    assert run(capsys, "validate")[0] == 0
    for target, says in (
        ("data/movements.xlsx", "is a spreadsheet this run reads"),
        ("manifests/movements-sheet.yaml", "is a manifest this run reads"),
        ("templates/rotterdam-export.yaml.j2", "is a template this run reads"),
    ):
        _refused(capsys, applied / target, "validate", "-o", target, says=says)


def test_inputs_read_by_loading_processes_are_refused(
    applied: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for target, says in (
        ("data/movements.xlsx", "is a spreadsheet this run reads"),
        ("manifests/movements.yaml", "is a manifest this run reads"),
    ):
        _refused(
            capsys, applied / target, "validate", "-j", "2", "--no-cache", "-o", target, says=says
        )


def test_an_earlier_report_and_saved_plan_are_replaced(
    applied: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = applied / "report.txt"
    report.write_text("an older report\n")
    code, _, err = run(capsys, "validate", "-o", "report.txt")
    assert code == 0, err
    assert report.read_text() == "0 errors, 0 warnings in 15 documents (8 files)\n"
    saved = applied / "release.plan"
    for _ in range(2):
        code, _, err = run(capsys, "plan", "-out", "release.plan", "-o", "plan.md")
        assert code == 0, err
    assert saved.read_text().startswith("{")
    assert run(capsys, "apply", "release.plan")[0] == 0


@pytest.mark.parametrize("argv", [("validate", "manifests"), ("status",), ("env", "show")])
def test_the_api_key_file_is_refused(
    applied: Path, tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
) -> None:  # fmt: skip
    # Written over by a report, the key would be lost and customs data left in its place.
    key = tmp_path_factory.mktemp("home") / "sandbox.key"
    key.write_text("file-s3cret\n", encoding="utf-8")
    key.chmod(0o600)
    settings = applied / "customs-batch.yaml"
    settings.write_text(
        settings.read_text(encoding="utf-8")
        + f"environments:\n  keyed:\n    base_url: http://127.0.0.1:9\n    api_key_file: {key}\n",
        encoding="utf-8",
    )
    _refused(capsys, key, *argv, "-o", str(key), says="it is the API key file of environment keyed")
