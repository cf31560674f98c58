"""Start-up of the CLI: `--help` and `validate one.yaml` as whole processes, bytecode cached.

Issue 26's target: `validate one.yaml`, a one-file manifest with no template, no Jinja and no
`forEach` in a project without policies, in at most 0.15 s of CPU (user + system of the whole
process). Issue 14's earlier one: `--help` and `validate one.yaml` under 0.25 s of wall time.

Each command runs as a whole process, many times in turn (A B C A B C ...), with the
bytecode cached as an installed package has it (``compileall`` first, and
``PYTHONDONTWRITEBYTECODE`` left out of the children's environment: with it set, every run
compiles each module from source again, about 0.05 s more). The peers run in the same turns:
``python -c pass`` (the interpreter's floor) and a bare check of the same file, the
documents parsed by ``yaml.CSafeLoader`` and checked against the envelope's and the kind's
JSON Schemas, once with jsonschema-rs (what validate uses) and once with jsonschema.

The plain file is a copy of examples/manifests/movements.yaml in a folder of its own (no
customs-batch.yaml, so no policies); the load cache of the runs is a temporary folder
(``CUSTOMS_BATCH_CACHE_DIR``), warm after the first run. The examples' own files are measured
too: they use a template and the project's policies (the CEL library).

``--compare REV`` also runs the validate commands with the package as it was at the git
revision REV (exported to a temporary folder), in the same turns: a before/after on the same
load.

    python benchmarks/startup_bench.py [--runs N] [--compare REV]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run in the examples' folder, not the checkout's: a run in the checkout would import its
# package from the current folder, whatever PYTHONPATH says (--compare).
EXAMPLES = ROOT / "examples"
TARGET_CPU = 0.15
TARGET_WALL = 0.25

# The figures of one run, measured inside a wrapper process of its own.
_WRAPPER = """
import resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, usage.ru_utime + usage.ru_stime, done.returncode)
"""

# The peer: parse the file and check each document's envelope and spec, nothing else.
_BARE_CHECK = """
import json, sys
import yaml
{imports}
schemas = sys.argv[2]
def load(name):
    with open(f"{{schemas}}/{{name}}.schema.json", encoding="utf-8") as file:
        return json.load(file)
envelope, spec = {compile}(load("envelope")), {compile}(load("movement"))
with open(sys.argv[1], encoding="utf-8") as file:
    documents = list(yaml.load_all(file, Loader=yaml.CSafeLoader))
