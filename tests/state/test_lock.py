"""force-unlock never breaks a live run's lock on this machine, and a run whose lock was
broken (from another machine, with --force) stops before it writes anything more."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from customs_batch.errors import StateError
from customs_batch.state import LocalBackend

# A writer that this test drives line by line through its stdin: no timing involved.
HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from customs_batch.errors import StateError
    from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord
    session = LocalBackend(Path(sys.argv[1])).open("apply")
    print(session.lock_info.id, flush=True)
    for line in sys.stdin:
        command, _, name = line.strip().partition(" ")
        try:
            if command == "record":
                session.record(ResourceRecord(name, RecordStatus.APPLIED, "create", {}, {"id": 1}))
                print("recorded", flush=True)
            elif command == "close":
                session.close()
                print("closed", flush=True)
                break
        except StateError as exc:
            print("lost: " + exc.message, flush=True)
    """
)


class Holder:
    """A process that holds the state lock until told to close (or killed)."""

    def __init__(self, folder: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            self.lock_id = self._line()
        except BaseException:
            self.end()
            raise

    def _line(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def say(self, command: str) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self._line()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()

    def end(self) -> None:
        if self.process.poll() is None:
            self.kill()
        for stream in (self.process.stdin, self.process.stdout):
            assert stream is not None
            stream.close()


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[Holder]:
    running = Holder(tmp_path)
    try:
        yield running
    finally:
        running.end()


@pytest.mark.parametrize("force", [False, True])
def test_a_live_holder_on_this_machine_is_never_unlocked(
    tmp_path: Path, holder: Holder, force: bool
) -> None:
    with pytest.raises(StateError) as caught:
        LocalBackend(tmp_path).force_unlock(holder.lock_id, force=force)
    message = str(caught.value)
    assert "held by a running process" in message
    assert f"@{socket.gethostname()} (process {holder.process.pid}) for apply since " in message
    assert f"`kill {holder.process.pid}`" in message
    assert (tmp_path / "state.lock.info").exists()
    assert holder.say("record Movement/a") == "recorded"  # the run never noticed a thing


def test_the_lock_of_a_dead_holder_is_removed_and_said_so(tmp_path: Path, holder: Holder) -> None:
    holder.kill()
    backend = LocalBackend(tmp_path)
    done = backend.force_unlock(holder.lock_id)
    assert done.info.pid == holder.process.pid
    assert f"Process {holder.process.pid} is no longer running" in done.how
    assert not (tmp_path / "state.lock.info").exists()
    with backend.open("apply") as session:
        assert session.lock_info.pid == os.getpid()


def test_a_holder_on_another_machine_needs_force_then_stops_before_writing(
    tmp_path: Path, holder: Holder, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert holder.say("record Movement/a") == "recorded"
    monkeypatch.setattr(socket, "gethostname", lambda: "another-machine")
    backend = LocalBackend(tmp_path)
    with pytest.raises(StateError) as caught:
        backend.force_unlock(holder.lock_id)
    message = str(caught.value)
    assert "held by a process on another machine" in message
    assert "declaring goods twice" in message
    assert f"force-unlock {holder.lock_id} --force" in message
    assert holder.say("record Movement/b") == "recorded"  # refused: nothing was broken

    assert "stops before its next write" in backend.force_unlock(holder.lock_id, force=True).how
    answer = holder.say("record Movement/c")
    assert answer.startswith("lost: the state lock was broken while this apply ran")
    with backend.open("apply") as session:  # the next run takes the lock at once
        new_note = (tmp_path / "state.lock.info").read_text()
        # What the broken run recorded before the break is there; nothing after it.
        assert sorted(session.state.resources) == ["Movement/a", "Movement/b"]
        assert holder.say("close") == "closed"  # writes nothing, and leaves the new note
        assert (tmp_path / "state.lock.info").read_text() == new_note
    # The new run folded the broken run's journal: Movement/c was never written anywhere.
    assert sorted(backend.read().resources) == ["Movement/a", "Movement/b"]


def test_a_run_broken_after_its_last_record_does_not_write_the_state(
    tmp_path: Path, holder: Holder, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert holder.say("record Movement/a") == "recorded"
    monkeypatch.setattr(socket, "gethostname", lambda: "another-machine")
    LocalBackend(tmp_path).force_unlock(holder.lock_id, force=True)
    assert holder.say("close").startswith("lost: the state lock was broken")
    assert not (tmp_path / "state.json").exists()
    assert b"Movement/a" in (tmp_path / "journal.jsonl").read_bytes()  # folded by the next run


def test_the_lock_files_are_private(tmp_path: Path, holder: Holder) -> None:
    for name in ("state.lock", "state.lock.info"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name


def test_a_second_writer_on_an_unlocked_state_is_not_a_lock_to_break(tmp_path: Path) -> None:
    with pytest.raises(StateError, match="the state is not locked"):
        LocalBackend(tmp_path).force_unlock("some-id")


def test_a_waiting_writer_is_told_how_to_end_the_wait(
    tmp_path: Path, holder: Holder, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(StateError) as caught:
        LocalBackend(tmp_path).open("apply")
    assert f"if it hangs, stop it (`kill {holder.process.pid}`)" in str(caught.value)
    assert "force-unlock" not in str(caught.value)  # not for a run alive on this machine
    monkeypatch.setattr(socket, "gethostname", lambda: "another-machine")
    with pytest.raises(StateError) as caught:
        LocalBackend(tmp_path).open("apply")
    assert f"`customs-batch force-unlock {holder.lock_id} --force`" in str(caught.value)


def test_a_plan_takes_only_a_live_holder_of_this_machine_for_a_running_apply(
    tmp_path: Path,
) -> None:
    # The note of a run killed long ago names a pid the system may give to another process:
    # a process that began after the note was written is not its holder (a plan would take
    # that killed run's undecided requests for requests in flight).
    backend = LocalBackend(tmp_path)
    assert backend.running_holder() is None  # no note
    info = {
        "id": "lock-1",
        "holder": "ci",
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "operation": "apply",
        "created": "2000-01-01T00:00:00Z",
    }
    note = tmp_path / "state.lock.info"
    note.write_text(json.dumps(info))
    assert backend.running_holder() is None  # this process began after 2000
    info["created"] = "2999-01-01T00:00:00Z"
    note.write_text(json.dumps(info))
    holder = backend.running_holder()
    assert holder is not None and holder.id == "lock-1"
    note.write_text(json.dumps({**info, "host": "another-machine"}))
    assert backend.running_holder() is None  # cannot be told live from here


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_a_plan_takes_a_killed_run_whose_parent_has_not_collected_it_for_ended(
    tmp_path: Path,
) -> None:
    # A run killed with SIGKILL by a supervisor that does not wait for it stays a zombie:
    # kill(pid, 0) still finds it, but it has ended and released the lock, so the requests
    # it left without an answer are no longer in flight (a plan said "look again once that
    # run has ended" and counted one request fewer than apply sent).
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        backend = LocalBackend(tmp_path)
        info = {
            "id": "lock-1",
            "holder": "ci",
            "host": socket.gethostname(),
            "pid": child.pid,
            "operation": "apply",
            "created": "2999-01-01T00:00:00Z",
        }
        (tmp_path / "state.lock.info").write_text(json.dumps(info))
        holder = backend.running_holder()
        assert holder is not None and holder.pid == child.pid  # alive: its run goes on
        child.kill()
        stat_path = Path(f"/proc/{child.pid}/stat")
        while stat_path.read_bytes().rsplit(b")", 1)[1].split()[0] != b"Z":
            os.sched_yield()
        assert backend.running_holder() is None
    finally:
        child.kill()
        child.wait()
