"""forEach through the commands: render and validate with --rows, plan and apply end to end."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from customs_batch.cli.main import invoke
from tests.manifest.helpers import GOOD_ROW, movement_sheet_manifest, write, write_xlsx

ROWS: list[list[object]] = [
    ["shp_7Hk2Lm", "hawb_a2", "ISL", 4, 40.0, "rpty_p2"],
    ["shp_9Xc4Rt", "hawb_b1", "ISL", 6, 60.0, "rpty_p3"],
    ["shp_7Hk2Lm", "hawb_a1", "ISL", 10, 125.5, "rpty_p1"],
]


def _cli(*args: str) -> tuple[int, str, str]:
    with CliRunner().isolation() as (out, err, _):
        code = invoke(list(args))
    return code, out.getvalue().decode(), err.getvalue().decode()


def _project(rows: list[list[object]]) -> None:
    write_xlsx(Path("data/m.xlsx"), rows)
    write(Path("manifests/m.yaml"), movement_sheet_manifest("../data/m.xlsx"))


def test_render_shows_the_expanded_documents_of_the_rows_asked_for() -> None:
    _project(ROWS)
    code, out, err = _cli("render", "manifests", "--rows", "3-4")
    assert code == 0, err
    documents = list(yaml.safe_load_all(out))
    assert [d["metadata"]["name"] for d in documents] == ["mov-hawb_b1-3", "mov-hawb_a1-4"]
    assert documents[0]["spec"]["quantity"] == 6
    assert documents[1]["spec"]["grossWeightKg"] == 125.5


def test_validate_rows_leaves_the_other_rows_out() -> None:
    bad = [*GOOD_ROW[:3], "four", *GOOD_ROW[4:]]
    _project([bad, *ROWS])
    assert _cli("validate", ".")[0] == 1
    code, out, _ = _cli("validate", ".", "--rows", "3-")
    assert (code, out) == (0, "0 errors, 0 warnings in 3 documents (1 file)\n")


def test_a_bad_rows_option_is_a_usage_error() -> None:
    _project(ROWS)
    code, _, err = _cli("render", "manifests", "--rows", "9-3")
    assert code == 64
    assert "'9-3' is not a row range" in err


@pytest.mark.parametrize("command", ["validate", "render"])
@pytest.mark.parametrize("rows", ["0", "0-5", "-0"])
def test_row_0_is_a_usage_error_naming_the_option(command: str, rows: str) -> None:
    """A typo for row 10 only warned "no data rows in the rows asked for" and passed CI."""
    _project(ROWS)
    code, _, err = _cli(command, "manifests", "--rows", rows)
    assert code == 64
    assert f"Invalid value for '--rows': '{rows}' is not a row range" in err
    assert "numbered from 1" in err


@pytest.mark.parametrize("command", ["validate", "render"])
def test_rows_past_every_sheet_fail_the_run(command: str) -> None:
    _project(ROWS)
    code, out, err = _cli(command, "manifests", "--rows", "50-60")
    assert code == 1
    report = out + err
    assert "error[envelope.for-each]: data/m.xlsx has no data rows in the rows asked for" in report
    assert "--rows names no data row of any sheet" in report


def test_rows_past_every_sheet_fail_a_run_from_the_load_cache_too() -> None:
    _project(ROWS)
    for _ in range(2):  # the second run takes the file's findings from the load cache
        code, out, _ = _cli("validate", "manifests", "--rows", "50-60")
        assert code == 1, out
        assert "error[envelope.for-each]: data/m.xlsx has no data rows in the rows" in out


def test_rows_past_one_sheet_only_warn_when_another_has_rows_there() -> None:
    _project(ROWS)
    write_xlsx(Path("data/short.xlsx"), ROWS[:1])
    write(Path("manifests/short.yaml"), movement_sheet_manifest("../data/short.xlsx"))
    code, out, _ = _cli("validate", "manifests", "--rows", "3-4")
    assert code == 0, out
    assert "warning[envelope.for-each]: data/short.xlsx has no data rows in the rows" in out


def test_a_sheet_applies_end_to_end_against_the_local_sandbox() -> None:
    _project(ROWS)
    code, out, err = _cli("apply", ".", "--auto-approve")
    assert code == 0, out + err
    for name in ("mov-hawb_a2-2", "mov-hawb_b1-3", "mov-hawb_a1-4"):
        assert f"Movement/{name}" in out
    assert "3 succeeded, 0 failed" in out + err
    code, out, err = _cli("plan", ".")
    assert code == 0, out + err
    assert "0 to create" in out
