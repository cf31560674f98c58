"""The router answers every request as Starlette's own, also once it remembers a route."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from customs_batch.sandbox import InProcessTransport
from customs_batch.sandbox.router import Router


def _answering(text: str) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return PlainTextResponse(f"{text} {request.path_params}")

    return endpoint


def _client() -> httpx.Client:
    first, second, by_name, new = (_answering(t) for t in ("first", "second", "name", "new"))
    app = Starlette()
    app.router = Router(
        [
            Route("/groups", first, methods=["GET"]),
            Route("/groups", second, methods=["GET", "POST"]),
            Route("/items/{name}", by_name, methods=["GET"]),
            Route("/items/new", new, methods=["GET", "POST"]),
        ]
    )
    return httpx.Client(transport=InProcessTransport(app), base_url="http://router.test")


def test_the_first_route_that_matches_answers_every_time() -> None:
    with _client() as client:
        for _ in range(3):
            assert client.get("/groups").text == "first {}"
            assert client.post("/groups").text == "second {}"
            assert client.head("/groups").status_code == 200


def test_a_fixed_path_behind_a_route_with_parameters_stays_behind_it() -> None:
    with _client() as client:
        for _ in range(3):
            assert client.get("/items/new").text == "name {'name': 'new'}"
            assert client.get("/items/old").text == "name {'name': 'old'}"
            assert client.post("/items/new").text == "new {}"


def test_unknown_paths_and_methods_are_refused_every_time() -> None:
    with _client() as client:
        for _ in range(3):
            refused = client.put("/groups")
            assert refused.status_code == 405
            assert sorted(refused.headers["allow"].split(", ")) == ["GET", "HEAD"]
            assert client.get("/nowhere").status_code == 404
