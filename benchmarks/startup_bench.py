"""Start-up of the CLI (issue 14, item 6): `--help` and `validate one.yaml` under 0.25 s.

Each command runs as a whole process, many times in turn (A B C A B C ...), with the
bytecode cached as an installed package has it (``compileall`` first, and
``PYTHONDONTWRITEBYTECODE`` left out of the children's environment: with it set, every run
compiles each module from source again, about 0.05 s more). ``python -c pass`` is the floor.

    python benchmarks/startup_bench.py [--runs N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.25

# The figures of one run, measured inside a wrapper process of its own.
_WRAPPER = """
import resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, usage.ru_utime + usage.ru_stime, done.returncode)
"""

COMMANDS = (
    ("`python -c pass` (the floor)", ("-c", "pass")),
    ("`customs-batch --help`", ("-m", "customs_batch", "--help")),
    (
        "`customs-batch validate examples/manifests/departures.yaml`",
        ("-m", "customs_batch", "validate", "examples/manifests/departures.yaml"),
    ),
    (
        "`customs-batch validate examples/manifests/movements.yaml`",
        ("-m", "customs_batch", "validate", "examples/manifests/movements.yaml"),
    ),
)


def measure(argv: tuple[str, ...], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall and CPU seconds and the exit code of one run of ``python argv``."""
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, sys.executable, *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu, code = done.stdout.split()
    return float(wall), float(cpu), int(code)


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s ({min(values):.3f}-{max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "customs_batch", quiet=1)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    for _label, argv in COMMANDS:  # one warm-up each: the page cache, not the figures
        measure(argv, env)
    walls: dict[str, list[float]] = {label: [] for label, _ in COMMANDS}
    cpus: dict[str, list[float]] = {label: [] for label, _ in COMMANDS}
    codes: dict[str, set[int]] = {label: set() for label, _ in COMMANDS}
    for _ in range(args.runs):
        for label, argv in COMMANDS:
            wall, cpu, code = measure(argv, env)
            walls[label].append(wall)
            cpus[label].append(cpu)
            codes[label].add(code)
    print(
        f"{args.runs} runs of each, in turn, bytecode cached; median (lowest-highest); "
        f"target {TARGET} s of wall time\n"
    )
    print("| command | wall | CPU | exit | under the target |")
    print("|---|---:|---:|---:|---|")
    for label, _ in COMMANDS:
        median = statistics.median(walls[label])
        verdict = "yes" if median < TARGET else "no"
        exits = ", ".join(str(code) for code in sorted(codes[label]))
        print(f"| {label} | {spread(walls[label])} | {spread(cpus[label])} | {exits} | {verdict} |")


if __name__ == "__main__":
    main()
