"""Notifications at the end of an apply (an environment's ``notify:``), received by a local
HTTP server through Apprise's ``json://`` URLs, against the built-in emulator in-process.

The emulator runs on a clock the test holds still, with no processing time: a departure
whose commercial reference starts with INVALID- is ``invalid`` at the first look, so
``apply --wait`` learns it without waiting.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from customs_batch.client import CustomsClient
from customs_batch.commands import _notify
from customs_batch.environments import SANDBOX_KEY, _connect
from customs_batch.environments._environment import Environment
from customs_batch.sandbox import InProcessTransport, create_app
from customs_batch.sandbox.faults import parse_faults
from customs_batch.sandbox.seed import builtin_seed_text, parse_seed
from customs_batch.state import LocalBackend, RecordStatus
from tests.cli.conftest import run
from tests.e2e import batches
from tests.sandbox.conftest import FakeClock

URLS_ENV = "CUSTOMS_BATCH_NOTIFY_URLS"
REJECTED = "DepartureDeclaration/dep-e2e-01"


class Receiver:
    """A webhook on 127.0.0.1: every JSON body posted to it, in order."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # the name http.server calls
                length = int(self.headers["Content-Length"])
                received.append({"path": self.path, **json.loads(self.rfile.read(length))})
                self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass  # nothing on stderr: the tests read it

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def customs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local environment's emulator in-process, deciding every departure at once."""
    emulate(monkeypatch, faults="")


def emulate(monkeypatch: pytest.MonkeyPatch, *, faults: str) -> None:
    seed = parse_seed(builtin_seed_text(), "seed.yaml")

    def transport(environment: Environment) -> httpx.BaseTransport:
        environment.state_dir.mkdir(parents=True, exist_ok=True)
        app = create_app(
            seed=seed,
            db_path=environment.sandbox_db,
            rate_limit=None,
            processing_seconds=0.0,
            clock=FakeClock(),
            faults=parse_faults(faults),
            fault_seed=1,
        )
        return InProcessTransport(app)

    monkeypatch.setattr(_connect, "local_transport", transport)


def configure(root: Path, notify: str | None) -> None:
    """customs-batch.yaml with the local environment's ``notify:`` block (none: no block)."""
    block = f"\n  local:\n    notify: {notify}" if notify else " {}"
    (root / "customs-batch.yaml").write_text(f"environments:{block}\n", encoding="utf-8")


def departures(root: Path, *, rejected: bool) -> None:
    (root / "manifests").mkdir(exist_ok=True)
    text = batches.departures(2)
    if rejected:
        text = text.replace("E2E-0001", "INVALID-0001")
    (root / "manifests" / "departures.yaml").write_text(text, encoding="utf-8")


