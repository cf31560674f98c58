"""Run every benchmark and rewrite the measured parts of docs/benchmarks.md (``make bench``).

Each benchmark is a script of this folder that prints its figures as markdown (tables with
medians, spreads, the peer measured in the same run and the ratio). This runner runs them
one after another and puts each one's output, with the command, the date, the wall time and
the load of the machine while it ran, between the two markers of its block in
docs/benchmarks.md::

    <!-- bench:NAME -->
    ...replaced on every run...
    <!-- /bench:NAME -->

The prose around the blocks (what was profiled, what each change bought) is kept as
written. A block that is not in the document yet is added at the end. The ``machine``
block says what the figures were measured on.

    python benchmarks/report.py               # every benchmark
    python benchmarks/report.py validate apply  # only these blocks
    python benchmarks/report.py --list
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
PYTHON = sys.executable
# The benchmarks measure the CLI as installed, its bytecode cached: with this variable set
# (CI shells often set it), every run would compile each module from source again.
_ENVIRONMENT = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


@dataclass(frozen=True)
class Benchmark:
    """One block of the document: its name, what it measures and the command that does."""

    name: str
    title: str
    argv: tuple[str, ...]


BENCHMARKS = (
    Benchmark(
        "validate",
        "Offline validation against check-jsonschema",
        ("benchmarks/validate_bench.py",),
    ),
    Benchmark(
        "emulator", "The emulator against a bare Starlette app", ("benchmarks/emulator_bench.py",)
    ),
    Benchmark("client", "The client against bare httpx", ("benchmarks/client_bench.py",)),
    Benchmark(
        "apply",
        "Apply, re-plan, rate-limited runs and recording, against their peers",
        ("benchmarks/plan_apply_bench.py", "all"),
    ),
    Benchmark(
        "apply-speed",
        "Apply against a bare httpx loop, and paced applies on busy cores",
        ("benchmarks/apply_bench.py", "all"),
    ),
    Benchmark(
        "scale",
        "Re-plan by size, a big state's fixed cost, bulk loads' memory",
        ("benchmarks/scale_bench.py", "all"),
    ),
    Benchmark(
        "sheet",
        "Spreadsheet bulk loads",
        ("benchmarks/sheet_bench.py", "--rows", "10000", "50000", "100000"),
    ),
    Benchmark(
        "startup",
        "CLI start-up",
        ("benchmarks/startup_bench.py",),
    ),
    Benchmark(
        "cache",
        "The load cache: validate, plan and apply of 100,000, cold, warm and 10 changed",
        ("benchmarks/cache_bench.py", "--size", "100000"),
    ),
    Benchmark(
        "state-pg",
        "One recorded operation on a PostgreSQL state",
        ("benchmarks/state_pg_bench.py",),
    ),
)


class LoadSampler:
    """The 1-minute load average, sampled every second while a benchmark runs."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(1.0):
                return

    def describe(self) -> str:
        if not self.samples:
            return "unknown"
        low, high = min(self.samples), max(self.samples)
        mean = sum(self.samples) / len(self.samples)
        return f"{mean:.1f} on average ({low:.1f}-{high:.1f}) on {os.cpu_count()} cores"


def machine() -> str:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        total_kib = int(Path("/proc/meminfo").read_text(encoding="utf-8").split()[1])
        memory = f", {total_kib / 1024 / 1024:.0f} GiB of memory"
    except (OSError, ValueError, IndexError):
        pass
    return (
        f"- {os.cpu_count()} cores ({cpu}){memory}; {platform.system()} "
        f"{platform.release()}; Python {platform.python_version()}\n"
        f"- measured {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC with `make bench`; each "
        "block says the load while it ran (other work shares this machine; CPU times move "
        "less than wall times with the load)\n"
    )


def run(benchmark: Benchmark) -> str:
    """The benchmark's block: its command, when, how long, the load, and its output."""
    command = [PYTHON, *benchmark.argv]
    shown = "python " + " ".join(shlex.quote(a) for a in benchmark.argv)
    print(f"== {benchmark.name}: {shown}", file=sys.stderr, flush=True)
    started = time.monotonic()
    with LoadSampler() as load:
        done = subprocess.run(
            command,
            cwd=ROOT,
            env=_ENVIRONMENT,
            capture_output=True,
            text=True,
            check=False,
            timeout=3600,
        )
    seconds = time.monotonic() - started
    sys.stderr.write(done.stderr[-4000:])
    if done.returncode != 0:
        raise SystemExit(
            f"{benchmark.name} failed with exit {done.returncode}; docs/benchmarks.md is "
            "left as it was"
        )
    return (
        f"`{shown}` — {dt.datetime.now(dt.UTC):%Y-%m-%d}, {seconds:.0f} s, load "
        f"{load.describe()}.\n\n{done.stdout.strip()}\n"
    )


def replace_block(text: str, name: str, body: str, title: str) -> str:
    """``text`` with the block ``name`` holding ``body`` (added at the end when missing)."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        return pattern.sub(lambda _m: block, text, count=1)
    return f"{text.rstrip()}\n\n## {title}\n\n{block}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [b.name for b in BENCHMARKS]
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"any of: {', '.join(names)}")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = parser.parse_args()
    if args.list:
        for b in BENCHMARKS:
            print(f"{b.name:10} python {' '.join(b.argv)}")
        return
    unknown = sorted(set(args.names) - set(names))
    if unknown:
        parser.error(f"no benchmark named {', '.join(unknown)}; there are: {', '.join(names)}")
    chosen = [b for b in BENCHMARKS if not args.names or b.name in args.names]
    # Run everything first: a benchmark that fails leaves the document untouched.
    blocks = {b.name: run(b) for b in chosen}
    text = DOC.read_text(encoding="utf-8")
    text = replace_block(text, "machine", machine(), "The machine")
    for b in chosen:
        text = replace_block(text, b.name, blocks[b.name], b.title)
    DOC.write_text(text, encoding="utf-8")
    print(f"rewrote {DOC.relative_to(ROOT)}: {', '.join(blocks)}", file=sys.stderr)


if __name__ == "__main__":
    main()
