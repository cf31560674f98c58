"""``make bench``'s runner rewrites only the measured blocks of docs/benchmarks.md."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "benchmarks" / "report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_report"] = module
    spec.loader.exec_module(module)
    return module


def test_a_block_is_replaced_and_the_prose_around_it_kept() -> None:
    report = _runner()
    text = "# B\n\nProse before.\n\n<!-- bench:apply -->\nold figures\n<!-- /bench:apply -->\n\nProse after.\n"
    new = report.replace_block(text, "apply", "new figures\n", "Apply")
    assert "old figures" not in new and "new figures" in new
    assert new.startswith("# B\n\nProse before.") and new.endswith("Prose after.\n")
    added = report.replace_block(new, "sheet", "rows\n", "Spreadsheets")
    assert added.endswith("## Spreadsheets\n\n<!-- bench:sheet -->\nrows\n<!-- /bench:sheet -->\n")


def test_every_block_of_the_document_belongs_to_a_benchmark_and_runs() -> None:
    report = _runner()
    text = report.DOC.read_text(encoding="utf-8")
    names = {b.name for b in report.BENCHMARKS} | {"machine"}
    in_doc = set(re.findall(r"<!-- bench:([a-z-]+) -->", text))
    assert in_doc <= names
    assert set(re.findall(r"<!-- /bench:([a-z-]+) -->", text)) == in_doc
    for benchmark in report.BENCHMARKS:
        assert (ROOT / benchmark.argv[0]).is_file(), benchmark


def test_a_run_reports_its_command_load_and_output() -> None:
    report = _runner()
    block = report.run(report.Benchmark("echo", "Echo", ("-c", "print('| a | b |')")))
    assert block.startswith("`python -c ")
    assert "load " in block and "cores" in block
    assert block.rstrip().endswith("| a | b |")


def test_the_bulk_load_benchmarks_load_their_exports_without_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # make bench's blocks sheet and scale time `validate` and `plan` of these exports: a
    # manifest forEach refuses (a sheet named for a CSV file) measured an error, unnoticed.
    from customs_batch.cli.main import invoke

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import sheet_bench

    monkeypatch.chdir(tmp_path)
    Path("data").mkdir()
    sheet_bench.write_csv(Path("data/movements.csv"), 20)
    sheet_bench.write_xlsx(Path("data/movements.xlsx"), 20)
    Path("csv.yaml").write_text(sheet_bench.manifest("data/movements.csv"), encoding="utf-8")
    Path("xlsx.yaml").write_text(sheet_bench.manifest("data/movements.xlsx"), encoding="utf-8")
    for manifest in ("csv.yaml", "xlsx.yaml"):
        code = invoke(["validate", "--no-cache", manifest])
        out = capsys.readouterr().out
        assert code == 0, out
        assert out.splitlines()[-1] == "0 errors, 0 warnings in 20 documents (1 file)"
