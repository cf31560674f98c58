from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from customs_batch.errors import StateError
from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord
from customs_batch.state.history import LocalHistory


def _record(address: str, status: RecordStatus = RecordStatus.APPLIED) -> ResourceRecord:
    return ResourceRecord(address, status, "create", {"q": 1}, outputs={"id": 7})


def test_session_records_then_folds_once_at_close(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path / "env")
    assert backend.read().serial == 0
    with backend.open("apply") as session:
        session.record(_record("TemplateGroup/a"))
        session.record(_record("Movement/b"))
        assert backend.journal_path.exists()
        assert not backend.state_path.exists()
    assert backend.journal_path.read_bytes() == b""  # folded; left empty as a trace
    state = backend.read()
    assert state.serial == 1
    assert state.lineage
    assert sorted(state.resources) == ["Movement/b", "TemplateGroup/a"]


def test_a_session_that_changes_nothing_does_not_bump_the_serial(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    with backend.open("apply") as session:
        session.record(_record("Movement/b"))
    with backend.open("apply"):
        pass
    assert backend.read().serial == 1


def test_forget_removes_the_record(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    with backend.open("apply") as session:
        session.record(_record("Movement/b"))
    with backend.open("state rm") as session:
        session.forget("Movement/b")
    assert backend.read().resources == {}


CRASHING_RUN = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord
    session = LocalBackend(Path(sys.argv[1])).open("apply")
    session.record(ResourceRecord("Movement/a", RecordStatus.APPLIED, "create", {}, {"movementId": "mov_1"}))
    session.record(ResourceRecord("Movement/b", RecordStatus.PENDING, "create", {}, idempotency_key="key-b"))
    print("recorded", flush=True)
    os.kill(os.getpid(), 9)
    """
)


def test_records_survive_a_kill_and_fold_on_the_next_open(tmp_path: Path) -> None:
    folder = tmp_path / "env"
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_RUN, str(folder)], capture_output=True, text=True
    )
    assert done.returncode == -9 and "recorded" in done.stdout
    backend = LocalBackend(folder)
    seen = backend.read()  # read-only: the journal stays until a writer folds it
    assert seen.resources["Movement/b"].idempotency_key == "key-b"
    assert seen.serial == 1 and backend.journal_path.exists()
    with backend.open("apply") as session:  # the kill released the lock
        assert session.state.resources["Movement/a"].outputs == {"movementId": "mov_1"}
    assert backend.journal_path.read_bytes() == b""
    assert backend.read().serial == 1


HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from customs_batch.state import LocalBackend
    session = LocalBackend(Path(sys.argv[1])).open("apply")
    print(session.lock_info.id, flush=True)
    time.sleep(60)
    """
)


HeldLock = tuple[subprocess.Popen[str], str]
"""A process that holds the lock, and the lock's id."""


@pytest.fixture
def held_lock(tmp_path: Path) -> Iterator[HeldLock]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        lock_id = holder.stdout.readline().strip()
        yield holder, lock_id
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


class WaitClock:
    """The clock of a wait for the lock: it moves only when the waiter sleeps; ``on_sleep``
    runs at each sleep (the test acts while the waiter waits)."""

    def __init__(self, on_sleep: Callable[[int], None] = lambda n: None) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self._on_sleep = on_sleep

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        self._on_sleep(len(self.sleeps))


def test_a_second_writer_waits_then_names_the_holder(tmp_path: Path, held_lock: HeldLock) -> None:
    holder, lock_id = held_lock
    clock = WaitClock()
    with pytest.raises(StateError) as caught:
        LocalBackend(tmp_path, clock=clock, sleep=clock.sleep).open("apply", lock_timeout=30)
    assert clock.now == pytest.approx(30)  # the whole timeout, trying again and again
    assert len(clock.sleeps) >= 30 / 0.05 and max(clock.sleeps) <= 0.05
    message = str(caught.value)
    assert lock_id in message and f"process {holder.pid}" in message and "for apply" in message


def test_a_waiting_writer_takes_the_lock_once_it_is_free(
    tmp_path: Path, held_lock: HeldLock
) -> None:
    holder, _ = held_lock

    def end_the_holder(sleeps: int) -> None:
        if sleeps == 3:
            holder.kill()
            holder.wait()

    clock = WaitClock(end_the_holder)
    backend = LocalBackend(tmp_path, clock=clock, sleep=clock.sleep)
    with backend.open("apply", lock_timeout=30) as session:
        assert session.lock_info.pid != holder.pid
    assert len(clock.sleeps) == 3, "taken at the first try after the holder ended"


def test_without_a_timeout_a_held_lock_is_refused_at_once(
    tmp_path: Path, held_lock: HeldLock
) -> None:
    clock = WaitClock()
    with pytest.raises(StateError, match="the state is locked"):
        LocalBackend(tmp_path, clock=clock, sleep=clock.sleep).open("apply")
    assert clock.sleeps == []


def test_the_lock_is_released_when_its_holder_is_killed(
    tmp_path: Path, held_lock: HeldLock
) -> None:
    holder, _ = held_lock
    holder.kill()
    holder.wait()
    with LocalBackend(tmp_path).open("apply", lock_timeout=5) as session:
        assert session.lock_info.pid != holder.pid


def test_force_unlock_needs_the_right_id(tmp_path: Path, held_lock: HeldLock) -> None:
    holder, lock_id = held_lock
    backend = LocalBackend(tmp_path)
    with pytest.raises(StateError, match="not wrong-id"):
        backend.force_unlock("wrong-id")
    holder.kill()
    holder.wait()
    assert backend.force_unlock(lock_id).info.id == lock_id
    with backend.open("apply", lock_timeout=1):
        pass


def test_a_journal_of_another_lineage_is_refused(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    with backend.open("apply") as session:
        session.record(_record("Movement/a"))
    other = LocalBackend(tmp_path / "other")
    session = other.open("apply")
    session.record(_record("Movement/z"))
    session._journal.close()
    backend.journal_path.write_bytes(other.journal_path.read_bytes())
    with pytest.raises(StateError, match="belongs to another state"):
        backend.read()
    session._lock.release()


def test_a_missing_state_beside_its_backup_is_refused(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    for name in ("Movement/a", "Movement/b"):
        with backend.open("apply") as session:
            session.record(_record(name))
    backend.state_path.unlink()  # the backup (first run) stays
    for load in (backend.read, lambda: backend.open("apply")):
        with pytest.raises(StateError) as caught:
            load()
        message = str(caught.value)
        assert (
            f"{backend.state_path} is missing, but its backup state.json.backup is there" in message
        )
        assert "would send every document again" in message
        assert f"`cp -p {tmp_path}/state.json.backup {tmp_path}/state.json`" in message
        assert "--allow-empty-state" in message
    fresh = LocalBackend(tmp_path, allow_empty_state=True)
    assert fresh.read().resources == {}


def test_a_missing_state_after_one_run_is_refused_by_its_emptied_journal(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    with backend.open("apply") as session:
        session.record(_record("Movement/a"))
    backend.state_path.unlink()
    with pytest.raises(StateError, match=r"journal.jsonl is left from an earlier run"):
        backend.read()


def test_a_new_folder_and_a_crashed_first_run_are_not_a_lost_state(tmp_path: Path) -> None:
    assert LocalBackend(tmp_path / "new").read().resources == {}
    backend = LocalBackend(tmp_path / "crashed")
    session = backend.open("apply")
    session.record(_record("Movement/a"))
    session._journal.close()
    session._lock.release()  # as a kill would: the journal stays, no state file yet
    assert sorted(backend.read().resources) == ["Movement/a"]


def _sent(backend: LocalBackend, *events: str) -> None:
    """History entries of ``events`` (a request and its answer by default), as apply
    writes them."""
    history = LocalHistory(backend.directory)
    for event in events or ("request", "answer"):
        history.append({"event": event, "address": "Movement/a", "operation": "create-movement"})
    history.close()


def test_a_missing_state_whose_history_is_kept_is_refused(tmp_path: Path) -> None:
    """State file, backup and journal gone: the history of what was sent shows that this
    environment had a state, and an empty one would send it all again."""
    backend = LocalBackend(tmp_path)
    with backend.open("apply") as session:
        session.record(_record("Movement/a"))
    _sent(backend)
    for name in ("state.json", "state.json.backup", "journal.jsonl"):
        (tmp_path / name).unlink(missing_ok=True)
    for load in (backend.read, lambda: backend.open("apply")):
        with pytest.raises(StateError) as caught:
            load()
        message = str(caught.value)
        assert (
            f"{backend.state_path} is missing, but its history (history.jsonl) records what "
            "apply sent from here: this environment had a state" in message
        )
        assert "would send every document again" in message
        assert "`customs-batch history` lists what was sent" in message
        assert "--allow-empty-state" in message
    assert LocalBackend(tmp_path, allow_empty_state=True).read().resources == {}


@pytest.mark.parametrize("event", ["moved", "dropped"])
def test_a_history_of_record_only_operations_also_shows_a_state(tmp_path: Path, event: str) -> None:
    backend = LocalBackend(tmp_path)
    _sent(backend, event)
    (tmp_path / "history.jsonl").rename(tmp_path / "history.000001.jsonl")
    with pytest.raises(StateError, match=r"its history \(history.000001.jsonl\)"):
        backend.read()


def test_requests_a_first_run_killed_before_its_first_intent_left_are_no_state(
    tmp_path: Path,
) -> None:
    """Such a run wrote request entries and no journal: a request leaves only once its
    intent is in the journal, so none of them was sent; nor was a line never finished."""
    backend = LocalBackend(tmp_path)
    _sent(backend, "request", "request")
    with (tmp_path / "history.jsonl").open("ab") as history:
        history.write(b'{"event": "answer", "seq"')
    assert backend.read().resources == {}
    with backend.open("apply"):
        pass


def test_a_crashed_first_run_with_its_history_is_the_state(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    _crashed_run(backend, "Movement/a")
    _sent(backend)
    assert sorted(backend.read().resources) == ["Movement/a"]


def _crashed_run(backend: LocalBackend, address: str) -> None:
    """A run that recorded ``address`` and was killed: its journal stays, unfolded."""
    session = backend.open("apply")
    session.record(_record(address))
    session._journal.close()
    session._lock.release()


def test_a_journal_left_alone_is_refused_when_its_state_file_is_missing(tmp_path: Path) -> None:
    """What a CI that kept only the journal of a killed run brings back: the journal holds
    the records of that run, not the state it was written on."""
    backend = LocalBackend(tmp_path)
    with backend.open("apply") as session:
        session.record(_record("Movement/a"))
    _crashed_run(backend, "Movement/b")
    backend.state_path.unlink()
    backend.state_path.with_name("state.json.backup").unlink(missing_ok=True)
    for load in (backend.read, lambda: backend.open("apply")):
        with pytest.raises(StateError) as caught:
            load()
        message = str(caught.value)
        assert (
            f"{backend.state_path} is missing, and journal.jsonl holds only what the last run "
            "recorded after the state of serial 1" in message
        )
        assert "put the state.json of serial 1 (or newer) back beside the journal" in message
        assert "--allow-empty-state" in message
    assert sorted(LocalBackend(tmp_path, allow_empty_state=True).read().resources) == ["Movement/b"]


def test_a_state_file_older_than_its_journal_is_refused(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    for name in ("Movement/a", "Movement/b"):
        with backend.open("apply") as session:
            session.record(_record(name))
    _crashed_run(backend, "Movement/c")
    backup = backend.state_path.with_name("state.json.backup")
    backup.replace(backend.state_path)  # serial 1: the journal was written on serial 2
    with pytest.raises(
        StateError,
        match=r"has serial 1, but journal\.jsonl holds what the last "
        r"run recorded after the state of serial 2",
    ):
        backend.read()
    with pytest.raises(StateError, match="older than the journal"):
        LocalBackend(tmp_path, allow_empty_state=True).open("apply")


def test_a_first_run_killed_leaves_a_journal_that_is_the_whole_state(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    _crashed_run(backend, "Movement/a")
    assert not backend.state_path.exists()
    assert sorted(backend.read().resources) == ["Movement/a"]
    with backend.open("apply") as session:  # folds it: the state file is written
        assert sorted(session.state.resources) == ["Movement/a"]
    assert backend.state_path.exists() and backend.read().serial == 1


def test_a_journal_folded_but_not_emptied_is_folded_again(tmp_path: Path) -> None:
    """Killed between the rewrite of the state file and the emptying of the journal: the
    journal was written on the serial before the file's, and folds in to the same state."""
    backend = LocalBackend(tmp_path)
    with backend.open("apply") as session:
        session.record(_record("Movement/a"))
    session = backend.open("apply")
    session.record(_record("Movement/b"))
    kept = backend.journal_path.read_bytes()
    session.close()
    backend.journal_path.write_bytes(kept)
    assert sorted(backend.read().resources) == ["Movement/a", "Movement/b"]


def test_a_journal_of_an_older_version_without_serials_is_read_alone(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path)
    _crashed_run(backend, "Movement/a")
    lines = backend.journal_path.read_bytes().replace(b',"serial":0', b"")
    assert b"serial" not in lines
    backend.journal_path.write_bytes(lines)
    assert sorted(backend.read().resources) == ["Movement/a"]


def test_the_first_writer_names_its_environment_in_the_folder(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path / "env", environment="prod")
    backend.read()  # a command that only looks writes nothing
    assert not backend.environment_path.exists()
    with backend.open("apply") as session:
        session.record(_record("Movement/b"))
    assert backend.environment_path.read_text() == "prod\n"
    assert backend.environment_path.stat().st_mode & 0o777 == 0o600
    assert list(LocalBackend(tmp_path / "env", environment="prod").read().resources) == [
        "Movement/b"
    ]


def test_a_state_written_before_environments_were_named_is_taken_by_its_next_writer(
    tmp_path: Path,
) -> None:
    with LocalBackend(tmp_path).open("apply") as session:  # no environment named
        session.record(_record("Movement/b"))
    assert not (tmp_path / "environment").exists()
    backend = LocalBackend(tmp_path, environment="prod")
    assert list(backend.read().resources) == ["Movement/b"]
    with backend.open("plan"):
        pass
    assert (tmp_path / "environment").read_text() == "prod\n"


@pytest.mark.parametrize("reader", ["read", "open"])
def test_a_folder_another_environment_wrote_is_refused_and_left_as_it_is(
    tmp_path: Path, reader: str
) -> None:
    """A state folder copied to another environment's state_dir: its records are objects of
    the first environment's service, and must not be planned or updated as the second's."""
    with LocalBackend(tmp_path, environment="prod").open("apply") as session:
        session.record(_record("Movement/b"))
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir() if path.is_file()}
    staging = LocalBackend(tmp_path, environment="staging")
    with pytest.raises(StateError) as refused:
        if reader == "read":
            staging.read()
        else:
            with staging.open("apply"):
                pass
    message = refused.value.message
    assert "holds the state of environment 'prod'" in message
    assert "not of 'staging'" in message
    assert refused.value.hint is not None
    assert str(tmp_path / "environment") in refused.value.hint
    after = {path.name: path.read_bytes() for path in tmp_path.iterdir() if path.is_file()}
    assert after == before
    # Removing the file is how the user says it is the same service: then it is taken.
    (tmp_path / "environment").unlink()
    with staging.open("apply"):
        pass
    assert (tmp_path / "environment").read_text() == "staging\n"


def test_a_folder_written_for_another_service_says_so_until_the_new_one_is_confirmed(
    tmp_path: Path,
) -> None:
    """The environment's base_url changed: the folder keeps naming the service its records
    were written for (a command that talks to the service checks the new one first)."""
    with LocalBackend(tmp_path, environment="prod", service="https://a.example").open(
        "apply"
    ) as session:
        session.record(_record("Movement/b"))
    assert (tmp_path / "environment").read_text() == "prod\nservice https://a.example\n"
    same = LocalBackend(tmp_path, environment="prod", service="https://a.example")
    same.read()
    assert same.service_moved_from is None
    moved = LocalBackend(tmp_path, environment="prod", service="https://b.example")
    assert list(moved.read().resources) == ["Movement/b"]
    assert moved.service_moved_from == "https://a.example"
    with moved.open("state rm"):  # a command that sends nothing leaves the file as it is
        pass
    assert moved.service_moved_from == "https://a.example"
    assert (tmp_path / "environment").read_text() == "prod\nservice https://a.example\n"
    moved.confirm_service()
    assert (tmp_path / "environment").read_text() == "prod\nservice https://b.example\n"
    assert moved.service_moved_from is None
    again = LocalBackend(tmp_path, environment="prod", service="https://b.example")
    again.read()
    assert again.service_moved_from is None


def test_a_folder_of_the_same_service_written_in_other_letters_is_not_another_service(
    tmp_path: Path,
) -> None:
    """A base_url written with another case of host or with its default port is the same
    service: neither taken for a move to another one, nor a sibling's state overlooked."""
    prod = tmp_path / "prod"
    with LocalBackend(prod, environment="prod", service="https://api.example").open(
        "apply"
    ) as session:
        session.record(_record("Movement/b"))
    same = LocalBackend(prod, environment="prod", service="https://API.example:443/")
    assert list(same.read().resources) == ["Movement/b"]
    assert same.service_moved_from is None
    # Another environment of that service, its address written otherwise: its empty state
    # is refused as prod's left behind, as it is for the address written the same.
    other = LocalBackend(tmp_path / "nl", environment="nl", service="https://Api.Example")
    with pytest.raises(StateError) as refused, other.open("apply"):
        pass
    assert "holds the state of environment 'prod' at the same service" in refused.value.message


def test_a_copied_folder_is_told_from_a_renamed_environment(tmp_path: Path) -> None:
    """Found in a probe: nl's folder copied to de was refused with the way out of a rename
    (remove the file that names nl), though nl's own folder still held its state: followed,
    both states held the same objects and each apply wrote them."""
    nl, de = tmp_path / "nl", tmp_path / "de"
    with LocalBackend(nl, environment="nl", service="https://api.example").open("apply") as s:
        s.record(_record("Movement/b"))
    shutil.copytree(nl, de)
    copied = LocalBackend(de, environment="de", service="https://api.example")
    with pytest.raises(StateError) as refused:
        copied.read()
    hint = str(refused.value.hint)
    assert f"{nl} still holds the state of environment 'nl'" in hint
    assert "a copy of it, not environment 'nl' renamed" in hint
    assert "`customs-batch state rm ADDR --env nl`" in hint
    assert str(de / "environment") not in hint
    # nl's folder gone (renamed to de by hand): the way out of a rename.
    shutil.rmtree(nl)
    with pytest.raises(StateError) as refused:
        copied.read()
    assert f"remove {de / 'environment'}" in str(refused.value.hint)


def test_a_state_folder_of_the_same_environment_beside_a_new_state_dir_is_refused(
    tmp_path: Path,
) -> None:
    """Found in a probe: prod's state_dir changed in customs-batch.yaml (or its folder
    renamed): the new folder started empty, beside the folder holding prod's own state,
    which the check of a renamed environment passed over as prod's, and plan said
    `+ create` for every document the service held."""
    old = tmp_path / "prod"
    with LocalBackend(old, environment="prod", service="https://api.example").open(
        "apply"
    ) as session:
        session.record(_record("Movement/b"))
    moved = LocalBackend(tmp_path / "production", environment="prod", service="https://api.example")
    with pytest.raises(StateError) as refused, moved.open("apply"):
        pass
    message = refused.value.message
    assert f"{old} holds the state of environment 'prod' at the same service" in message
    assert "its state_dir was changed" in message
    assert f"`mv {old} {tmp_path / 'production'}`" in str(refused.value.hint)
    assert not (tmp_path / "production").exists()
    with pytest.raises(StateError):
        moved.refuse_a_state_behind_its_history(moved.read())  # plan: the same
    # The way out followed: the folder moved, its state is read there.
    old.rename(tmp_path / "production")
    assert list(moved.read().resources) == ["Movement/b"]
    # Another state of prod on purpose.
    fresh = LocalBackend(
        tmp_path / "prod-2", environment="prod", service="https://api.example",
        allow_empty_state=True,
    )  # fmt: skip
    with fresh.open("apply"):
        pass


def test_a_folder_that_names_its_environment_only_gets_its_service_at_the_next_write(
    tmp_path: Path,
) -> None:
    """Written before the service was recorded: taken, and its service recorded then."""
    with LocalBackend(tmp_path, environment="prod").open("apply") as session:
        session.record(_record("Movement/b"))
    assert (tmp_path / "environment").read_text() == "prod\n"
    backend = LocalBackend(tmp_path, environment="prod", service="https://a.example")
    assert list(backend.read().resources) == ["Movement/b"]
    assert backend.service_moved_from is None
    assert (tmp_path / "environment").read_text() == "prod\n"  # a look writes nothing
    with backend.open("plan"):
        pass
    assert (tmp_path / "environment").read_text() == "prod\nservice https://a.example\n"


def test_an_unreadable_environment_name_is_refused_without_echoing_it(tmp_path: Path) -> None:
    (tmp_path / "environment").write_bytes(b"\x1b[31mprod\x00" + b"x" * 10_000)
    with pytest.raises(StateError) as refused:
        LocalBackend(tmp_path, environment="prod").read()
    assert "holds the state of another environment" in refused.value.message
    assert "\x1b" not in refused.value.message
    assert "xxx" not in refused.value.message
