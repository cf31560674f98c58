"""Benchmarks of plan, apply and the state (issue 5): the figures of docs/benchmarks.md.

Sub-benchmarks, chosen by the first argument (default ``all``):

``replan``
    An unchanged re-plan of 10,000 movements: the real loader on YAML files, a state that
    records every one as applied, the diff; planned with no client at all, and an audit hook
    that counts every socket connection and DNS lookup (there must be none).
``apply``
    Apply of 10,000 movements against the in-process emulator with every outcome fsynced, at
    parallelism 1, 4 and 8; against a plain httpx loop that posts the same rows through the same
    in-process transport and records nothing.
``ratelimited``
    Apply of 500 movements against a real ``sandbox serve`` process limited to 50/second, the
    client's RateLimiter set to the same: wall time against requests / rate, and the 429s.
``record``
    One ``session.record`` with 100, 10,000 and 100,000 resources in the state, against
    rewriting the whole state file per update (``write_state``).

Generated inputs live under ``benchmarks/.work/plan-apply/``. Run with ``make bench-apply``
or ``.venv/bin/python benchmarks/plan_apply_bench.py [NAME] [--count N]``. Never part of
``make test``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from servers import sandbox_serve, serving
from starlette.applications import Starlette

from customs_batch.client import CustomsClient, RateLimit, RateLimiter, Sender
from customs_batch.execution.apply import ApplyReport, apply_plan
from customs_batch.execution.scheduler import NodeStatus
from customs_batch.kinds import Kind
from customs_batch.kinds.registry import model_of
from customs_batch.manifest import Document, load_paths
from customs_batch.planning import Action, Plan, plan_changes
from customs_batch.sandbox import InProcessTransport, create_app, load_seed
from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord, State
from customs_batch.state.file import write_state

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / ".work" / "plan-apply"
KEY = "sandbox-key"
BASE_URL = "http://sandbox.local"
SHIPMENTS = 100
HAWBS_PER_SHIPMENT = 10
DOCUMENTS_PER_FILE = 100
MOVEMENTS_PATH = "/v1/shipments/{id}/movements"
SERVE_RATE = "50/second"


# -- generated inputs ----------------------------------------------------------------------


def lane(number: int) -> tuple[str, str, str]:
    """Shipment, HAWB and party of movement ``number``: consecutive movements go to
    different HAWBs, so the planner's per-HAWB chains leave a wide graph to run in parallel."""
    hawb = number % (SHIPMENTS * HAWBS_PER_SHIPMENT)
    shipment = hawb // HAWBS_PER_SHIPMENT
    return f"shp_b{shipment:04d}", f"hawb_b{shipment:04d}x{hawb % 10}", f"rpty_b{shipment:04d}"


def movement_yaml(number: int) -> str:
    """One VAH movement document, valid for the validator and the emulator."""
    shipment, hawb, party = lane(number)
    return f"""apiVersion: customs-batch/v1
kind: Movement
metadata:
  name: mov-bench-{number:05d}
spec:
  shipmentId: {shipment}
  hawbId: {hawb}
  action: VAH
  quantity: {1 + number % 9}
  grossWeightKg: {10 + number % 90}.5
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: {party}
  customsDeclaration:
    source: EXTERNAL
    documentType: X
    declarationType: IM
    declarationNumber: 24NLR1234567890120
"""


def seed_yaml() -> str:
    """A seed with every shipment, HAWB and party the generated movements use."""
    lines = ["apiKeys:", f"  - {{key: {KEY}, companyId: 1}}", "shipments:"]
    for number in range(SHIPMENTS):
        public = f"b{number:04d}"
        lines += [
            f"  - id: {10_000 + number}",
            f"    publicId: shp_{public}",
            f"    referenceNumber: REF-B{number:04d}",
            "    status: new",
            f"    parties: [rpty_{public}]",
            "    hawbs:",
        ]
        lines += [
            f"      - {{hawbId: hawb_{public}x{h}, houseAirWaybillNumber: '176-{number:04d}{h:04d}', "
            "packageCount: 1000000, grossWeightKg: 1000000.0}"
            for h in range(HAWBS_PER_SHIPMENT)
        ]
    return "\n".join(lines) + "\n"


