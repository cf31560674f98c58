"""Hostile inputs through the real command line, in a process limited to 1 GiB of address
space and a generous timeout: each ends in a finding (exit 1) and a short report, never a
hang, an abort (134), a traceback or a clean exit over an unread file."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from customs_batch.errors import ExitCode
from tests.manifest.helpers import (
    SHEET_HEADERS,
    cycle_manifest,
    movement,
    movement_sheet_manifest,
    write,
)
from tests.manifest.spreadsheet.hostile_xlsx import far_corner_sheet, write_bomb, write_xlsx
from tests.reliability.limits import run_bounded

GIB = 1 << 30
TIMEOUT = 120  # seconds; each case takes one or two on the project machine


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))


def run(
    folder: Path, command: str, *paths: str, environ: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``customs-batch COMMAND PATHS`` in ``folder``, within 1 GiB and the timeout."""
    return subprocess.run(
        [sys.executable, "-m", "customs_batch", command, *paths],
        cwd=folder,
        env={**os.environ, **(environ or {})},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        preexec_fn=_limit_memory,
        check=False,
    )


def assert_finding(done: subprocess.CompletedProcess[str], rule: str) -> None:
    assert done.returncode == ExitCode.FINDINGS, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"error[{rule}]" in done.stdout + done.stderr  # plan reports on stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "no data rows" not in done.stdout


def test_a_zip_bomb_over_max_megabytes_is_refused_unread(tmp_path: Path) -> None:
    # 520 MB of sheet XML in about 2.4 MB: the header, then empty rows
    write_bomb(tmp_path / "bomb.xlsx", 520, SHEET_HEADERS)
    write(tmp_path / "m.yaml", movement_sheet_manifest("bomb.xlsx"))
    done = run(tmp_path, "validate", "m.yaml")
    assert_finding(done, "sheet.too-large")
    assert "over the limit of 512 MB (forEach maxMegabytes)" in done.stdout


