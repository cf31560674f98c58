"""The load cache (issue 26): validate, plan and apply of ``--size`` documents, cold and warm.

For ``customs-batch validate manifests`` and ``customs-batch plan manifests`` on the project of
``--size`` movements (default 10,000; ``make bench`` uses 100,000, in files of 100) whose state
records every one as applied, four cases and a floor, each the median of ``--repeats`` fresh
processes (default 3):

``--no-cache``
    no cache read or written: what every run cost before the cache;
``cold``
    the cache folder emptied before each run: every file loaded, and its entry written;
``warm, unchanged``
    every file taken from the cache; the project-wide checks (and for plan the state
    compared) still run on every document;
``warm, 10 changed``
    one document changed in each of 10 files (a new value each run), so those 10 files
    (100 documents each) are loaded and the others taken from the cache;
``floor``
    what any tool must do for the same edit, bare: read and digest every manifest file (to
    find the 10 that changed), parse those 10 with ``yaml.CSafeLoader``, check each of their
    documents against the envelope's and the movement's JSON Schemas (jsonschema-rs), and
    compare its spec with its record in the state (the state file read, where each record
    starts found in one regular-expression pass over its bytes, the record parsed with
    ``json``). No project-wide check, no output.

The issue's targets, printed after each table: the warm run with 10 files changed in at most
5 % of the cold run's CPU (and its ratio to the floor, measured in the same run).

In that project 91 % of the movements repeat another's request on their HAWB (a warning
each: 91,000 of them, which every run reports). ``validate`` is measured again, cold and
with 10 files changed, on a copy where each movement's quantity is its own, so that no two
send the same request (``<project>-distinct``, with a cache of its own).

``apply``: a movement added to each of 10 files (a create each: a changed movement is refused,
not sent), ``customs-batch apply manifests --auto-approve`` against the emulator (the app of
``sandbox serve`` under uvicorn, the project's seed, no rate limit), the load cache warm; the
time from the start of the process to the emulator's first request (stamped by a wrapper
around the app, same clock), target <= 2 s, and the run's wall and CPU. The manifests are put
back after each run; the run's state is a copy of the project's, removed after it.

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
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale_bench
from plan_apply_bench import KEY
from scale_bench import Run, cli, load, machine, spread
from servers import serving, uvicorn_app

WORK = scale_bench.ROOT / "benchmarks" / ".work" / "cache"
CHANGED_FILES = 10
TARGET_SHARE = 0.05  # of the cold run's CPU
TARGET_FIRST_REQUEST = 2.0  # seconds from the start of apply

# The floor: what any tool must do for the edit, bare (see the module's docstring).
_FLOOR = """
import hashlib, json, os, re, sys
import jsonschema_rs, yaml
folder, schemas, changed = sys.argv[1], sys.argv[2], set(sys.argv[3:])
def schema(name):
    with open(os.path.join(schemas, name + ".schema.json"), encoding="utf-8") as file:
        return jsonschema_rs.validator_for(json.load(file))
envelope, movement = schema("envelope"), schema("movement")
manifests = os.path.join(folder, "manifests")
digests = {}
for name in sorted(os.listdir(manifests)):
    with open(os.path.join(manifests, name), "rb") as file:
        digests[name] = hashlib.blake2b(file.read()).digest()
with open(os.path.join(folder, ".customs-batch", "local", "state.json"), "rb") as file:
    state = file.read()
# Where each record starts: one pass over the state's bytes (its keys at the records' depth).
starts = {m.group(1): m.end() for m in re.finditer(rb'\\n    "([^"\\n]+)": ', state)}
differ = bad = 0
for name in sorted(changed):
    with open(os.path.join(manifests, name), encoding="utf-8") as file:
        documents = list(yaml.load_all(file, Loader=yaml.CSafeLoader))
    for document in documents:
        bad += not (envelope.is_valid(document) and movement.is_valid(document["spec"]))
        start = starts[("Movement/" + document["metadata"]["name"]).encode()]
        record, _ = json.JSONDecoder().raw_decode(state[start:start + 4096].decode())
        differ += record["spec"] != document["spec"]
print(len(digests), "files digested,", differ, "documents differ,", bad, "invalid")
"""

# The emulator for apply, stamping the time of its first request into a file.
_STAMPED_SANDBOX = """
import os, time
from pathlib import Path
from customs_batch.sandbox import create_app, load_seed
inner = create_app(seed=load_seed(Path({seed!r})), rate_limit=None, processing_seconds=0)
stamp = {stamp!r}
async def app(scope, receive, send):
    if scope["type"] == "http" and not os.path.exists(stamp):
        with open(stamp + ".new", "w") as file:
            file.write(repr(time.time()))
        os.replace(stamp + ".new", stamp)
    await inner(scope, receive, send)
