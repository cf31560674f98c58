"""`customs-batch validate` end to end: exit codes, formats, options, and bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from customs_batch.cli.main import invoke, main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BAD_MRN = EXAMPLES / "bad" / "mrn-check-digit.yaml.bad"

GOOD = """\
apiVersion: customs-batch/v1
kind: ExportCancellation
metadata:
  name: cancel-501
spec:
  declarationId: 501
"""
BROKEN = GOOD.replace("declarationId: 501", "declarationId: five")


def _cli(*args: str) -> tuple[int, str, str]:
    """Run the CLI through click's runner and the real entry point's error handler."""
    with CliRunner().isolation() as (out, err, _):
        code = invoke(list(args))
    return code, out.getvalue().decode(), err.getvalue().decode()


def _write(name: str, text: str | bytes) -> Path:
    path = Path(name)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_clean_input_exits_0_with_a_summary() -> None:
    _write("good.yaml", GOOD)
    assert _cli("validate") == (0, "0 errors, 0 warnings in 1 document (1 file)\n", "")


def test_without_paths_only_the_configured_manifests_are_read() -> None:
    # A repository holds other YAML: a compose file is no manifest.
    _write("docker-compose.yml", "services:\n  web: {image: nginx}\n")
    assert _cli("validate")[0] == 1
    Path("manifests").mkdir()
    _write("manifests/good.yaml", GOOD)
    _write("customs-batch.yaml", "manifests: [manifests]\n")
    assert _cli("validate") == (0, "0 errors, 0 warnings in 1 document (1 file)\n", "")
    _write("manifests/broken.yaml", BROKEN)
    code, out, _ = _cli("validate")
    assert code == 1
    assert out.startswith("manifests/broken.yaml:6:18: error[schema.type]: ")


def test_errors_exit_1_in_compiler_style() -> None:
    _write("broken.yaml", BROKEN)
    code, out, _ = _cli("validate", "broken.yaml")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("broken.yaml:6:18: error[schema.type]: ")
    assert lines[1] == "    declarationId: five"
    assert lines[2] == "  " + " " * 17 + "^"
    assert lines[-1] == "1 error, 0 warnings in 1 document (1 file)"


def test_the_group_returns_the_exit_code_through_click_runner() -> None:
    _write("broken.yaml", BROKEN)
    result = CliRunner().invoke(main, ["validate", "broken.yaml"], standalone_mode=False)
    assert result.exception is None
    assert result.return_value == 1
    assert "error[schema.type]" in result.stdout


def test_strict_makes_a_warning_fail() -> None:
    _write("empty.yaml", "# nothing here yet\n")
    assert _cli("validate", "empty.yaml")[0] == 0
    code, out, _ = _cli("validate", "--strict", "empty.yaml")
    assert code == 1
    assert "warning[yaml.empty-file]" in out


@pytest.mark.parametrize(
    ("level", "code", "severity"), [("error", 1, "error"), ("warning", 0, "warning")]
)
def test_mrn_check_digit_level(level: str, code: int, severity: str) -> None:
    exit_code, out, _ = _cli(
        "validate", "--format", "json", "--mrn-check-digit", level, str(BAD_MRN)
    )
    report = json.loads(out)
    assert exit_code == code
    assert [(f["rule"], f["severity"]) for f in report["findings"]] == [
        ("mrn.check-digit", severity)
    ]


def test_mrn_check_digit_off_drops_the_check() -> None:
    assert _cli("validate", "--mrn-check-digit", "off", str(BAD_MRN))[0] == 0


def test_every_format_parses_back() -> None:
    _write("broken.yaml", BROKEN)
    _write("good.yaml", GOOD.replace("cancel-501", "cancel-502").replace("501", "502"))
    outputs = {}
    for name in ("text", "json", "github", "junit", "sarif"):
        code, out, _ = _cli("validate", "--format", name)
        assert code == 1
        outputs[name] = out
    report = json.loads(outputs["json"])
    assert report["summary"]["documents"] == 2
    assert report["findings"][0]["path"] == "$.spec.declarationId"
    (annotation,) = [line for line in outputs["github"].splitlines() if line.startswith("::")]
    assert annotation.startswith("::error file=broken.yaml,line=6,col=18,title=schema.type::")
    suite = ET.fromstring(outputs["junit"]).find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    sarif = json.loads(outputs["sarif"])
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == "schema.type"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.yaml"


def test_output_file_gets_the_report_and_stderr_the_summary() -> None:
    _write("broken.yaml", BROKEN)
    code, out, err = _cli("validate", "--format", "sarif", "-o", "report.sarif")
    assert (code, out) == (1, "")
    assert err == "1 error, 0 warnings in 1 document (1 file)\n"
    assert json.loads(Path("report.sarif").read_text(encoding="utf-8"))["version"] == "2.1.0"


def test_an_output_file_in_a_missing_folder_is_an_error_not_a_traceback() -> None:
    _write("good.yaml", GOOD)
    code, _, err = _cli("validate", "-o", "no-such-folder/report.json")
    assert code == 3
    assert err.startswith("error: cannot write the report to no-such-folder/report.json")
    assert "hint: check that the folder exists" in err


def test_an_output_path_that_is_a_folder_is_a_usage_error() -> None:
    _write("good.yaml", GOOD)
    Path("out").mkdir()
    assert _cli("validate", "-o", "out")[0] == 64


def test_a_missing_path_is_a_usage_error() -> None:
    code, out, err = _cli("validate", "no-such-dir")
    assert code == 64
    assert "'no-such-dir' does not exist" in err
    assert "Traceback" not in out + err


@pytest.mark.parametrize("jobs", ["0", "many"])
def test_a_bad_jobs_value_is_a_usage_error(jobs: str) -> None:
    assert _cli("validate", "--jobs", jobs)[0] == 64


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "yaml.encoding"),
        (b"kind: \xff\xfe broken", "yaml.encoding"),
        (b"", "yaml.empty-file"),
        (b"- just\n- a list\n", "envelope.not-mapping"),
        (b"apiVersion: [unclosed\n", "yaml.unclosed yaml.syntax"),
        (b"apiVersion: a: b\n", "yaml.syntax"),
    ],
)
def test_bad_input_becomes_a_finding(content: bytes, rule: str) -> None:
    _write("input.yaml", content)
    code, out, err = _cli("validate", "--format", "json", "input.yaml")
    assert "Traceback" not in out + err
    assert [finding["rule"] for finding in json.loads(out)["findings"]] == rule.split()
    assert code == (0 if rule == "yaml.empty-file" else 1)


def test_the_real_process_reports_and_exits_like_the_runner() -> None:
    _write("binary.yaml", b"\x00\x01\x02")
    _write("good.yaml", GOOD)
    done = subprocess.run(
        [sys.executable, "-m", "customs_batch", "validate", "--format", "github", "."],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout.startswith("::error file=binary.yaml,line=1,col=1,title=yaml.encoding::")
    assert "Traceback" not in done.stdout + done.stderr


def test_the_real_process_exits_64_on_a_missing_path() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "customs_batch", "validate", "missing.yaml"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 64
    assert "does not exist" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_shows_an_example() -> None:
    code, out, _ = _cli("validate", "--help")
    assert code == 0
    assert "customs-batch validate manifests/ --format github" in out


def _without_root_override() -> list[str]:
    """The command prefix that makes permissions count: as root (as the tests run), setpriv
    drops the capabilities that let root read any folder; for anyone else, nothing."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to test permissions as root"
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]


