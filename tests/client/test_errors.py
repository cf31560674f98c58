from __future__ import annotations

import pytest

from customs_batch.client import (
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
    RequestRefusedError,
    ServerError,
)
from customs_batch.client._errors import (
    MAX_RETRY_AFTER,
    error_for_status,
    parse_retry_after,
    service_message,
)
from customs_batch.errors import ServiceError


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        (401, AuthenticationError, "key"),
        (403, PermissionDeniedError, "activated"),
        (404, NotFoundError, "check the ID"),
        (410, NotFoundError, "the service no longer holds it"),  # Gone: not there either
        (409, RequestRefusedError, "refused"),
        (429, RateLimitedError, "retry after 3 s"),
        (503, ServerError, "failed"),
    ],
)
def test_each_status_has_its_error_and_says_what_to_check(
    status: int, kind: type[ServiceError], words: str
) -> None:
    body = {"statusCode": status, "message": "the service says so", "error": "X"}
    error = error_for_status(status, body, operation="GET /v1/x", retry_after="3", secret=None)
    assert type(error) is kind
    assert error.status == status
    assert error.body == body
    assert words in str(error)
    assert "the service says so" in str(error)


def test_the_key_is_removed_from_a_message_that_echoes_it() -> None:
    body = {"error": "INVALID_CREDENTIALS", "message": "key s3cr3t-key-123 is unknown"}
    error = error_for_status(
        401, body, operation="GET /", retry_after=None, secret="s3cr3t-key-123"
    )
    assert "s3cr3t-key-123" not in str(error)
    assert "***" in str(error)


def test_retry_after_is_read_leniently() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(" 0.5 ") == 0.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # passed
    assert parse_retry_after(None, default=4.0) == 4.0
    assert parse_retry_after("-3") == 0.0


def test_retry_after_as_an_http_date_is_the_wait_until_then() -> None:
    # Found probing: the date form of Retry-After (RFC 9110) was read as the default 1 s, so
    # a service asking to retry at the top of the hour was asked again every second.
    date = "Sun, 29 Nov 2026 11:00:00 GMT"
    top_of_the_hour = 1795950000.0  # 2026-11-29T11:00:00Z
    assert parse_retry_after(date, now=top_of_the_hour - 1500) == 1500.0
    assert parse_retry_after(date, now=top_of_the_hour + 5) == 0.0
    assert parse_retry_after("Sunday, 29-Nov-26 11:00:00 GMT", now=top_of_the_hour - 60) == 60.0
    assert parse_retry_after("Sun Nov 29 11:00:00 2026", now=top_of_the_hour - 60) == 60.0
    # A wait the platform's sleep cannot count (OverflowError) is at most a day.
    assert parse_retry_after("10000000000") == parse_retry_after("Sat, 1 Jan 9999 00:00:00 GMT")
    assert parse_retry_after("10000000000") == MAX_RETRY_AFTER == 86400.0
    for unusable in ("Sun, 31 Nov 2026 11:00:00 GMT", "soon", "inf", "1e400", "nan", ""):
        assert parse_retry_after(unusable, default=3.0) == 3.0, unusable


def test_service_message_joins_lists_and_falls_back_to_the_body() -> None:
    assert service_message({"message": ["a", "b"]}) == "a; b"
    assert service_message({"error": "X"}) == '{"error": "X"}'
    assert service_message("plain text") == "plain text"


GATEWAY_PAGE = """<!DOCTYPE html>
<html><head><title>502 Bad Gateway</title><style>h1 { color: red }</style></head>
<body><!-- served by the gateway -->
<center><h1>502 Bad Gateway</h1></center>
<script>document.write("<p>hidden</p>")</script>
<hr><center>nginx &amp; friends</center>
</body></html>
"""


def test_a_gateway_page_is_its_text_on_one_line() -> None:
    """A proxy's HTML error page (not the service's JSON) reads as what a browser shows:
    no markup, head, comment or script, its entities decoded, on one line."""
    assert service_message(GATEWAY_PAGE) == "502 Bad Gateway nginx & friends"
    error = error_for_status(
        502, GATEWAY_PAGE, operation="POST /v1/x", retry_after=None, secret="k"
    )
    assert (
        error.message == "the service failed (POST /v1/x -> 502): 502 Bad Gateway nginx & friends"
    )
    assert service_message("<html><head><title>x</title></head></html>") == (
        "(an HTML page without text)"
    )


def test_a_long_or_broken_body_is_cut_short() -> None:
    """At most 300 characters of any body, and a page that never closes its tags costs its
    length, not its length squared."""
    said = service_message("<p>" + "word " * 1000)
    assert len(said) == 300 and said.endswith("…")
    assert service_message("line one\n  line two  ") == "line one line two"
    assert service_message("<head" * 100_000) == "(an HTML page without text)"
    assert len(service_message('<p>text <a b="' * 10_000)) <= 300
    assert service_message("<script>" + "<a " * 100_000) == "(an HTML page without text)"
