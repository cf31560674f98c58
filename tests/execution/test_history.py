"""What apply writes to the history: an entry per request with the digest of the exact body
sent, the answer's status, IDs and errors; an unanswered request says so; the request's
entry is on disk before it leaves, and an answer's before its outcome."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from customs_batch.client import NO_RETRIES, CustomsClient, Sender
from customs_batch.commands.history import history_rows
from customs_batch.errors import StateError
from customs_batch.execution.apply import ApplyReport, apply_plan
from customs_batch.execution.history import RunHistory, manifests_commit, operator
from customs_batch.kinds import Kind
from customs_batch.planning import plan_changes
from customs_batch.sensitive import Sealer
from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord, ServiceFailure
from customs_batch.state.history import LocalHistory, verify

from ..client.bodies import departure
from ..planning.helpers import doc, movement
from .conftest import Emulator

GROUP = {"name": "EU road", "code": "EU-ROAD", "companyId": 1}
OPERATOR = {"user": "alice", "host": "ci-7", "ci": None}
SEALER = Sealer(lambda: "sandbox-key")


class _Capture(httpx.BaseTransport):
    """Forwards every request, keeping the SHA-256 of each body it carried."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.sent: list[tuple[str, str, str]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        if body:
            self.sent.append((request.method, request.url.path, hashlib.sha256(body).hexdigest()))
        return self.inner.handle_request(request)


def _apply(
    backend: LocalBackend, docs: list[Any], transport: httpx.BaseTransport
) -> tuple[ApplyReport, LocalHistory]:
    store = LocalHistory(backend.directory)
    sender = Sender(
        "http://sandbox.test", "sandbox-key", transport=transport, retry_policy=NO_RETRIES
    )
    with CustomsClient(sender) as client, backend.open("apply") as session:
        plan = plan_changes(docs, session.state)
        history = RunHistory(store, OPERATOR, "c0ffee" * 6 + "c0ff", SEALER)
        report = apply_plan(
            plan, session, client, parallelism=4, stop=threading.Event(), history=history
        )
    store.close()
    return report, store


def test_each_request_is_kept_with_the_digest_of_its_exact_body_and_the_answer(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    capture = _Capture(emulator.transport)
    bad = movement("bad", 3, hawb="hawb_a2")
    bad = doc(Kind.MOVEMENT, "bad", {**bad.spec, "partyId": None}, 3)
    docs = [
        doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0),
        doc(Kind.DEPARTURE_DECLARATION, "d", departure(), 1),
        movement("m", 2),
        bad,
    ]
    report, store = _apply(backend, docs, capture)
    assert report.count(report.outcomes[0].status) >= 1
    rows = {row.address: row for row in history_rows(store)}
    assert set(rows) == {"TemplateGroup/g", "DepartureDeclaration/d", "Movement/m", "Movement/bad"}
    sent = {SEALER.body_digest(digest) for _, _, digest in capture.sent}
    for row in rows.values():
        assert row.run == rows["TemplateGroup/g"].run and row.operator == OPERATOR
        assert row.commit == "c0ffee" * 6 + "c0ff"
        assert [r["bodyDigest"] for r in row.requests if r["bodyDigest"]][-1] in sent
    state = backend.read().resources
    assert rows["TemplateGroup/g"].status == 201 and rows["TemplateGroup/g"].ids == {
        "id": state["TemplateGroup/g"].outputs["id"]
    }
    declaration = rows["DepartureDeclaration/d"]
    assert declaration.ids == {
        "declarationId": state["DepartureDeclaration/d"].outputs["declarationId"]
    }
    moved = rows["Movement/m"]
    assert moved.idempotency_key == state["Movement/m"].idempotency_key is not None
    assert (
        moved.ids is not None
        and moved.ids["movementId"] == state["Movement/m"].outputs["movementId"]
    )
    refused = rows["Movement/bad"]
    assert refused.status == 400 and "partyId" in json.dumps(refused.errors)
    assert refused.failure
    assert verify(store.entries()).ok
    assert b"sandbox-key" not in store.path.read_bytes()


