"""What the history costs an apply: the section "What the history costs an apply" of
docs/benchmarks.md.

Apply of ``--count`` movements against the in-process emulator, every intent and outcome
fsynced, at parallelism 1 and 8, without and with the history (``RunHistory`` on a
``LocalHistory`` beside the state, as ``customs-batch apply`` writes it), alternated round
by round (A B A B). Prints operations per second (median, lowest-highest), CPU per
operation and fsyncs per operation.

Run with ``.venv/bin/python benchmarks/history_bench.py [--count N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plan_apply_bench import (
    WORK,
    FsyncCount,
    emulator,
    fresh,
    in_process_client,
    load_documents,
    project,
)

from customs_batch.execution.apply import apply_plan
from customs_batch.execution.history import RunHistory, operator
from customs_batch.execution.scheduler import NodeStatus
from customs_batch.planning import Plan, plan_changes
from customs_batch.sensitive import Sealer
from customs_batch.state import LocalBackend, State
from customs_batch.state.history import LocalHistory

Figures = dict[tuple[int, bool], list[tuple[float, float, float]]]


def one_apply(
    folder: Path, plan: Plan, parallelism: int, with_history: bool
) -> tuple[float, float, float]:
    """Operations per second, CPU milliseconds and fsyncs per operation of one apply."""
    state_dir = fresh(WORK / f"state-history-{parallelism}-{with_history}")
    backend = LocalBackend(state_dir)
    store = LocalHistory(state_dir)
    history = (
        RunHistory(store, operator(), "", Sealer(lambda: "sandbox-key")) if with_history else None
    )
    with in_process_client(emulator(folder)) as client, FsyncCount().counting() as fsyncs:
        session = backend.open("apply")
        cpu = time.process_time()
        try:
            report = apply_plan(
                plan,
                session,
                client,
                parallelism=parallelism,
                stop=threading.Event(),
                history=history,
            )
        finally:
            store.close()
            session.close()
        cpu = time.process_time() - cpu
        calls = fsyncs.calls
    done = report.count(NodeStatus.SUCCEEDED)
    if done != len(plan.changes):
        raise SystemExit(f"apply succeeded {done} of {len(plan.changes)}")
    return done / report.seconds, 1000 * cpu / done, calls / done


def measure(count: int, rounds: int) -> Figures:
    folder = project(count)
    plan = plan_changes(load_documents(folder), State(lineage=""))
    figures: Figures = {}
    for round_number in range(rounds):
        for parallelism in (1, 8):
            for with_history in (False, True):
                figures.setdefault((parallelism, with_history), []).append(
                    one_apply(folder, plan, parallelism, with_history)
                )
        print(f"  round {round_number + 1}/{rounds} done", file=sys.stderr, flush=True)
    return figures


def markdown(figures: Figures, count: int, load: tuple[float, float]) -> str:
    lines = [
        f"{count} movements, in-process emulator, load {load[0]:.1f}-{load[1]:.1f}:",
        "",
        "| parallelism | history | ops/s (lowest-highest) | CPU ms/op | fsyncs/op |",
        "|---|---|---|---|---|",
    ]
    for (parallelism, with_history), runs in sorted(figures.items()):
        ops = [run[0] for run in runs]
        lines.append(
            f"| {parallelism} | {'yes' if with_history else 'no'} | "
            f"{statistics.median(ops):,.0f} ({min(ops):,.0f}-{max(ops):,.0f}) | "
            f"{statistics.median(run[1] for run in runs):.2f} | "
            f"{statistics.median(run[2] for run in runs):.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    before = os.getloadavg()[0]
    figures = measure(options.count, options.rounds)
    print(markdown(figures, options.count, (before, os.getloadavg()[0])))


if __name__ == "__main__":
    main()