def project(count: int) -> Path:
    """A project folder with ``count`` movements in files of about 100, and the seed beside it."""
    # "-by-hawb": earlier folders spread a HAWB's movements over files (now a finding).
    folder = WORK / f"project-{count}-by-hawb"
    if folder.is_dir():
        return folder
    tmp = WORK / f"project-{count}-by-hawb.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "manifests").mkdir(parents=True)
    (tmp / "customs-batch.yaml").write_text("default_environment: local\n")
    (tmp / "seed.yaml").write_text(seed_yaml())
    for index, numbers in enumerate(files_of(count)):
        text = "---\n".join(movement_yaml(n) for n in numbers)
        (tmp / "manifests" / f"movements-{index:03d}.yaml").write_text(text)
    tmp.rename(folder)
    return folder


def files_of(count: int) -> list[list[int]]:
    """The movements of each file: whole HAWBs, about DOCUMENTS_PER_FILE to a file. A
    HAWB's movements stay in one file, in number order: across files the order of a HAWB's
    movements would be only what dependsOn says (validation refuses them without it)."""
    by_hawb: dict[str, list[int]] = {}
    for number in range(count):
        by_hawb.setdefault(lane(number)[1], []).append(number)
    files: list[list[int]] = []
    current: list[int] = []
    for numbers in by_hawb.values():
        current += numbers
        if len(current) >= DOCUMENTS_PER_FILE:
            files.append(current)
            current = []
    if current:
        files.append(current)
    return files


def load_documents(folder: Path) -> list[Document]:
    """The project's documents through the real loader; any finding stops the benchmark."""
    result = load_paths([folder / "manifests"])
    if result.findings:
        raise SystemExit(f"the generated manifests have findings: {result.findings[:3]}")
    return result.documents


def applied_state(documents: Sequence[Document]) -> State:
    """A state that records every document as applied with the very spec it would send and
    the identity it was planned with, as apply records a creation."""
    state = State.new()
    for number, change in enumerate(plan_changes(documents, State(lineage="")).changes):
        state.resources[str(change.address)] = ResourceRecord(
            str(change.address),
            RecordStatus.APPLIED,
            change.operation.value,
            change.spec,
            outputs={"movementId": f"mov_{number + 1:08d}"},
            idempotency_key=str(uuid.uuid4()),
            updated_at="2026-11-21T06:00:00.000Z",
            identity=change.identity,
        )
    return state


# -- shared measuring helpers --------------------------------------------------------------


class NetworkWatch:
    """Counts socket connections and name lookups made by this process (audit events)."""

    EVENTS = frozenset({"socket.connect", "socket.getaddrinfo", "socket.gethostbyname"})

    def __init__(self) -> None:
        self.seen = 0
        self.watching = False
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self.watching and event in self.EVENTS:
            self.seen += 1

    @contextmanager
    def watch(self) -> Iterator[None]:
        self.watching = True
        try:
            yield
        finally:
            self.watching = False


class FsyncCount:
    """Counts the fsyncs of this process and the seconds they took (wraps ``os.fsync``)."""

    def __init__(self) -> None:
        self.calls = 0
        self.seconds = 0.0
        self._real = os.fsync

    def _fsync(self, fd: Any) -> None:
        started = time.perf_counter()
        self._real(fd)
        self.seconds += time.perf_counter() - started
        self.calls += 1

    @contextmanager
    def counting(self) -> Iterator[FsyncCount]:
        os.fsync = self._fsync
        try:
            yield self
        finally:
            os.fsync = self._real


def timed(work: Callable[[], object]) -> float:
    """Seconds ``work`` takes."""
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def fresh(folder: Path) -> Path:
    """An empty folder at ``folder``."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def in_process_client(app: Starlette) -> CustomsClient:
    """The API client against ``app`` in-process, without a rate limit."""
    return CustomsClient(Sender(BASE_URL, KEY, transport=InProcessTransport(app)))


def emulator(folder: Path) -> Starlette:
    """A fresh in-process emulator with the benchmark's seed and no rate limit."""
    return create_app(seed=load_seed(folder / "seed.yaml"), rate_limit=None)


def created_movements(app: Starlette) -> int:
    """How many movement POSTs the emulator answered (from its request counters)."""
    stats = app.state.sandbox.stats.snapshot()
    return int(stats["requests"].get(f"POST {MOVEMENTS_PATH}", 0))


