"""What a one-thread apply could do against ``sandbox serve``: a design experiment for issue 26.

Apply at parallelism 8 runs 8 threads, and they hand the GIL to each other at every system
call (docs/benchmarks.md, "Against `sandbox serve`"). The design named there as what is left
is one thread with the requests multiplexed on it (``httpx.AsyncClient``). This script
measures that design before anyone builds it: ``--count`` movements of the benchmark
project POSTed to a fresh ``sandbox serve --rate-limit off`` with 8 requests in flight on
one asyncio loop, each operation doing what apply's promises ask of it:

- the state lock checked (``StateLock.check``, two ``stat`` calls) before each journal line
  and before each request;
- a journal line of the intent (the request and its idempotency key) written before the
  request, and the request sent only once that line is on disk;
- a journal line of the answer written after it (on disk by the next fsync or the end).

How the loop waits for the intent's fsync is the first variable (``--waits``):

``thread``
    a helper thread fsyncs whenever lines wait, covering all of them, and wakes the loop;
``inline``
    the loop itself fsyncs once a pass, covering every intent written in that pass;
``none``
    no wait at all: the intent's line is written but the request does not wait for its
    fsync. Not a design that keeps the promise; the ceiling of the others.

The second (``--batches``, default 8 and 16): each task takes that many rows at once,
writes all their intents, waits for one fsync (``inline``) that covers them, then sends
them one after the other, each answer's line written as it comes. Every request still
leaves only once its intent is on disk; a run stopped or killed in the middle of a batch
leaves more intents without an answer for the next run to settle.

Its peers, alternated with it run by run: apply itself at parallelism 8 (its threads, its
journal, the same server); the same rows POSTed with no journal at all on one
asyncio loop (8 in flight); by a bare ``httpx.Client`` on one thread (the faster of the
bare loops of ``apply_bench.py served``, which the issue's 0.8x is measured against); and by
the same bare loop that also writes each request's intent and answer to a journal, each line
fsynced, the intent before the request (what recording must do, as the peer of apply's CPU
per operation in ``apply_bench.py speed``).
Figures: operations a second, the client process's CPU per operation (every thread, user
and system) and its context switches per operation, and fsyncs per operation; medians of
``--rounds`` runs with their spread. Not part of ``make bench``: run it by hand with
``.venv/bin/python benchmarks/one_thread_bench.py [--count N] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from apply_bench import Loads, Series, Usage, machine
from plan_apply_bench import (
    KEY,
    MOVEMENTS_PATH,
    WORK,
    FsyncCount,
    Row,
    fresh,
    load_documents,
    plan_rows,
    post_rows,
    project,
    served,
)

from customs_batch.client import CustomsClient, Sender
from customs_batch.execution.apply import apply_plan
from customs_batch.execution.scheduler import NodeStatus
from customs_batch.planning import plan_changes
from customs_batch.state import LocalBackend, State
from customs_batch.state.journal import encode_line
from customs_batch.state.lock import StateLock

IN_FLIGHT = 8
WAITS = ("thread", "inline", "none")


class _Durability:
    """How an operation waits until the journal lines written so far are on disk: here, it
    does not wait (the ``none`` variant); the classes below wait."""

    def durable(self) -> asyncio.Future[None] | None:
        return None

    def close(self) -> None:
        pass


class _ThreadSync(_Durability):
    """A helper thread fsyncs whenever lines wait, then wakes the loop's waiters."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self._fd, self._loop = fd, loop
        self._changed = threading.Condition()
        self._waiting: list[asyncio.Future[None]] = []
        self._closed = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def durable(self) -> asyncio.Future[None]:
        future: asyncio.Future[None] = self._loop.create_future()
        with self._changed:
            self._waiting.append(future)
            self._changed.notify()
        return future

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._waiting and not self._closed:
                    self._changed.wait()
                if not self._waiting:
                    return
                batch, self._waiting = self._waiting, []
            os.fsync(self._fd)
            self._loop.call_soon_threadsafe(_resolve, batch)

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify()
        self._thread.join()


