"""Requests per second on one kept-alive connection: ``sandbox serve`` vs a bare Starlette app.

Starts ``customs-batch sandbox serve --port 0 --rate-limit off`` and, for comparison, a bare
Starlette app under uvicorn with one GET and one JSON POST endpoint, both on loopback in
child processes. Then, for each server, one ``httpx.Client`` (one kept-alive connection)
sends ``--requests`` GETs of a cheap endpoint, then as many POSTs of a small JSON body,
``--rounds`` times, the two servers' rounds in turn. Prints, as a Markdown table for
docs/benchmarks.md, the median requests/s and the spread (lowest-highest round), the server
process's CPU time per request (median of the rounds; Linux only), and the emulator's CPU per
request and requests/s against the bare app's (issue 26: its CPU per request <= 1.2x the bare
app's). Every requests/s figure holds the client's own CPU time too, so their ratio
understates the servers' difference; the CPU per request does not.

A server whose responses wait for Nagle's algorithm shows here as about 23 requests/s: every
request after the first on a connection waits ~40 ms for the client's delayed ACK.

    .venv/bin/python benchmarks/emulator_bench.py [--requests 500] [--rounds 5]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
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


class Target:
    """One server under measurement: its kept-alive client, its two requests and what each
    round of them measured."""

    def __init__(self, server: Server, get_path: str, post_path: str) -> None:
        self.server = server
        self.client = httpx.Client(base_url=server.url, headers=HEADERS, timeout=30)
        self.get_path, self.post_path = get_path, post_path
        self.serial = itertools.count()
        self.rounds = {"GET": Rounds(), "POST": Rounds()}

    def send(self, method: str) -> None:
        """One request: a GET, or a POST of a new template group."""
        if method == "GET":
            response = self.client.get(self.get_path)
        else:
            n = next(self.serial)
            body = {"name": f"Bench group {n}", "code": f"BENCH{n}", "companyId": 1}
            response = self.client.post(self.post_path, json=body)
        response.raise_for_status()

    def round(self, method: str, total: int) -> None:
        """Send ``total`` requests; keep their rate and the server's CPU per request."""
        cpu_before = self.server.cpu_seconds()
        started = time.perf_counter()
        for _ in range(total):
            self.send(method)
        elapsed = time.perf_counter() - started
        cpu_after = self.server.cpu_seconds()
        self.rounds[method].rates.append(total / elapsed)
        if cpu_before is not None and cpu_after is not None:
            self.rounds[method].cpu.append((cpu_after - cpu_before) / total)


def _measure(targets: tuple[Target, ...], requests: int, rounds: int) -> None:
    """Rounds of GETs, then of POSTs, each server's round after the other's: what the other
    users of the machine take then weighs on both alike."""
    for target in targets:
        for _ in range(50):  # warm up both ends
            target.send("GET")
    for _ in range(rounds):
        for method in ("GET", "POST"):
            for target in targets:
                target.round(method, requests)


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
    with (
        server_process(sandbox_serve("--rate-limit", "off")) as emulator_server,
        server_process(uvicorn_app(BARE_APP)) as bare_server,
    ):
        targets = (
            Target(emulator_server, "/_sandbox/stats", "/v1/declaration-templates/groups"),
            Target(bare_server, "/stats", "/groups"),
        )
        try:
            _measure(targets, args.requests, args.rounds)
        finally:
            for target in targets:
                target.client.close()
    emulator, bare = (target.rounds for target in targets)
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
