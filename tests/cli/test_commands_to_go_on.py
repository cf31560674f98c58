"""The commands the tool prints to go on (in errors, hints, plan reasons, notices) name the
environment ``--env`` gave, so that they act where the run did, not on the default."""

from __future__ import annotations

import json
import shlex
import threading
from dataclasses import replace
from pathlib import Path

import openpyxl
import pytest

from customs_batch.cli._command_line import forget_env, remember_env, with_env
from customs_batch.environments import load_project
from customs_batch.state import LocalBackend
from tests.cli.conftest import run

# The default is a service nobody reaches: only --env local works without one.
SETTINGS = (
    "default_environment: remote\n"
    "environments:\n  remote:\n    base_url: http://127.0.0.1:9\n    api_key_env: RKEY\n"
)


@pytest.fixture
def elsewhere(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (project / "customs-batch.yaml").write_text(SETTINGS, encoding="utf-8")
    monkeypatch.chdir(project)
    monkeypatch.setenv("RKEY", "sandbox-key")
    return project


def _commands(text: str) -> list[list[str]]:
    return [
        shlex.split(part) for part in text.split("`")[1::2] if part.startswith("customs-batch ")
    ]


def test_a_hint_names_the_environment_and_runs_as_printed(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "state", "rm", "--env", "local", "Movement/nope")
    assert code == 64  # an address the state does not record: the user's mistake
    (printed,) = _commands(err)
    assert printed == ["customs-batch", "state", "list", "--env", "local"]
    code, _, err = run(capsys, *printed[1:])
    assert code == 0, err


def test_a_refusal_in_the_plan_names_the_environment(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address = "Movement/mov-a1-arrival"
    code, out, err = run(capsys, "apply", "--env", "local", "--auto-approve", "--target", address)
    assert code == 0, out + err
    movements = elsewhere / "manifests" / "movements.yaml"
    text = movements.read_text(encoding="utf-8")
    movements.write_text(text.replace("quantity: 10", "quantity: 7", 1), encoding="utf-8")
    assert movements.read_text(encoding="utf-8") != text
    code, out, err = run(capsys, "plan", "--env", "local", "--target", address)
    assert code == 1, out + err
    printed = _commands(" ".join(out.split()))
    assert printed, out
    for command in printed:
        assert command[-2:] == ["--env", "local"], command
    # Run as printed, it acts on the environment of the run (the default's state has none).
    forget = next(command for command in printed if command[1:3] == ["state", "rm"])
    code, out, err = run(capsys, *forget[1:])
    assert code == 0, out + err


def test_only_commands_that_take_the_option_get_it() -> None:
    remember_env(None, None, "staging")  # type: ignore[arg-type]
    try:
        text = (
            "`customs-batch state rm X`, `customs-batch validate`, `customs-batch plan --env "
            "prod`, `customs-batch sandbox serve`, `customs-batch nothing`"
        )
        assert with_env(text) == (
            "`customs-batch state rm X --env staging`, `customs-batch validate`, "
            "`customs-batch plan --env prod`, `customs-batch sandbox serve`, "
            "`customs-batch nothing`"
        )
    finally:
        forget_env()
    assert with_env("`customs-batch state rm X`") == "`customs-batch state rm X`"


def test_a_line_printed_by_an_apply_worker_names_the_environment_too() -> None:
    # Found in review: apply's outcome lines are printed by its worker threads, where the
    # environment kept for the command line was not seen: their commands had no --env.
    remember_env(None, None, "staging")  # type: ignore[arg-type]
    try:
        printed: list[str] = []
        worker = threading.Thread(
            target=lambda: printed.append(with_env("`customs-batch refresh`"))
        )
        worker.start()
        worker.join()
        assert printed == ["`customs-batch refresh --env staging`"]
    finally:
        forget_env()


@pytest.mark.parametrize(
    ("options", "read"),
    [
        (("--format", "markdown"), "stdout"),
        (("--format", "html"), "stdout"),
        (("--format", "json"), "stdout"),
        (("-o", "plan.txt"), "plan.txt"),
        (("--format", "markdown", "-o", "plan.md"), "plan.md"),
        ((), "summary.md"),
    ],
)
def test_a_refusal_names_the_environment_in_every_format_and_file_of_the_plan(
    elsewhere: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    options: tuple[str, ...],
    read: str,
) -> None:
    # Found probing: only the text plan printed to the terminal named --env. The markdown
    # plan a pull request shows, the HTML page, the JSON plan, a plan written with -o and
    # the job summary gave `customs-batch state rm ADDR` without it: copied from the
    # review, it acted on the default environment.
    address = "Movement/mov-a1-arrival"
    code, out, err = run(capsys, "apply", "--env", "local", "--auto-approve", "--target", address)
    assert code == 0, out + err
    movements = elsewhere / "manifests" / "movements.yaml"
    text = movements.read_text(encoding="utf-8")
    movements.write_text(text.replace("quantity: 10", "quantity: 7", 1), encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(elsewhere / "summary.md"))
    code, out, err = run(capsys, "plan", "--env", "local", "--target", address, *options)
    assert code == 1, out + err
    shown = out if read == "stdout" else (elsewhere / read).read_text(encoding="utf-8")
    printed = _commands(" ".join(shown.split()))
    assert any(command[1:3] == ["state", "rm"] for command in printed), shown
    for command in printed:
        assert command[-2:] == ["--env", "local"], command


def test_the_status_page_names_the_environment_in_the_commands_it_gives(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found probing: `status --env NAME --format html` told to run `customs-batch refresh`,
    # which refreshes the default environment, while the text said `... --env NAME`.
    code, out, err = run(capsys, "apply", "--env", "local", "--auto-approve")
    assert code == 0, out + err
    code, out, err = run(capsys, "status", "--env", "local", "--format", "html")
    assert code == 0, err
    printed = _commands(" ".join(out.split()))
    assert printed, out
    for command in printed:
        assert command[-2:] == ["--env", "local"], command


def test_the_status_json_names_the_environment_in_the_commands_it_gives(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As the text and the page do: a tool showing a declaration no longer found at the
    # service sends its user to the environment the command read, not the default.
    code, out, err = run(capsys, "apply", "--env", "local", "--auto-approve")
    assert code == 0, out + err
    address = "DepartureDeclaration/dep-rtm-ham-0001"
    backend = LocalBackend(load_project().environments["local"].state_dir)
    with backend.open("test") as session:
        record = session.state.resources[address]
        session.record(replace(record, not_found_at="2026-11-29T06:00:00Z"))
    code, out, err = run(capsys, "status", "--env", "local", "--format", "json")
    assert code == 0, err
    [message] = [
        entry["message"] for entry in json.loads(out)["declarations"] if entry["address"] == address
    ]
    printed = _commands(message)
    assert ["customs-batch", "state", "rm", "--gone", address, "--env", "local"] in printed, message


def _rows_whose_names_moved(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three spreadsheet rows named by their number applied with --env local, then the
    first deleted: each row left has another's name, and its way out is a command."""
    (folder / "manifests").mkdir(exist_ok=True)
    (folder / "data").mkdir(exist_ok=True)
    (folder / "manifests" / "m.yaml").write_text(
        "apiVersion: customs-batch/v1\nkind: Movement\nforEach: {file: ../data/m.csv}\n"
        'metadata: {name: "row-mov-{{ row_number }}"}\n'
        "spec: {shipmentId: shp_7Hk2Lm, hawbId: hawb_a1, action: ISL, "
        'quantity: "{{ row.qty }}", grossWeightKg: 10.0, customsSupervision: Y, '
        "goodsHandlingCode: N, partyId: rpty_p1}\n",
        encoding="utf-8",
    )
    rows = folder / "data" / "m.csv"
    rows.write_text("qty\n1\n2\n3\n", encoding="utf-8")
    code, out, err = run(capsys, "apply", "--env", "local", "--auto-approve", "manifests/m.yaml")
    assert code == 0, out + err
    rows.write_text("qty\n2\n3\n", encoding="utf-8")  # the first row deleted: names moved


def test_the_results_page_names_the_environment_in_the_commands_it_gives(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found probing: `results --env NAME --format html` told to run `customs-batch plan` and
    # `customs-batch state mv` for a row whose name moved, acting on the default environment.
    _rows_whose_names_moved(elsewhere, capsys)
    code, out, err = run(
        capsys, "results", "--env", "local", "--format", "html", "manifests/m.yaml"
    )
    assert code == 0, err
    printed = _commands(" ".join(out.split()))
    assert printed, out
    for command in printed:
        assert command[-2:] == ["--env", "local"], command


def test_the_json_events_of_apply_name_the_environment_in_the_commands_they_give(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found probing: apply --format json gave a refusal's reason (the plan event) and its
    # skipped outcome's detail without --env, while apply's text named it.
    address = "Movement/mov-a1-arrival"
    code, out, err = run(capsys, "apply", "--env", "local", "--auto-approve", "--target", address)
    assert code == 0, out + err
    movements = elsewhere / "manifests" / "movements.yaml"
    text = movements.read_text(encoding="utf-8")
    movements.write_text(text.replace("quantity: 10", "quantity: 7", 1), encoding="utf-8")
    code, out, err = run(
        capsys, "apply", "--env", "local", "--auto-approve", "--target", address, "--format", "json"
    )
    printed = _commands(" ".join(out.split()))
    assert any(command[1:3] == ["state", "rm"] for command in printed), out
    for command in printed:
        assert command[-2:] == ["--env", "local"], command


def test_the_json_of_results_names_the_environment_in_the_commands_it_gives(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As the plan's JSON does: a tool showing a row's errors sends its user to the
    # environment the command read, not the default.
    _rows_whose_names_moved(elsewhere, capsys)
    code, out, err = run(
        capsys, "results", "--env", "local", "--format", "json", "manifests/m.yaml"
    )
    assert code == 0, err
    printed = _commands(" ".join(out.split()))
    assert printed, out
    for command in printed:
        assert command[-2:] == ["--env", "local"], command


@pytest.mark.parametrize("command", ["results", "apply"])
def test_the_results_copies_of_the_sheets_name_the_environment_in_the_commands_they_give(
    elsewhere: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # Found probing: `results --env local --annotate DIR` (and apply's --annotate-results)
    # wrote `customs-batch plan` and `customs-batch state mv` into the copies' cells.
    _rows_whose_names_moved(elsewhere, capsys)
    option = {"results": "--annotate", "apply": "--annotate-results"}[command]
    extra = ["--auto-approve"] if command == "apply" else []
    run(capsys, command, "--env", "local", *extra, option, "copies", "manifests/m.yaml")
    copies = list((elsewhere / "copies").rglob("*.xlsx"))
    assert copies
    cells = []
    for copy in copies:
        book = openpyxl.load_workbook(copy)
        for sheet in book.worksheets:
            cells += [str(cell.value) for row in sheet.iter_rows() for cell in row if cell.value]
    printed = _commands(" ".join(" ".join(cells).split()))
    assert any(words[1:3] == ["state", "mv"] for words in printed), cells
    for words in printed:
        assert words[-2:] == ["--env", "local"], words


@pytest.mark.parametrize("command", ["plan", "apply", "status", "refresh", "results"])
def test_two_different_environments_on_one_command_line_are_refused(
    elsewhere: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # Found probing: `plan --env remote --env local` planned local, silently: a wrapper's
    # --env in front of the user's (or after it) chose the environment unseen.
    code, out, err = run(capsys, command, "--env", "remote", "--env", "local")
    assert (code, out) == (64, "")
    assert "Invalid value for '--env': given 2 times, naming 'remote', 'local'" in err
    # The same name twice names one environment.
    code, out, err = run(capsys, "plan", "--env", "local", "--env", "local")
    assert code == 0, out + err
