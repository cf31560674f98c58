"""The OpenAPI document: every endpoint, request bodies from the project's schemas."""

from __future__ import annotations

import httpx
from starlette.routing import Route

from customs_batch.sandbox.app import ROUTES
from customs_batch.sandbox.routing import template
from customs_batch.sandbox.schemas import movement_body_schema


def test_document_lists_every_endpoint(api: httpx.Client) -> None:
    document = api.get("/openapi.json", headers={}).json()
    assert document["openapi"].startswith("3.1")
    listed = {(method.upper(), path) for path, ops in document["paths"].items() for method in ops}
    served = {
        (method, template(route.path))
        for route in ROUTES
        if isinstance(route, Route)
        for method in route.methods or ()
        if method != "HEAD"
    }
    assert listed == served


def test_request_bodies_reuse_the_project_schemas(api: httpx.Client) -> None:
    document = api.get("/openapi.json").json()
    operation = document["paths"]["/v1/shipments/{id}/movements"]["post"]
    reference = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = document["components"]["schemas"][reference.rsplit("/", 1)[1]]
    assert body["properties"] == movement_body_schema()["properties"]
    assert "shipmentId" not in body["properties"]
    departure = document["components"]["schemas"]["DepartureDeclaration"]
    assert (
        departure["properties"]["Principal"]["$ref"]
        == "#/components/schemas/DepartureDeclaration_party"
    )
    assert "DepartureDeclaration_party" in document["components"]["schemas"]
