"""Which concurrency model should the client use? Requests per second against a local server.

Starts the emulator under uvicorn (rate limit off) in a child process, then sends GET
/v1/shipments through: httpx's sync Client on one thread and on a thread pool, its
AsyncClient with N concurrent requests, and customs-batch's own CustomsClient on a thread
pool (to see what the limiter, retries and parsing cost). Prints a Markdown table for
docs/benchmarks.md.

    .venv/bin/python benchmarks/client_bench.py [--requests 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
from servers import serving, uvicorn_app

from customs_batch.client import CustomsClient, Sender

KEY = "sandbox-key"
HEADERS = {"Authorization": f"Bearer {KEY}"}
EMULATOR_APP = "from customs_batch.sandbox import create_app\napp = create_app(rate_limit=None)\n"


def sync_threads(base: str, total: int, threads: int) -> float:
    with httpx.Client(base_url=base, headers=HEADERS) as client:

        def one(_: int) -> None:
            client.get("/v1/shipments").raise_for_status()

        return _timed(lambda: _pool(one, total, threads))


def async_concurrent(base: str, total: int, concurrency: int) -> float:
    async def run() -> None:
        async with httpx.AsyncClient(base_url=base, headers=HEADERS) as client:
            gate = asyncio.Semaphore(concurrency)

            async def one() -> None:
                async with gate:
                    (await client.get("/v1/shipments")).raise_for_status()

            await asyncio.gather(*(one() for _ in range(total)))

    return _timed(lambda: asyncio.run(run()))


def customs_client(base: str, total: int, threads: int) -> float:
    with CustomsClient(Sender(base, KEY)) as client:
        return _timed(lambda: _pool(lambda _: client.list_shipments(), total, threads))


def _pool(task: Callable[[int], object], total: int, threads: int) -> None:
    if threads == 1:
        for n in range(total):
            task(n)
        return
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(task, range(total)))


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    total = parser.parse_args().requests
    with serving(uvicorn_app(EMULATOR_APP)) as base:
        sync_threads(base, 200, 1)  # warm up the server
        cases: list[tuple[str, Callable[[], float]]] = [
            ("httpx.Client, 1 thread", lambda: sync_threads(base, total, 1)),
            ("httpx.Client, 4 threads", lambda: sync_threads(base, total, 4)),
            ("httpx.Client, 10 threads", lambda: sync_threads(base, total, 10)),
            ("httpx.AsyncClient, 10 concurrent", lambda: async_concurrent(base, total, 10)),
            ("CustomsClient, 1 thread", lambda: customs_client(base, total, 1)),
            ("CustomsClient, 4 threads", lambda: customs_client(base, total, 4)),
        ]
        print(f"| client ({total} x GET /v1/shipments) | requests/s |")
        print("|---|---:|")
        for name, case in cases:
            print(f"| {name} | {total / case():,.0f} |", flush=True)


if __name__ == "__main__":
    main()
