"""The OpenAPI 3.1 document of the emulator, whose request bodies are the project's schemas.

Its operations are those the emulator's modules register, its controls and the document
itself (``endpoints.py``): every route the emulator serves, with the same methods.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

from customs_batch import __version__
from customs_batch.sandbox import contract
from customs_batch.sandbox.endpoints import bodies, controls, operations
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.routing import template

C = contract

_ERRORS = {
    "400": "bad request: the message lists the reasons",
    "401": "missing, invalid or expired API key",
    "403": "account not active",
    "404": "not found",
    "429": "rate limit exceeded; see Retry-After",
}
_RATE_LIMITED = str(C.TOO_MANY_REQUESTS)
_BODY_ERRORS = {
    str(C.PAYLOAD_TOO_LARGE): f"the body is larger than {C.MAX_BODY_BYTES:,} bytes",
    str(C.UNSUPPORTED_MEDIA_TYPE): "the body is not sent as application/json in UTF-8, as is",
}


_THIS_DOCUMENT: JsonObject = {
    "summary": "Emulator only: this OpenAPI document",
    "security": [],  # served without a key
    "parameters": [],
    "responses": {
        "200": {"description": "success", "content": {"application/json": {}}},
        "404": {"description": "not found"},
    },
}


def _bodies() -> dict[str, JsonObject]:
    return {body.name: body.schema() for body in bodies()}


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
    errors: Mapping[str, str],
    response: JsonObject | None = None,
    *,
    limited: bool = True,
) -> JsonObject:
    if body is not None:
        errors = {**errors, **_BODY_ERRORS}
    common = _ERRORS if limited else {k: v for k, v in _ERRORS.items() if k != _RATE_LIMITED}
    content = {"application/json": {} if response is None else {"schema": response}}
    operation: JsonObject = {
        "summary": summary,
        "parameters": parameters,
        "responses": {
            str(status): {"description": "success", "content": content},
            **{code: {"description": text} for code, text in sorted({**common, **errors}.items())},
        },
    }
    if body is not None:
        reference = {"$ref": f"#/components/schemas/{body}"}
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": reference}},
        }
    return operation


def _head(get: JsonObject) -> JsonObject:
    """The HEAD of a GET, which every GET path answers (HTTP's own): the GET's answers
    without their bodies."""
    responses = {
        code: {"description": answer["description"]} for code, answer in get["responses"].items()
    }
    head = {**get, "summary": f"{get['summary']} (headers only)", "responses": responses}
    head.pop("requestBody", None)
    return head


@cache
def _document() -> str:
    paths: dict[str, JsonObject] = {}
    served = [(operation, True) for operation in operations()]
    served += [(control, False) for control in controls()]  # never rate limited (routing.py)
    for operation, limited in served:
        body = operation.body.name if operation.body is not None else None
        paths.setdefault(template(operation.path), {})[operation.method.lower()] = _operation(
            operation.summary,
            list(operation.parameters),
            body,
            operation.status,
            operation.errors,
            operation.response,
            limited=limited,
        )
    paths[C.OPENAPI] = {"get": _THIS_DOCUMENT}
    for methods in paths.values():
        if "get" in methods:
            methods["head"] = _head(methods["get"])
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
