"""Auth, pagination bounds and the answers to bad requests: never a 500."""

from __future__ import annotations

import json

import httpx
import pytest

from customs_batch.sandbox.contract import MAX_BODY_DEPTH
from tests.sandbox.conftest import MOVEMENTS, ClientFactory, movement


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic sandbox-key"}]
)
def test_missing_or_unknown_key_is_401(make_api: ClientFactory, headers: dict[str, str]) -> None:
    response = make_api(headers=headers).get("/v1/shipments")
    assert response.status_code == 401
    assert response.json()["error"] == "INVALID_CREDENTIALS"
    assert response.json()["message"]


def test_inactive_account_is_403(make_api: ClientFactory) -> None:
    response = make_api(headers={"Authorization": "Bearer inactive-key"}).get("/v1/shipments")
    assert response.status_code == 403
    assert response.json()["error"] == "UNAUTHORIZED"


def test_inspection_endpoints_need_the_key_too(make_api: ClientFactory) -> None:
    assert make_api(headers={}).get("/_sandbox/stats").status_code == 401


@pytest.mark.parametrize(
    ("path", "size"),
    [
        ("/v1/shipments", "itemsPerPage"),
        ("/v1/declarations", "itemsPerPage"),
        ("/v1/declarations/transit", "itemsPerPage"),
        ("/v1/declaration-items", "itemsPerPage"),
        ("/v1/declaration-templates/groups", "itemsPerPage"),
        ("/v1/shipments/shp_7Hk2Lm/hawbs", "limit"),
        ("/v1/shipments/shp_7Hk2Lm/allocations", "limit"),
    ],
)
def test_pagination_bounds(api: httpx.Client, path: str, size: str) -> None:
    assert api.get(path, params={size: 100, "page": 1}).status_code == 200
    for params in ({size: 0}, {size: 101}, {size: "x"}, {"page": 0}):
        response = api.get(path, params=params)
        assert response.status_code == 400, params
        assert next(iter(params)) in str(response.json()["message"])


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"[1, 2]",
        b"\xff\xfe",
        b"",
        b'{"quantity": NaN}',
        b"[" * 100_000 + b"]" * 100_000,
    ],
)
def test_malformed_bodies_are_400(api: httpx.Client, content: bytes) -> None:
    headers = {"Idempotency-Key": "k", "Content-Type": "application/json"}
    for path in (MOVEMENTS, "/v1/declarations/transit", "/v1/declaration-templates/groups"):
        response = api.post(path, content=content, headers=headers)
        assert response.status_code == 400, path
        assert response.json()["error"] == "Bad Request"


def test_a_body_nested_past_the_limit_is_400_saying_so(api: httpx.Client) -> None:
    headers = {"Idempotency-Key": "k", "Content-Type": "application/json"}
    for path in (MOVEMENTS, "/v1/declarations/transit", "/v1/declaration-templates/groups"):
        for depth in (MAX_BODY_DEPTH - 1, MAX_BODY_DEPTH):
            # The body is one level, "x" holds the rest.
            content = '{"x":' + "[" * depth + "]" * depth + "}"
            response = api.post(path, content=content, headers=headers)
            assert response.status_code == 400, (path, depth)
            too_deep = "nested too deeply" in " ".join(response.json()["message"])
            assert too_deep is (depth == MAX_BODY_DEPTH), (path, depth, response.text)


def test_brackets_inside_strings_are_no_nesting(api: httpx.Client) -> None:
    """The depth is read from the body's text: its strings' brackets (and escaped quotes
    before them) are text, not levels."""
    deep_text = '\\"[{' * 100 + "]" * 100
    group = {"name": deep_text, "code": "BRACKETS", "companyId": 1}
    response = api.post("/v1/declaration-templates/groups", json=group)
    assert response.status_code == 201, response.text
    assert response.json()["name"] == deep_text


