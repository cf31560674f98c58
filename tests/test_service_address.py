"""Which addresses name one service: those RFC 3986 calls one (scheme and host in any
case, the default port written or not, dot segments and a trailing slash), and no other."""

from __future__ import annotations

import pytest

from customs_batch.service_address import same_service, service_key


@pytest.mark.parametrize(
    "written",
    [
        "https://api.customs.example",
        "https://API.Customs.Example",
        "https://api.customs.example:443",
        "https://api.customs.example/",
        "https://api.customs.example/.",
        "https://api.customs.example/v1/..",
    ],
)
def test_one_service_written_in_other_letters_is_one_service(written: str) -> None:
    assert service_key(written) == "https://api.customs.example"
    assert same_service(written, "https://api.customs.example")


def test_a_path_prefix_keeps_its_case_and_its_empty_segments() -> None:
    assert service_key("http://H.example:80/Customs/./v1/") == "http://h.example/Customs/v1"
    assert service_key("http://[::1]:8080/a//b") == "http://[::1]:8080/a//b"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("https://api.customs.example", "http://api.customs.example"),  # another scheme
        ("https://api.customs.example", "https://api.customs.example:8443"),
        ("https://api.customs.example/eu", "https://api.customs.example/EU"),
        ("https://api.customs.example", "https://test.customs.example"),
    ],
)
def test_other_services_stay_apart(first: str, second: str) -> None:
    assert not same_service(first, second)


def test_text_that_is_no_address_is_its_own_key() -> None:
    assert service_key("the built-in sandbox") == "the built-in sandbox"
    assert same_service(None, None)
    assert not same_service("https://api.customs.example", None)