# -- 1. unchanged re-plan ------------------------------------------------------------------


@dataclass(frozen=True)
class ReplanFigures:
    read_state: float
    load: float
    diff: float
    connections: int
    requests: int
    unchanged: int

    @property
    def total(self) -> float:
        return self.read_state + self.load + self.diff


def replan_once(folder: Path, backend: LocalBackend, watch: NetworkWatch) -> ReplanFigures:
    """State read, load and diff of the whole project, timed apart, with no client."""
    before = watch.seen
    with watch.watch():
        started = time.perf_counter()
        state = backend.read()
        loaded = time.perf_counter()
        documents = load_documents(folder)
        diffed = time.perf_counter()
        plan = plan_changes(documents, state)
        finished = time.perf_counter()
    return ReplanFigures(
        loaded - started,
        diffed - loaded,
        finished - diffed,
        watch.seen - before,
        plan.requests,
        plan.counts[Action.NO_CHANGE],
    )


def bench_replan(count: int, watch: NetworkWatch) -> None:
    folder = project(count)
    backend = LocalBackend(folder / "state-replan")
    if not backend.state_path.exists():
        backend.directory.mkdir(parents=True, exist_ok=True)
        write_state(backend.state_path, applied_state(load_documents(folder)))
    print(f"## replan: {count:,} movements in {count // DOCUMENTS_PER_FILE} files, all applied")
    runs = [replan_once(folder, backend, watch) for _ in range(3)]
    for figures in runs:
        print(
            f"  plan {figures.total:.2f} s (state read {figures.read_state:.2f} s, load "
            f"{figures.load:.2f} s, diff {figures.diff:.2f} s); no-change {figures.unchanged:,}, "
            f"requests {figures.requests}, connections/lookups {figures.connections}",
            flush=True,
        )
    best = min(runs, key=lambda f: f.total)
    verdict = "met" if best.total <= 3.0 else "MISSED"
    print(f"  best {best.total:.2f} s: target <= 3 s {verdict}")
    cli = ROOT / "customs_batch" / "cli" / "plan.py"
    if cli.exists():
        bench_replan_cli(folder, backend)
    else:
        print("  (customs_batch/cli/plan.py does not exist yet: no CLI figure)")


def bench_replan_cli(folder: Path, backend: LocalBackend) -> None:
    """``customs-batch plan`` end to end in a subprocess, on the same state."""
    state_dir = folder / ".customs-batch" / "local"
    fresh(state_dir)
    shutil.copy(backend.state_path, state_dir / "state.json")
    command = [sys.executable, "-m", "customs_batch", "plan", "manifests"]
    for _ in range(3):
        started = time.perf_counter()
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        tail = (done.stdout + done.stderr).strip().splitlines()[-1:] or [""]
        print(
            f"  CLI `customs-batch plan manifests`: {seconds:.2f} s, exit {done.returncode}: {tail[0]}"
        )


# -- 2. apply in-process -------------------------------------------------------------------


@dataclass(frozen=True)
class ApplyFigures:
    report: ApplyReport
    close_seconds: float
    created: int
    fsyncs: int
    fsync_seconds: float


def apply_once(folder: Path, plan: Plan, parallelism: int) -> ApplyFigures:
    """Apply ``plan`` to a fresh emulator and a fresh state; the run, then the fold at close."""
    app = emulator(folder)
    backend = LocalBackend(fresh(WORK / f"state-apply-{parallelism}"))
    stop = threading.Event()
    with in_process_client(app) as client, FsyncCount().counting() as fsyncs:
        session = backend.open("apply")
        try:
            report = apply_plan(plan, session, client, parallelism=parallelism, stop=stop)
            counted, seconds = fsyncs.calls, fsyncs.seconds
        finally:
            close = timed(session.close)
    return ApplyFigures(report, close, created_movements(app), counted, seconds)


Row = tuple[str, dict[str, Any]]
"""A movement as a bare loop sends it: its shipment, and the body of its POST."""


def plan_rows(plan: Plan) -> list[Row]:
    """Each change of ``plan`` (movements) as a bare loop sends it."""
    return [
        (str(c.spec["shipmentId"]), {k: v for k, v in c.spec.items() if k != "shipmentId"})
        for c in plan.changes
    ]