def test_unknown_path_is_404_json(api: httpx.Client) -> None:
    response = api.get("/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"] == "Not Found"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/shipments/"),
        ("GET", "/v1/declarations/transit/"),
        ("DELETE", "/v1/declarations/501/"),
        ("POST", "/v1/declarations/transit/"),
    ],
)
def test_a_trailing_slash_is_an_unknown_path_not_a_redirect(
    api: httpx.Client, method: str, path: str
) -> None:
    response = api.request(method, path, headers={"Host": "evil.example"})
    assert response.status_code == 404, response
    assert "location" not in response.headers
    assert response.json()["error"] == "Not Found"
    assert api.get("/v1/declarations/501").json()["status"] != "canceled"  # nothing cancelled


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/v1/shipments/shp_9Xc4Rt%2Fhawbs%2Fhawb_b1"),
        ("GET", "/v1/declarations%2F502"),
        ("GET", "/v1/declarations/transit%2f7001"),
        ("GET", "/v1%2Fshipments"),
    ],
)
def test_an_encoded_slash_reaches_no_endpoint(api: httpx.Client, method: str, path: str) -> None:
    """Starlette routes the decoded path: the DELETE of a shipment that holds no such ID
    would have deactivated a HAWB."""
    response = api.request(method, path)
    assert response.status_code == 404, response.text
    body = response.json()
    assert body["error"] == "Not Found"
    assert "encoded slash" in body["message"]
    hawbs = api.get("/v1/shipments/shp_9Xc4Rt/hawbs", params={"includeInactive": "true"})
    assert all(hawb["isActive"] for hawb in hawbs.json()["data"])


def test_non_numeric_id_is_404(api: httpx.Client) -> None:
    assert api.get("/v1/declarations/abc").status_code == 404


def test_wrong_method_is_405_json(api: httpx.Client) -> None:
    response = api.put("/v1/shipments", json={})
    assert response.status_code == 405
    assert response.json()["error"] == "Method Not Allowed"


def test_bad_query_values_are_400(api: httpx.Client) -> None:
    assert api.get("/v1/shipments", params={"createdFrom": "yesterday"}).status_code == 400
    assert api.get("/v1/shipments", params={"order": "sideways"}).status_code == 400
    assert (
        api.get("/v1/shipments/shp_7Hk2Lm/hawbs", params={"includeInactive": "yes"}).status_code
        == 400
    )
    assert api.get("/v1/declaration-items", params={"sortBy": "colour"}).status_code == 400


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/v1/shipments", "limit"),  # the page size of the other list family
        ("/v1/shipments", "stauts"),
        ("/v1/declarations", "tpye"),
        ("/v1/declarations/transit", "createdFrom"),  # its dates are startDate, endDate
        ("/v1/declaration-items", "sort"),
        ("/v1/declaration-templates/groups", "company"),
        ("/v1/shipments/shp_7Hk2Lm/hawbs", "itemsPerPage"),
        ("/v1/shipments/shp_7Hk2Lm/allocations", "itemsPerPage"),
        ("/v1/declarations/transit/1", "status"),  # no list: it takes none
    ],
)
def test_an_unknown_query_parameter_is_400_naming_it(
    api: httpx.Client, path: str, name: str
) -> None:
    # Ignored, a misspelled filter would answer the whole list as if it were the filtered one.
    response = api.get(path, params={name: "1"})
    assert response.status_code == 400, response.text
    (reason,) = response.json()["message"]
    assert reason.startswith(f"unknown query parameter '{name}': GET "), reason


def test_every_query_parameter_of_the_openapi_document_is_taken(api: httpx.Client) -> None:
    document = api.get("/openapi.json").json()
    for route, methods in document["paths"].items():
        for method, operation in methods.items():
            names = [p["name"] for p in operation.get("parameters", []) if p["in"] == "query"]
            if method != "get" or not names or "{" in route:
                continue
            response = api.get(route, params=dict.fromkeys(names, "x"))
            assert not any(
                "unknown query parameter" in reason for reason in response.json()["message"]
            ), (route, response.text)


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/v1/shipments", "createdFrom"),
        ("/v1/declarations", "createdTo"),
        ("/v1/declarations/transit", "startDate"),
        ("/v1/declarations/transit", "endDate"),
    ],
)
@pytest.mark.parametrize("raw", ["20260107", "2026-W02-5", "2026-1-7", "2026-01-07T00:00"])
def test_a_date_other_than_yyyy_mm_dd_is_400(
    api: httpx.Client, path: str, name: str, raw: str
) -> None:
    # Python's date.fromisoformat reads 20260107 and 2026-W02-5 as days; the API's dates are
    # YYYY-MM-DD, so the filter must not quietly apply a day the client did not write so.
    response = api.get(path, params={name: raw})
    assert response.status_code == 400
    assert response.json()["message"] == [f"{name} must be a date YYYY-MM-DD, not '{raw}'"]
    assert api.get(path, params={name: "2026-01-07"}).status_code == 200


