from __future__ import annotations

import random
from collections.abc import Callable

import httpx
import pytest

from customs_batch.client import (
    AuthenticationError,
    ConnectionFailedError,
    NotSentError,
    RateLimitedError,
    RequestRefusedError,
    RetryPolicy,
    Sender,
    ServerError,
    is_repeatable,
)
from tests.client.fakes import FakeClock, sender_on

Handler = Callable[[httpx.Request], httpx.Response]


def _sender(handler: Handler, clock: FakeClock, policy: RetryPolicy | None = None) -> Sender:
    return sender_on(clock, handler, policy)


def _flaky(failures: int, status: int = 503) -> tuple[Handler, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if len(seen) <= failures:
            return httpx.Response(status, json={"statusCode": status, "message": "busy"})
        return httpx.Response(200, json={"ok": True})

    return handler, seen


@pytest.mark.parametrize(
    ("method", "key", "expected"),
    [
        ("GET", False, True),
        ("DELETE", False, True),
        ("PATCH", False, True),
        ("POST", True, True),
        ("POST", False, False),
    ],
)
def test_which_requests_may_be_repeated(method: str, key: bool, expected: bool) -> None:
    assert is_repeatable(method, has_idempotency_key=key) is expected


def test_backoff_is_full_jitter_under_a_growing_cap() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0)
    rng = random.Random(1)
    for retry, cap in [(1, 1.0), (2, 2.0), (3, 4.0), (6, 5.0)]:
        delays = [policy.backoff(retry, rng) for _ in range(200)]
        assert all(0.0 <= d <= cap for d in delays)
        assert max(delays) > cap * 0.8


def test_a_get_is_retried_through_5xx() -> None:
    clock = FakeClock()
    handler, seen = _flaky(2)
    assert _sender(handler, clock).send("GET", "/v1/x") == {"ok": True}
    assert len(seen) == 3
    assert len(clock.sleeps) == 2


def test_retries_are_bounded_in_count() -> None:
    clock = FakeClock()
    handler, seen = _flaky(100)
    with pytest.raises(ServerError):
        _sender(handler, clock, RetryPolicy(max_attempts=3)).send("GET", "/v1/x")
    assert len(seen) == 3


def test_retries_are_bounded_in_total_time() -> None:
    clock = FakeClock()
    handler, seen = _flaky(100)
    policy = RetryPolicy(max_attempts=100, base_delay=10.0, max_delay=10.0, max_total=25.0)
    with pytest.raises(ServerError):
        _sender(handler, clock, policy).send("GET", "/v1/x")
    assert sum(clock.sleeps) <= 25.0
    assert len(seen) < 100


def test_a_post_without_idempotency_key_is_never_retried() -> None:
    clock = FakeClock()
    handler, seen = _flaky(1)
    with pytest.raises(ServerError):
        _sender(handler, clock).send("POST", "/v1/x", body={"a": 1})
    assert len(seen) == 1


def test_a_post_with_idempotency_key_is_retried_with_the_same_key_and_body() -> None:
    clock = FakeClock()
    handler, seen = _flaky(2)
    _sender(handler, clock).send("POST", "/v1/x", body={"a": 1}, idempotency_key="idem-1")
    assert [r.headers["Idempotency-Key"] for r in seen] == ["idem-1"] * 3
    assert len({r.content for r in seen}) == 1


@pytest.mark.parametrize(
    ("status", "kind"), [(401, AuthenticationError), (409, RequestRefusedError)]
)
def test_refusals_are_never_retried(status: int, kind: type[Exception]) -> None:
    clock = FakeClock()
    handler, seen = _flaky(5, status)
    with pytest.raises(kind):
        _sender(handler, clock).send("GET", "/v1/x")
    assert len(seen) == 1


def test_network_errors_are_retried_where_safe() -> None:
    clock = FakeClock()
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(200, json=[])

    assert _sender(handler, clock).send("DELETE", "/v1/x") == []
    # A refused connection means the request never left: even a POST is sent again.
    calls.clear()
    assert _sender(handler, clock).send("POST", "/v1/x", body={}) == []
    assert len(calls) == 2


def test_a_post_whose_answer_was_lost_is_not_sent_again() -> None:
    clock = FakeClock()
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise httpx.ReadError("connection reset", request=request)

    with pytest.raises(ConnectionFailedError, match="check the environment's base_url") as raised:
        _sender(handler, clock).send("POST", "/v1/x", body={})
    assert not isinstance(raised.value, NotSentError), "it was sent: the outcome is unknown"
    assert calls == [1]


