"""Benchmark of the PostgreSQL state backend: the figures of docs/benchmarks.md.

For states of 100 and 100,000 applied movements (records the size of real ones), in one
database: the push of the whole state (COPY), an ``open`` (lock, fold, load), one
``session.record`` (a journal row committed) from one thread, records per second from 8
threads recording at once (they share commits), the fold at ``close``, and a ``read``.

Then the cost of another state of the same service in the database: ``customs-batch plan``
of 10 new movements (every creation is compared with what the other states of the service
declare), as a whole process, CPU of the median of 3 runs, with no other state of the
service and with one of 100,000 applied movements (the largest of ``--sizes``).

Uses the server at ``--url`` (or $CUSTOMS_BATCH_STATE_URL); without one, starts a
throwaway cluster as the tests do. Run with ``make bench-state-pg`` or
``.venv/bin/python benchmarks/state_pg_bench.py [--sizes 100 100000] [--samples 500]``.
Never part of ``make test``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests' throwaway cluster

import psycopg  # noqa: E402
from plan_apply_bench import movement_record, movement_yaml, state_of  # noqa: E402
from psycopg.types.json import Jsonb  # noqa: E402

from customs_batch.state import LocalBackend, RecordStatus  # noqa: E402
from customs_batch.state.postgres import PostgresBackend, PostgresSession  # noqa: E402
from tests.postgres import PostgresCluster  # noqa: E402

THREADS = 8


@contextmanager
def database(url: str | None) -> Iterator[str]:
    """The URL to use: the one given, or a new database in a throwaway cluster."""
    if url:
        yield url
        return
    cluster = PostgresCluster()
    try:
        cluster.start()
        yield cluster.new_database()
    finally:
        cluster.remove()


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def median_ms(samples: int, work: Callable[[int], object]) -> tuple[float, float]:
    """The median and the 95th percentile, in ms, of ``work(i)`` over ``samples`` calls."""
    times = []
    for number in range(samples):
        started = time.perf_counter()
        work(number)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def threaded_rate(session: object, size: int, samples: int) -> float:
    """Records per second with ``THREADS`` threads recording ``samples`` records in all."""
    record = session.record  # type: ignore[attr-defined]
    per_thread = samples // THREADS

    def work(thread: int) -> None:
        for number in range(per_thread):
            record(movement_record((thread * per_thread + number) % size, RecordStatus.PENDING))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return per_thread * THREADS / (time.perf_counter() - started)


def bench(url: str, size: int, samples: int) -> str:
    backend = PostgresBackend(url, f"bench-{size}")
    state = state_of(size)
    with backend.open("bench push") as session:
        push = timed(lambda: session.replace(state))
    opened: list[PostgresSession] = []
    open_s = timed(lambda: opened.append(backend.open("bench")))
    session = opened[0]
    one, p95 = median_ms(
        samples,
        lambda i: session.record(movement_record(i % size, RecordStatus.PENDING)),
    )
    rate = threaded_rate(session, size, samples)
    fold = timed(session.close)
    read = timed(backend.read)
    return (
        f"| {size:,} | {push:.2f} s | {open_s:.2f} s | {one:.2f} ms (p95 {p95:.2f}) | "
        f"{rate:,.0f}/s | {fold * 1000:,.0f} ms ({samples + samples // THREADS * THREADS:,} "
        f"rows) | {read:.2f} s |"
    )


def baselines(url: str, samples: int) -> str:
    """At the same moment: a bare one-row INSERT committed (the floor of any durable
    record in this database), and one record of the local backend (an fsynced line)."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE TABLE IF NOT EXISTS bench_bare (n integer, body jsonb)")
        bare, _ = median_ms(
            samples,
            lambda i: connection.execute(
                "INSERT INTO bench_bare VALUES (%s, %s)",
                (i, Jsonb(movement_record(i, RecordStatus.PENDING).to_json())),
            ),
        )
    with (
        tempfile.TemporaryDirectory() as folder,
        LocalBackend(Path(folder)).open("bench") as session,
    ):
        local, _ = median_ms(
            samples, lambda i: session.record(movement_record(i, RecordStatus.PENDING))
        )
    return (
        f"Baselines (median): a bare INSERT + COMMIT of one row {bare:.2f} ms; "
        f"one local record (fsynced journal line) {local:.2f} ms"
    )


ELSEWHERE_SERVICE = "http://customs.bench.test/"


def plan_cpu(folder: Path, env: dict[str, str], runs: int = 3) -> float:
    """The median CPU seconds of ``customs-batch plan manifests`` in ``folder``, each run a
    process of its own."""
    cpu = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            [sys.executable, "-m", "customs_batch", "plan", "manifests", "--allow-empty-state"],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0 or "Plan: 10 to create" not in done.stdout:
            raise SystemExit(f"plan failed ({done.returncode}): {done.stdout}{done.stderr}")
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(cpu)


def bench_elsewhere(url: str, size: int) -> str:
    """A plan of 10 creations with no other state of the service, then with another state
    of ``size`` records naming the same service."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "manifests").mkdir()
        (folder / "customs-batch.yaml").write_text(
            "default_environment: here\nenvironments:\n  here:\n"
            f"    base_url: {ELSEWHERE_SERVICE}\n    api_key_env: BENCH_KEY\n"
            "    state: {backend: postgres, url_env: BENCH_STATE_URL, name: bench-here}\n"
        )
        (folder / "manifests" / "new.yaml").write_text(
            "---\n".join(movement_yaml(number) for number in range(10))
        )
        env = dict(os.environ, BENCH_STATE_URL=url, BENCH_KEY="bench", PYTHONPATH=str(ROOT))
        alone = plan_cpu(folder, env)
        other = PostgresBackend(url, f"bench-other-{size}", service=ELSEWHERE_SERVICE)
        with other.open("bench push") as session:
            session.replace(state_of(size))
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(
                "INSERT INTO customs_batch_services (state, service) VALUES (%s, %s) "
                "ON CONFLICT (state) DO UPDATE SET service = EXCLUDED.service",
                (other.name, ELSEWHERE_SERVICE),
            )
        beside = plan_cpu(folder, env)
    return (
        f"`plan` of 10 creations, CPU (median of 3 processes): {alone:.2f} s with no other "
        f"state of the service; {beside:.2f} s with another of {size:,} records "
        f"(+{beside - alone:.2f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("CUSTOMS_BATCH_STATE_URL"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 100_000])
    parser.add_argument("--samples", type=int, default=500, help="records timed per size")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; {'given server' if args.url else 'throwaway cluster'}")
    print(
        "| resources | push (COPY) | open (lock, fold, load) | one record, 1 thread | "
        f"records, {THREADS} threads | fold at close | read |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    with database(args.url) as url:
        for size in args.sizes:
            print(bench(url, size, args.samples), flush=True)
        print(baselines(url, args.samples))
        print(bench_elsewhere(url, max(args.sizes)))


if __name__ == "__main__":
    main()