class _TimesOut(httpx.BaseTransport):
    """Movement POSTs reach the service, but their answer never comes back."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method == "POST" and "movement" in request.url.path:
            raise httpx.ReadTimeout("no answer", request=request)
        return response


def test_a_request_whose_answer_never_came_is_kept_as_unknown(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    report, store = _apply(backend, [movement("m", 0)], _TimesOut(emulator.transport))
    assert not report.ok
    assert backend.read().resources["Movement/m"].status is RecordStatus.UNKNOWN
    [row] = history_rows(store)
    assert row.status == "unknown" and row.failure and "no answer in time" in row.failure
    assert row.requests[0]["bodyDigest"] and row.requests[0]["status"] is None


def test_a_request_entry_without_its_answer_shows_the_request_unanswered(tmp_path: Path) -> None:
    # What a run killed while its request was out leaves: the request's entry only.
    store = LocalHistory(tmp_path)
    plan = plan_changes([movement("m", 0)], LocalBackend(tmp_path / "s").read())
    RunHistory(store, OPERATOR, "", SEALER).requested(plan.changes[0], "key-1")
    store.close()
    [row] = history_rows(store)
    assert (row.address, row.status, row.idempotency_key) == ("Movement/m", "unknown", "key-1")


def test_a_dropped_record_is_an_entry_of_its_own(tmp_path: Path, emulator: Emulator) -> None:
    backend = LocalBackend(tmp_path)
    failure = ServiceFailure(400, "bad", {})
    with backend.open("test") as session:
        session.record(
            ResourceRecord(
                "Movement/gone", RecordStatus.FAILED, "create-movement", {}, error=failure
            )
        )
    report, store = _apply(backend, [], emulator.transport)
    assert report.ok
    [row] = history_rows(store)
    assert (row.address, row.event, row.requests) == ("Movement/gone", "dropped", ())


class _DiskWatch(httpx.BaseTransport):
    """Tracks what of the journal and the history each fsync made durable; checks, as each
    request leaves, that its history entry is durable, and at each fsync of the journal,
    that every outcome in it has its answer durable in the history."""

    def __init__(self, inner: httpx.BaseTransport, journal: Path, history: Path) -> None:
        self.inner = inner
        self.paths = {journal: 0, history: 0}
        self.journal, self.history = journal, history
        self.requests_on_disk: list[bool] = []
        self.answers_on_disk: list[bool] = []
        self._guard = threading.Lock()

    def _durable(self, path: Path) -> list[dict[str, Any]]:
        data = path.read_bytes()[: self.paths[path]] if path.exists() else b""
        return [json.loads(line) for line in data.splitlines()]

    def fsync(self, real: Any, fd: int) -> None:
        size = os.fstat(fd).st_size
        real(fd)
        name = Path(os.readlink(f"/proc/self/fd/{fd}"))
        with self._guard:
            if name in self.paths:
                self.paths[name] = max(self.paths[name], size)
            if name == self.journal:
                answered = {
                    e["address"] for e in self._durable(self.history) if e["event"] == "answer"
                }
                for line in self._durable(self.journal):
                    if line["record"] and line["record"]["status"] != "pending":
                        self.answers_on_disk.append(line["address"] in answered)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            key = request.headers["Idempotency-Key"]
            with self._guard:
                entries = self._durable(self.history)
            self.requests_on_disk.append(
                any(e["event"] == "request" and e["idempotencyKey"] == key for e in entries)
            )
        return self.inner.handle_request(request)


def test_the_history_is_on_disk_before_each_request_leaves_and_before_each_outcome(
    tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = LocalBackend(tmp_path)
    watch = _DiskWatch(
        emulator.transport, backend.journal_path.resolve(), (tmp_path / "history.jsonl").resolve()
    )
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: watch.fsync(real, fd))
    report, _ = _apply(backend, [movement(f"m{n}", n) for n in range(8)], watch)
    assert report.ok, report.outcomes
    assert watch.requests_on_disk == [True] * 8
    assert watch.answers_on_disk and all(watch.answers_on_disk)


def test_the_operator_names_the_ci_run_of_github_actions_and_gitlab() -> None:
    github = operator(
        {
            "GITHUB_RUN_ID": "42",
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_REPOSITORY": "acme/declarations",
            "GITHUB_SHA": "abc",
            "GITHUB_ACTOR": "alice",
        }
    )
    assert github["ci"] == {
        "system": "github-actions",
        "runId": "42",
        "url": "https://github.example/acme/declarations/actions/runs/42",
        "commit": "abc",
        "actor": "alice",
    }
    gitlab = operator(
        {
            "CI_JOB_ID": "7",
            "CI_JOB_URL": "https://gitlab.example/j/7",
            "CI_COMMIT_SHA": "def",
            "GITLAB_USER_LOGIN": "bob",
        }
    )
    assert gitlab["ci"] == {
        "system": "gitlab-ci",
        "runId": "7",
        "url": "https://gitlab.example/j/7",
        "commit": "def",
        "actor": "bob",
    }
    assert operator({})["ci"] is None and operator({})["user"]


def test_the_commit_is_empty_outside_git_and_without_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert manifests_commit(tmp_path) == ""  # not a work tree
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert manifests_commit(tmp_path) == ""  # no git at all


class _EchoesTheKey(httpx.BaseTransport):
    """Refuses every POST with an error body that quotes the request's Authorization."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        said = {"message": f"bad request from {request.headers['Authorization']}", "errors": []}
        return httpx.Response(400, json=said)


