"""Starlette's router, with the route of a request to a fixed path looked up, not searched.

Starlette tries every route in turn until one matches, a regular expression each: with the
emulator's 26 routes, a POST of a template group was tried against 13 routes before its own
(about 9 us of the request's CPU). This router remembers, for each method and fixed path (a
route without path parameters), the route Starlette's own search chose the first time, and
sends later requests of that method and path straight to it. Paths with parameters, paths
no route serves and every other request take Starlette's search, so every answer is the
one Starlette gives; the remembered pairs are at most the fixed routes' methods.
"""

from __future__ import annotations

from starlette.routing import BaseRoute, Match, Route
from starlette.routing import Router as StarletteRouter
from starlette.types import Receive, Scope, Send


class Router(StarletteRouter):
    """A Starlette router that remembers the route of each method and fixed path."""

    def __init__(self, routes: list[BaseRoute]) -> None:
        super().__init__(routes)
        self._fixed: dict[tuple[str, str], Route] = {}

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve ``scope`` by its remembered route, else as Starlette's router does."""
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
