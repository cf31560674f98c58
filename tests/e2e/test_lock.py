"""The state lock with real processes: a second apply is refused, naming the holder;
force-unlock never frees a live run's lock on this machine; an apply whose lock is broken
from another machine stops before its next request. Races are held open by gates (the
emulator's, or a proxy that holds one chosen request), never by one process being slower.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import batches
from tests.e2e.conftest import Project, Sandbox, assert_secret_nowhere
from tests.e2e.gate import GatedProxy

pytestmark = pytest.mark.e2e


def test_a_second_apply_names_the_holder_and_a_third_one_runs(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    sandbox.start()
    project = Project(tmp_path / "project", sandbox, parallelism=2)
    project.write("manifests/movements.yaml", batches.movements(per_lane=3, lanes=2))

    sandbox.close_gate()
    first = project.start("apply", "--auto-approve")
    assert first.wait_for_line(lambda line: line.startswith("Applying "))
    sandbox.wait_until_held(1)  # the first apply is sending under its lock, and cannot end
    second = project.run("apply", "--auto-approve", "--lock-timeout", "0")
    assert first.process.poll() is None, "the first apply ended before the race"
    assert second.returncode == 3, second.stdout + second.stderr
    message = second.stderr
    assert "the state is locked" in message
    assert f"(process {first.process.pid}) for apply" in message
    assert re.search(r"lock [0-9a-f-]{36} held by", message), message
    # A live run on this machine is stopped, never force-unlocked: the hint says how.
    assert f"kill {first.process.pid}" in message and "force-unlock" not in message
    assert "Applying" not in second.stdout
    assert (project.state_dir / "state.lock.info").exists()
    assert_secret_nowhere(project)  # the holder's note and the journal of a running apply
    assert sandbox.movements() == [], "a request passed the closed gate"

    sandbox.open_gate()
    code, stdout, stderr = first.finish()
    assert code == 0, stdout + stderr
    assert len(sandbox.movements()) == 6
    assert not (project.state_dir / "state.lock.info").exists()

    # The lock was released: the next run takes it (and adds one movement per lane).
    project.write("manifests/movements.yaml", batches.movements(per_lane=4, lanes=2))
    third = project.run("apply", "--auto-approve", "--lock-timeout", "0")
    assert third.returncode == 0, third.stdout + third.stderr
    assert "Applying 2 operation(s)." in third.stdout
    assert len(sandbox.movements()) == 8
    assert not batches.duplicates(sandbox.movements())


HOLDER = """
import sys
from pathlib import Path
from customs_batch.state import LocalBackend
session = LocalBackend(Path(sys.argv[1])).open("apply")
print(session.lock_info.id, flush=True)
sys.stdin.read()  # holds the lock until the test closes this pipe (or kills it)
"""

ANOTHER_MACHINE = """
import socket, sys
socket.gethostname = lambda: "ci-runner-2"
from customs_batch.cli.main import run
run(sys.argv[1:])
"""


class _Patient(Project):
    """A project whose apply waits for an answer as long as the gate may hold it: the
    commands run meanwhile must not depend on finishing within the usual read timeout (on
    a busy machine they took longer, the apply gave up, and its lock was gone)."""

    def environment(self) -> dict[str, Any]:
        return {**super().environment(), "timeouts": {"connect": 5, "read": 600}}


def test_plan_and_status_during_an_apply_say_its_requests_are_in_flight_not_undecided(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    # A pull request's plan while CI applies: the running apply's submission, whose answer
    # it has not recorded yet, was "needs decision" (state adopt or forget), and plan
    # failed with exit 1.
    sandbox.start()
    project = _Patient(tmp_path / "project", sandbox, parallelism=1)
    project.write("manifests/departures.yaml", batches.departures(1))
    sandbox.close_gate(writes=True)  # its look at the declarations made since passes
    running = project.start("apply", "--auto-approve")
    assert running.wait_for_line(lambda line: line.startswith("Applying "))
    sandbox.wait_until_held(1)
    planned = project.run("plan")
    assert running.process.poll() is None, "the apply ended before the plan"
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "needs decision" not in planned.stdout
    assert "in flight: sent by the run that holds the state's lock" in planned.stdout
    assert "1 in flight." in planned.stdout and "at the service" not in planned.stdout
    assert f"(process {running.process.pid}) for apply" in planned.stdout
    # status and state list say the same, and status counts it as not decided yet.
    status = project.run("status", "--format", "json")
    assert status.returncode == 0, status.stdout + status.stderr
    [entry] = json.loads(status.stdout)["declarations"]
    assert entry["lifecycle"] == "in-flight" and entry["pending"], entry
    assert f"(process {running.process.pid}) for apply" in entry["message"]
    text = project.run("status")
    assert "in-flight" in text.stdout and "needs-decision" not in text.stdout, text.stdout
    listed = project.run("state", "list")
    assert "  in-flight" in listed.stdout and "needs-decision" not in listed.stdout
    sandbox.open_gate()
    code, stdout, stderr = running.finish()
    assert code == 0, stdout + stderr
    after = project.run("plan", "--detailed-exitcode")
    assert after.returncode == 0, after.stdout + after.stderr


def test_force_unlock_refuses_a_live_holder_and_frees_a_dead_ones_lock(project: Project) -> None:
    project.state_dir.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(project.state_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        lock_id = holder.stdout.readline().strip()
        for extra in ((), ("--force",)):
            refused = project.run("force-unlock", lock_id, *extra)
            assert refused.returncode == 3, refused.stdout + refused.stderr
            assert "the state lock is held by a running process" in refused.stderr
            who = f"@{socket.gethostname()} (process {holder.pid}) for apply since "
            assert who in refused.stderr and f"kill {holder.pid}" in refused.stderr
            blocked = project.run("apply", "--auto-approve", "--lock-timeout", "0")
            assert blocked.returncode == 3 and "the state is locked" in blocked.stderr
        holder.kill()
        holder.wait()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.close()
        holder.stdout.close()
    unlocked = project.run("force-unlock", lock_id)
    assert unlocked.returncode == 0, unlocked.stderr
    assert f"Process {holder.pid} is no longer running" in unlocked.stdout
    project.write("manifests/movements.yaml", batches.movements(per_lane=1, lanes=1))
    assert project.run("apply", "--auto-approve", "--lock-timeout", "0").returncode == 0


def test_an_apply_whose_lock_is_broken_stops_before_its_next_request(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    sandbox.start()
    project = Project(tmp_path / "project", sandbox, parallelism=1)
    project.write("manifests/movements.yaml", batches.movements(per_lane=3, lanes=2))
    with GatedProxy(sandbox.url, hold=3) as gate:
        project.edit("customs-batch.yaml", sandbox.url, gate.url)
        run = project.start("apply", "--auto-approve")
        try:
            assert gate.held.wait(timeout=60), "the apply never sent its third movement"
            note = json.loads((project.state_dir / "state.lock.info").read_text())
            assert note["pid"] == run.process.pid

            # On this machine the apply is alive: its lock is not broken.
            refused = project.run("force-unlock", note["id"], "--force")
            assert refused.returncode == 3 and "running process" in refused.stderr
            # From another machine sharing the folder: only with --force.
            elsewhere = [sys.executable, "-c", ANOTHER_MACHINE, "force-unlock", note["id"]]
            done = subprocess.run(
                elsewhere, cwd=project.root, env=project.env(), capture_output=True, text=True
            )
            assert done.returncode == 3, done.stdout + done.stderr
            assert "held by a process on another machine" in done.stderr
            assert "declaring goods twice" in done.stderr
            done = subprocess.run(
                [*elsewhere, "--force"],
                cwd=project.root,
                env=project.env(),
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, done.stdout + done.stderr
        finally:
            gate.open()
        code, stdout, stderr = run.finish()
        assert code == 3, stdout + stderr
        assert "the state lock was broken while this apply ran" in stderr
        assert "stopped without writing anything more" in stderr
        assert gate.posts_after_open == 0, "the apply sent requests after losing its lock"
    assert not (project.state_dir / "state.json").exists(), "the broken run wrote the state"
    assert len(sandbox.movements()) == 3

    # The next run takes over from the journal: the third movement, whose answer the broken
    # run did not record, is sent again with its Idempotency-Key and not created twice.
    project.write_config()
    again = project.run("apply", "--auto-approve")
    assert again.returncode == 0, again.stdout + again.stderr
    assert len(sandbox.movements()) == 6
    assert not batches.duplicates(sandbox.movements())
