"""apply stops the moment its state lock is broken: no request after it, no state written."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx

from customs_batch.client import CustomsClient, Sender
from customs_batch.execution.apply import apply_plan
from customs_batch.planning import plan_changes
from customs_batch.state import LocalBackend, ResourceRecord
from customs_batch.state.backend import LocalSession
from customs_batch.state.lock import LockLostError

from ..planning.helpers import movement
from .conftest import Emulator

MOVEMENTS = [movement(f"m{n}", n, quantity=n + 1) for n in range(3)]


def _break(backend: LocalBackend) -> None:
    """What `force-unlock --force` from another machine does to the lock."""
    backend.lock_path.unlink()
    (backend.directory / "state.lock.info").unlink()


class _Posts(httpx.BaseTransport):
    """Counts movement POSTs; breaks the lock while the first one is at the service."""

    def __init__(self, inner: httpx.BaseTransport, backend: LocalBackend | None) -> None:
        self.inner = inner
        self.backend = backend
        self.posts = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            self.posts += 1
            if self.backend is not None and self.posts == 1:
                _break(self.backend)
        return self.inner.handle_request(request)


def _client(transport: httpx.BaseTransport) -> CustomsClient:
    sender = Sender("http://sandbox.test", "sandbox-key", transport=transport)
    return CustomsClient(sender)


def test_a_lock_broken_while_a_request_is_out_stops_the_run_before_the_next(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    posts = _Posts(emulator.transport, backend)
    with _client(posts) as client, backend.open("apply") as session:
        plan = plan_changes(MOVEMENTS, session.state)
        report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    assert isinstance(report.fatal, LockLostError)
    assert "the state lock was broken while this apply ran" in str(report.fatal)
    assert posts.posts == 1 and len(emulator.movements()) == 1
    assert not backend.state_path.exists()
    # The intent of the request that was out is in the journal, its answer is not.
    assert backend.read().resources["Movement/m0"].status.value == "pending"


class _BreakingSession(LocalSession):
    """Breaks the lock right after the first intent is recorded: the instant between the
    record of an intent and the send of its request."""

    def record(self, record: ResourceRecord) -> None:
        super().record(record)
        if record.status.value == "pending" and self.backend.lock_path.exists():
            _break(self.backend)


def test_a_lock_broken_between_an_intent_and_its_request_sends_nothing(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    posts = _Posts(emulator.transport, None)
    opened = backend.open("apply")
    session = _BreakingSession(backend, opened.state, opened._lock, opened.lock_info)
    with _client(posts) as client, session:
        plan = plan_changes(MOVEMENTS, session.state)
        report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    assert isinstance(report.fatal, LockLostError)
    assert posts.posts == 0 and emulator.movements() == []


class _FirstPostUnavailable(httpx.BaseTransport):
    """Answers the first movement POST 503 (before any effect), forwards the rest."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.posts = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            self.posts += 1
            if self.posts == 1:
                return httpx.Response(503, json={"statusCode": 503, "message": "busy"})
        return self.inner.handle_request(request)


def test_a_lock_broken_during_a_retrys_backoff_keeps_the_retry_unsent(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    posts = _FirstPostUnavailable(emulator.transport)
    # The backoff before the retry is where the lock is broken (it can last seconds).
    sender = Sender(
        "http://sandbox.test", "sandbox-key", transport=posts, sleep=lambda _: _break(backend)
    )
    with CustomsClient(sender) as client, backend.open("apply") as session:
        plan = plan_changes(MOVEMENTS[:1], session.state)
        report = apply_plan(plan, session, client, parallelism=1, stop=threading.Event())
    assert isinstance(report.fatal, LockLostError)
    assert posts.posts == 1, "the retry left after the lock was broken"
    assert emulator.movements() == []
    assert backend.read().resources["Movement/m0"].status.value == "pending"
    assert sender.before_send is None  # the check ends with the apply
