"""Starlette's router, with the route of a request to a fixed path looked up, not searched.

Starlette tries every route in turn until one matches, a regular expression each: with the
emulator's 26 routes, a POST of a template group was tried against 13 routes before its own
(about 9 us of the request's CPU). This router remembers, for each method and fixed path (a
route without path parameters), the route Starlette's own search chose the first time, and
sends later requests of that method and path straight to it. Paths with parameters, paths
no route serves and every other request take Starlette's search, so every answer is the
one Starlette gives; the remembered pairs are at most the fixed routes' methods.

Two things of Starlette's routing are not the service's and are turned off: a path that
differs from a route's by a trailing slash is a 404 like any unknown path (Starlette
redirected it, 307, with no key asked and a ``Location`` made from the client's ``Host``),
and a path whose raw form holds an encoded slash (``%2F``) is a 404 (Starlette routes the
decoded path, so ``/v1/shipments/shp_1%2Fhawbs%2Fhawb_1`` reached another endpoint: no ID
of the service holds a slash).
"""

from __future__ import annotations

from starlette.routing import BaseRoute, Match, Route
from starlette.routing import Router as StarletteRouter
from starlette.types import Receive, Scope, Send

from customs_batch.sandbox import contract
from customs_batch.sandbox.strictjson import clip
from customs_batch.sandbox.web import error, json_response


class Router(StarletteRouter):
    """A Starlette router that remembers the route of each method and fixed path."""

    def __init__(self, routes: list[BaseRoute]) -> None:
        super().__init__(routes, redirect_slashes=False)
        self._fixed: dict[tuple[str, str], Route] = {}

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve ``scope`` by its remembered route, else as Starlette's router does."""
        if scope["type"] == "http" and b"%2f" in scope.get("raw_path", b"").lower():
            raw = scope["raw_path"].decode("latin-1")
            answer = error(
                contract.NOT_FOUND,
                f"no endpoint at {clip(raw)}: an encoded slash (%2F) is part of no path",
            )
            await json_response(answer.body, contract.NOT_FOUND)(scope, receive, send)
            return
        if scope["type"] != "http" or scope.get("root_path"):
            await super().app(scope, receive, send)
            return
        key = (scope["method"], scope["path"])
        route = self._fixed.get(key)
        if route is None:
            self._remember(key, scope)
            await super().app(scope, receive, send)
            return
        _, child_scope = route.matches(scope)
        scope.setdefault("router", self)
        scope["route"] = route
        scope.update(child_scope)
        await route.handle(scope, receive, send)

    def _remember(self, key: tuple[str, str], scope: Scope) -> None:
        """Remember the route Starlette's search takes for ``scope``, if its path is fixed."""
        for route in self.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                if isinstance(route, Route) and not route.param_convertors:
                    self._fixed[key] = route
                return
