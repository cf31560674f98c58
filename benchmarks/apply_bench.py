"""Apply speed and rate-limit pacing: the section "Apply: speed and pacing" of docs/benchmarks.md.

``speed``
    Apply of ``--count`` movements against the in-process emulator, every intent and outcome
    fsynced, at parallelism 1 and 8; its peer, measured in the same run and alternated with
    it round by round (A B A B), is a bare ``httpx.Client`` loop that POSTs the same rows
    through the same in-process transport on 1 and 8 threads and records nothing. Each
    figure is the median of ``--rounds`` rounds with its spread (lowest-highest); the
    ratio is apply at parallelism 8 against the faster bare loop. The peer of apply's CPU
    per operation (at parallelism 1) is the bare loop on one thread that also appends each
    request's intent and answer to a journal, each line fsynced: what recording must do.
``served``
    The issue's own setting of the same comparison: apply of ``--count`` movements at
    parallelism 8 against a ``sandbox serve --rate-limit off`` process, every intent and
    outcome fsynced (and at parallelism 1), against a bare ``httpx.Client`` loop POSTing the
    same rows to the same kind of process on 1 and 8 threads, recording nothing; a fresh
    server for every run, alternated round by round. The server works on its own core here,
    so the CPU per operation and the context switches per operation are the client's
    alone. Target: apply at parallelism 8 at least 0.8x the faster bare loop.
``paced``
    Apply of ``--paced-count`` movements against a ``sandbox serve --rate-limit R/second``
    process, R in ``--rates``, with 8 workers and the client's limiter at the same rate,
    while ``--busy`` processes (one per CPU by default) keep the cores busy. Its peer is
    the ideal time, requests / rate; the figures are the wall time, its ratio to the ideal
    and the 429 answers the server counted.

Every section states the machine and the load average while it ran. Run with
``make bench-apply-speed`` or ``.venv/bin/python benchmarks/apply_bench.py [speed|served|paced|all]``,
which prints the Markdown; ``section()`` returns that text for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plan_apply_bench import (
    BASE_URL,
    KEY,
    MOVEMENTS_PATH,
    WORK,
    FsyncCount,
    emulator,
    fresh,
    in_process_client,
    load_documents,
    plan_rows,
    post_rows,
    project,
    served,
)

from customs_batch.client import CustomsClient, RateLimit, RateLimiter, Sender
from customs_batch.execution.apply import ApplyReport, apply_plan
from customs_batch.execution.scheduler import NodeStatus
from customs_batch.planning import Plan, plan_changes
from customs_batch.sandbox import InProcessTransport
from customs_batch.state import LocalBackend, State

COMMAND = ".venv/bin/python benchmarks/apply_bench.py"


# -- measuring -----------------------------------------------------------------------------


@dataclass
class Series:
    """Repeated measurements of one figure."""

    values: list[float] = field(default_factory=list)

    def add(self, value: float) -> None:
        self.values.append(value)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def show(self, unit: str = "", digits: int = 0) -> str:
        """``median (lowest-highest)``."""
        low, high = min(self.values), max(self.values)
        return f"{self.median:,.{digits}f}{unit} ({low:,.{digits}f}-{high:,.{digits}f})"


@dataclass
class Loads:
    """The 1-minute load average, sampled at the start of every round."""

    samples: list[float] = field(default_factory=list)

    def sample(self) -> None:
        self.samples.append(os.getloadavg()[0])

    def show(self) -> str:
        return f"{min(self.samples):.1f}-{max(self.samples):.1f}"


def machine() -> str:
    """What the figures were measured on."""
    model = ""
    with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return (
        f"{os.cpu_count()} CPUs ({model or platform.machine()}), Python "
        f"{platform.python_version()}, {platform.system()} {platform.release()}"
    )


@contextmanager
def busy(processes: int) -> Iterator[None]:
    """``processes`` other processes that keep a core busy each, as CI's neighbours do."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.terminate()
        for spinner in spinners:
            spinner.wait(timeout=10)