def post_rows(http: httpx.Client, rows: Sequence[Row], threads: int) -> Callable[[], None]:
    """A run that POSTs ``rows`` with ``http``, each with an idempotency key of its own,
    recording nothing: on one thread, or on a pool of ``threads`` sharing the client."""

    def post(row: Row) -> None:
        key = {"Idempotency-Key": str(uuid.uuid4())}
        http.post(MOVEMENTS_PATH.format(id=row[0]), json=row[1], headers=key).raise_for_status()

    def run() -> None:
        if threads == 1:
            for row in rows:
                post(row)
            return
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(post, rows))

    return run


def plain_loop(folder: Path, plan: Plan, threads: int) -> tuple[float, int]:
    """The same rows POSTed with a bare httpx.Client through the same transport, nothing
    recorded; one thread, or a pool of ``threads`` sharing the client."""
    app = emulator(folder)
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(
        base_url=BASE_URL, transport=InProcessTransport(app), headers=headers
    ) as http:
        seconds = timed(post_rows(http, plan_rows(plan), threads))
    return seconds, created_movements(app)


def bench_apply(count: int, parallelisms: Sequence[int]) -> None:
    folder = project(count)
    plan = plan_changes(load_documents(folder), State(lineage=""))
    print(f"## apply: {count:,} movements, in-process emulator, every outcome fsynced")
    for parallelism in parallelisms:
        run = apply_once(folder, plan, parallelism)
        succeeded = run.report.count(NodeStatus.SUCCEEDED)
        print(
            f"  apply_plan parallelism {parallelism}: {run.report.seconds:.2f} s, "
            f"{succeeded / run.report.seconds:,.0f} ops/s ({succeeded:,} succeeded, "
            f"{run.created:,} created); {run.fsyncs:,} fsyncs for {2 * succeeded:,} records "
            f"({run.fsync_seconds:.2f} s in fsync); fold at close {run.close_seconds:.2f} s",
            flush=True,
        )
    for threads in sorted({1, max(parallelisms)}):
        seconds, created = plain_loop(folder, plan, threads)
        print(
            f"  plain httpx loop, {threads} thread(s), nothing recorded: {seconds:.2f} s, "
            f"{created / seconds:,.0f} requests/s ({created:,} created)",
            flush=True,
        )


# -- 3. apply against a rate-limited sandbox serve -----------------------------------------


def served(folder: Path, rate: str) -> AbstractContextManager[str]:
    """``customs-batch sandbox serve`` with the benchmark's seed, stopped at the end."""
    return serving(sandbox_serve("--rate-limit", rate, "--seed", str(folder / "seed.yaml")))


def bench_ratelimited(count: int, parallelism: int) -> None:
    folder = project(max(count, DOCUMENTS_PER_FILE))
    documents = load_documents(folder)[:count]
    plan = plan_changes(documents, State(lineage=""))
    limit = RateLimit.parse(SERVE_RATE)
    assert limit.requests is not None
    print(f"## ratelimited: {count} movements, sandbox serve --rate-limit {SERVE_RATE}")
    with served(folder, SERVE_RATE) as base:
        sender = Sender(base, KEY, rate_limiter=RateLimiter(limit))
        backend = LocalBackend(fresh(WORK / "state-ratelimited"))
        with CustomsClient(sender) as client, backend.open("apply") as session:
            report = apply_plan(
                plan, session, client, parallelism=parallelism, stop=threading.Event()
            )
        time.sleep(1.5)  # let the server's window empty before asking for its counters
        headers = {"Authorization": f"Bearer {KEY}"}
        stats = httpx.get(f"{base}/_sandbox/stats", headers=headers).json()
    posted = int(stats["requests"].get(f"POST {MOVEMENTS_PATH}", 0))
    ideal = posted / (limit.requests / limit.period)
    print(
        f"  parallelism {parallelism}: {report.seconds:.2f} s for {posted} requests; "
        f"requests / rate = {ideal:.2f} s; {100 * (report.seconds / ideal - 1):+.1f} %; "
        f"429 answers {stats['rateLimited']}; succeeded {report.count(NodeStatus.SUCCEEDED)}"
    )


# -- 4. cost of one record -----------------------------------------------------------------


def state_of(size: int) -> State:
    """A state of ``size`` applied movements, each record about the size of a real one."""
    state = State.new()
    for number in range(size):
        record = movement_record(number, RecordStatus.APPLIED)
        state.resources[record.address] = record
    return state