class _InlineSync(_Durability):
    """The loop fsyncs once a pass, for every line written in that pass."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self._fd, self._loop = fd, loop
        self._waiting: list[asyncio.Future[None]] = []

    def durable(self) -> asyncio.Future[None]:
        future: asyncio.Future[None] = self._loop.create_future()
        if not self._waiting:
            self._loop.call_soon(self._commit)
        self._waiting.append(future)
        return future

    def _commit(self) -> None:
        batch, self._waiting = self._waiting, []
        os.fsync(self._fd)
        _resolve(batch)


def _resolve(batch: list[asyncio.Future[None]]) -> None:
    for future in batch:
        if not future.done():
            future.set_result(None)


async def _journaled(
    base: str, rows: Sequence[Row], wait: str, folder: Path, batch: int = 1
) -> None:
    """POST ``rows``, 8 in flight on this loop, journaled as the module says; each task
    takes ``batch`` rows at a time and writes their intents in one go before sending them
    one after the other."""
    lock = StateLock(folder / "state.lock", "apply")
    lock.acquire(timeout=0)
    fd = os.open(folder / "journal.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    loop = asyncio.get_running_loop()
    sync: _Durability = (
        _ThreadSync(fd, loop)
        if wait == "thread"
        else _InlineSync(fd, loop)
        if wait == "inline"
        else _Durability()
    )
    pending = list(reversed(rows))
    headers = {"Authorization": f"Bearer {KEY}"}
    try:
        async with httpx.AsyncClient(base_url=base, headers=headers) as http:

            async def worker() -> None:
                while pending:
                    taken = [pending.pop() for _ in range(min(batch, len(pending)))]
                    intents = [
                        {"shipmentId": shipment, "spec": body, "idempotencyKey": str(uuid.uuid4())}
                        for shipment, body in taken
                    ]
                    lock.check()
                    os.write(
                        fd,
                        b"".join(
                            encode_line({"address": intent["shipmentId"], "record": intent})
                            for intent in intents
                        ),
                    )
                    durable = sync.durable()
                    if durable is not None:
                        await durable
                    for (shipment, body), intent in zip(taken, intents, strict=True):
                        lock.check()
                        answer = await http.post(
                            MOVEMENTS_PATH.format(id=shipment),
                            json=body,
                            headers={"Idempotency-Key": str(intent["idempotencyKey"])},
                        )
                        answer.raise_for_status()
                        outcome = {**intent, "outputs": answer.json()}
                        lock.check()
                        os.write(fd, encode_line({"address": shipment, "record": outcome}))

            await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
        os.fsync(fd)
    finally:
        sync.close()
        os.close(fd)
        lock.release()


async def _unjournaled(base: str, rows: Sequence[Row]) -> None:
    """POST ``rows``, 8 in flight on this loop, recording nothing."""
    pending = list(reversed(rows))
    headers = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=base, headers=headers) as http:

        async def worker() -> None:
            while pending:
                shipment, body = pending.pop()
                key = {"Idempotency-Key": str(uuid.uuid4())}
                answer = await http.post(MOVEMENTS_PATH.format(id=shipment), json=body, headers=key)
                answer.raise_for_status()

        await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))


@dataclass
class _Figures:
    ops: Series = field(default_factory=Series)
    cpu: Series = field(default_factory=Series)
    switches: Series = field(default_factory=Series)
    fsyncs: Series = field(default_factory=Series)

    def add(self, count: int, usage: Usage, fsyncs: int) -> None:
        self.ops.add(count / usage.wall)
        self.cpu.add(1000 * usage.cpu / count)
        self.switches.add(usage.switches / count)
        self.fsyncs.add(fsyncs / count)


def measure(count: int, rounds: int, waits: Sequence[str], batches: Sequence[int]) -> str:
    folder = project(count)
    plan = plan_changes(load_documents(folder), State(lineage=""))
    rows = plan_rows(plan)
    runs: dict[str, _Figures] = {}
    loads = Loads()

    def run(name: str, work: Callable[[str], None]) -> None:
        with served(folder, "off") as base, FsyncCount().counting() as fsyncs:
            usage = Usage.of(lambda: work(base))
        runs.setdefault(name, _Figures()).add(len(rows), usage, fsyncs.calls)

    def bare(base: str) -> None:
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {KEY}"}) as http:
            post_rows(http, rows, 1)()

    def journaled(wait: str, batch: int = 1) -> Callable[[str], None]:
        def work(base: str) -> None:
            state = fresh(WORK / f"state-one-thread-{wait}-{batch}")
            asyncio.run(_journaled(base, rows, wait, state, batch))

        return work

    def bare_journaled(base: str) -> None:
        state = fresh(WORK / "state-one-thread-bare")
        with (
            httpx.Client(base_url=base, headers={"Authorization": f"Bearer {KEY}"}) as http,
            open(state / "journal.jsonl", "ab") as journal,
        ):

            def write(body: dict[str, object]) -> None:
                journal.write(encode_line(body))
                journal.flush()
                os.fsync(journal.fileno())

            for shipment, body in rows:
                key = str(uuid.uuid4())
                intent = {"shipmentId": shipment, "spec": body, "idempotencyKey": key}
                write({"address": shipment, "record": intent})
                answer = http.post(
                    MOVEMENTS_PATH.format(id=shipment), json=body, headers={"Idempotency-Key": key}
                )
                answer.raise_for_status()
                write({"address": shipment, "record": {**intent, "outputs": answer.json()}})

    def apply(base: str) -> None:
        backend = LocalBackend(fresh(WORK / "state-one-thread-apply"))
        with CustomsClient(Sender(base, KEY)) as client, backend.open("apply") as session:
            report = apply_plan(plan, session, client, parallelism=8, stop=threading.Event())
        if report.count(NodeStatus.SUCCEEDED) != len(rows):
            raise SystemExit(f"apply succeeded {report.count(NodeStatus.SUCCEEDED)} of {len(rows)}")

    def unjournaled(base: str) -> None:
        asyncio.run(_unjournaled(base, rows))

    for round_number in range(rounds):
        loads.sample()
        run(
            "apply, parallelism 8 (the product: 8 threads, every intent and outcome fsynced)", apply
        )
        for wait in waits:
            name = f"one thread, 8 in flight, journaled, intent's fsync waited by: {wait}"
            run(name, journaled(wait))
        for batch in batches:
            name = (
                "one thread, 8 in flight, journaled, intents written and fsynced "
                f"{batch} at a time by each task, then sent"
            )
            run(name, journaled("inline", batch))
        run("one thread, 8 in flight, nothing recorded", unjournaled)
        run("bare httpx loop, 1 thread, nothing recorded", bare)
        run("bare httpx loop, 1 thread, each intent and answer fsynced", bare_journaled)
        print(f"  round {round_number + 1}/{rounds} done", file=sys.stderr, flush=True)
    loads.sample()
    lines = [
        f"{len(rows):,} movements against `sandbox serve --rate-limit off` (a fresh server "
        f"for every run), {rounds} rounds alternated, on {machine()}; median "
        f"(lowest-highest); load average {loads.show()} while measuring.",
        "",
        "| run | ops/s | client CPU per op | context switches per op | fsyncs per op |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, figures in runs.items():
        lines.append(
            f"| {name} | {figures.ops.show()} | {figures.cpu.show(' ms', 2)} | "
            f"{figures.switches.show('', 1)} | {figures.fsyncs.show('', 2)} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--waits", nargs="+", choices=WAITS, default=list(WAITS))
    parser.add_argument("--batches", nargs="*", type=int, default=[8, 16])
    options = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    print(measure(options.count, options.rounds, options.waits, options.batches))


if __name__ == "__main__":
    main()