@dataclass
class Usage:
    """This process's CPU seconds (every thread, user and system) and context switches
    (voluntary and not) during ``work``, and its wall seconds."""

    cpu: float = 0.0
    switches: int = 0
    wall: float = 0.0

    @classmethod
    def of(cls, work: Callable[[], object]) -> Usage:
        before, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        work()
        after, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - wall
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        switches = after.ru_nvcsw - before.ru_nvcsw + after.ru_nivcsw - before.ru_nivcsw
        return cls(cpu, switches, wall)


# -- speed ---------------------------------------------------------------------------------


@dataclass
class SpeedFigures:
    count: int
    rounds: int
    ops: dict[int, Series] = field(default_factory=dict)
    cpu_per_op: dict[int, Series] = field(default_factory=dict)
    fsyncs_per_op: dict[int, Series] = field(default_factory=dict)
    bare: dict[int, Series] = field(default_factory=dict)
    bare_cpu_per_op: dict[int, Series] = field(default_factory=dict)
    journaled: Series = field(default_factory=Series)
    journaled_cpu_per_op: Series = field(default_factory=Series)
    loads: Loads = field(default_factory=Loads)

    @property
    def ratio(self) -> float:
        """Apply at parallelism 8 against the faster bare loop, medians."""
        return self.ops[8].median / max(series.median for series in self.bare.values())

    @property
    def cpu_ratio(self) -> float:
        """Apply's CPU per operation at parallelism 1 against the bare loop that also
        journals, medians (issue 26's target: at most 1.2x)."""
        return self.cpu_per_op[1].median / self.journaled_cpu_per_op.median


def measure_speed(count: int, rounds: int, parallelisms: Sequence[int] = (1, 8)) -> SpeedFigures:
    folder = project(count)
    plan = plan_changes(load_documents(folder), State(lineage=""))
    figures = SpeedFigures(count, rounds)
    for round_number in range(rounds):
        figures.loads.sample()
        for parallelism in parallelisms:  # A: apply
            _apply_round(figures, folder, plan, parallelism)
            _bare_round(figures, folder, plan, parallelism)  # B: its peer
        _journaled_round(figures, folder, plan)  # the peer of apply's CPU per operation
        print(f"  round {round_number + 1}/{rounds} done", file=sys.stderr, flush=True)
    figures.loads.sample()
    return figures


def _apply_round(figures: SpeedFigures, folder: Path, plan: Plan, parallelism: int) -> None:
    app = emulator(folder)
    backend = LocalBackend(fresh(WORK / f"state-speed-{parallelism}"))
    with in_process_client(app) as client, FsyncCount().counting() as fsyncs:
        session = backend.open("apply")
        try:
            cpu = time.process_time()
            report = apply_plan(
                plan, session, client, parallelism=parallelism, stop=threading.Event()
            )
            cpu = time.process_time() - cpu
            counted = fsyncs.calls
        finally:
            session.close()
    succeeded = report.count(NodeStatus.SUCCEEDED)
    if succeeded != figures.count:
        raise SystemExit(f"apply succeeded {succeeded} of {figures.count}")
    figures.ops.setdefault(parallelism, Series()).add(succeeded / report.seconds)
    figures.cpu_per_op.setdefault(parallelism, Series()).add(1000 * cpu / succeeded)
    figures.fsyncs_per_op.setdefault(parallelism, Series()).add(counted / succeeded)


def _bare_round(figures: SpeedFigures, folder: Path, plan: Plan, threads: int) -> None:
    """The same rows POSTed with a bare httpx.Client through the same transport, nothing
    recorded; one thread, or a pool of ``threads`` sharing the client."""
    app = emulator(folder)
    rows = plan_rows(plan)
    headers = {"Authorization": f"Bearer {KEY}"}
    transport = InProcessTransport(app)
    with httpx.Client(base_url=BASE_URL, transport=transport, headers=headers) as http:
        usage = Usage.of(post_rows(http, rows, threads))
    figures.bare.setdefault(threads, Series()).add(len(rows) / usage.wall)
    figures.bare_cpu_per_op.setdefault(threads, Series()).add(1000 * usage.cpu / len(rows))