"""


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


def changed_files(folder: Path) -> list[str]:
    return [path.name for path in sorted((folder / "manifests").glob("*.yaml"))[:CHANGED_FILES]]


def add_movements(folder: Path, run: int) -> None:
    """Append a new movement (a copy of the file's first, renamed, another weight) to each
    of the first CHANGED_FILES files."""
    for path in sorted((folder / "manifests").glob("*.yaml"))[:CHANGED_FILES]:
        text = path.read_text(encoding="utf-8")
        first = text.split("\n---\n", 1)[0]
        name = re.search(r"name: (\S+)", first)
        assert name is not None
        added = first.replace(name.group(0), f"name: {name.group(1)}-added-{run}")
        added = re.sub(r"grossWeightKg: [0-9.]+", f"grossWeightKg: {2000 + run}.5", added)
        path.write_text(text.rstrip("\n") + "\n---\n" + added.strip("\n") + "\n")


def measure(
    name: str, command: list[str], folder: Path, repeats: int, before: Callable[[int], None]
) -> list[Run]:
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
    return runs


def cpu(runs: list[Run]) -> float:
    return statistics.median(run.cpu for run in runs)


def verdict(met: bool) -> str:
    return "**met**" if met else "**not met**"


def targets(cold: list[Run], changed: list[Run], floor: list[Run]) -> None:
    """The warm run with 10 files changed against the cold run and the floor."""
    share = cpu(changed) / cpu(cold)
    print(
        f"\nwarm, {CHANGED_FILES} changed: {cpu(changed):.2f} s of CPU = {100 * share:.1f} % "
        f"of the cold run's {cpu(cold):.2f} s (target <= {100 * TARGET_SHARE:.0f} %: "
        f"{verdict(share <= TARGET_SHARE)}); {cpu(changed) / cpu(floor):.1f}x the floor's "
        f"{cpu(floor):.2f} s",
        flush=True,
    )


def distinct_project(folder: Path) -> Path:
    """The benchmark's project with each movement's quantity its own number: no two of its
    100,000 movements send the same request (in the project itself, 91 % of them repeat
    another's request on its HAWB, and validate reports each one)."""
    distinct = folder.with_name(folder.name + "-distinct")
    if distinct.is_dir():
        return distinct
    scratch = distinct.with_name(distinct.name + ".tmp")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(folder, scratch, ignore=shutil.ignore_patterns(".load-cache"))
    counter = iter(range(1, 10**9))
    for path in sorted((scratch / "manifests").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"quantity: [0-9]+", lambda _: f"quantity: {next(counter)}", text)
        path.write_text(text, encoding="utf-8")
    scratch.rename(distinct)
    return distinct


def bench_distinct(folder: Path, repeats: int, schemas: str) -> None:
    """validate, cold and with 10 files changed, on the project without repeated requests
    (with a cache of its own: the project's stays as the runs before left it)."""
    distinct = distinct_project(folder)
    originals = {path: path.read_bytes() for path in (distinct / "manifests").glob("*.yaml")}
    cache = distinct / ".load-cache"
    kept = os.environ["CUSTOMS_BATCH_CACHE_DIR"]
    os.environ["CUSTOMS_BATCH_CACHE_DIR"] = str(cache)

    def empty(_: int) -> None:
        shutil.rmtree(cache, ignore_errors=True)

    def edit(number: int) -> None:
        change_documents(distinct, number + 1)

    print(
        "\n## `customs-batch validate manifests`, the same project with no request repeated "
        "(each movement's quantity its own)"
    )
    print("| case | wall | CPU | peak RSS | load | exit, last line |")
    print("|---|---:|---:|---:|---|---|")
    cold = measure("cold", cli("validate", "manifests"), distinct, repeats, empty)
    changed = measure(
        f"warm, {CHANGED_FILES} changed", cli("validate", "manifests"), distinct, repeats, edit
    )
    floor_command = [sys.executable, "-c", _FLOOR, str(distinct), schemas]
    floor_command += changed_files(distinct)
    floor = measure("floor (bare, see above)", floor_command, distinct, repeats, lambda _: None)
    targets(cold, changed, floor)
    for path, data in originals.items():
        path.write_bytes(data)
    os.environ["CUSTOMS_BATCH_CACHE_DIR"] = kept


def bench_apply(folder: Path, repeats: int) -> None:
    """Time from the start of ``apply`` to the emulator's first request, 10 movements added."""
    # The environment of the emulator served here needs a state of its own (two environments
    # may not share one): a copy of the project's, made anew for each run and removed after,
    # without the file that names local as its environment (a copy is refused otherwise: the
    # emulator served here holds none of its objects, and only the time to plan is measured).
    local = folder / ".customs-batch" / "local"
    own = folder / ".customs-batch" / "bench"
    manifests = {path: path.read_bytes() for path in (folder / "manifests").glob("*.yaml")}
    config = folder / "customs-batch.yaml"
    settings = config.read_bytes()
    firsts, walls, cpus, lines = [], [], [], []
    with tempfile.TemporaryDirectory() as scratch:
        stamp = os.path.join(scratch, "first-request")
        code = _STAMPED_SANDBOX.format(seed=str(folder / "seed.yaml"), stamp=stamp)
        with serving(uvicorn_app(code)) as base:
            config.write_text(
                "default_environment: local\nenvironments:\n  bench:\n"
                f"    base_url: {base}\n    api_key_env: CACHE_BENCH_KEY\n"
                "    rate_limit: off\n    state_dir: .customs-batch/bench\n",
                encoding="utf-8",
            )
            os.environ["CACHE_BENCH_KEY"] = KEY
            try:
                for number in range(repeats):
                    add_movements(folder, number + 1)
                    shutil.rmtree(own, ignore_errors=True)
                    shutil.copytree(local, own)
                    (own / "environment").unlink(missing_ok=True)
                    # The copy is older than the state the run before left in the folder:
                    # its mark in the cache folder would have it refused as put back (no
                    # request sent from the second run on). Marks are as safe to delete as
                    # the cache; the entries stay, warm.
                    cache = Path(os.environ["CUSTOMS_BATCH_CACHE_DIR"])
                    for mark in cache.glob(".state-*"):
                        mark.unlink()
                    with_stamp = Path(stamp)
                    with_stamp.unlink(missing_ok=True)
                    started = time.time()
                    command = cli("apply", "manifests", "--env", "bench", "--auto-approve")
                    run = Run(command, folder)
                    if not with_stamp.exists():
                        raise SystemExit(f"apply sent no request: {run.code}, {run.last_line}")
                    firsts.append(float(with_stamp.read_text()) - started)
                    walls.append(run.wall)
                    cpus.append(run.cpu)
                    lines.append(f"{run.code}, {run.last_line[:60]}")
                    for path, data in manifests.items():
                        path.write_bytes(data)  # also done if a run fails, below
            finally:
                config.write_bytes(settings)
                shutil.rmtree(own, ignore_errors=True)
                for path, data in manifests.items():
                    path.write_bytes(data)
    print(
        f"\n## `customs-batch apply manifests`, a movement added in each of {CHANGED_FILES} files"
    )
    print("| what | figure | load |")
    print("|---|---:|---|")
    print(
        f"| start of the process to the emulator's first request | {spread(firsts, 's')} | {load()} |"
    )
    print(f"| whole run, wall | {spread(walls, 's')} | |")
    print(f"| whole run, CPU | {spread(cpus, 's')} | |")
    print(f"| exit, last line | {lines[-1]} | |")
    first = statistics.median(firsts)
    print(
        f"\nfirst request {first:.2f} s after the start (target <= {TARGET_FIRST_REQUEST:.0f} s: "
        f"{verdict(first <= TARGET_FIRST_REQUEST)})",
        flush=True,
    )


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
    print(f"load cache, {options.size:,} documents in files of 100 ({machine()})")

    def empty(_: int) -> None:
        shutil.rmtree(cache, ignore_errors=True)

    def nothing(_: int) -> None:
        pass

    def edit(number: int) -> None:
        change_documents(folder, number + 1)

    originals = {path: path.read_bytes() for path in (folder / "manifests").glob("*.yaml")}
    schemas = str(scale_bench.ROOT / "schemas")
    floor_command = [sys.executable, "-c", _FLOOR, str(folder), schemas, *changed_files(folder)]
    for command in ("validate", "plan"):
        print(f"\n## `customs-batch {command} manifests`")
        print("| case | wall | CPU | peak RSS | load | exit, last line |")
        print("|---|---:|---:|---:|---|---|")
        for path, data in originals.items():
            path.write_bytes(data)
        measure(
            "--no-cache", cli(command, "--no-cache", "manifests"), folder, options.repeats, empty
        )
        cold = measure("cold", cli(command, "manifests"), folder, options.repeats, empty)
        measure("warm, unchanged", cli(command, "manifests"), folder, options.repeats, nothing)
        changed = measure(
            f"warm, {CHANGED_FILES} changed",
            cli(command, "manifests"),
            folder,
            options.repeats,
            edit,
        )
        floor = measure("floor (bare, see above)", floor_command, folder, options.repeats, nothing)
        targets(cold, changed, floor)
    for path, data in originals.items():
        path.write_bytes(data)
    bench_distinct(folder, options.repeats, schemas)
    bench_apply(folder, options.repeats)
    entries = [path for path in cache.iterdir() if len(path.name) == 40]
    size = sum(path.stat().st_size for path in entries)
    print(f"\ncache: {len(entries)} files, {size / 1024 / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