def test_the_api_key_in_an_error_body_is_not_kept(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    report, store = _apply(backend, [movement("m", 0)], _EchoesTheKey())
    assert not report.ok
    [row] = history_rows(store)
    assert row.status == 400 and row.errors == {
        "message": "bad request from Bearer ***",
        "errors": [],
    }
    assert b"sandbox-key" not in store.path.read_bytes()


def test_a_moved_record_is_an_entry_of_its_own_with_the_old_name(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    assert _apply(backend, [movement("mov-1", 0)], emulator.transport)[0].ok
    report, store = _apply(backend, [movement("mov-renamed", 0)], emulator.transport)
    assert report.ok and len(emulator.movements()) == 1
    first, moved = history_rows(store)
    assert (first.address, first.status) == ("Movement/mov-1", 201)
    assert (moved.address, moved.event, moved.moved_from) == (
        "Movement/mov-renamed",
        "moved",
        "Movement/mov-1",
    )
    assert moved.ids == first.ids and moved.requests == ()
    assert verify(store.entries()).ok


class _FullAfter(LocalHistory):
    """A history whose disk fills once ``entries`` entries are written."""

    def __init__(self, directory: Path, entries: int) -> None:
        super().__init__(directory)
        self.room = entries

    def append(self, fields: Any) -> int:
        if self.room == 0:
            raise StateError("history.jsonl: cannot write (No space left on device, ENOSPC)")
        self.room -= 1
        return super().append(fields)


def test_a_history_that_cannot_be_written_stops_the_run_but_the_outcome_is_kept(
    tmp_path: Path, emulator: Emulator
) -> None:
    backend = LocalBackend(tmp_path)
    store = _FullAfter(tmp_path, entries=1)  # room for the first request, not its answer
    docs = [movement("m0", 0), movement("m1", 1)]
    with backend.open("apply") as session:
        plan = plan_changes(docs, session.state)
        report = apply_plan(
            plan,
            session,
            emulator.client,
            parallelism=1,
            stop=threading.Event(),
            history=RunHistory(store, OPERATOR, "", SEALER),
        )
    store.close()
    assert report.fatal is not None and "No space left" in report.fatal.message
    assert len(emulator.movements()) == 1  # nothing sent after the history failed
    records = backend.read().resources
    assert records["Movement/m0"].status is RecordStatus.APPLIED
    assert "Movement/m1" not in records
    [row] = history_rows(store)
    assert (row.address, row.status) == ("Movement/m0", "unknown")


class _EchoesWhatItWasSent(httpx.BaseTransport):
    """Refuses every POST quoting the request's Authorization and its access code, in the
    message and in the errors."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        code = json.loads(request.read())["DeclarationGuarantees"][0]["accessCode"]
        said = {
            "message": f"access code {code} refused for {request.headers['Authorization']}",
            "errors": [{"field": "accessCode", "value": code}],
        }
        return httpx.Response(400, json=said)


def test_an_access_code_and_the_key_quoted_by_the_service_are_never_kept(
    tmp_path: Path,
) -> None:
    spec = departure()
    spec["DeclarationGuarantees"][0]["accessCode"] = "Q7Z9"
    backend = LocalBackend(tmp_path, sealer=Sealer(lambda: "sandbox-key"))
    report, store = _apply(
        backend, [doc(Kind.DEPARTURE_DECLARATION, "d", spec, 0)], _EchoesWhatItWasSent()
    )
    assert not report.ok
    [outcome] = report.outcomes
    assert outcome.detail == "access code (sensitive) refused for Bearer ***"
    [row] = history_rows(store)
    assert row.errors == {
        "message": "access code (sensitive) refused for Bearer ***",
        "errors": [{"field": "accessCode", "value": "(sensitive)"}],
    }
    record = backend.read().resources["DepartureDeclaration/d"]
    assert record.error is not None
    assert record.error.message == "access code (sensitive) refused for Bearer ***"
    for path in tmp_path.iterdir():
        if path.is_file():
            data = path.read_bytes()
            assert b"Q7Z9" not in data and b"sandbox-key" not in data, path.name


class _AlwaysRateLimited(httpx.BaseTransport):
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        said = {"statusCode": 429, "message": "Too Many Requests"}
        return httpx.Response(429, json=said, headers={"Retry-After": "0"})


def test_a_request_rate_limited_at_every_attempt_is_not_sent_not_refused(
    tmp_path: Path,
) -> None:
    # 429 means the service processed nothing: the intent is taken back, the next run sends
    # it, and nothing calls it refused by the service.
    backend = LocalBackend(tmp_path)
    report, _ = _apply(backend, [movement("m", 0)], _AlwaysRateLimited())
    [outcome] = report.outcomes
    assert not report.ok
    assert outcome.detail.startswith("not sent, rate limited: the service answered 429")
    assert "the next run sends it" in outcome.detail
    assert "Movement/m" not in backend.read().resources


def test_a_group_adopted_after_a_409_is_an_entry_with_its_id(
    tmp_path: Path, emulator: Emulator
) -> None:
    # The history is the evidence of what the state records: the 409 alone said refused.
    made = emulator.http.post("/v1/declaration-templates/groups", json=GROUP)
    made.raise_for_status()
    group_id = made.json()["id"]
    backend = LocalBackend(tmp_path)
    report, store = _apply(backend, [doc(Kind.TEMPLATE_GROUP, "g", GROUP, 0)], emulator.transport)
    assert report.ok, report.outcomes
    answer, adopted = history_rows(store)
    assert (answer.event, answer.status) == ("request", 409)
    assert (adopted.event, adopted.address, adopted.ids) == (
        "adopted",
        "TemplateGroup/g",
        {"id": group_id},
    )
    assert backend.read().resources["TemplateGroup/g"].outputs["id"] == group_id
    assert verify(store.entries()).ok


def test_a_body_holding_an_access_code_is_kept_only_as_a_digest_keyed_by_the_api_key(
    tmp_path: Path, emulator: Emulator
) -> None:
    # A plain SHA-256 of the body gave the code away: with the rest of the body (`render
    # --format json` prints it, the code as (sensitive)) trying the 10,000 codes finds it.
    spec = departure()
    spec["DeclarationGuarantees"][0]["accessCode"] = "4821"
    capture = _Capture(emulator.transport)
    report, store = _apply(
        LocalBackend(tmp_path), [doc(Kind.DEPARTURE_DECLARATION, "d", spec, 0)], capture
    )
    assert report.ok, report.outcomes
    [(_, _, plain)] = capture.sent
    kept = store.path.read_text()
    assert plain not in kept
    [row] = history_rows(store)
    [attempt] = row.requests
    assert "bodySha256" not in attempt
    assert attempt["bodyDigest"] == SEALER.body_digest(plain)
    assert attempt["bodyDigest"] != Sealer(lambda: "another key").body_digest(plain)
    assert verify(store.entries()).ok


class _JournalFull:
    """A state session whose journal cannot take a record (its disk full), the history's
    file elsewhere, or one record smaller than the journal's."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def record(self, record: ResourceRecord) -> None:
        raise StateError("journal.jsonl: cannot write (No space left on device, ENOSPC)")


def test_a_request_whose_intent_cannot_be_recorded_is_not_sent_in_the_history(
    tmp_path: Path, emulator: Emulator
) -> None:
    # Found probing: on a full disk, `history` listed as `unknown` (maybe sent) departure
    # submissions whose intents could not be written: they never left, and the next apply
    # sent each once. docs/state.md: `not-sent` when the request never left.
    backend = LocalBackend(tmp_path)
    store = LocalHistory(tmp_path)
    with backend.open("apply") as session:
        plan = plan_changes([movement("m0", 0)], session.state)
        report = apply_plan(
            plan,
            _JournalFull(session),
            emulator.client,
            parallelism=1,
            stop=threading.Event(),
            history=RunHistory(store, OPERATOR, "", SEALER),
        )
    store.close()
    assert report.fatal is not None and "No space left" in report.fatal.message
    assert emulator.movements() == []
    # It said "its outcome could not be recorded", which reads as sent.
    [outcome] = report.outcomes
    assert outcome.detail.startswith("not sent: its intent could not be recorded: journal")
    [row] = history_rows(store)
    assert (row.address, row.status) == ("Movement/m0", "not-sent")
    assert row.failure is not None and "No space left" in row.failure
    assert verify(store.entries()).ok
