"""Requests per second on one kept-alive connection: ``sandbox serve`` vs a bare Starlette app.

Starts ``customs-batch sandbox serve --port 0 --rate-limit off`` and, for comparison, a bare
Starlette app under uvicorn with one GET and one JSON POST endpoint, both on loopback in
child processes. Then, for each server, one ``httpx.Client`` (one kept-alive connection)
sends ``--requests`` GETs of a cheap endpoint, then as many POSTs of a small JSON body,
``--rounds`` times. Prints the median requests/s and the spread (lowest-highest round) as a
Markdown table for docs/benchmarks.md, with the server process's CPU time per request
(median of the rounds; Linux only), and how the emulator's CPU per request and requests/s
compare with the bare app's (issue 26: the emulator's CPU per request <= 1.2x the bare app's).
The client's own CPU time is in every requests/s figure, so their ratio understates the
servers' difference; the CPU per request does not.

A server whose responses wait for Nagle's algorithm shows here as about 23 requests/s: every
request after the first on a connection waits ~40 ms for the client's delayed ACK.

    .venv/bin/python benchmarks/emulator_bench.py [--requests 500] [--rounds 5]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx
from servers import Server, sandbox_serve, server_process, uvicorn_app

HEADERS = {"Authorization": "Bearer sandbox-key"}
BARE_APP = """
import json
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

async def stats(request: Request) -> Response:
    return Response(b'{"requests":{},"rateLimited":0}', media_type="application/json")

async def create(request: Request) -> Response:
    body = json.loads(await request.body())
    content = json.dumps({"id": 1, **body}, separators=(",", ":")).encode()
    return Response(content, 201, media_type="application/json")

app = Starlette(routes=[Route("/stats", stats), Route("/groups", create, methods=["POST"])])
"""


@dataclass
class Rounds:
    """What each round of one kind of request measured."""

    rates: list[float] = field(default_factory=list)  # requests/s
    cpu: list[float] = field(default_factory=list)  # server CPU seconds per request

    def cpu_us(self) -> float | None:
        """The median server CPU per request in microseconds, if it was measured."""
        return statistics.median(self.cpu) * 1e6 if self.cpu else None


def _rate(
    send: Callable[[int], httpx.Response], total: int, server: Server, into: Rounds | None = None
) -> None:
    cpu_before = server.cpu_seconds()
    started = time.perf_counter()
    for n in range(total):
        send(n).raise_for_status()
    elapsed = time.perf_counter() - started
    cpu_after = server.cpu_seconds()
    if into is not None:
        into.rates.append(total / elapsed)
        if cpu_before is not None and cpu_after is not None:
            into.cpu.append((cpu_after - cpu_before) / total)


def _measure(
    server: Server, get_path: str, post_path: str, requests: int, rounds: int
) -> dict[str, Rounds]:
    """Requests/s and server CPU per request of each round of GETs and POSTs on one
    connection."""
    serial = itertools.count()
    with httpx.Client(base_url=server.url, headers=HEADERS, timeout=30) as client:

        def get(_: int) -> httpx.Response:
            return client.get(get_path)

        def post(_: int) -> httpx.Response:
            n = next(serial)
            body = {"name": f"Bench group {n}", "code": f"BENCH{n}", "companyId": 1}
            return client.post(post_path, json=body)

        _rate(get, 50, server)  # warm up both ends
        measured = {"GET": Rounds(), "POST": Rounds()}
        for _ in range(rounds):
            _rate(get, requests, server, measured["GET"])
            _rate(post, requests, server, measured["POST"])
        return measured


def _cpu(rounds: Rounds) -> str:
    cpu = rounds.cpu_us()
    return "n/a" if cpu is None else f"{cpu:,.0f} us"


def _ratios(emulator: Rounds, bare: Rounds) -> str:
    emulator_cpu, bare_cpu = emulator.cpu_us(), bare.cpu_us()
    cpu = "n/a" if emulator_cpu is None or bare_cpu is None else f"{emulator_cpu / bare_cpu:.2f}x"
    rate = statistics.median(emulator.rates) / statistics.median(bare.rates)
    return f"{cpu} the CPU per request, {rate:.2f}x the requests/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500, help="requests per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with server_process(sandbox_serve("--rate-limit", "off")) as server:
        emulator = _measure(
            server,
            "/_sandbox/stats",
            "/v1/declaration-templates/groups",
            args.requests,
            args.rounds,
        )
    with server_process(uvicorn_app(BARE_APP)) as server:
        bare = _measure(server, "/stats", "/groups", args.requests, args.rounds)
    results = [
        ("sandbox serve", "GET /_sandbox/stats", emulator["GET"]),
        ("sandbox serve", "POST /v1/declaration-templates/groups", emulator["POST"]),
        ("bare Starlette", "GET /stats", bare["GET"]),
        ("bare Starlette", "POST /groups (JSON echo)", bare["POST"]),
    ]
    print(f"{args.rounds} rounds of {args.requests} requests on one kept-alive httpx.Client")
    print()
    print(
        "| server | request | median requests/s | spread (lowest-highest) "
        "| server CPU per request (median) |"
    )
    print("|---|---|---:|---:|---:|")
    for name, request, rounds in results:
        values = rounds.rates
        spread = f"{min(values):,.0f}-{max(values):,.0f}"
        median = statistics.median(values)
        print(f"| {name} | {request} | {median:,.0f} | {spread} | {_cpu(rounds)} |")
    print()
    print(
        f"sandbox serve against the bare app: GET {_ratios(emulator['GET'], bare['GET'])}; "
        f"POST {_ratios(emulator['POST'], bare['POST'])}."
    )


if __name__ == "__main__":
    main()
