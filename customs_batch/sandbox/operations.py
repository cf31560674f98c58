"""What an emulator module registers: its operations, each with its handler and its entry in
``/openapi.json``.

Each kind's module (``movements.py``, ``departure_declarations.py``, ...: its ``KIND`` and
its write endpoints) and each module of a resource read but written by no kind
(``shipments.py``, ``transit.py``, ``declarations.py``, ``inspection.py``) lists its
``OPERATIONS``. The emulator's own controls, which are no endpoints of the service
(``clock.py``, ``gate.py``, ``keys.py``), list theirs as ``CONTROLS``. The application's
routes, the OpenAPI document and the request-body validators are all made from those lists
(``endpoints.py``): nothing else lists the endpoints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from customs_batch.sandbox import contract as C
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.routing import Handler


@dataclass(frozen=True)
class Body:
    """A request body with a schema: its name in ``/openapi.json``'s components, and the
    schema (derived from the project's schemas, see ``schemas.py``)."""

    name: str
    schema: Callable[[], JsonObject]


@dataclass(frozen=True)
class ApiOperation:
    """One ``method path`` the emulator serves: its handler and how ``/openapi.json``
    describes it."""

    method: str
    path: str
    handler: Handler
    summary: str
    parameters: tuple[JsonObject, ...] = ()
    body: Body | None = None
    status: int = C.OK
    errors: Mapping[str, str] = field(default_factory=dict)
    """Answers beyond the common ones, by status code."""
    response: JsonObject | None = None
    """The schema of the success answer, where ``/openapi.json`` gives it."""

    @property
    def query_names(self) -> tuple[str, ...]:
        """The query parameters it takes, in the order ``/openapi.json`` lists them: any
        other is refused (``routing.endpoint``)."""
        return tuple(p["name"] for p in self.parameters if p.get("in") == "query")


# -- parameters, as OpenAPI writes them --------------------------------------------------------

INT: JsonObject = {"type": "integer"}
STR: JsonObject = {"type": "string"}
INT64: JsonObject = {"type": "integer", "minimum": C.INT_MIN, "maximum": C.INT_MAX}
ID_NUMBER: JsonObject = {"type": "integer", "minimum": 1, "maximum": C.INT_MAX}
"""An ID in a query parameter: a company's, as the bodies' ``companyId`` (at least 1)."""
DATE: JsonObject = {"type": "string", "format": "date"}
PAGE: JsonObject = {
    "name": C.PAGE,
    "in": "query",
    "schema": {"type": "integer", "minimum": 1, "default": 1},
}


def size(name: str) -> JsonObject:
    """A page-size query parameter called ``name``."""
    schema = {"type": "integer", "minimum": 1, "maximum": C.PAGE_SIZE_MAX, "default": 20}
    return {"name": name, "in": "query", "schema": schema}


def query(name: str, schema: JsonObject) -> JsonObject:
    """A query parameter."""
    return {"name": name, "in": "query", "schema": schema}


def enum(*values: str, default: str | None = None) -> JsonObject:
    """A string schema of these values; with ``default``, what an omitted parameter means."""
    schema: JsonObject = {"type": "string", "enum": list(values)}
    if default is not None:
        schema["default"] = default
    return schema


def path(name: str, schema: JsonObject) -> JsonObject:
    """A path parameter."""
    return {"name": name, "in": "path", "required": True, "schema": schema}


ORDER = query(C.ORDER, enum("asc", "desc", default=C.ORDER_DEFAULT))
SHIPMENT = path("id", {"type": "string", "pattern": "^shp_[A-Za-z0-9]+$"})
ID = path("id", INT)
CREATED = (query(C.CREATED_FROM, DATE), query(C.CREATED_TO, DATE))
