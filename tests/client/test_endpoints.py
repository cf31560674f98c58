from __future__ import annotations

import pytest

from customs_batch.client import DEFAULT_ENDPOINTS, Endpoint, EndpointMap
from customs_batch.errors import ConfigError


def test_design_section_7_fixes_the_departure_submission() -> None:
    assert str(DEFAULT_ENDPOINTS["submit_departure"]) == "POST /v1/declarations/transit"


def test_unversioned_party_paths_follow_the_api_document() -> None:
    assert DEFAULT_ENDPOINTS["update_departure_parties"].path.startswith("/declarations/")
    assert DEFAULT_ENDPOINTS["update_arrival_parties"].path.startswith("/transit-declarations/")


def test_path_values_are_percent_encoded() -> None:
    endpoint = DEFAULT_ENDPOINTS["deactivate_hawb"]
    assert (
        endpoint.url_path(shipment_id="shp_1", hawb_id="a/b") == "/v1/shipments/shp_1/hawbs/a%2Fb"
    )


def test_an_override_replaces_one_entry_only() -> None:
    endpoints = EndpointMap().with_overrides({"submit_departure": "post /v2/transit/departures"})
    assert str(endpoints["submit_departure"]) == "POST /v2/transit/departures"
    assert endpoints["list_shipments"] == DEFAULT_ENDPOINTS["list_shipments"]


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"no_such": "GET /x"}, "unknown endpoint name"),
        ({"get_declaration": "GET /v1/declarations"}, "placeholders"),
        ({"list_shipments": "FETCH /v1/shipments"}, "not 'METHOD /path'"),
        ({"list_shipments": "GET v1/shipments"}, "not 'METHOD /path'"),
    ],
)
def test_bad_overrides_are_refused_with_a_hint(overrides: dict[str, str], words: str) -> None:
    with pytest.raises(ConfigError, match=words) as caught:
        EndpointMap().with_overrides(overrides)
    assert caught.value.hint


def test_endpoint_parse_round_trips() -> None:
    assert Endpoint.parse("DELETE /v1/x/{id}") == Endpoint("DELETE", "/v1/x/{id}")
