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
of the service holds a slash). So is a path whose percent-escapes decode to bytes that are
not UTF-8 (``/v1/shipments/shp_%FF/hawbs``): no ID of the service is such bytes, and the
decoded path (its bytes replaced by U+FFFD) was echoed in the answer.

``RequestTargets`` takes the request target as HTTP/1.1 has a server take it, before any of
this (RFC 9112, section 3.2): the path of a target in absolute form, a 400 for a target that
is no path.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, unquote_to_bytes

from starlette.routing import BaseRoute, Match, Route
from starlette.routing import Router as StarletteRouter
from starlette.types import ASGIApp, Receive, Scope, Send

from customs_batch.sandbox import contract
from customs_batch.sandbox.strictjson import clip
from customs_batch.sandbox.web import ApiError, error, json_response


class Router(StarletteRouter):
    """A Starlette router that remembers the route of each method and fixed path."""

    def __init__(self, routes: list[BaseRoute]) -> None:
        super().__init__(routes, redirect_slashes=False)
        self._fixed: dict[tuple[str, str], Route] = {}

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve ``scope`` by its remembered route, else as Starlette's router does."""
        if scope["type"] == "http" and b"%" in scope.get("raw_path", b""):
            unknown = _unknown_escapes(scope["raw_path"])
            if unknown is not None:
                await json_response(unknown.body, unknown.status)(scope, receive, send)
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


def _unknown_escapes(raw_path: bytes) -> ApiError | None:
    """The 404 of a path whose percent-escapes name no path of the service: an encoded
    slash, or bytes that are not UTF-8. The path is shown as sent (escaped, ASCII)."""
    raw = raw_path.decode("latin-1")
    if b"%2f" in raw_path.lower():
        reason = "an encoded slash (%2F) is part of no path"
    else:
        try:
            unquote_to_bytes(raw_path).decode("utf-8")
            return None
        except UnicodeDecodeError:
            reason = "its percent-escapes are not UTF-8, which every ID and path is"
    return error(contract.NOT_FOUND, f"no endpoint at {clip(raw)}: {reason}")


_ABSOLUTE_FORM = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/]*")
"""The scheme and authority of a request target in absolute form (``http://host:port``)."""


class RequestTargets:
    """ASGI middleware: the request target as HTTP/1.1 has a server take it.

    The HTTP server hands the target on as the path whatever its form. In absolute form
    (``GET http://host/v1/shipments``), which a server must accept, the path is the part
    after the authority: it was answered 404 "no endpoint at /http://host/v1/shipments". A
    target that is neither a path nor an absolute URL (``GET v1/shipments``, ``*``) is no
    target of a resource here: 400, where it was 404 "no endpoint at /v1/shipments", naming
    an endpoint the emulator has. The scope is changed in place, so the request log shows
    the path that was served.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/"):
            await self.app(scope, receive, send)
            return
        raw = scope.get("raw_path", scope["path"].encode()).decode("latin-1")
        absolute = _ABSOLUTE_FORM.match(raw)
        path = (raw[absolute.end() :] or "/") if absolute else raw
        if not path.startswith("/"):
            refusal = error(
                contract.BAD_REQUEST,
                f"the request target {clip(raw)!r} is no path: send the path from its "
                "leading slash (/v1/shipments), or an absolute URL",
            )
            await json_response(refusal.body, refusal.status)(scope, receive, send)
            return
        scope["path"], scope["raw_path"] = unquote(path), path.encode("latin-1")
        await self.app(scope, receive, send)