def test_timestamps_are_utc_with_milliseconds(api: httpx.Client) -> None:
    stamp = api.get("/v1/shipments").json()["result"][0]["createdAt"]
    assert stamp[-5] == "." and stamp.endswith("Z")


def test_stats_count_by_method_and_path_template(api: httpx.Client) -> None:
    api.get("/v1/declarations/501")
    api.get("/v1/declarations/502")
    counts = api.get("/_sandbox/stats").json()
    assert counts["requests"]["GET /v1/declarations/{id}"] == 2
    assert counts["rateLimited"] == 0


def test_stats_count_a_head_as_a_head_not_as_a_get(api: httpx.Client) -> None:
    # Found probing: `curl -I` (a health check, say) was counted as a GET, so a test
    # comparing the GETs its client sent with the emulator's counts saw one too many.
    api.get("/v1/declarations/501")
    api.head("/v1/declarations/502")
    counts = api.get("/_sandbox/stats").json()["requests"]
    assert counts["GET /v1/declarations/{id}"] == 1
    assert counts["HEAD /v1/declarations/{id}"] == 1


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/_sandbox/clock", {"advanceSeconds": -1}),
        ("POST", "/_sandbox/clock", {"seconds": 1}),
        ("POST", "/_sandbox/gate", {}),
        ("POST", "/_sandbox/keys/rotate", {}),
        ("DELETE", "/v1/declarations/601", None),
        ("POST", "/v1/declaration-templates/groups", {"name": "x"}),
        ("GET", "/v1/shipments?page=0", None),
    ],
)
def test_every_400_lists_its_reasons(
    make_api: ClientFactory, method: str, path: str, body: object
) -> None:
    api = make_api(manual_clock=True)
    response = api.request(method, path, json=body)
    assert response.status_code == 400, response.text
    answer = response.json()
    assert (answer["statusCode"], answer["error"]) == (400, "Bad Request")
    reasons = answer["message"]
    assert isinstance(reasons, list) and reasons, reasons
    assert all(isinstance(reason, str) and reason for reason in reasons)


def test_the_gate_reads_its_body_as_strictly_as_the_api(api: httpx.Client) -> None:
    response = api.post("/_sandbox/gate", content=b'{"open": false}')  # no Content-Type
    assert response.status_code == 415
    assert api.get("/_sandbox/gate").json() == {"open": True, "writes": False, "waiting": 0}


@pytest.mark.parametrize(
    ("name", "first", "second"),
    [
        ("Authorization", "Bearer sandbox-key", "Bearer nope"),
        ("Authorization", "Bearer nope", "Bearer sandbox-key"),
        ("Idempotency-Key", "key-a", "key-b"),
        ("Content-Type", "application/json", "text/plain"),
    ],
)
def test_a_header_given_twice_is_400_and_nothing_is_made(
    make_api: ClientFactory, name: str, first: str, second: str
) -> None:
    # One of the two taken silently: a movement bound to a key the client may retry without
    # (the other key alone would make a second movement), or a caller it did not mean.
    api = make_api(headers={})
    headers = [
        ("Authorization", "Bearer sandbox-key"),
        ("Idempotency-Key", "key-0"),
        ("Content-Type", "application/json"),
    ]
    headers = [(key, value) for key, value in headers if key != name]
    headers += [(name, first), (name, second)]
    response = api.post(MOVEMENTS, content=json.dumps(movement()), headers=headers)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "Bad Request"
    (reason,) = response.json()["message"]
    assert f"the {name} header is given more than once" in reason
    listed = api.get("/_sandbox/movements", headers={"Authorization": "Bearer sandbox-key"})
    assert listed.json() == []
    retried = api.post(
        MOVEMENTS,
        json=movement(),
        headers={"Authorization": "Bearer sandbox-key", "Idempotency-Key": second},
    )
    assert retried.status_code == 201, retried.text