def movement_record(number: int, status: RecordStatus) -> ResourceRecord:
    """An applied movement of another batch: on shipments of its own (``shp_s…``), so that
    no document of the generated project declares the same thing (plan refuses a document
    whose identity a record of another address holds) and a run of new documents against a
    big state sends every one of them."""
    shipment, hawb, party = (name.replace("_b", "_s", 1) for name in lane(number))
    spec = {
        "shipmentId": shipment,
        "hawbId": hawb,
        "action": "VAH",
        "quantity": 1 + number % 9,
        "grossWeightKg": 10.5,
        "customsSupervision": "Y",
        "goodsHandlingCode": "N",
        "partyId": party,
        "customsDeclaration": {
            "source": "EXTERNAL",
            "documentType": "X",
            "declarationType": "IM",
            "declarationNumber": "24NLR1234567890120",
        },
    }
    identify = model_of(Kind.MOVEMENT).identity
    assert identify is not None
    # As apply records it: the kind's identity and the movement's place in its lane (the
    # lane of movement ``number`` holds every SHIPMENTS * HAWBS_PER_SHIPMENT-th one).
    place = number // (SHIPMENTS * HAWBS_PER_SHIPMENT)
    return ResourceRecord(
        f"Movement/mov-bench-{number:06d}",
        status,
        "create-movement",
        spec,
        outputs={"movementId": f"mov_{number + 1:08d}"},
        idempotency_key=str(uuid.uuid4()),
        updated_at="2026-11-21T06:00:00.000Z",
        identity=(*identify(spec), f"place={place}"),
    )


def median_seconds(samples: int, work: Callable[[int], object]) -> float:
    """The median seconds of ``work(i)`` over ``samples`` calls."""
    times = []
    for number in range(samples):
        started = time.perf_counter()
        work(number)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def record_cost(size: int, samples: int) -> tuple[float, float, float]:
    """Seconds of one ``session.record`` and of one whole-file rewrite with ``size``
    resources in the state, and the state file's size in MB."""
    backend = LocalBackend(fresh(WORK / f"state-record-{size}"))
    state = state_of(size)
    write_state(backend.state_path, state)
    megabytes = backend.state_path.stat().st_size / 1e6
    with backend.open("bench") as session:
        journal = median_seconds(
            samples, lambda i: session.record(movement_record(i % size, RecordStatus.PENDING))
        )

    def rewrite(number: int) -> None:
        record = movement_record(number % size, RecordStatus.PENDING)
        state.apply(record.address, record)
        state.serial += 1
        write_state(backend.state_path, state)

    whole = median_seconds(max(3, min(samples, 300_000 // size)), rewrite)
    return journal, whole, megabytes


def bench_record(sizes: Sequence[int], samples: int) -> None:
    print("## record: one outcome recorded, by state size (median)")
    print("| resources in state | session.record | write_state per update | state.json |")
    print("|---:|---:|---:|---:|")
    for size in sizes:
        journal, whole, megabytes = record_cost(size, samples)
        print(
            f"| {size:,} | {journal * 1000:.2f} ms | {whole * 1000:,.1f} ms | {megabytes:.1f} MB |",
            flush=True,
        )


# -- command line --------------------------------------------------------------------------


def main() -> None:
    """Parse the arguments and run the chosen benchmarks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = ["replan", "apply", "ratelimited", "record"]
    parser.add_argument("name", nargs="?", default="all", choices=[*names, "all"])
    parser.add_argument("--count", type=int, default=10_000, help="movements for replan/apply")
    parser.add_argument("--parallelism", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--served-count", type=int, default=500, help="movements for ratelimited")
    parser.add_argument("--samples", type=int, default=200, help="records timed per state size")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    print(f"{os.cpu_count()} CPUs; work folder {WORK.relative_to(ROOT)}")
    chosen = names if args.name == "all" else [args.name]
    watch = NetworkWatch()
    for name in chosen:
        if name == "replan":
            bench_replan(args.count, watch)
        elif name == "apply":
            bench_apply(args.count, args.parallelism)
        elif name == "ratelimited":
            bench_ratelimited(args.served_count, max(args.parallelism))
        else:
            bench_record([100, 10_000, 100_000], args.samples)


if __name__ == "__main__":
    main()