def _journaled_round(figures: SpeedFigures, folder: Path, plan: Plan) -> None:
    """The bare loop on one thread that also does what recording must: before each request
    a JSON line of what will be sent (with its key) appended to a journal and fsynced, after
    it a line of the answer, fsynced. Apply's CPU per operation is measured against this."""
    app = emulator(folder)
    rows = plan_rows(plan)
    headers = {"Authorization": f"Bearer {KEY}"}
    journal = fresh(WORK / "state-journaled") / "journal.jsonl"
    transport = InProcessTransport(app)
    with (
        httpx.Client(base_url=BASE_URL, transport=transport, headers=headers) as http,
        open(journal, "ab") as lines,
    ):

        def write(line: dict[str, object]) -> None:
            lines.write(json.dumps(line).encode() + b"\n")
            lines.flush()
            os.fsync(lines.fileno())

        def run() -> None:
            for shipment, body in rows:
                key = str(uuid.uuid4())
                write({"shipment": shipment, "request": body, "idempotencyKey": key})
                answer = http.post(
                    MOVEMENTS_PATH.format(id=shipment), json=body, headers={"Idempotency-Key": key}
                )
                answer.raise_for_status()
                write({"shipment": shipment, "status": answer.status_code, "answer": answer.json()})

        usage = Usage.of(run)
    figures.journaled.add(len(rows) / usage.wall)
    figures.journaled_cpu_per_op.add(1000 * usage.cpu / len(rows))


def speed_markdown(figures: SpeedFigures) -> str:
    rows = [
        "| run | ops/s | CPU per op | fsyncs per op |",
        "|---|---:|---:|---:|",
    ]
    for parallelism, series in sorted(figures.ops.items()):
        rows.append(
            f"| apply, parallelism {parallelism} | {series.show()} | "
            f"{figures.cpu_per_op[parallelism].show(' ms', 2)} | "
            f"{figures.fsyncs_per_op[parallelism].show('', 2)} |"
        )
    for threads, series in sorted(figures.bare.items()):
        rows.append(
            f"| bare httpx loop, {threads} thread(s), nothing recorded | {series.show()} | "
            f"{figures.bare_cpu_per_op[threads].show(' ms', 2)} | - |"
        )
    rows.append(
        f"| bare httpx loop, 1 thread, each request's intent and answer fsynced | "
        f"{figures.journaled.show()} | {figures.journaled_cpu_per_op.show(' ms', 2)} | 2 |"
    )
    verdict = "met" if figures.cpu_ratio <= 1.2 else "not met"
    return (
        f"{figures.count:,} movements, {figures.rounds} rounds alternated (apply, bare loop, "
        f"per parallelism); median (lowest-highest); load average {figures.loads.show()} "
        "while measuring.\n\n" + "\n".join(rows) + "\n\n"
        f"**Ratio:** apply at parallelism 8 does **{figures.ratio:.2f}x** the faster bare loop "
        "(medians). CPU per operation is the process's (every thread, user and system) during the "
        "run alone, so it includes the emulator's work, which runs in the same process.\n\n"
        f"**CPU per operation:** apply at parallelism 1 takes **{figures.cpu_ratio:.2f}x** the "
        "CPU per operation of the bare loop that fsyncs each request's intent and answer "
        f"(medians; target <= 1.2x: {verdict}).\n"
    )


# -- served --------------------------------------------------------------------------------


@dataclass
class ServedFigures:
    count: int
    rounds: int
    ops: dict[int, Series] = field(default_factory=dict)
    cpu_per_op: dict[int, Series] = field(default_factory=dict)
    switches_per_op: dict[int, Series] = field(default_factory=dict)
    bare: dict[int, Series] = field(default_factory=dict)
    bare_cpu_per_op: dict[int, Series] = field(default_factory=dict)
    bare_switches_per_op: dict[int, Series] = field(default_factory=dict)
    loads: Loads = field(default_factory=Loads)

    @property
    def ratio(self) -> float:
        """Apply at parallelism 8 against the faster bare loop, medians (target >= 0.8x)."""
        return self.ops[8].median / max(series.median for series in self.bare.values())


def measure_served(count: int, rounds: int, parallelisms: Sequence[int] = (1, 8)) -> ServedFigures:
    folder = project(count)
    plan = plan_changes(load_documents(folder), State(lineage=""))
    figures = ServedFigures(count, rounds)
    for round_number in range(rounds):
        figures.loads.sample()
        for parallelism in parallelisms:
            _served_apply_round(figures, folder, plan, parallelism)  # A
            _served_bare_round(figures, folder, plan, parallelism)  # B
        print(f"  round {round_number + 1}/{rounds} done", file=sys.stderr, flush=True)
    figures.loads.sample()
    return figures