@pytest.mark.parametrize(
    ("path", "query", "name"),
    [
        ("/v1/shipments", "status=new&status=completed", "status"),
        ("/v1/shipments", "page=1&page=2&itemsPerPage=1", "page"),
        ("/v1/declarations", "type=IMPORT&type=EXPORT", "type"),
        ("/v1/declaration-templates/groups", "companyId=1&companyId=2", "companyId"),
        ("/v1/shipments/shp_7Hk2Lm/hawbs", "limit=1&limit=1", "limit"),
    ],
)
def test_a_query_parameter_given_twice_is_400_naming_it(
    api: httpx.Client, path: str, query: str, name: str
) -> None:
    # Keeping the last value silently answers "new or completed" with the completed only.
    response = api.get(f"{path}?{query}")
    assert response.status_code == 400, response.text
    (reason,) = response.json()["message"]
    assert reason.startswith(f"the query parameter '{name}' is given 2 times"), reason


@pytest.mark.parametrize(
    "query", ["referenceNumber=%FF", "referenceNumber=caf%C3", "%FE=1", "referenceNumber=R%E9f"]
)
def test_a_query_string_that_is_not_utf_8_is_400_as_a_body_would_be(
    api: httpx.Client, query: str
) -> None:
    # Found probing: ?referenceNumber=%FF was answered 200 with no shipment, filtered by a
    # replacement character the client never sent.
    response = api.get(f"/v1/shipments?{query}")
    assert response.status_code == 400, response.text
    (reason,) = response.json()["message"]
    assert reason.startswith("the query string is not UTF-8 once percent-decoded: byte "), reason
    assert api.get("/v1/shipments?referenceNumber=caf%C3%A9").status_code == 200


@pytest.mark.parametrize("raw", ["-1", "0", "-9223372036854775808"])
def test_a_company_id_filter_below_1_is_400(api: httpx.Client, raw: str) -> None:
    # Integer query parameters are plain digits, and a company ID is at least 1 (the bodies').
    response = api.get("/v1/declaration-templates/groups", params={"companyId": raw})
    assert response.status_code == 400, response.text
    assert response.json()["message"] == [f"companyId must be at least 1, not '{raw}'"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/declarations/{}"),
        ("DELETE", "/v1/declarations/{}"),
        ("GET", "/v1/declarations/transit/{}"),
        ("GET", "/v1/declaration-items/{}"),
        ("PATCH", "/v1/declaration-templates/groups/{}"),
        ("PATCH", "/declarations/transit/{}/parties"),
    ],
)
def test_a_path_id_of_thousands_of_digits_is_404_not_500(
    api: httpx.Client, method: str, path: str
) -> None:
    """A GET of /v1/declarations/ and 10,000 nines was a 500 (int() of the path's digits
    raised past 4,300 of them): no ID of the service is past 64 bits, so it names nothing."""
    response = api.request(method, path.format("9" * 10_000), json={"name": "x"})
    assert response.status_code == 404, response.text
    assert response.json()["error"] == "Not Found"
    assert len(response.text) < 400  # the ID is not echoed whole
    leading_zeros = api.get("/v1/declarations/" + "0" * 30 + "501")
    assert leading_zeros.status_code == 200 and leading_zeros.json()["declarationId"] == 501


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/declarations/shp_%FF"),
        ("GET", "/v1/shipments/shp_%FF/hawbs"),
        ("POST", "/v1/shipments/shp_%ff/movements"),
        ("DELETE", "/v1/shipments/shp_9Xc4Rt/hawbs/hawb_%C3"),
        ("GET", "/v1/shipments/shp_%ED%A0%80/allocations"),  # a lone surrogate's bytes
        ("GET", "/v1/shipme%FFnts"),
    ],
)
def test_a_path_whose_escapes_are_not_utf_8_is_404_showing_it_as_sent(
    api: httpx.Client, method: str, path: str
) -> None:
    # Found probing: the ID was echoed with U+FFFD for its bytes ("shipment shp_\ufffd not
    # found"), an ID the client never sent.
    response = api.request(method, path, json=movement(), headers={"Idempotency-Key": "k"})
    assert response.status_code == 404, response.text
    assert response.json() == {
        "statusCode": 404,
        "message": f"no endpoint at {path}: its percent-escapes are not UTF-8, which every ID "
        "and path is",
        "error": "Not Found",
    }
    assert "\ufffd" not in response.text


def test_a_path_whose_escapes_are_utf_8_reaches_its_endpoint(api: httpx.Client) -> None:
    response = api.get("/v1/shipments/shp_%C3%A9/hawbs")
    assert response.json()["message"] == "shipment shp_\u00e9 not found"