bad = sum(not (envelope.{valid}(d) and spec.{valid}(d["spec"])) for d in documents)
sys.exit(1 if bad else 0)
"""
_BARE_RS = _BARE_CHECK.format(
    imports="import jsonschema_rs",
    compile="jsonschema_rs.validator_for",
    valid="is_valid",
)
_BARE_PY = _BARE_CHECK.format(
    imports="import jsonschema",
    compile="jsonschema.Draft202012Validator",
    valid="is_valid",
)

PLAIN = "`customs-batch validate one.yaml` (plain, load cache warm)"
PLAIN_NO_CACHE = "`customs-batch validate --no-cache one.yaml` (plain)"


@dataclass(frozen=True)
class Command:
    label: str
    argv: tuple[str, ...]
    cwd: Path
    pythonpath: str | None = None


@dataclass
class Figures:
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    codes: set[int] = field(default_factory=set)


def commands(plain: Path, before: Path | None, rev: str | None) -> list[Command]:
    """Every command of a turn; the validate commands once more with the code of ``before``."""
    one = str(plain / "one.yaml")
    schemas = str(ROOT / "schemas")
    validates = [
        Command(PLAIN, ("-m", "customs_batch", "validate", "one.yaml"), plain),
        Command(
            PLAIN_NO_CACHE, ("-m", "customs_batch", "validate", "--no-cache", "one.yaml"), plain
        ),
        Command(
            "`customs-batch validate manifests/movements.yaml` in examples/ (policies)",
            ("-m", "customs_batch", "validate", "manifests/movements.yaml"),
            EXAMPLES,
        ),
        Command(
            "`customs-batch validate manifests/departures.yaml` in examples/ (template, policies)",
            ("-m", "customs_batch", "validate", "manifests/departures.yaml"),
            EXAMPLES,
        ),
    ]
    chosen = [
        Command("`python -c pass` (the floor)", ("-c", "pass"), EXAMPLES),
        Command(
            "bare check of one.yaml: CSafeLoader + jsonschema-rs",
            ("-c", _BARE_RS, one, schemas),
            ROOT,
        ),
        Command(
            "bare check of one.yaml: CSafeLoader + jsonschema", ("-c", _BARE_PY, one, schemas), ROOT
        ),
        Command("`customs-batch --help`", ("-m", "customs_batch", "--help"), EXAMPLES),
        *validates,
    ]
    if before is not None:
        # The exported tree first on the path: its package, not the installed one. The
        # examples are read from this checkout, so both codes validate the same files.
        chosen += [Command(f"{c.label}, at {rev}", c.argv, c.cwd, str(before)) for c in validates]
    return chosen


def measure(command: Command, env: dict[str, str]) -> tuple[float, float, int]:
    """Wall and CPU seconds and the exit code of one run of ``python argv``."""
    if command.pythonpath is not None:
        env = {**env, "PYTHONPATH": command.pythonpath}
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, sys.executable, *command.argv],
        cwd=command.cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu, code = done.stdout.split()
    return float(wall), float(cpu), int(code)


def export(rev: str, folder: Path) -> Path:
    """The package, schemas and templates as they were at ``rev``, compiled, in ``folder``."""
    archive = folder / "before.tar"
    subprocess.run(
        [
            "git",
            "archive",
            "--format=tar",
            "-o",
            str(archive),
            rev,
            "customs_batch",
            "schemas",
            "templates",
        ],
        cwd=ROOT,
        check=True,
    )
    tree = folder / "before"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    compileall.compile_dir(tree / "customs_batch", quiet=1)
    return tree


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s ({min(values):.3f}-{max(values):.3f})"


def report(runs: int, figures: dict[str, Figures], labels: list[str]) -> None:
    print(
        f"{runs} runs of each, in turn, bytecode cached; median (lowest-highest); CPU is "
        "user + system of the whole process\n"
    )
    bare = statistics.median(figures[labels[1]].cpus)
    floor = statistics.median(figures[labels[0]].cpus)
    print("| command | wall | CPU | CPU / bare check (rs) | exit |")
    print("|---|---:|---:|---:|---:|")
    for label in labels:
        f = figures[label]
        ratio = statistics.median(f.cpus) / bare if bare else float("nan")
        exits = ", ".join(str(code) for code in sorted(f.codes))
        print(f"| {label} | {spread(f.walls)} | {spread(f.cpus)} | {ratio:.1f}x | {exits} |")
    print()
    for label in (PLAIN, PLAIN_NO_CACHE):
        cpu = statistics.median(figures[label].cpus)
        verdict = "met" if cpu <= TARGET_CPU else "not met"
        print(
            f"- {label}: {cpu:.3f} s of CPU, target <= {TARGET_CPU} s: **{verdict}** "
            f"({cpu / floor:.1f}x `python -c pass`, {cpu / bare:.1f}x the bare check)"
        )
    wall = statistics.median(figures[PLAIN].walls)
    verdict = "met" if wall < TARGET_WALL else "not met"
    print(f"- {PLAIN}: {wall:.3f} s of wall time, earlier target < {TARGET_WALL} s: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--compare", metavar="REV", help="also run the code at git revision REV")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "customs_batch", quiet=1)
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as temporary:
        folder = Path(temporary)
        plain = folder / "plain"
        plain.mkdir()
        shutil.copy(ROOT / "examples" / "manifests" / "movements.yaml", plain / "one.yaml")
        before = export(args.compare, folder) if args.compare else None
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
        }
        env["CUSTOMS_BATCH_CACHE_DIR"] = str(folder / "cache")
        chosen = commands(plain, before, args.compare)
        for command in chosen:  # one warm-up each: the page cache and the load cache
            measure(command, env)
        figures = {command.label: Figures() for command in chosen}
        for _ in range(args.runs):
            for command in chosen:
                wall, cpu, code = measure(command, env)
                figures[command.label].walls.append(wall)
                figures[command.label].cpus.append(cpu)
                figures[command.label].codes.add(code)
    report(args.runs, figures, [command.label for command in chosen])


if __name__ == "__main__":
    main()