VALIDATE_D = ("validate", "--no-cache", "d")


def test_a_folder_that_cannot_be_read_fails_the_run_naming_it() -> None:
    # Its manifests would be missing from the batch: a plan would call their records orphans.
    _write("good.yaml", GOOD)
    Path("d/locked").mkdir(parents=True)
    _write("d/good.yaml", GOOD)
    _write("d/locked/inner.yaml", GOOD.replace("cancel-501", "cancel-502"))
    Path("d/locked").chmod(0)
    try:
        done = subprocess.run(
            [*_without_root_override(), sys.executable, "-m", "customs_batch", *VALIDATE_D],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        Path("d/locked").chmod(0o755)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "d/locked: error[file.unreadable]: cannot read the folder: Permission denied; the "
        "manifests in it are not checked" in done.stdout
    )
    assert done.stdout.endswith("1 error, 0 warnings in 1 document (2 files)\n")


def test_a_linked_folder_among_the_manifests_is_checked() -> None:
    Path("lk/real").mkdir(parents=True)
    Path("lk/manifests").mkdir()
    _write("lk/real/x.yaml", BROKEN)
    Path("lk/manifests/linked").symlink_to("../real")
    code, out, _ = _cli("validate", "lk/manifests")
    assert code == 1
    assert "lk/manifests/linked/x.yaml:6:18: error[schema.type]" in out


def test_a_link_loop_named_on_the_command_line_is_a_finding_naming_it() -> None:
    Path("loop1.yaml").symlink_to("loop2.yaml")
    Path("loop2.yaml").symlink_to("loop1.yaml")
    _write("good.yaml", GOOD)
    code, out, err = _cli("validate", "loop1.yaml", "good.yaml")
    assert code == 1, err
    assert "loop1.yaml: error[file.symlink-loop]: the path is a loop of symbolic links" in out
    assert out.endswith("1 error, 0 warnings in 1 document (2 files)\n")


def test_run_from_the_root_of_the_file_system_it_says_to_run_from_the_project(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # From `/` without a customs-batch.yaml, `/` was the project: "no template rotterdam
    # in /templates", and a spreadsheet link to any file counted as inside the project.
    monkeypatch.chdir("/")
    code, out, err = _cli("validate", str(project / "manifests"))
    assert code == 3
    assert out == ""
    assert "its project would be /, the root of the file system" in err
    assert "/templates" not in err
    assert "hint: run customs-batch from the project's own folder" in err
    monkeypatch.chdir(project)
    assert _cli("validate", "manifests")[0] == 0


@pytest.mark.parametrize("rows", ["1-" + "9" * 5000, "9" * 5000 + "-"])
def test_rows_past_every_file_are_read_not_an_internal_error(rows: str) -> None:
    # A row number of 5,000 digits ended in "internal error: ValueError: Exceeds the limit
    # (4300 digits) for integer string conversion", told as a bug in customs-batch.
    code, out, err = _cli("validate", "--rows", rows, str(EXAMPLES / "manifests"))
    assert code in (0, 1), out + err
    assert "internal error" not in err and "Traceback" not in err
