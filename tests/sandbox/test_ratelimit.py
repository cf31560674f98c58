"""Rate limiting per key with Retry-After, and the --rate-limit words."""

from __future__ import annotations

import pytest

from customs_batch.errors import UsageError
from customs_batch.sandbox import ApiKey, RateLimit, Seed, parse_rate_limit
from customs_batch.sandbox.ratelimit import RateLimiter
from tests.sandbox.conftest import ClientFactory, FakeClock


def test_over_the_limit_is_429_with_retry_after(make_api: ClientFactory, clock: FakeClock) -> None:
    api = make_api(rate_limit=RateLimit(2, 60.0))
    assert [api.get("/v1/shipments").status_code for _ in range(2)] == [200, 200]
    clock.advance(10)
    response = api.get("/v1/shipments")
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "50"
    assert response.json() == {
        "statusCode": 429,
        "message": response.json()["message"],
        "error": "Too Many Requests",
    }
    assert api.get("/_sandbox/stats").status_code == 429
    clock.advance(50)
    stats = api.get("/_sandbox/stats").json()
    assert stats["rateLimited"] == 2


def test_limit_is_per_key(make_api: ClientFactory) -> None:
    seed = Seed(api_keys=(ApiKey("key-a", 1), ApiKey("key-b", 1)))
    api = make_api(
        seed=seed, rate_limit=RateLimit(1, 1.0), headers={"Authorization": "Bearer key-a"}
    )
    assert api.get("/v1/shipments").status_code == 200
    assert api.get("/v1/shipments").status_code == 429
    assert api.get("/v1/shipments", headers={"Authorization": "Bearer key-b"}).status_code == 200


def test_retry_after_is_at_least_one_second() -> None:
    limiter = RateLimiter(RateLimit(1, 1.0))
    assert limiter.admit("k", 0.0) == 0
    assert limiter.admit("k", 0.999) == 1
    assert limiter.admit("k", 1.0) == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("100/minute", RateLimit(100, 60.0)),
        ("5/second", RateLimit(5, 1.0)),
        ("1000/hour", RateLimit(1000, 3600.0)),
        ("off", None),
    ],
)
def test_parse_rate_limit(text: str, expected: RateLimit | None) -> None:
    assert parse_rate_limit(text) == expected


@pytest.mark.parametrize("text", ["100", "0/minute", "5/day", "x/second"])
def test_parse_rate_limit_refuses(text: str) -> None:
    with pytest.raises(UsageError, match="invalid rate limit"):
        parse_rate_limit(text)
