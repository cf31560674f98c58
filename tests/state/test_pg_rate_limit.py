"""One rate limit per API key, shared through the state database by every process using it."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from pathlib import Path

import httpx
import psycopg
import pytest

from customs_batch.backends import connect, rate_limit_note
from customs_batch.client import RateLimit, RateLimiter
from customs_batch.environments import load_project
from customs_batch.shared_rate_limit import POLL_SECONDS, SharedRateLimiter, key_fingerprint

KEY = "budget-Key-4d7a-NeverStored"
LIMIT = RateLimit.parse("50/second")


def _limiter(url: str, key: str = KEY) -> SharedRateLimiter:
    """A limiter as one process builds it; it does not sleep, so slots are read, not waited."""
    return SharedRateLimiter(LIMIT, url, key_fingerprint(key), sleep=lambda seconds: None)


def test_two_processes_sharing_a_key_take_slots_an_interval_apart(postgres_url: str) -> None:
    slots: list[float] = []
    guard = threading.Lock()

    def one_process() -> None:
        limiter = _limiter(postgres_url)  # its own connection, as another process has
        try:
            for _ in range(20):
                slot, _now = limiter.take_slot()
                with guard:
                    slots.append(slot)
        finally:
            limiter.close()

    workers = [threading.Thread(target=one_process) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    slots.sort()
    gaps = [later - earlier for earlier, later in itertools.pairwise(slots)]
    assert len(slots) == 40
    # Together, not each: 40 requests of one key span 39 intervals of 50/second.
    assert min(gaps) >= LIMIT.interval * 0.999, min(gaps)


def test_a_process_that_sends_late_does_not_crowd_the_window_of_the_others(
    postgres_url: str,
) -> None:
    # 5 requests in any 2 seconds. Process A takes the first slot and is held (scheduled
    # late) while process B sends four; A's request arrives with B's fourth, and B goes on.
    limit = RateLimit(5, period=2.0)
    a, b = (SharedRateLimiter(limit, postgres_url, key_fingerprint(KEY)) for _ in range(2))
    arrivals: list[float] = []  # when the service counts each request
    a_took, a_sends = threading.Event(), threading.Event()

    def process_a() -> None:
        a.acquire()
        a_took.set()
        a_sends.wait()  # the gate: A is scheduled late
        a.release()  # its answer is back (B counted its arrival before opening the gate)

    held = threading.Thread(target=process_a)
    held.start()
    try:
        assert a_took.wait(timeout=30)
        for sent in range(7):
            b.acquire()
            arrivals.append(time.monotonic())
            b.release()
            if sent == 3:
                arrivals.append(time.monotonic())  # A's late request arrives now
                a_sends.set()
    finally:
        a_sends.set()
        held.join()
        a.close()
        b.close()
    arrivals.sort()
    crowded = [
        (round(first, 3), round(last, 3))
        for first, last in zip(arrivals, arrivals[5:], strict=False)
        if last - first < limit.period - 0.001
    ]
    assert len(arrivals) == 8
    assert not crowded, "6 requests in a window of 2 seconds"


class _Waiting(Exception):
    """The limiter began to wait for the answer of a request of another process."""


def test_a_request_lost_in_a_crash_blocks_the_key_only_until_it_is_stale(
    postgres_url: str,
) -> None:
    limit = RateLimit(2, period=1.0)

    def sleep(seconds: float) -> None:
        if seconds == POLL_SECONDS:
            raise _Waiting

    crashed = SharedRateLimiter(
        limit, postgres_url, key_fingerprint(KEY), stale_after=30.0, sleep=sleep
    )
    crashed.acquire()  # request 1 leaves, and its process dies before the answer
    crashed.close()
    other = SharedRateLimiter(
        limit, postgres_url, key_fingerprint(KEY), stale_after=30.0, sleep=sleep
    )
    try:
        other.acquire()  # request 2: nothing 2 before it
        with pytest.raises(_Waiting):
            other.acquire()  # request 3 waits for the answer of request 1
        with psycopg.connect(postgres_url, autocommit=True) as connection:
            # 31 seconds pass: request 1 has been out longer than stale_after.
            connection.execute(
                "UPDATE customs_batch_rate_requests SET sent = sent - 31 WHERE request = 1"
            )
        other.acquire()  # request 4 goes: request 1 counts as answered when it went stale
    finally:
        other.close()


def test_another_key_has_its_own_limit_and_no_key_is_stored(postgres_url: str) -> None:
    first, other = _limiter(postgres_url), _limiter(postgres_url, key="another-key")
    try:
        for _ in range(10):
            first.take_slot()
        slot, now = other.take_slot()
        assert slot - now <= 0.01  # not behind the first key's ten slots
    finally:
        first.close()
        other.close()
    with psycopg.connect(postgres_url) as connection:
        rows = connection.execute("SELECT * FROM customs_batch_rate_budgets").fetchall()
    assert {row[0] for row in rows} == {key_fingerprint(KEY), key_fingerprint("another-key")}
    assert KEY not in repr(rows) and "another-key" not in repr(rows)


def test_a_429_in_one_process_holds_back_the_others(postgres_url: str) -> None:
    told, other = _limiter(postgres_url), _limiter(postgres_url)
    try:
        told.pause(5.0)
        assert other.acquire() >= 4.9  # the other process waits too
    finally:
        told.close()
        other.close()


def test_without_the_database_a_process_keeps_the_limit_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    waits: list[float] = []
    limiter = SharedRateLimiter(
        LIMIT,
        "postgresql://nobody:pw-Hidden@127.0.0.1:1/none",
        key_fingerprint(KEY),
        clock=lambda: 100.0,  # no time passes: the second request must wait its interval
        sleep=waits.append,
    )
    with caplog.at_level(logging.WARNING, logger="customs_batch.state"):
        limiter.acquire()
        limiter.acquire()
    assert waits == [pytest.approx(LIMIT.spacing)]  # the local spacing, between the two
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "the shared rate limit is out of reach" in warnings[0]
    assert "pw-Hidden" not in warnings[0]


def test_connect_shares_the_limit_only_for_a_postgres_state(
    tmp_path: Path, postgres_url: str
) -> None:
    (tmp_path / "customs-batch.yaml").write_text(
        "environments:\n"
        "  shared:\n"
        "    base_url: https://api.customs.example\n"
        "    api_key_env: KEY\n"
        "    rate_limit: 100/minute\n"
        "    state: {backend: postgres, url_env: STATE_URL}\n"
        "  alone:\n"
        "    base_url: https://api.customs.example\n"
        "    api_key_env: KEY\n"
        "    rate_limit: 100/minute\n"
    )
    project = load_project(tmp_path)
    environ = {"KEY": KEY, "STATE_URL": postgres_url}
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={}))
    shared, alone = project.environment("shared"), project.environment("alone")
    with connect(shared, environ=environ, transport=transport) as client:
        limiter = client.sender.rate_limiter
        assert isinstance(limiter, SharedRateLimiter)
        assert limiter.fingerprint == key_fingerprint(KEY)
        limiter.close()
    with connect(alone, environ=environ, transport=transport) as client:
        assert type(client.sender.rate_limiter) is RateLimiter
    assert rate_limit_note(shared) is None
    note = rate_limit_note(alone)
    assert note and "holds per process" in note and "100/minute" in note