def test_a_connection_refused_every_time_says_nothing_was_sent() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(NotSentError, match="nothing was sent"):
        _sender(handler, FakeClock()).send("POST", "/v1/x", body={})


def test_a_429_is_waited_out_for_every_method_and_not_counted_as_a_failure() -> None:
    clock = FakeClock()
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if len(seen) <= 6:
            return httpx.Response(429, headers={"Retry-After": "2"}, json={"statusCode": 429})
        return httpx.Response(201, json={"declarationId": 1})

    policy = RetryPolicy(max_attempts=2)
    result = _sender(handler, clock, policy).send("POST", "/v1/x", body={})
    assert result == {"declarationId": 1}
    assert sum(clock.sleeps) >= 12.0


def test_429_waits_are_bounded_too() -> None:
    clock = FakeClock()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"Retry-After": "1"}, json={"statusCode": 429})

    with pytest.raises(RateLimitedError) as caught:
        _sender(handler, clock, RetryPolicy(max_rate_limited=3)).send("GET", "/v1/x")
    assert caught.value.retry_after == 1.0


def test_a_429_after_another_failure_says_an_earlier_attempt_may_have_been_processed() -> None:
    # Only when every answer was a 429 is the request known to be unprocessed (apply then
    # takes its intent back); a 503 before it may have been processed.
    answers = iter([503, 429, 429])

    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(next(answers), json={}, headers={"Retry-After": "0"})

    policy = RetryPolicy(max_rate_limited=1)
    with pytest.raises(RateLimitedError) as caught:
        _sender(handler, FakeClock(), policy).send(
            "POST", "/v1/x", body={}, idempotency_key="key-1"
        )
    assert caught.value.after_failures == 1
    only_429 = iter([429, 429])
    with pytest.raises(RateLimitedError) as again:
        _sender(
            lambda _r: httpx.Response(next(only_429), json={}, headers={"Retry-After": "0"}),
            FakeClock(),
            policy,
        ).send("POST", "/v1/x", body={}, idempotency_key="key-2")
    assert again.value.after_failures == 0


def test_attempts_that_never_left_do_not_make_a_429_an_unknown_outcome() -> None:
    # A connection refused never reached the service: the 429s after it leave the request
    # known to be unprocessed, and apply takes its intent back.
    answers = iter([0, 429, 429])  # 0: the connection is refused

    def handler(request: httpx.Request) -> httpx.Response:
        answer = next(answers)
        if not answer:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(answer, json={}, headers={"Retry-After": "0"})

    policy = RetryPolicy(max_rate_limited=1, base_delay=0.0)
    with pytest.raises(RateLimitedError) as caught:
        _sender(handler, FakeClock(), policy).send(
            "POST", "/v1/x", body={}, idempotency_key="key-1"
        )
    assert caught.value.after_failures == 0


def test_no_attempt_is_made_after_the_time_the_block_allows() -> None:
    # Found in review: a re-send under a key the service honours for five more minutes,
    # answered 429 with Retry-After: 600 (or a run of them), went out again after the
    # wait, when the service could have forgotten the key and made a second object.
    clock = FakeClock()
    seen: list[float] = []

    def handler(_request: httpx.Request) -> httpx.Response:
        seen.append(clock())
        return httpx.Response(429, headers={"Retry-After": "600"}, json={"statusCode": 429})

    sender = _sender(handler, clock)
    with sender.retried_until(300.0), pytest.raises(RateLimitedError) as caught:
        sender.send("POST", "/v1/x", body={}, idempotency_key="key-1")
    assert seen == [1000.0], "attempted again after the key's time"
    assert caught.value.after_failures == 0
    # Outside the block the same answers are waited out as before.
    with pytest.raises(RateLimitedError):
        sender.send("POST", "/v1/x", body={}, idempotency_key="key-1")
    assert len(seen) == 1 + 1 + RetryPolicy().max_rate_limited


def test_a_retry_after_a_failure_is_not_made_after_the_time_the_block_allows() -> None:
    clock = FakeClock()
    handler, seen = _flaky(failures=3)
    sender = _sender(handler, clock, RetryPolicy(base_delay=10.0, max_delay=10.0, max_total=1e6))
    with sender.retried_until(5.0), pytest.raises(ServerError):
        sender.send("POST", "/v1/x", body={}, idempotency_key="key-1")
    assert len(seen) < 4, "retried after the block's time"
    assert clock() <= 1005.0
