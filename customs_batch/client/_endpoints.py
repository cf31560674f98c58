"""The endpoint map: one named place for every method and path the client calls.

docs/api-choices.md says what the API document leaves open and what is chosen (the
departure submission's method and path above all); an environment may override any entry with
``endpoints: {submit_departure: "POST /v1/declarations/transit"}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from urllib.parse import quote

from customs_batch.errors import ConfigError

METHODS = frozenset({"GET", "POST", "PATCH", "PUT", "DELETE"})
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Endpoint:
    """One operation of the service: an HTTP method and a path template like ``/v1/x/{id}``."""

    method: str
    path: str

    @property
    def placeholders(self) -> frozenset[str]:
        """The names of the ``{...}`` parts of the path."""
        return frozenset(_PLACEHOLDER.findall(self.path))

    def url_path(self, **values: str | int) -> str:
        """The path with each placeholder replaced by its percent-encoded value."""
        encoded = {name: quote(str(value), safe="") for name, value in values.items()}
        return self.path.format_map(encoded)

    def __str__(self) -> str:
        return f"{self.method} {self.path}"

    @classmethod
    def parse(cls, text: str) -> Endpoint:
        """Parse ``"POST /v1/declarations/transit"``; raise ConfigError when malformed."""
        method, _, path = text.strip().partition(" ")
        path = path.strip()
        if method.upper() not in METHODS or not path.startswith("/") or " " in path:
            raise ConfigError(
                f"endpoint {text!r} is not 'METHOD /path'",
                hint="write it like 'POST /v1/declarations/transit'",
            )
        return cls(method.upper(), path)


def _defaults() -> dict[str, Endpoint]:
    table = {
        "list_shipments": "GET /v1/shipments",
        "create_movement": "POST /v1/shipments/{shipment_id}/movements",
        "list_allocations": "GET /v1/shipments/{shipment_id}/allocations",
        "list_hawbs": "GET /v1/shipments/{shipment_id}/hawbs",
        "deactivate_hawb": "DELETE /v1/shipments/{shipment_id}/hawbs/{hawb_id}",
        "list_declarations": "GET /v1/declarations",
        "get_declaration": "GET /v1/declarations/{declaration_id}",
        "cancel_declaration": "DELETE /v1/declarations/{declaration_id}",
        "submit_departure": "POST /v1/declarations/transit",
        "list_transit": "GET /v1/declarations/transit",
        "get_transit": "GET /v1/declarations/transit/{declaration_id}",
        "update_departure_parties": "PATCH /declarations/transit/{declaration_id}/parties",
        "update_arrival_parties": "PATCH /transit-declarations/{declaration_id}/parties",
        "list_items": "GET /v1/declaration-items",
        "get_item": "GET /v1/declaration-items/{item_id}",
        "create_template_group": "POST /v1/declaration-templates/groups",
        "update_template_group": "PATCH /v1/declaration-templates/groups/{group_id}",
        "list_template_groups": "GET /v1/declaration-templates/groups",
    }
    return {name: Endpoint.parse(text) for name, text in table.items()}


DEFAULT_ENDPOINTS: Mapping[str, Endpoint] = MappingProxyType(_defaults())


@dataclass(frozen=True)
class EndpointMap:
    """Every operation's endpoint: the choices of docs/api-choices.md plus an environment's overrides."""

    endpoints: Mapping[str, Endpoint] = field(default_factory=lambda: DEFAULT_ENDPOINTS)

    def __getitem__(self, name: str) -> Endpoint:
        return self.endpoints[name]

    def with_overrides(self, overrides: Mapping[str, str]) -> EndpointMap:
        """A map with ``overrides`` (name -> ``"METHOD /path"``) applied, each one checked.

        An override must name a known operation and keep its path placeholders, or the
        client could not fill them in.
        """
        merged = dict(self.endpoints)
        for name, text in overrides.items():
            if name not in merged:
                known = ", ".join(sorted(merged))
                raise ConfigError(f"unknown endpoint name {name!r}", hint=f"known names: {known}")
            endpoint = Endpoint.parse(text)
            expected = merged[name].placeholders
            if endpoint.placeholders != expected:
                wanted = ", ".join("{" + p + "}" for p in sorted(expected)) or "none"
                raise ConfigError(
                    f"endpoint {name!r}: {endpoint.path!r} has the wrong placeholders",
                    hint=f"the path must contain exactly these placeholders: {wanted}",
                )
            merged[name] = endpoint
        return EndpointMap(MappingProxyType(merged))
