"""What every state backend promises, checked the same way against each (local files and a
real PostgreSQL server): lineage and serial, a journal folded after a crash, torn writes
never acknowledged, one writer at a time with the holder named, and older versions read."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from customs_batch.errors import StateError
from customs_batch.state import RecordStatus, ResourceRecord, ServiceFailure, State
from customs_batch.state import file as state_file
from customs_batch.state.pg_tables import TABLES_VERSION, ensure_tables, tables_version
from tests.state.conftest import HOLD_SCRIPT, STATE_NAME, Backends


def _record(address: str, status: RecordStatus = RecordStatus.APPLIED) -> ResourceRecord:
    return ResourceRecord(address, status, "create", {"q": 1}, outputs={"id": 7})


def test_lineage_is_set_once_and_the_serial_counts_the_writes(backends: Backends) -> None:
    backend = backends.make()
    empty = backend.read()
    assert (empty.lineage, empty.serial, empty.resources) == ("", 0, {})

    refused = ResourceRecord(
        "Movement/b",
        RecordStatus.FAILED,
        "create",
        {"lane": "A", "rows": [1, 2]},
        idempotency_key="key-b",
        error=ServiceFailure(422, "bad lane", {"errors": [{"field": "lane"}]}),
        remote_errors=({"code": "E1"},),
        updated_at="2026-01-02T03:04:05Z",
    )
    with backend.open("apply") as session:
        session.record(_record("TemplateGroup/a"))
        session.record(refused)
    first = backend.read()
    assert first.serial == 1 and first.lineage
    assert first.resources == {"TemplateGroup/a": _record("TemplateGroup/a"), "Movement/b": refused}

    with backend.open("refresh"):
        pass  # nothing recorded: nothing written
    assert backend.read().serial == 1

    with backend.open("state rm") as session:
        session.forget("Movement/b")
    second = backend.read()
    assert (second.lineage, second.serial) == (first.lineage, 2)
    assert list(second.resources) == ["TemplateGroup/a"]


def test_what_record_acknowledged_is_readable_before_the_session_ends(
    backends: Backends,
) -> None:
    with backends.make().open("apply") as session:
        session.record(_record("Movement/a", RecordStatus.PENDING))
        seen = backends.make().read()  # another reader, while the run goes on
        assert seen.resources == {"Movement/a": _record("Movement/a", RecordStatus.PENDING)}
        assert seen.serial == 1  # what the state will be once this journal is folded


def test_the_end_of_a_run_is_told_from_a_fold_of_the_journal_a_reader_saw(
    backends: Backends,
) -> None:
    # A plan saved from a reader's view is current only when the state it is applied to
    # folded that very journal; the run still recording folds more, at the same serial.
    backend = backends.make()
    assert backend.read().journal == ""
    with backend.open("apply") as session:
        session.record(_record("Movement/a", RecordStatus.PENDING))
        during = backends.make().read()
        session.record(_record("Movement/a"))
        session.record(_record("Movement/b"))
    assert during.journal and during.serial == 1
    with backend.open("apply") as session:
        assert session.state.serial == 1
        assert session.state.journal == ""  # nothing folded here: that run folded it
    assert backend.read().journal == ""


def test_threads_recording_at_once_lose_nothing(backends: Backends) -> None:
    with backends.make().open("apply") as session:

        def work(lane: int) -> None:
            for number in range(25):
                session.record(_record(f"Movement/m-{lane}-{number}"))

        threads = [threading.Thread(target=work, args=(lane,)) for lane in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    state = backends.make().read()
    assert len(state.resources) == 200 and state.serial == 1


CRASH = """
session = backend.open("apply")
session.record(ResourceRecord("Movement/a", RecordStatus.APPLIED, "create", {}, {"movementId": "mov_1"}))
session.record(ResourceRecord("Movement/b", RecordStatus.PENDING, "create", {}, idempotency_key="key-b"))
print("recorded", flush=True)
os.kill(os.getpid(), 9)
"""


def test_a_session_killed_before_close_is_folded_by_the_next_open(backends: Backends) -> None:
    backend = backends.make()
    with backend.open("apply") as session:
        session.record(_record("TemplateGroup/a"))
    lineage = backend.read().lineage

    done = backends.run(CRASH)
    assert done.returncode == -9 and "recorded" in done.stdout, done.stderr

    seen = backend.read()
    assert (seen.lineage, seen.serial) == (lineage, 2)
    assert sorted(seen.resources) == ["Movement/a", "Movement/b", "TemplateGroup/a"]
    assert seen.resources["Movement/b"].status is RecordStatus.PENDING
    assert seen.resources["Movement/b"].idempotency_key == "key-b"
    with backend.open("apply") as session:  # the dead run's lock is gone; its journal folds
        assert session.state.serial == 2
        assert session.state.resources == seen.resources
        assert session.state.journal and session.state.journal == seen.journal
    after = backend.read()
    assert (after.lineage, after.serial, after.resources) == (lineage, 2, seen.resources)


TORN = {
    # Half a line: the process died in the middle of an append.
    "local": """
session = backend.open("apply")
session.record(ResourceRecord("Movement/a", RecordStatus.APPLIED, "create", {}, {"movementId": "mov_1"}))
with open(backend.journal_path, "ab") as journal:
    journal.write(b'{"address": "Movement/torn", "lineage": "' + session.state.lineage.encode())
print("torn", flush=True)
os.kill(os.getpid(), 9)
""",
    # A journal row inserted, never committed: the process died inside the transaction.
    "postgres": """