def _served_apply_round(figures: ServedFigures, folder: Path, plan: Plan, parallelism: int) -> None:
    with served(folder, "off") as base:
        backend = LocalBackend(fresh(WORK / f"state-served-{parallelism}"))
        with CustomsClient(Sender(base, KEY)) as client, backend.open("apply") as session:
            reports: list[ApplyReport] = []
            usage = Usage.of(
                lambda: reports.append(
                    apply_plan(
                        plan, session, client, parallelism=parallelism, stop=threading.Event()
                    )
                )
            )
    report = reports[0]
    succeeded = report.count(NodeStatus.SUCCEEDED)
    if succeeded != figures.count:
        raise SystemExit(f"apply against sandbox serve succeeded {succeeded} of {figures.count}")
    figures.ops.setdefault(parallelism, Series()).add(succeeded / report.seconds)
    figures.cpu_per_op.setdefault(parallelism, Series()).add(1000 * usage.cpu / succeeded)
    figures.switches_per_op.setdefault(parallelism, Series()).add(usage.switches / succeeded)


def _served_bare_round(figures: ServedFigures, folder: Path, plan: Plan, threads: int) -> None:
    """The same rows POSTed by a bare httpx.Client to a fresh ``sandbox serve``, nothing
    recorded; one thread, or a pool of ``threads`` sharing the client."""
    rows = plan_rows(plan)
    headers = {"Authorization": f"Bearer {KEY}"}
    with served(folder, "off") as base, httpx.Client(base_url=base, headers=headers) as http:
        usage = Usage.of(post_rows(http, rows, threads))
    figures.bare.setdefault(threads, Series()).add(len(rows) / usage.wall)
    figures.bare_cpu_per_op.setdefault(threads, Series()).add(1000 * usage.cpu / len(rows))
    figures.bare_switches_per_op.setdefault(threads, Series()).add(usage.switches / len(rows))


def served_markdown(figures: ServedFigures) -> str:
    rows = [
        "| run | ops/s | client CPU per op | context switches per op |",
        "|---|---:|---:|---:|",
    ]
    for parallelism, series in sorted(figures.ops.items()):
        rows.append(
            f"| apply, parallelism {parallelism}, every intent and outcome fsynced | "
            f"{series.show()} | {figures.cpu_per_op[parallelism].show(' ms', 2)} | "
            f"{figures.switches_per_op[parallelism].show('', 1)} |"
        )
    for threads, series in sorted(figures.bare.items()):
        rows.append(
            f"| bare httpx loop, {threads} thread(s), nothing recorded | {series.show()} | "
            f"{figures.bare_cpu_per_op[threads].show(' ms', 2)} | "
            f"{figures.bare_switches_per_op[threads].show('', 1)} |"
        )
    verdict = "met" if figures.ratio >= 0.8 else "not met"
    return (
        f"{figures.count:,} movements against `sandbox serve --rate-limit off` (a fresh "
        f"server for every run), {figures.rounds} rounds alternated (apply, then the bare "
        "loop, per parallelism); median (lowest-highest); load average "
        f"{figures.loads.show()} while measuring.\n\n" + "\n".join(rows) + "\n\n"
        f"**Ratio:** apply at parallelism 8 does **{figures.ratio:.2f}x** the faster bare loop "
        f"(medians; target >= 0.8x: {verdict}). The server runs in its own process, so the CPU "
        "per operation and the context switches are the client's alone.\n"
    )


# -- paced ---------------------------------------------------------------------------------


@dataclass
class PacedFigures:
    count: int
    rounds: int
    busy: int
    seconds: dict[int, Series] = field(default_factory=dict)
    rate_limited: dict[int, list[int]] = field(default_factory=dict)
    loads: Loads = field(default_factory=Loads)


