"""The OpenAPI 3.1 document of the emulator, whose request bodies are the project's schemas."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from customs_batch import __version__
from customs_batch.sandbox import contract, request_schemas
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.routing import template

C = contract
_INT = {"type": "integer"}
_STR = {"type": "string"}
_INT64 = {"type": "integer", "minimum": C.INT_MIN, "maximum": C.INT_MAX}
_PAGE = {"name": C.PAGE, "in": "query", "schema": {"type": "integer", "minimum": 1, "default": 1}}


def _size(name: str) -> JsonObject:
    schema = {"type": "integer", "minimum": 1, "maximum": C.PAGE_SIZE_MAX, "default": 20}
    return {"name": name, "in": "query", "schema": schema}


def _query(name: str, schema: JsonObject) -> JsonObject:
    return {"name": name, "in": "query", "schema": schema}


def _enum(*values: str) -> JsonObject:
    return {"type": "string", "enum": list(values)}


def _path(name: str, schema: JsonObject) -> JsonObject:
    return {"name": name, "in": "path", "required": True, "schema": schema}


_DATE = {"type": "string", "format": "date"}
_ORDER = _query(C.ORDER, _enum("asc", "desc"))
_SHP = _path("id", {"type": "string", "pattern": "^shp_[A-Za-z0-9]+$"})
_ID = _path("id", _INT)
_CREATED = [_query(C.CREATED_FROM, _DATE), _query(C.CREATED_TO, _DATE)]

# (method, path, summary, parameters, request body component, success status)
_OPERATIONS: list[tuple[str, str, str, list[JsonObject], str | None, int]] = [
    (
        "GET",
        C.SHIPMENTS,
        "List shipments",
        [
            _PAGE,
            _size(C.ITEMS_PER_PAGE),
            _query(C.STATUS, _enum(*C.SHIPMENT_STATUSES)),
            _query(C.REFERENCE_NUMBER, _STR),
            *_CREATED,
            _ORDER,
        ],
        None,
        200,
    ),
    (
        "POST",
        C.MOVEMENTS,
        "Create an RTO movement",
        [_SHP, {"name": C.IDEMPOTENCY_KEY, "in": "header", "required": True, "schema": _STR}],
        "MovementBody",
        201,
    ),
    (
        "GET",
        C.ALLOCATIONS,
        "List allocations of a shipment",
        [_SHP, _PAGE, _size(C.LIMIT)],
        None,
        200,
    ),
    (
        "GET",
        C.HAWBS,
        "List HAWBs of a shipment",
        [_SHP, _PAGE, _size(C.LIMIT), _query(C.INCLUDE_INACTIVE, {"type": "boolean"})],
        None,
        200,
    ),
    (
        "DELETE",
        C.HAWB,
        "Deactivate a HAWB",
        [_SHP, _path("hawbId", {"type": "string", "pattern": "^hawb_[A-Za-z0-9]+$"})],
        None,
        200,
    ),
    ("POST", C.SUBMIT_DEPARTURE, "Submit a departure declaration", [], "DepartureDeclaration", 201),
    (
        "GET",
        C.TRANSIT_LIST,
        "List transit declarations",
        [
            _PAGE,
            _size(C.ITEMS_PER_PAGE),
            _query(C.STATUS, _enum(*C.TRANSIT_FILTER_VALUES)),
            _ORDER,
            _query(C.START_DATE, _DATE),
            _query(C.END_DATE, _DATE),
        ],
        None,
        200,
    ),
    ("GET", C.TRANSIT, "Poll a transit declaration", [_ID], None, 200),
    (
        "PATCH",
        C.DEPARTURE_PARTIES,
        "Update the parties (departure)",
        [_path("declarationId", _INT)],
        "PartiesBody",
        200,
    ),
    ("PATCH", C.ARRIVAL_PARTIES, "Update the parties (arrival)", [_ID], "PartiesBody", 200),
    (
        "GET",
        C.DECLARATIONS,
        "List import and export declarations",
        [
            _PAGE,
            _size(C.ITEMS_PER_PAGE),
            _query(C.TYPE, _enum(*C.DECLARATION_TYPES)),
            _query(C.STATUS, _enum(*C.DECLARATION_STATUSES)),
            _query(C.REFERENCE_NUMBER, _STR),
            *_CREATED,
            _ORDER,
        ],
        None,
        200,
    ),
    ("GET", C.DECLARATION, "Poll an export declaration", [_ID], None, 200),
    ("DELETE", C.DECLARATION, "Cancel an export declaration", [_ID], None, 200),
    (
        "GET",
        C.ITEMS,
        "List declaration items",
        [
            _query(C.SEARCH, _STR),
            _PAGE,
            _size(C.ITEMS_PER_PAGE),
            _query(C.DELETED, _enum("deleted", "normal", "all")),
            _query(C.ARCHIVED, _enum("unarchived", "archived", "all")),
            _query(C.SORT_BY, _enum(*C.ITEM_SORT_FIELDS)),
            _query(C.SORT_ORDER, _enum("asc", "desc")),
        ],
        None,
        200,
    ),
    ("GET", C.ITEM, "Get a declaration item", [_ID], None, 200),
    ("POST", C.TEMPLATE_GROUPS, "Create a template group", [], "TemplateGroup", 201),
    (
        "GET",
        C.TEMPLATE_GROUPS,
        "List template groups",
        [_query(C.COMPANY_ID, _INT64), _PAGE, _size(C.ITEMS_PER_PAGE)],
        None,
        200,
    ),
    ("PATCH", C.TEMPLATE_GROUP, "Update a template group", [_ID], "TemplateGroupPatch", 200),
    ("GET", C.INSPECT_MOVEMENTS, "Emulator only: every movement created", [], None, 200),
    ("GET", C.INSPECT_STATS, "Emulator only: request counts and 429s", [], None, 200),
]

_ERRORS = {
    "400": "bad request: the message lists the reasons",
    "401": "missing, invalid or expired API key",
    "403": "account not active",
    "404": "not found",
    "429": "rate limit exceeded; see Retry-After",
}
_BODY_ERRORS = {
    str(C.PAYLOAD_TOO_LARGE): f"the body is larger than {C.MAX_BODY_BYTES:,} bytes",
    str(C.UNSUPPORTED_MEDIA_TYPE): "the body is not sent as application/json in UTF-8",
}
_DUPLICATE_CODE = {str(C.DUPLICATE_CODE): "the company already has a template group with this code"}
# Answers of one operation beyond the common ones, by (method, path).
_OPERATION_ERRORS: dict[tuple[str, str], dict[str, str]] = {
    ("POST", C.MOVEMENTS): {
        str(C.IDEMPOTENCY_IN_FLIGHT): "a request with this Idempotency-Key is still being handled",
        str(C.IDEMPOTENCY_OTHER_BODY): "this Idempotency-Key was used with another body",
    },
    ("DELETE", C.HAWB): {str(C.HAWB_REFUSED): "a sent movement references the HAWB"},
    ("POST", C.TEMPLATE_GROUPS): _DUPLICATE_CODE,
    ("PATCH", C.TEMPLATE_GROUP): _DUPLICATE_CODE,
}


def _bodies() -> dict[str, JsonObject]:
    return {
        "MovementBody": request_schemas.movement_body_schema(),
        "DepartureDeclaration": request_schemas.departure_body_schema(),
        "TemplateGroup": request_schemas.template_group_body_schema(),
        "TemplateGroupPatch": request_schemas.template_group_patch_schema(),
        "PartiesBody": request_schemas.parties_body_schema(),
    }


def _components() -> dict[str, JsonObject]:
    """Each body schema, its ``$defs`` hoisted beside it as ``<Name>_<def>``."""
    components: dict[str, JsonObject] = {}
    for name, schema in _bodies().items():
        defs = schema.pop("$defs", {})
        for key in ("$schema", "$id"):
            schema.pop(key, None)
        components[name] = _rewrite(schema, name)
        for def_name, definition in defs.items():
            components[f"{name}_{def_name}"] = _rewrite(definition, name)
    return components


def _rewrite(node: Any, owner: str) -> Any:
    if isinstance(node, dict):
        return {
            key: (
                value.replace("#/$defs/", f"#/components/schemas/{owner}_")
                if key == "$ref" and isinstance(value, str)
                else _rewrite(value, owner)
            )
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_rewrite(value, owner) for value in node]
    return node


def _operation(
    summary: str,
    parameters: list[JsonObject],
    body: str | None,
    status: int,
    errors: dict[str, str],
) -> JsonObject:
    if body is not None:
        errors = {**errors, **_BODY_ERRORS}
    operation: JsonObject = {
        "summary": summary,
        "parameters": parameters,
        "responses": {
            str(status): {"description": "success", "content": {"application/json": {}}},
            **{code: {"description": text} for code, text in sorted({**_ERRORS, **errors}.items())},
        },
    }
    if body is not None:
        reference = {"$ref": f"#/components/schemas/{body}"}
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": reference}},
        }
    return operation


@cache
def _document() -> str:
    paths: dict[str, JsonObject] = {}
    for method, path, summary, parameters, body, status in _OPERATIONS:
        errors = _OPERATION_ERRORS.get((method, path), {})
        paths.setdefault(template(path), {})[method.lower()] = _operation(
            summary, parameters, body, status, errors
        )
    document = {
        "openapi": "3.1.0",
        "info": {
            "title": "Customs Declaration Service (customs-batch sandbox emulator)",
            "version": __version__,
        },
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": _components(),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
    return json.dumps(document)


def openapi_document() -> JsonObject:
    """The OpenAPI 3.1 document served at ``/openapi.json`` (a fresh copy each call)."""
    document: JsonObject = json.loads(_document())
    return document
