"""``--mrn-check-digit`` counts a wrong MRN check character alike in validate, plan and
apply: what validate lets through, plan and apply do too, and the finding's hint names an
option each of them has."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import run

MOVEMENT = "Movement/mov-a1-arrival"


def _a_wrong_check_character(project: Path) -> None:
    movements = project / "manifests" / "movements.yaml"
    text = movements.read_text(encoding="utf-8")
    assert text.count("declarationNumber: 24NLR1234567890120") == 1
    movements.write_text(text.replace("24NLR1234567890120", "24NLR1234567890121"), "utf-8")


@pytest.mark.parametrize("level", ["warning", "off"])
def test_validate_plan_and_apply_let_through_what_the_option_relaxes(
    project: Path, capsys: pytest.CaptureFixture[str], level: str
) -> None:
    _a_wrong_check_character(project)
    relaxed = ("--mrn-check-digit", level)

    assert run(capsys, "validate", *relaxed)[0] == 0
    code, out, err = run(capsys, "plan", "--target", MOVEMENT, *relaxed)
    assert code == 0, out + err
    assert f"+ create         {MOVEMENT}" in out
    # The load cache of the relaxed run does not let the strict one through.
    code, out, err = run(capsys, "plan", "--target", MOVEMENT)
    assert code == 1, out + err
    code, out, err = run(capsys, "apply", "--auto-approve", "--target", MOVEMENT, *relaxed)
    assert code == 0, out + err
    assert "1 succeeded" in out + err


def test_the_error_stops_plan_and_apply_and_its_hint_names_their_option(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _a_wrong_check_character(project)

    for command in (("plan",), ("apply", "--auto-approve")):
        code, out, err = run(capsys, *command, "--target", MOVEMENT)
        assert code == 1, out + err
        assert "error[mrn.check-digit]" in out + err
        assert "--mrn-check-digit warning|off relaxes this check" in out + err
        code, out, err = run(capsys, *command, "--help")
        assert "--mrn-check-digit [error|warning|off]" in out


def test_import_and_results_read_the_manifests_at_the_same_level(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _a_wrong_check_character(project)
    importing = ("import", MOVEMENT, "mov_00000042")

    code, out, err = run(capsys, *importing)
    assert code == 1 and "the manifests have errors" in err, out + err
    code, out, err = run(capsys, *importing, "--mrn-check-digit", "warning")
    assert "the manifests have errors" not in err, out + err
    assert code == 0 and f"Imported {MOVEMENT}" in out, out + err

    assert "error(s) outside any spreadsheet row" in run(capsys, "results")[2]
    code, out, err = run(capsys, "results", "--mrn-check-digit", "off")
    assert "error(s)" not in err, out + err
