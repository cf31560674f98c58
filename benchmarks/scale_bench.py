"""Cost at scale (issue 14): re-plan by size, a big state's fixed cost, bulk loads' memory.

Sub-benchmarks, chosen by the first argument (default ``all``):

``replan``
    ``customs-batch plan manifests`` on an unchanged project of 1,000 / 10,000 / 50,000 / 100,000
    movements whose state records every one as applied (``--sizes``): wall time, CPU time
    and peak RSS, and the memory per document between two sizes.
``state``
    A state of 100,000 applied movements (``--state-size``): the time a run takes from its
    start to its first request (lock, load, fold), ten movements applied against the
    in-process emulator, and the time from the last answer to the end (the fold into the
    state file); its peak RSS; ``customs-batch state list`` on the same state.
``sheet``
    A forEach over a CSV export of 10,000 / 50,000 / 100,000 rows (``--rows``):
    ``customs-batch validate`` and ``customs-batch plan`` (empty state), wall, CPU, peak RSS.

Every figure is the median of ``--repeats`` runs (default 3) with its spread (lowest-highest),
each run in a fresh process measured by a wrapper process of its own. The load average is
printed beside each figure: the project machine is shared. Generated inputs live under
``benchmarks/.work/``. Run with ``make bench-scale`` or
``.venv/bin/python benchmarks/scale_bench.py [NAME] [options]``. Never part of ``make test``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import plan_apply_bench as inputs
import sheet_bench

from customs_batch.state.file import write_state

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work" / "scale"

# Each run measures inside its own wrapper process: RUSAGE_CHILDREN's ru_maxrss is the
# largest child a process ever waited for, so one shared parent would report earlier peaks.
_WRAPPER = """
import resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
tail = done.stdout.decode(errors="replace").strip().splitlines()[-1:] or [""]
print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime, wall, done.returncode)
print(tail[0])
"""


class Run:
    """One measured process: wall and CPU seconds, peak RSS in MiB, exit code, last line."""

    def __init__(self, command: Sequence[str], cwd: Path) -> None:
        done = subprocess.run(
            [sys.executable, "-c", _WRAPPER, *command],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        )
        figures, self.last_line = [*done.stdout.splitlines(), ""][:2]
        peak_kib, cpu, wall, code = figures.split()
        self.peak = int(peak_kib) / 1024
        self.cpu = float(cpu)
        self.wall = float(wall)
        self.code = int(code)


def spread(values: Sequence[float], unit: str, digits: int = 2) -> str:
    """``median unit (lowest-highest)``."""
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{mid:,.{digits}f} {unit} ({low:,.{digits}f}-{high:,.{digits}f})"


def load() -> str:
    """The load averages of the last 1 / 5 / 15 minutes."""
    return "/".join(f"{value:.1f}" for value in os.getloadavg())


def machine() -> str:
    model = "unknown CPU"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} x {model}, Python {platform.python_version()}, {platform.system()}"


def cli(*argv: str) -> list[str]:
    return [sys.executable, "-m", "customs_batch", *argv]


# -- 1. re-plan by size --------------------------------------------------------------------


def replan_project(count: int) -> Path:
    """The benchmark project of ``count`` movements with a state recording every one."""
    folder = inputs.project(count)
    state = folder / ".customs-batch" / "local" / "state.json"
    if not state.exists():
        state.parent.mkdir(parents=True, exist_ok=True)
        applied = inputs.applied_state(inputs.load_documents(folder))
        write_state(state, applied)
    return folder


def bench_replan(sizes: Sequence[int], repeats: int) -> None:
    print("## replan: `customs-batch plan manifests`, unchanged, every document applied")
    print("| documents | wall | CPU | peak RSS | load | exit, last line |")
    print("|---:|---:|---:|---:|---|---|")
    peaks: dict[int, float] = {}
    cpus: dict[int, float] = {}
    for size in sizes:
        folder = replan_project(size)
        runs = [Run(cli("plan", "manifests"), folder) for _ in range(repeats)]
        peaks[size] = statistics.median(r.peak for r in runs)
        cpus[size] = statistics.median(r.cpu for r in runs)
        print(
            f"| {size:,} | {spread([r.wall for r in runs], 's')} | "
            f"{spread([r.cpu for r in runs], 's')} | {spread([r.peak for r in runs], 'MiB', 0)} "
            f"| {load()} | {runs[-1].code}, {runs[-1].last_line[:60]} |",
            flush=True,
        )
    ordered = sorted(peaks)
    for small, big in itertools.pairwise(ordered):
        per = (peaks[big] - peaks[small]) * 1024 / (big - small)
        print(f"  memory per document from {small:,} to {big:,}: {per:.1f} KiB")
    # CPU, every process of the run: linear when the cost per document stays the same.
    print(
        "  CPU per document: "
        + ", ".join(f"{cpus[size] * 1000 / size:.2f} ms at {size:,}" for size in ordered)
    )
    print(
        "  peak RSS is that of the largest process: from 500 files or 2 MB of manifests the "
        "documents are loaded by a pool of processes, each holding its files' while it loads them"
    )


# -- 2. a big state's fixed cost -----------------------------------------------------------

_STATE_CHILD = "state-child"


def big_state(size: int) -> Path:
    """A folder with a state of ``size`` applied movements, written once."""
    folder = WORK / f"state-{size}"
    path = folder / ".customs-batch" / "local" / "state.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_state(path, inputs.state_of(size))
        (folder / "customs-batch.yaml").write_text("default_environment: local\n")
    return folder


def state_child(folder: Path, changes: int) -> None:
    """In a fresh process: open the state (lock, load), apply ``changes`` new movements
    against the in-process emulator, close (fold); print the three times as JSON."""
    import threading

    from customs_batch.execution.apply import apply_plan
    from customs_batch.execution.scheduler import NodeStatus
    from customs_batch.planning import plan_changes
    from customs_batch.state import LocalBackend

    project = inputs.project(inputs.DOCUMENTS_PER_FILE)
    documents = inputs.load_documents(project)[:changes]
    app = inputs.emulator(project)
    backend = LocalBackend(folder / ".customs-batch" / "local")
    started = time.perf_counter()
    session = backend.open("apply")
    opened = time.perf_counter()
    plan = plan_changes(documents, session.state, orphans=False)
    with inputs.in_process_client(app) as client:
        report = apply_plan(plan, session, client, parallelism=4, stop=threading.Event())
    answered = time.perf_counter()
    session.close()
    closed = time.perf_counter()
    figures = {
        "open": opened - started,
        "apply": answered - opened,
        "close": closed - answered,
        "succeeded": report.count(NodeStatus.SUCCEEDED),
    }
    print(json.dumps(figures))


def bench_state(size: int, repeats: int, changes: int = 10) -> None:
    folder = big_state(size)
    state_file = folder / ".customs-batch" / "local" / "state.json"
    megabytes = state_file.stat().st_size / 1e6
    print(f"## state: {size:,} records ({megabytes:.0f} MB state.json), a run of {changes} changes")
    opens, applies, closes, peaks, cpus = [], [], [], [], []
    for _ in range(repeats):
        # Every run starts from the same state: none of its changes applied yet.
        write_state(state_file, inputs.state_of(size))
        run = Run([sys.executable, __file__, _STATE_CHILD, str(folder), str(changes)], ROOT)
        figures = json.loads(run.last_line)
        if figures["succeeded"] != changes:
            raise SystemExit(f"the run applied {figures['succeeded']} of {changes} changes")
        opens.append(figures["open"])
        applies.append(figures["apply"])
        closes.append(figures["close"])
        peaks.append(run.peak)
        cpus.append(run.cpu)
    print("| what | figure | load |")
    print("|---|---:|---|")
    print(f"| start to first request (lock, load, fold) | {spread(opens, 's')} | {load()} |")
    print(f"| {changes} requests and records | {spread(applies, 's')} | |")
    print(f"| last answer to end (fold into state.json) | {spread(closes, 's')} | |")
    print(f"| CPU of the whole process | {spread(cpus, 's')} | |")
    print(f"| peak RSS | {spread(peaks, 'MiB', 0)} | |")
    runs = [Run(cli("state", "list"), folder) for _ in range(repeats)]
    print(
        f"| `customs-batch state list` wall / CPU / peak | {spread([r.wall for r in runs], 's')} / "
        f"{spread([r.cpu for r in runs], 's')} / {spread([r.peak for r in runs], 'MiB', 0)} "
        f"| {load()} |",
        flush=True,
    )


# -- 3. bulk loads from a spreadsheet ------------------------------------------------------


def sheet_project(rows: int) -> Path:
    folder = WORK / f"sheet-{rows}"
    if not (folder / "data" / "movements.csv").exists():
        (folder / "data").mkdir(parents=True, exist_ok=True)
        sheet_bench.write_csv(folder / "data" / "movements.csv", rows)
    (folder / "customs-batch.yaml").write_text("default_environment: local\n")
    # Written each time: a folder made by an older benchmark keeps no stale manifest.
    (folder / "movements.yaml").write_text(sheet_bench.manifest("data/movements.csv"))
    shutil.rmtree(folder / ".customs-batch", ignore_errors=True)
    return folder


def bench_sheet(rows_list: Sequence[int], repeats: int) -> None:
    print("## sheet: a forEach over a CSV export (empty state)")
    print("| command | rows | wall | CPU | peak RSS | load | exit |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for rows in rows_list:
        folder = sheet_project(rows)
        for name, argv in (
            ("validate", cli("validate", ".", "--format", "json", "-o", "report.json")),
            ("plan", cli("plan", ".", "--allow-empty-state", "-o", "plan.txt")),
        ):
            runs = [Run(argv, folder) for _ in range(repeats)]
            print(
                f"| {name} | {rows:,} | {spread([r.wall for r in runs], 's', 1)} | "
                f"{spread([r.cpu for r in runs], 's', 1)} | "
                f"{spread([r.peak for r in runs], 'MiB', 0)} | {load()} | {runs[-1].code} |",
                flush=True,
            )


def main() -> None:
    """Parse the arguments and run the chosen benchmarks."""
    if len(sys.argv) == 4 and sys.argv[1] == _STATE_CHILD:
        state_child(Path(sys.argv[2]), int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = ["replan", "state", "sheet"]
    parser.add_argument("name", nargs="?", default="all", choices=[*names, "all"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000, 100_000])
    parser.add_argument("--state-size", type=int, default=100_000)
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 50_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    inputs.WORK.mkdir(parents=True, exist_ok=True)
    print(f"machine: {machine()}; load average {load()} at the start")
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    chosen = names if args.name == "all" else [args.name]
    for name in chosen:
        if name == "replan":
            bench_replan(args.sizes, args.repeats)
        elif name == "state":
            bench_state(args.state_size, args.repeats)
        else:
            bench_sheet(args.rows, args.repeats)
    print(f"load average {load()} at the end")


if __name__ == "__main__":
    main()