def measure_paced(count: int, rounds: int, rates: Sequence[int], spinners: int) -> PacedFigures:
    folder = project(max(count, 100))
    plan = plan_changes(load_documents(folder)[:count], State(lineage=""))
    figures = PacedFigures(count, rounds, spinners)
    with busy(spinners):
        time.sleep(2)  # let the spinners show in the load average
        for round_number in range(rounds):
            for rate in rates:
                figures.loads.sample()
                seconds, rejected = paced_once(folder, plan, rate)
                figures.seconds.setdefault(rate, Series()).add(seconds)
                figures.rate_limited.setdefault(rate, []).append(rejected)
            print(f"  round {round_number + 1}/{rounds} done", file=sys.stderr, flush=True)
        figures.loads.sample()
    return figures


def paced_once(folder: Path, plan: Plan, rate: int) -> tuple[float, int]:
    """Seconds of one apply of ``plan`` at ``rate``/second, and the 429s the server gave."""
    text = f"{rate}/second"
    with served(folder, text) as base:
        sender = Sender(base, KEY, rate_limiter=RateLimiter(RateLimit.parse(text)))
        backend = LocalBackend(fresh(WORK / f"state-paced-{rate}"))
        with CustomsClient(sender) as client, backend.open("apply") as session:
            report = apply_plan(plan, session, client, parallelism=8, stop=threading.Event())
        time.sleep(1.2)  # let the server's window empty before asking for its counters
        stats = httpx.get(
            f"{base}/_sandbox/stats", headers={"Authorization": f"Bearer {KEY}"}
        ).json()
    posted = int(stats["requests"].get(f"POST {MOVEMENTS_PATH}", 0))
    if report.count(NodeStatus.SUCCEEDED) != len(plan.changes) or posted < len(plan.changes):
        raise SystemExit(f"paced apply at {text} did not send everything: {report}")
    return report.seconds, int(stats["rateLimited"])


def paced_markdown(figures: PacedFigures) -> str:
    rows = [
        "| limit | ideal (requests / rate) | wall time | over the ideal | 429 answers per run |",
        "|---|---:|---:|---:|---:|",
    ]
    for rate, series in sorted(figures.seconds.items()):
        ideal = figures.count / rate
        over = Series([100 * (value / ideal - 1) for value in series.values])
        rejected = ", ".join(str(n) for n in figures.rate_limited[rate])
        rows.append(
            f"| {rate}/second | {ideal:.2f} s | {series.show(' s', 2)} | "
            f"{over.show(' %', 1)} | {rejected} |"
        )
    return (
        f"{figures.count} movements against `sandbox serve --rate-limit R/second`, 8 workers, "
        f"{figures.rounds} rounds, while {figures.busy} other processes keep "
        f"{'the cores' if figures.busy >= (os.cpu_count() or 1) else 'cores'} busy "
        f"(load average {figures.loads.show()}); median (lowest-highest).\n\n"
        + "\n".join(rows)
        + "\n"
    )


# -- the section ---------------------------------------------------------------------------


def section(
    speed: SpeedFigures | None,
    paced: PacedFigures | None,
    *,
    measured_at: str | None = None,
    against_server: ServedFigures | None = None,
) -> str:
    """The Markdown of the measured parts, with the machine and the command."""
    when = measured_at or time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    parts = [
        f"Measured {when} on {machine()}. Reproduce: `make bench-apply-speed` (`{COMMAND} all`).\n"
    ]
    if speed is not None:
        parts.append(
            "**Speed**, in-process emulator, every outcome fsynced. " + speed_markdown(speed)
        )
    if against_server is not None:
        parts.append("**Speed against `sandbox serve`**. " + served_markdown(against_server))
    if paced is not None:
        parts.append("**Pacing** at a rate limit. " + paced_markdown(paced))
    return "\n".join(parts)


def main() -> None:
    """Parse the arguments, measure, print the report (Markdown with ``--markdown``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "name", nargs="?", default="all", choices=["speed", "served", "paced", "all"]
    )
    parser.add_argument("--count", type=int, default=4000, help="movements for speed")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--paced-count", type=int, default=300)
    parser.add_argument("--rates", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    speed = measure_speed(args.count, args.rounds) if args.name in ("speed", "all") else None
    against_server = (
        measure_served(args.count, args.rounds) if args.name in ("served", "all") else None
    )
    paced = (
        measure_paced(args.paced_count, args.rounds, args.rates, args.busy)
        if args.name in ("paced", "all")
        else None
    )
    print(section(speed, paced, against_server=against_server))


if __name__ == "__main__":
    main()
