"""The load cache (issue 26): validate and plan of 10,000 documents, cold and warm.

For ``customs-batch validate manifests`` and ``customs-batch plan manifests`` on the project of
``--size`` movements (default 10,000, in files of 100) whose state records every one as
applied, four cases, each the median of ``--repeats`` fresh processes (default 3):

``--no-cache``
    no cache read or written: what every run cost before the cache;
``cold``
    the cache folder emptied before each run: every file loaded, and its entry written;
``warm, unchanged``
    every file taken from the cache; the project-wide checks (and for plan the state
    compared) still run on every document;
``warm, 10 changed``
    one document changed in each of 10 files (a new value each run), so those 10 files
    (1,000 documents) are loaded and the other 90 taken from the cache.

Wall and CPU time of the whole run (every process), peak RSS, and the load average beside
each figure: the project machine is shared. The package's bytecode is compiled first and
kept, as an installed package has it. Inputs live under ``benchmarks/.work/cache/``.
Run with ``.venv/bin/python benchmarks/cache_bench.py [--size N] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale_bench
from scale_bench import Run, cli, load, machine, spread

WORK = scale_bench.ROOT / "benchmarks" / ".work" / "cache"
CHANGED_FILES = 10


def bench_project(size: int) -> Path:
    """A copy of the re-plan benchmark's project (its files are edited here)."""
    folder = WORK / f"project-{size}"
    if not folder.is_dir():
        shutil.copytree(scale_bench.replan_project(size), folder)
    return folder


def change_documents(folder: Path, run: int) -> None:
    """Give the first movement of each of the first CHANGED_FILES files a new weight."""
    files = sorted((folder / "manifests").glob("*.yaml"))[:CHANGED_FILES]
    for path in files:
        text = path.read_text(encoding="utf-8")
        weight = f"grossWeightKg: {1000 + run}.5"
        text = re.sub(r"grossWeightKg: [0-9.]+", weight, text, count=1)
        path.write_text(text, encoding="utf-8")


def measure(
    name: str, command: list[str], folder: Path, repeats: int, before: Callable[[int], None]
) -> Run:
    runs = []
    for number in range(repeats):
        before(number)
        runs.append(Run(command, folder))
    print(
        f"| {name} | {spread([r.wall for r in runs], 's')} | {spread([r.cpu for r in runs], 's')} "
        f"| {spread([r.peak for r in runs], 'MiB', 0)} | {load()} "
        f"| {runs[-1].code}, {runs[-1].last_line[:50]} |",
        flush=True,
    )
    return runs[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    folder = bench_project(options.size)
    # Bytecode cached, as an installed package has it (see startup_bench.py).
    compileall.compile_dir(scale_bench.ROOT / "customs_batch", quiet=1)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    cache = folder / ".load-cache"
    os.environ["CUSTOMS_BATCH_CACHE_DIR"] = str(cache)
    print(f"# load cache, {options.size:,} documents in files of 100 ({machine()})")

    def empty(_: int) -> None:
        shutil.rmtree(cache, ignore_errors=True)

    def nothing(_: int) -> None:
        pass

    def edit(number: int) -> None:
        change_documents(folder, number + 1)

    originals = {path: path.read_bytes() for path in (folder / "manifests").glob("*.yaml")}
    for command in ("validate", "plan"):
        print(f"\n## `customs-batch {command} manifests`")
        print("| case | wall | CPU | peak RSS | load | exit, last line |")
        print("|---|---:|---:|---:|---|---|")
        for path, data in originals.items():
            path.write_bytes(data)
        measure(
            "--no-cache", cli(command, "--no-cache", "manifests"), folder, options.repeats, empty
        )
        measure("cold", cli(command, "manifests"), folder, options.repeats, empty)
        measure("warm, unchanged", cli(command, "manifests"), folder, options.repeats, nothing)
        measure(
            f"warm, {CHANGED_FILES} changed",
            cli(command, "manifests"),
            folder,
            options.repeats,
            edit,
        )
    for path, data in originals.items():
        path.write_bytes(data)
    entries = [path for path in cache.iterdir() if len(path.name) == 40]
    size = sum(path.stat().st_size for path in entries)
    print(f"\ncache: {len(entries)} files, {size / 1024 / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