def test_a_departure_customs_rejects_sends_one_notification_naming_it(
    tmp_path: Path,
    customs: None,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure(tmp_path, f"{{urls_env: {URLS_ENV}}}")
    departures(tmp_path, rejected=True)
    monkeypatch.setenv(URLS_ENV, receiver.url)
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/declarations")
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")

    code, out, err = run(capsys, "apply", "--auto-approve", "--wait")

    assert code == 1, out + err
    assert "warning" not in err
    (message,) = receiver.received
    assert message["path"] == "/hook"
    assert message["title"] == "customs-batch apply on local: 1 rejected by customs"
    body = message["message"]
    assert "Environment: local" in body
    assert "Ended: finished with failures (exit code 1)" in body
    assert "Operations: 1 succeeded, 1 failed" in body
    assert f"Rejected by customs (1):\n  {REJECTED} (invalid)" in body
    assert "DepartureDeclaration/dep-e2e-02" not in body  # accepted: not a problem
    assert "`customs-batch status --env local`" in body
    assert "CI run: https://github.com/acme/declarations/actions/runs/4242" in body
    assert SANDBOX_KEY not in json.dumps(message)


def test_on_end_sends_one_notification_at_the_end_of_a_clean_run(
    tmp_path: Path,
    customs: None,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure(tmp_path, f"{{urls_env: {URLS_ENV}, on: [end]}}")
    departures(tmp_path, rejected=False)
    monkeypatch.setenv(URLS_ENV, receiver.url)

    code, out, err = run(capsys, "apply", "--auto-approve", "--wait")

    assert code == 0, out + err
    (message,) = receiver.received
    assert message["title"] == "customs-batch apply on local: done"
    assert message["type"] == "success"
    assert "Ended: done (exit code 0)" in message["message"]
    assert "Operations: 2 succeeded, 0 failed" in message["message"]
    assert "CI run" not in message["message"]

    # The next run has nothing to do: its end is sent too.
    assert run(capsys, "apply", "--auto-approve", "--wait")[0] == 0
    assert receiver.received[1]["title"] == "customs-batch apply on local: nothing to apply"
    assert len(receiver.received) == 2


def test_a_clean_run_sends_nothing_by_default(
    tmp_path: Path,
    customs: None,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure(tmp_path, f"{{urls_env: {URLS_ENV}}}")  # on: rejection, needs-decision
    departures(tmp_path, rejected=False)
    monkeypatch.setenv(URLS_ENV, receiver.url)
    assert run(capsys, "apply", "--auto-approve", "--wait")[0] == 0
    assert receiver.received == []


def test_without_a_notify_block_nothing_is_sent(
    tmp_path: Path,
    customs: None,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure(tmp_path, None)
    departures(tmp_path, rejected=True)
    monkeypatch.setenv(URLS_ENV, receiver.url)
    code, _, err = run(capsys, "apply", "--auto-approve", "--wait")
    assert code == 1
    assert receiver.received == [] and "notification" not in err


def test_an_undeliverable_notification_is_a_warning_and_changes_nothing(
    tmp_path: Path,
    customs: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure(tmp_path, f"{{urls_env: {URLS_ENV}}}")
    departures(tmp_path, rejected=True)
    # A port that is bound and never listens: every connection to it is refused.
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    try:
        port = closed.getsockname()[1]
        monkeypatch.setenv(URLS_ENV, f"json://hook-user:tok-3c1b9e@127.0.0.1:{port}/hook")
        code, out, err = run(capsys, "apply", "--auto-approve", "--wait")
    finally:
        closed.close()

    assert code == 1, "the exit code of a rejection, as without notifications"
    assert (
        f"warning: the notification to JSON (URL 1 of ${URLS_ENV}) could not be delivered"
    ) in err
    assert "tok-3c1b9e" not in out + err and str(port) not in err
    # Nothing is lost: the rejection is recorded, and plan says so.
    code, out, _ = run(capsys, "plan")
    assert code == 1 and f"rejected       {REJECTED}" in out


def test_an_unset_variable_or_an_unknown_url_is_a_warning(
    tmp_path: Path,
    customs: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure(tmp_path, f"{{urls_env: {URLS_ENV}}}")
    departures(tmp_path, rejected=True)
    code, _, err = run(capsys, "apply", "--auto-approve", "--wait")
    assert code == 1
    assert f"warning: no notification sent: ${URLS_ENV}" in err

    (tmp_path / "manifests" / "departures.yaml").write_text(
        batches.departures(3).replace("E2E-0003", "INVALID-0003"), encoding="utf-8"
    )
    monkeypatch.setenv(URLS_ENV, "nosuchservice://secret-9f2d@example.invalid/x")
    code, _, err = run(capsys, "apply", "--auto-approve", "--wait")
    assert code == 1
    assert f"warning: URL 1 of ${URLS_ENV} is not a notification URL Apprise knows" in err
    assert "secret-9f2d" not in err


def test_a_needs_decision_sends_a_notification_with_what_to_do(
    project: Path,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = "DepartureDeclaration/dep-rtm-ant-0002"
    configure(project, f"{{urls_env: {URLS_ENV}}}")
    monkeypatch.setenv(URLS_ENV, receiver.url)
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    assert receiver.received == []  # a clean run: not asked for
    # Sent, its answer lost, long enough ago that any answer would have come.
    long_ago = (datetime.now(UTC) - timedelta(minutes=1)).isoformat(timespec="milliseconds")
    with LocalBackend(project / ".customs-batch" / "local").open("test") as session:
        record = session.state.resources[address]
        session.record(
            record.with_changes(status=RecordStatus.UNKNOWN, outputs={}, updated_at=long_ago)
        )

    code, out, err = run(capsys, "apply", "--auto-approve")

    assert code == 1, out + err
    (message,) = receiver.received
    assert message["title"] == "customs-batch apply on local: 1 needs a decision"
    assert message["type"] == "failure"
    body = message["message"]
    assert f"Outcome unknown, needs a decision (1):\n  {address}" in body
    assert "`customs-batch state adopt ADDRESS ID --env local`" in body
    assert "`customs-batch plan --env local`" in body


def test_a_lost_update_with_another_object_at_its_id_is_not_told_to_adopt(
    project: Path,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Found in review: the words said `state adopt ADDRESS ID` for an update whose answer
    # was lost and whose ID another object holds now, which adopt refuses.
    address = "TemplateGroup/eu-road"
    configure(project, f"{{urls_env: {URLS_ENV}, on: [needs-decision]}}")
    monkeypatch.setenv(URLS_ENV, receiver.url)
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    with LocalBackend(project / ".customs-batch" / "local").open("test") as session:
        record = session.state.resources[address]  # as apply notes it
        session.record(
            record.with_changes(
                status=RecordStatus.UNKNOWN,
                operation="update-template-group",
                not_found_at="2026-11-27T12:00:00.000Z",
                found_instead="code 'OTHER' there, 'EU-ROAD' recorded",
            )
        )

    code, out, err = run(capsys, "apply", "--auto-approve")

    assert code == 1, out + err
    (message,) = receiver.received
    body = message["message"]
    assert f"Outcome unknown, needs a decision (1):\n  {address}" in body
    assert "state adopt" not in body
    said = " ".join(body.split())
    assert "Adopting is refused (an update creates no object)" in said
    assert "`customs-batch state forget ADDRESS --env local`, then `customs-batch import" in said


def test_an_object_refresh_found_gone_sends_a_needs_decision_naming_the_way_out(
    project: Path,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = "DepartureDeclaration/dep-rtm-ant-0002"
    configure(project, f"{{urls_env: {URLS_ENV}, on: [needs-decision]}}")
    monkeypatch.setenv(URLS_ENV, receiver.url)
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    with LocalBackend(project / ".customs-batch" / "local").open("test") as session:
        record = session.state.resources[address]  # as refresh notes it
        session.record(record.with_changes(not_found_at="2026-11-27T12:00:00.000Z"))

    code, out, err = run(capsys, "apply", "--auto-approve")

    assert code == 1, out + err
    (message,) = receiver.received
    assert message["title"] == "customs-batch apply on local: 1 no longer found at the service"
    body = message["message"]
    assert f"No longer found at the service, needs a decision (1):\n  {address}" in body
    assert "Outcome unknown" not in body and "state adopt" not in body
    assert "`customs-batch state rm --gone ADDRESS`" in body


def test_a_message_names_the_first_20_and_counts_the_rest(
    tmp_path: Path,
    customs: None,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure(tmp_path, f"{{urls_env: {URLS_ENV}}}")
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "departures.yaml").write_text(
        batches.departures(23).replace("E2E-", "INVALID-"), encoding="utf-8"
    )
    monkeypatch.setenv(URLS_ENV, receiver.url)
    assert run(capsys, "apply", "--auto-approve", "--wait")[0] == 1
    (message,) = receiver.received
    assert message["title"] == "customs-batch apply on local: 23 rejected by customs"
    body = message["message"]
    assert "DepartureDeclaration/dep-e2e-20 (invalid)" in body
    assert "dep-e2e-21" not in body
    assert "  … and 3 more" in body


def test_a_run_stopped_by_its_time_budget_tells_of_the_rejection_and_the_command_to_go_on(
    tmp_path: Path,
    customs: None,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure(tmp_path, f"{{urls_env: {URLS_ENV}}}")
    departures(tmp_path, rejected=True)
    monkeypatch.setenv(URLS_ENV, receiver.url)
    assert run(capsys, "apply", "--auto-approve", "--wait")[0] == 1
    # One request a second: a budget of one second fits not even the next creation.
    (tmp_path / "customs-batch.yaml").write_text(
        f"environments:\n  local:\n    rate_limit: 1/second\n    notify: {{urls_env: {URLS_ENV}}}\n",
        encoding="utf-8",
    )
    (tmp_path / "manifests" / "departures.yaml").write_text(
        batches.departures(3).replace("E2E-0001", "INVALID-0001"), encoding="utf-8"
    )

    code, _, err = run(capsys, "apply", "--auto-approve", "--time-budget", "1s")

    assert code == 4, err
    _, second = receiver.received
    assert second["title"] == "customs-batch apply on local: 1 rejected by customs"
    body = second["message"]
    assert f"Rejected by customs (1):\n  {REJECTED}\n" in body  # known from the plan
    assert "Ended: time budget used up (exit code 4)" in body
    assert "Time budget of 1s used up: 1 operation(s) not started" in body
    assert "customs-batch apply --auto-approve --time-budget 1s" in body


def test_a_request_left_without_an_answer_is_a_needs_decision(
    tmp_path: Path,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Every answer is lost after the service acted: the submission's outcome is unknown.
    emulate(monkeypatch, faults="5xx-after=1")
    # The list of declarations made since the state's last write, which apply reads before
    # it submits (a lost run's), would fail too, and hold the departure unsent: here it is
    # taken as empty, so that the submission leaves.
    monkeypatch.setattr(CustomsClient, "iter_transit", lambda self, filters=None: iter(()))
    configure(tmp_path, f"{{urls_env: {URLS_ENV}}}")
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "departures.yaml").write_text(batches.departures(1), encoding="utf-8")
    monkeypatch.setenv(URLS_ENV, receiver.url)

    code, out, err = run(capsys, "apply", "--auto-approve")

    assert code == 1, out + err
    assert "outcome unknown" in out + err
    (message,) = receiver.received
    assert message["title"] == "customs-batch apply on local: 1 needs a decision"
    body = message["message"]
    assert "Outcome unknown, needs a decision (1):\n  DepartureDeclaration/dep-e2e-01" in body
    assert "Operations: 0 succeeded, 1 failed" in body


class Trickler:
    """A webhook that takes the request, then answers a byte every 50 ms until released: each
    read of the client gets a byte, so no socket timeout fires. It gives up after 600 bytes
    (30 s) and closes, the answer cut short, so that a client with no deadline of its own
    fails instead of hanging the tests."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.listener.getsockname()[1]}/hook"

    def _serve(self) -> None:
        connection, _ = self.listener.accept()
        with connection:
            connection.recv(65536)
            self.asked.set()
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            for _ in range(600):
                if self.release.wait(0.05):
                    break
                connection.sendall(b"x")

    def close(self) -> None:
        self.release.set()
        self.listener.close()
        self.thread.join()


def test_a_service_that_answers_too_slowly_is_given_up_at_the_deadline(
    tmp_path: Path,
    customs: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure(tmp_path, f"{{urls_env: {URLS_ENV}, on: [end]}}")
    departures(tmp_path, rejected=True)
    trickler = Trickler()
    monkeypatch.setattr(_notify, "DEADLINE_SECONDS", 0.5)
    monkeypatch.setenv(URLS_ENV, trickler.url)
    try:
        # The answer does not end while the test holds it: only the deadline ends the run.
        code, out, err = run(capsys, "apply", "--auto-approve", "--wait")
    finally:
        trickler.close()

    assert code == 1, "the exit code of the rejection, as without notifications"
    assert (
        f"warning: the notification to JSON (URL 1 of ${URLS_ENV}) could not be delivered "
        "(no answer within 0.5 s); the run is recorded and its exit code is unchanged"
    ) in err
    code, out, _ = run(capsys, "plan")
    assert code == 1 and f"rejected       {REJECTED}" in out
