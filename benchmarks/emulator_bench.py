"""Requests per second on one kept-alive connection: ``sandbox serve`` vs a bare Starlette app.

Starts ``customs-batch sandbox serve --port 0 --rate-limit off`` and, for comparison, a bare
Starlette app under uvicorn with one GET and one JSON POST endpoint, both on loopback in
child processes. Then, for each server, one ``httpx.Client`` (one kept-alive connection)
sends ``--requests`` GETs of a cheap endpoint, then as many POSTs of a small JSON body,
``--rounds`` times. Prints the median requests/s and the spread (lowest-highest round) as a
Markdown table for docs/benchmarks.md.

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

import httpx
from servers import sandbox_serve, serving, uvicorn_app

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


def _rate(send: Callable[[int], httpx.Response], total: int) -> float:
    started = time.perf_counter()
    for n in range(total):
        send(n).raise_for_status()
    return total / (time.perf_counter() - started)


def _measure(
    base: str, get_path: str, post_path: str, requests: int, rounds: int
) -> dict[str, list[float]]:
    """Requests/s of each round of GETs and POSTs on one connection."""
    serial = itertools.count()
    with httpx.Client(base_url=base, headers=HEADERS, timeout=30) as client:

        def get(_: int) -> httpx.Response:
            return client.get(get_path)

        def post(_: int) -> httpx.Response:
            n = next(serial)
            body = {"name": f"Bench group {n}", "code": f"BENCH{n}", "companyId": 1}
            return client.post(post_path, json=body)

        _rate(get, 50)  # warm up both ends
        rates: dict[str, list[float]] = {"GET": [], "POST": []}
        for _ in range(rounds):
            rates["GET"].append(_rate(get, requests))
            rates["POST"].append(_rate(post, requests))
        return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500, help="requests per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    results: list[tuple[str, str, list[float]]] = []
    with serving(sandbox_serve("--rate-limit", "off")) as base:
        rates = _measure(
            base, "/_sandbox/stats", "/v1/declaration-templates/groups", args.requests, args.rounds
        )
        results.append(("sandbox serve", "GET /_sandbox/stats", rates["GET"]))
        results.append(("sandbox serve", "POST /v1/declaration-templates/groups", rates["POST"]))
    with serving(uvicorn_app(BARE_APP)) as base:
        rates = _measure(base, "/stats", "/groups", args.requests, args.rounds)
        results.append(("bare Starlette", "GET /stats", rates["GET"]))
        results.append(("bare Starlette", "POST /groups (JSON echo)", rates["POST"]))
    print(f"{args.rounds} rounds of {args.requests} requests on one kept-alive httpx.Client")
    print()
    print("| server | request | median requests/s | spread (lowest-highest) |")
    print("|---|---|---:|---:|")
    for server, request, values in results:
        spread = f"{min(values):,.0f}-{max(values):,.0f}"
        print(f"| {server} | {request} | {statistics.median(values):,.0f} | {spread} |")


if __name__ == "__main__":
    main()
