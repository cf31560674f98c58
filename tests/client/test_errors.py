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
from customs_batch.client._errors import error_for_status, parse_retry_after, service_message
from customs_batch.errors import ServiceError


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        (401, AuthenticationError, "key"),
        (403, PermissionDeniedError, "activated"),
        (404, NotFoundError, "check the ID"),
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
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 1.0
    assert parse_retry_after(None, default=4.0) == 4.0
    assert parse_retry_after("-3") == 0.0


def test_service_message_joins_lists_and_falls_back_to_the_body() -> None:
    assert service_message({"message": ["a", "b"]}) == "a; b"
    assert service_message({"error": "X"}) == '{"error": "X"}'
    assert service_message("plain text") == "plain text"