import psycopg
session = backend.open("apply")
session.record(ResourceRecord("Movement/a", RecordStatus.APPLIED, "create", {}, {"movementId": "mov_1"}))
writer = psycopg.connect(backend.url)
writer.execute(
    "INSERT INTO customs_batch_journal (state, lineage, address, record) "
    "VALUES ('contract', %s, 'Movement/torn', '{\\"status\\": \\"applied\\", \\"operation\\": \\"create\\"}')",
    (session.state.lineage,),
)
print("torn", flush=True)
os.kill(os.getpid(), 9)
""",
}


def test_a_write_torn_by_a_crash_is_dropped_and_the_rest_kept(backends: Backends) -> None:
    done = backends.run(TORN[backends.kind])
    assert done.returncode == -9 and "torn" in done.stdout, done.stderr
    backend = backends.make()
    assert list(backend.read().resources) == ["Movement/a"]
    with backend.open("apply") as session:
        assert list(session.state.resources) == ["Movement/a"]
        session.record(_record("Movement/c"))
    state = backend.read()
    assert sorted(state.resources) == ["Movement/a", "Movement/c"]
    assert state.serial == 2


@pytest.fixture
def holder(backends: Backends) -> Iterator[subprocess.Popen[str]]:
    """A process that holds the state's lock until a line is written to its stdin."""
    process = backends.start(HOLD_SCRIPT)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def test_a_second_open_times_out_naming_the_holder(
    backends: Backends, holder: subprocess.Popen[str]
) -> None:
    assert holder.stdout is not None and holder.stdin is not None
    lock_id = holder.stdout.readline().strip()
    assert lock_id, holder.stderr.read() if holder.stderr else ""
    backend = backends.make()
    for timeout in (0.0, 0.2):
        with pytest.raises(StateError) as refused:
            backend.open("apply", lock_timeout=timeout)
        message = str(refused.value)
        assert "locked" in message
        assert f"(process {holder.pid}) for apply" in message
        # Every backend names the lock; how to end it differs (a local live holder is
        # stopped, never force-unlocked; a database session may be ended with --force).
        assert lock_id in message

    holder.stdin.write("\n")
    holder.stdin.flush()
    assert holder.stdout.readline().strip() == "released"
    with backend.open("apply", lock_timeout=30) as session:
        assert list(session.state.resources) == ["Movement/held"]


def test_the_lock_of_a_killed_holder_is_free_for_the_next_open(
    backends: Backends, holder: subprocess.Popen[str]
) -> None:
    assert holder.stdout is not None
    assert holder.stdout.readline().strip()
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=30)
    with backends.make().open("apply", lock_timeout=30) as session:
        assert list(session.state.resources) == ["Movement/held"]
        assert session.state.serial == 1  # the dead holder's journal, folded


def _write_earlier_version(backends: Backends, monkeypatch: pytest.MonkeyPatch) -> None:
    """The state ``contract`` as the previous version of the backend wrote it: lineage L,
    serial 4, one record, a journal a crash left. Then this version of the code runs."""
    record = _record("Movement/old").to_json()
    if backends.kind == "local":
        folder = Path(backends.where)
        folder.mkdir(parents=True)
        document = {
            "version": 1,
            "lineage": "L",
            "serial": 4,
            "resources": {"Movement/old": record},
        }
        (folder / "state.json").write_text(json.dumps(document))
        (folder / "journal.jsonl").write_text(
            json.dumps({"lineage": "L", "address": "Movement/crashed", "record": record}) + "\n"
        )
        # The code is one version ahead of the file, with the upgrade that version brings.
        monkeypatch.setattr(state_file, "STATE_VERSION", 2)
        monkeypatch.setitem(state_file.UPGRADES, 1, lambda document: document)
        return
    with psycopg.connect(backends.where, autocommit=True) as connection:
        ensure_tables(connection, target=TABLES_VERSION - 1)
        connection.execute("INSERT INTO customs_batch_states VALUES (%s, 'L', 4)", (STATE_NAME,))
        connection.execute(
            "INSERT INTO customs_batch_resources VALUES (%s, 'Movement/old', %s)",
            (STATE_NAME, json.dumps(record)),
        )
        connection.execute(
            "INSERT INTO customs_batch_journal (state, lineage, address, record) "
            "VALUES (%s, 'L', 'Movement/crashed', %s)",
            (STATE_NAME, json.dumps(record)),
        )


def _version_now(backends: Backends) -> int:
    if backends.kind == "local":
        document = json.loads((Path(backends.where) / "state.json").read_text())
        return int(document["version"])
    with psycopg.connect(backends.where) as connection:
        return tables_version(connection)


def test_a_state_written_by_the_previous_version_is_upgraded_and_kept(
    backends: Backends, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_earlier_version(backends, monkeypatch)
    backend = backends.make()
    seen = backend.read()
    assert (seen.lineage, seen.serial) == ("L", 5)
    assert sorted(seen.resources) == ["Movement/crashed", "Movement/old"]
    with backend.open("apply") as session:
        assert session.state.resources == seen.resources
        session.record(_record("Movement/new"))
    state = backend.read()
    assert (state.lineage, state.serial) == ("L", 6)
    assert sorted(state.resources) == ["Movement/crashed", "Movement/new", "Movement/old"]
    expected = 2 if backends.kind == "local" else TABLES_VERSION
    assert _version_now(backends) == expected


def test_replace_sets_the_whole_state(backends: Backends) -> None:
    backend = backends.make()
    with backend.open("apply") as session:
        session.record(_record("Movement/gone"))
    incoming = State(lineage="other", serial=9, resources={"Movement/x": _record("Movement/x")})
    with backend.open("state push") as session:
        session.replace(incoming)
    state = backend.read()
    assert (state.lineage, state.serial, state.resources) == (
        "other",
        9,
        {"Movement/x": _record("Movement/x")},
    )
