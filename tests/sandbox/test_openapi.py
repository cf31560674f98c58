"""The OpenAPI document: every endpoint, request bodies from the project's schemas."""

from __future__ import annotations

import httpx
import pytest
from jsonschema import Draft202012Validator
from starlette.routing import Route

from customs_batch.sandbox import create_app, parse_rate_limit
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.request_schemas import movement_body_schema
from customs_batch.sandbox.routing import template
from tests.sandbox.conftest import ClientFactory


def test_every_route_the_app_serves_is_documented_with_its_methods(api: httpx.Client) -> None:
    document = api.get("/openapi.json", headers={}).json()
    assert document["openapi"].startswith("3.1")
    listed = {path: {method.upper() for method in ops} for path, ops in document["paths"].items()}
    served: dict[str, set[str]] = {}
    for route in create_app(rate_limit=None).routes:
        assert isinstance(route, Route), route
        served.setdefault(template(route.path), set()).update(route.methods or set())
    assert listed == served
    for path in ("/_sandbox/clock", "/_sandbox/gate", "/_sandbox/keys/rotate"):
        assert path in listed


@pytest.mark.parametrize(
    ("path", "body", "answer"),
    [
        ("/_sandbox/clock", {"advanceSeconds": 2}, {"manual", "now", "advancedSeconds"}),
        ("/_sandbox/gate", {"open": True}, {"open", "writes", "waiting"}),
        ("/_sandbox/keys/rotate", {"newKey": "k-2"}, {"rotated", "companyId"}),
    ],
)
def test_the_emulator_controls_are_documented_with_their_shapes(
    make_api: ClientFactory, path: str, body: JsonObject, answer: set[str]
) -> None:
    api = make_api(manual_clock=True)
    document = api.get("/openapi.json").json()
    operation = document["paths"][path]["post"]
    reference = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    request_schema = document["components"]["schemas"][reference.rsplit("/", 1)[1]]
    Draft202012Validator(request_schema).validate(body)
    assert not Draft202012Validator(request_schema).is_valid({**body, "other": 1})
    response_schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    sent = api.post(path, json=body)
    assert sent.status_code == 200, sent.text
    assert set(sent.json()) == answer
    Draft202012Validator(response_schema).validate(sent.json())
    assert set(response_schema["properties"]) == answer
    assert {"400", "401", "415"} <= set(operation["responses"])


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


_HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _concrete(path: str) -> str:
    """``path`` with its parameters filled in with IDs of the built-in seed."""
    shipment = "shp_7Hk2Lm" if path.startswith("/v1/shipments/") else "7001"
    return (
        path.replace("{id}", shipment)
        .replace("{hawbId}", "hawb_a1")
        .replace("{declarationId}", "7001")
    )


def test_head_is_documented_where_it_is_served_and_429_where_it_can_be_given(
    make_api: ClientFactory,
) -> None:
    api = make_api(rate_limit=parse_rate_limit("1/minute"))
    document = api.get("/openapi.json").json()
    assert api.head("/v1/shipments").status_code == 200
    assert "head" in document["paths"]["/v1/shipments"]
    assert api.get("/v1/shipments").status_code == 429
    assert "429" in document["paths"]["/v1/shipments"]["get"]["responses"]
    for path, method in (
        ("/_sandbox/clock", "get"),
        ("/_sandbox/clock", "post"),
        ("/_sandbox/gate", "get"),
        ("/_sandbox/gate", "post"),
        ("/_sandbox/keys/rotate", "post"),
    ):
        # The controls are never rate limited: they list no 429.
        assert "429" not in document["paths"][path][method]["responses"], (path, method)
    assert api.get("/_sandbox/clock").status_code == 200


def test_a_405_allows_exactly_the_documented_methods(api: httpx.Client) -> None:
    document = api.get("/openapi.json").json()
    for path, operations in document["paths"].items():
        documented = {method.upper() for method in operations}
        expected = documented
        for method in sorted(set(_HTTP_METHODS) - documented):
            response = api.request(method, _concrete(path))
            assert response.status_code == 405, (method, path)
            assert response.json()["error"] == "Method Not Allowed"
            allowed = {word.strip() for word in response.headers["Allow"].split(",")}
            assert allowed == expected, (method, path)


def test_the_document_names_the_conflicts_and_body_refusals(api: httpx.Client) -> None:
    paths = api.get("/openapi.json").json()["paths"]
    groups = "/v1/declaration-templates/groups"
    for operation in (paths[groups]["post"], paths[f"{groups}/{{id}}"]["patch"]):
        assert "409" in operation["responses"]
        assert {"413", "415"} <= set(operation["responses"])
    assert "409" in paths["/v1/shipments/{id}/hawbs/{hawbId}"]["delete"]["responses"]
    assert {"409", "422"} <= set(paths["/v1/shipments/{id}/movements"]["post"]["responses"])
    assert "413" not in paths[groups]["get"]["responses"]


def test_a_duplicate_group_code_is_the_documented_409(api: httpx.Client) -> None:
    body = {"name": "Twice", "code": "TWICE", "companyId": 1}
    assert api.post("/v1/declaration-templates/groups", json=body).status_code == 201
    response = api.post("/v1/declaration-templates/groups", json=body)
    assert response.status_code == 409
    document = api.get("/openapi.json").json()
    assert "409" in document["paths"]["/v1/declaration-templates/groups"]["post"]["responses"]


def test_sort_by_lists_exactly_the_values_the_service_takes(api: httpx.Client) -> None:
    operation = api.get("/openapi.json").json()["paths"]["/v1/declaration-items"]["get"]
    sort_by = next(p for p in operation["parameters"] if p["name"] == "sortBy")["schema"]
    assert sort_by["enum"]
    for value in sort_by["enum"]:
        assert api.get("/v1/declaration-items", params={"sortBy": value}).status_code == 200
    assert api.get("/v1/declaration-items", params={"sortBy": ""}).status_code == 400
    assert "" not in sort_by["enum"]


@pytest.mark.parametrize(
    ("path", "name", "default"),
    [
        ("/v1/shipments", "order", "desc"),
        ("/v1/declarations", "order", "desc"),
        ("/v1/declarations/transit", "order", "desc"),
        ("/v1/declaration-items", "sortOrder", "asc"),
        ("/v1/declaration-items", "deleted", "normal"),
        ("/v1/declaration-items", "archived", "unarchived"),
        ("/v1/shipments/{id}/hawbs", "includeInactive", False),
    ],
)
def test_a_documented_default_is_in_the_document_and_is_what_omitting_means(
    api: httpx.Client, path: str, name: str, default: str | bool
) -> None:
    # A client generated from /openapi.json knows what an omitted parameter means.
    operation = api.get("/openapi.json").json()["paths"][path]["get"]
    (parameter,) = [p for p in operation["parameters"] if p["name"] == name]
    assert parameter["schema"]["default"] == default
    url = path.replace("{id}", "shp_7Hk2Lm")
    shown = str(default).lower() if isinstance(default, bool) else default
    assert api.get(url, params={name: shown}).json() == api.get(url).json()