def test_a_sheet_whose_used_range_ends_at_xfd1048576_is_refused_not_allocated(
    tmp_path: Path,
) -> None:
    path = write_xlsx(tmp_path / "far.xlsx", far_corner_sheet())
    assert path.stat().st_size < 5_000
    write(tmp_path / "m.yaml", movement_sheet_manifest("far.xlsx"))
    done = run(tmp_path, "validate", "m.yaml")
    assert_finding(done, "sheet.too-large")
    assert "(A1:XFD1048576), 17,179,869,184 cells" in done.stdout


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "dev-urandom", "link-loop"])
def test_special_files_among_the_manifests_are_findings(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    if kind == "fifo":
        os.mkfifo(folder / "pipe.yaml")
        rule = "file.not-regular"
    elif kind == "link-loop":
        (folder / "a.yaml").symlink_to("b.yaml")
        (folder / "b.yaml").symlink_to("a.yaml")
        rule = "file.symlink-loop"
    else:
        (folder / "m.yaml").symlink_to("/dev/" + kind.removeprefix("dev-"))
        rule = "file.not-regular"
    done = run(tmp_path, "validate", "manifests")
    assert_finding(done, rule)


def test_a_30_mb_one_line_manifest_is_refused_before_yaml_reads_it(tmp_path: Path) -> None:
    # libyaml copies a line, and the schema validator copies its value into every error:
    # refused unparsed, the file costs its bytes and nothing more (1 GiB address space).
    line = "{apiVersion: customs-batch/v1, kind: Movement, spec: {hawbId: " + "h" * 30_000_000
    write(tmp_path / "m.yaml", line + "}}\n")
    done = run(tmp_path, "validate", ".")
    assert_finding(done, "yaml.line-too-long")
    assert "m.yaml:1:1: error[yaml.line-too-long]: line 1 is longer than 1.0 MB" in done.stdout
    assert "CUSTOMS_BATCH_MAX_LINE_MB=2" in done.stdout
    assert len(done.stdout) < 2_000


def test_a_value_over_the_bound_on_many_short_lines_is_refused_before_yaml_builds_it(
    tmp_path: Path,
) -> None:
    block = "  hawbId: |\n" + ("    " + "h" * 76 + "\n") * 40_000  # 3.2 MB, 81 bytes a line
    write(tmp_path / "m.yaml", movement(block))
    done = run(tmp_path, "validate", "m.yaml")
    assert_finding(done, "yaml.value-too-long")
    assert (
        "m.yaml:6:11: error[yaml.value-too-long]: a value of 3,040,000 bytes or more on lines "
        "7 to 40,006 (over 1.0 MB)" in done.stdout
    )
    assert "CUSTOMS_BATCH_MAX_LINE_MB=4" in done.stdout


@pytest.mark.parametrize(
    ("shape", "held"),
    [
        ("x:\n" + ("- [" + ",".join(["1"] * 10_000) + "]\n") * 100, "1,000,103"),  # 2 MB
        (movement("".join(f"  k{i:06d}: 1\n" for i in range(300_000))), "600,011"),  # keys
    ],
    ids=["flow-lists", "unknown-keys"],
)
def test_a_document_of_a_million_values_is_refused_in_bounded_memory(
    tmp_path: Path, shape: str, held: str
) -> None:
    # Before the bound on values: 0.47 GB and 0.57 GB peak (300,000 findings for the keys),
    # and with less memory the system would kill the run.
    write(tmp_path / "m.yaml", shape)
    done = run_bounded(
        [sys.executable, "-m", "customs_batch", "validate", "--no-cache", "m.yaml"],
        tmp_path,
        seconds=TIMEOUT,
    )
    assert done.code == ExitCode.FINDINGS, done.stdout[-2000:] + done.stderr[-2000:]
    assert (
        f"m.yaml:1:1: error[yaml.too-large]: the document at line 1 holds {held} YAML values, "
        "more than 200,000"
    ) in done.stdout  # counted after the bound without a node built: the memory below
    assert len(done.stdout) < 2_000
    assert done.peak_mb < 250, done.peak_mb


def test_a_20_mb_line_read_under_a_raised_bound_gives_a_short_report(tmp_path: Path) -> None:
    spec = "  hawbId: " + "h" * 20_000_000 + "\n  bogus: 1\n"
    write(tmp_path / "m.yaml", movement(spec))
    line = "{a: " + "x" * 20_000_000 + ", b: [}\n"  # a syntax error 20 MB into the line
    write(tmp_path / "one-line.yaml", line)
    done = run(tmp_path, "validate", ".", environ={"CUSTOMS_BATCH_MAX_LINE_MB": "32"})
    assert_finding(done, "schema.pattern")
    assert "error[yaml.syntax]" in done.stdout
    assert len(done.stdout) < 100_000


def test_plan_stops_at_a_named_pipe_among_the_manifests_instead_of_waiting(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    os.mkfifo(folder / "pipe.yaml")
    done = run(tmp_path, "plan", "manifests")
    assert_finding(done, "file.not-regular")
    assert "fix them before planning" in done.stderr


@pytest.mark.parametrize("through", ["dependsOn", "reference"])
def test_a_cycle_over_10000_documents_is_reported_once_in_a_short_report(
    tmp_path: Path, through: str
) -> None:
    # Once a finding per member, each printing the whole path: 110 MB of report at 2,000
    # documents, a MemoryError at 10,000.
    write(tmp_path / "m.yaml", cycle_manifest(10_000, through))
    done = run(tmp_path, "validate", "m.yaml")
    assert_finding(done, "project.cycle")
    assert done.stdout.count("error[project.cycle]") == 1
    assert "dependency cycle of 10,000 documents: ExportCancellation/c0 ->" in done.stdout
    assert "(9,995 more) -> ExportCancellation/c0" in done.stdout
    assert len(done.stdout) < 2_000


def _cancellation(name: str) -> str:
    return (
        "apiVersion: customs-batch/v1\nkind: ExportCancellation\n"
        f"metadata: {{name: {name}}}\nspec: {{declarationId: -5}}\n"
    )


@pytest.mark.parametrize(
    "format_name", ["text", "json", "sarif", "markdown", "junit", "github", "html"]
)
def test_file_names_with_a_newline_or_a_byte_not_utf_8_cannot_forge_or_break_a_report(
    tmp_path: Path, format_name: str
) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "x\nerror[fake]: injected\n.yaml").write_text(_cancellation("c1"))
    (Path(os.fsdecode(bytes(folder) + b"/bad\xff.yaml"))).write_text(_cancellation("c2"))
    done = subprocess.run(
        [sys.executable, "-m", "customs_batch", "validate", "--format", format_name, "manifests"],
        cwd=tmp_path,
        env={**os.environ, "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == ExitCode.FINDINGS, done.stderr
    report = done.stdout.decode("utf-8")  # valid UTF-8, whatever the names hold
    assert not any(line.lstrip().startswith("error[fake]") for line in report.splitlines())
    if format_name in ("json", "sarif"):
        json.loads(report)
    if format_name == "json":
        files = {finding["file"] for finding in json.loads(report)["findings"]}
        assert os.fsencode("manifests/bad\udcff.yaml") in {os.fsencode(f) for f in files}
