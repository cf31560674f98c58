"""Real processes for the end-to-end tests: a ``sandbox serve`` emulator and the CLI.

Every test gets its own emulator (a fresh copy of the built-in seed, plus a distinctive API
key so the secret search means something) and a project folder in its ``tmp_path`` whose
``customs-batch.yaml`` points at that emulator. Commands run as ``python -m customs_batch``
subprocesses, exactly as a user or a CI job runs them.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, ClassVar

import httpx
import pytest
import yaml

from customs_batch.sandbox import builtin_seed_text

SECRET = "h8-e2e-Key-5c1e9a77-NeverWritten"
"""The API key of the tests: distinctive, so finding it anywhere is a leak."""

KEY_ENV = "CUSTOMS_E2E_KEY"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_MANIFESTS = (
    "departures.yaml",
    "export-cancellations.yaml",
    "hawbs.yaml",
    "movements.yaml",
    "party-updates.yaml",
    "template-groups.yaml",
)
FIRST_NEW_TRANSIT = 7003
"""New departure declarations are numbered from here (the built-in seed has 7001, 7002)."""


class Sandbox:
    """A running ``customs-batch sandbox serve`` process, its data kept in a SQLite file so
    that it can be restarted with other faults and the same data.

    It runs on a manual clock (``--clock manual``): customs decides only when the test
    moves the clock (``advance_clock``), never because real time passed. With the default
    ``processing_seconds`` of 0 every submission and cancellation is decided by its first
    read; a test that must see one pending sets a processing time and moves the clock past it.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.seed = directory / "seed.yaml"
        self.db = directory / "sandbox.sqlite3"
        seed = yaml.safe_load(builtin_seed_text())
        seed["apiKeys"].append({"key": SECRET, "companyId": 1})
        self.seed.write_text(yaml.safe_dump(seed), encoding="utf-8")
        self.process: subprocess.Popen[str] | None = None
        self.port = 0
        """The port to listen on; 0 lets the system choose one."""
        self.url = ""
        self._client: httpx.Client | None = None
        self._starts = 0
        self.processing_seconds = 0.0
        """Customs' processing time, on the manual clock; kept across restarts."""

    def start(
        self,
        faults: str = "",
        fault_seed: int | None = None,
        *,
        rate_limit: str = "off",
        processing_seconds: float | None = None,
    ) -> None:
        """Start (or start again, on the same data and clock) with ``faults``, a per-key
        ``rate_limit`` (``5/second``; answered 429 past it) and, when given, another
        ``processing_seconds``."""
        self.stop()
        self._starts += 1
        if processing_seconds is not None:
            self.processing_seconds = processing_seconds
        command = [sys.executable, "-m", "customs_batch", "sandbox", "serve", "--port"]
        command += [str(self.port), "--seed", str(self.seed), "--db", str(self.db)]
        command += ["--rate-limit", rate_limit, "--clock", "manual"]
        command += ["--processing-seconds", str(self.processing_seconds), "--faults", faults]
        if fault_seed is not None:
            command += ["--fault-seed", str(fault_seed)]
        log = self.directory / f"server-{self._starts}.log"
        with log.open("w") as stderr:
            self.process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=self.directory
            )
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        if not first.startswith("customs-batch sandbox listening on "):
            self.stop()
            pytest.fail(f"sandbox serve did not start: {first}{log.read_text()}")
        self.url = first.split()[-1]
        self._client = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {SECRET}"}, timeout=10
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 15
        while True:
            try:
                self.client.get("/openapi.json")
                return
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    pytest.fail("sandbox serve never answered")
                time.sleep(0.05)

    @property
    def client(self) -> httpx.Client:
        assert self._client is not None, "the emulator is not running"
        return self._client

    def get(self, path: str, **params: Any) -> Any:
        """GET ``path``; faults strike the API paths (never ``/_sandbox``), so a GET, which
        is safe to repeat, is repeated until it gets through."""
        for _ in range(30):
            try:
                answer = self.client.get(path, params=params)
            except httpx.TransportError:
                continue
            if answer.status_code not in (429, 503):
                answer.raise_for_status()
                return answer.json()
        pytest.fail(f"GET {path} never got through the faults")

    def movements(self) -> list[dict[str, Any]]:
        """Every movement the emulator created."""
        found = self.get("/_sandbox/movements")
        assert isinstance(found, list)
        return found

    def requests(self, method: str, fragment: str) -> int:
        """How many requests ``method`` to a path containing ``fragment`` reached the service."""
        counts = self.get("/_sandbox/stats")["requests"]
        return sum(
            n for name, n in counts.items() if name.startswith(method + " ") and fragment in name
        )

    def created_transit(self) -> dict[int, dict[str, Any]]:
        """The departure declarations created since the seed, by ID, with their details.

        Read without faults: call it while the emulator runs with none (``start()``).
        """
        listed = self.get("/v1/declarations/transit", itemsPerPage=100)
        ids = [r["declarationId"] for r in listed["result"]]
        assert listed["itemCount"] <= 100, "more declarations than one page"
        return {i: self.get(f"/v1/declarations/transit/{i}") for i in ids if i >= FIRST_NEW_TRANSIT}

    def advance_clock(self, seconds: float) -> None:
        """Move customs' clock ``seconds`` forward: what was submitted that long ago is
        decided from now on."""
        moved = self.client.post("/_sandbox/clock", json={"advanceSeconds": seconds})
        moved.raise_for_status()

    def close_gate(self, *, writes: bool = False) -> None:
        """Hold every API request at the door until ``open_gate`` (a race held open); with
        ``writes``, every one but a GET or a HEAD (apply's reads before it sends pass)."""
        setting = {"open": False, "writes": True} if writes else {"open": False}
        self.client.post("/_sandbox/gate", json=setting).raise_for_status()

    def open_gate(self) -> None:
        """Let the held requests, and every later one, through."""
        self.client.post("/_sandbox/gate", json={"open": True}).raise_for_status()

    def wait_until_held(self, count: int = 1, timeout: float = 30) -> None:
        """Return once ``count`` requests wait at the closed gate."""
        deadline = time.monotonic() + timeout
        while self.client.get("/_sandbox/gate").json()["waiting"] < count:
            if time.monotonic() > deadline:
                pytest.fail(f"fewer than {count} request(s) reached the gate in {timeout} s")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL if it hangs)."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None


class Project:
    """A user's project folder pointing at one emulator; runs the real CLI in it."""

    def __init__(self, root: Path, sandbox: Sandbox, *, parallelism: int = 4) -> None:
        self.root = root
        self.sandbox = sandbox
        self.parallelism = parallelism
        self.outputs: list[str] = []
        root.mkdir(parents=True, exist_ok=True)
        self.write_config()

    def environment(self) -> dict[str, Any]:
        """The settings of the ``e2e`` environment: the emulator's current address."""
        return {
            "base_url": self.sandbox.url,
            "api_key_env": KEY_ENV,
            "rate_limit": "off",
            "parallelism": self.parallelism,
            # Short, so that a lost departure is looked for soon after (connect + read).
            "timeouts": {"connect": 5, "read": 10},
            # These runs resume bulk loads that were killed or interrupted, whose rest the
            # large-change guard would stop (tests/cli/test_large_change_guard.py tests it).
            "large_change_guard": {"min_records": 1_000_000},
        }

    def write_config(self) -> None:
        """Write ``customs-batch.yaml`` with the ``e2e`` environment of ``environment()``."""
        config = {"default_environment": "e2e", "environments": {"e2e": self.environment()}}
        (self.root / "customs-batch.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")

    def copy_examples(self) -> None:
        """The examples' manifests (one document set of every kind) and templates, which
        apply cleanly against the seed. A fixed list, so that examples added later (the
        spreadsheet ones) do not change what these tests count."""
        shutil.copytree(EXAMPLES / "templates", self.root / "templates")
        (self.root / "manifests").mkdir()
        for name in EXAMPLE_MANIFESTS:
            shutil.copy(EXAMPLES / "manifests" / name, self.root / "manifests" / name)

    def write(self, relative: str, text: str) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def edit(self, relative: str, old: str, new: str) -> None:
        """Replace ``old`` (which must be there) by ``new`` in a project file."""
        path = self.root / relative
        text = path.read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {relative}"
        path.write_text(text.replace(old, new), encoding="utf-8")

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            KEY_ENV: SECRET,
            "COLUMNS": "200",
            "PYTHONUNBUFFERED": "1",
            "CUSTOMS_BATCH_DEBUG": "",
        }

    def command(self, *argv: str) -> list[str]:
        return [sys.executable, "-m", "customs_batch", *argv]

    def run(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run one command to its end and keep what it printed."""
        done = subprocess.run(
            self.command(*argv),
            capture_output=True,
            text=True,
            cwd=self.root,
            env=self.env(),
            timeout=timeout,
            check=False,
        )
        self.outputs += [done.stdout, done.stderr]
        assert "Traceback" not in done.stderr, done.stderr
        return done

    def start(self, *argv: str) -> Running:
        """Start one command in the background (for kills, signals and races)."""
        process = subprocess.Popen(
            self.command(*argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=self.root,
            env=self.env(),
        )
        return Running(process, self.outputs)

    def state(self) -> dict[str, dict[str, Any]]:
        """Every record, through ``state list --format json`` (which must load the state)."""
        done = self.run("state", "list", "--format", "json")
        assert done.returncode == 0, done.stderr
        listed = json.loads(done.stdout)
        assert listed["formatVersion"] == 2
        records = listed["resources"]
        assert isinstance(records, dict)
        return records

    @property
    def state_dir(self) -> Path:
        return self.root / ".customs-batch" / "e2e"


class Running:
    """A CLI process started in the background, whose output is read line by line.

    Two threads read stdout and stderr as the process writes them, so waiting for a line
    keeps its deadline and nothing read ahead is lost. Every process started is stopped and
    its pipes closed when the test ends (``reap``), whatever the test asserted.
    """

    started: ClassVar[list[Running]] = []

    def __init__(self, process: subprocess.Popen[str], outputs: list[str]) -> None:
        self.process = process
        self.lines: list[str] = []
        self.err_lines: list[str] = []
        self._outputs = outputs
        self._queues: dict[bool, queue.Queue[str | None]] = {
            False: queue.Queue(),
            True: queue.Queue(),
        }
        self._ended = {False: False, True: False}
        assert process.stdout is not None and process.stderr is not None
        self._readers = [
            threading.Thread(target=_pump, args=(stream, self._queues[err]), daemon=True)
            for err, stream in ((False, process.stdout), (True, process.stderr))
        ]
        for reader in self._readers:
            reader.start()
        Running.started.append(self)

    def wait_for_line(
        self, accept: Callable[[str], bool], *, stderr: bool = False, timeout: float = 30
    ) -> str | None:
        """Read stdout (or stderr) until a line ``accept`` takes; None when it ends first."""
        seen = self.err_lines if stderr else self.lines
        deadline = time.monotonic() + timeout
        while not self._ended[stderr]:
            try:
                line = self._queues[stderr].get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no expected line within {timeout} s: {''.join(seen)}")
            if line is None:
                self._ended[stderr] = True
                break
            seen.append(line)
            if accept(line):
                return line
        return None

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        """Wait for the end; the exit code and the whole of stdout and stderr."""
        self.process.wait(timeout=timeout)
        self._drain()
        stdout, err = "".join(self.lines), "".join(self.err_lines)
        self._outputs += [stdout, err]
        assert "Traceback" not in err, err
        return self.process.returncode, stdout, err

    def kill(self) -> None:
        """kill -9, and reap the process."""
        self.process.kill()
        self.finish()

    def reap(self) -> None:
        """Stop the process if it still runs, and close its pipes."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        self._drain()

    def _drain(self) -> None:
        for reader in self._readers:
            reader.join(timeout=30)
        for err, seen in ((False, self.lines), (True, self.err_lines)):
            while not self._ended[err]:
                line = self._queues[err].get()
                if line is None:
                    self._ended[err] = True
                else:
                    seen.append(line)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    @classmethod
    def reap_all(cls) -> None:
        """Stop every process the test started and close its pipes."""
        while cls.started:
            cls.started.pop().reap()


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def assert_secret_nowhere(project: Project) -> None:
    """The key is in nothing the tool printed or wrote: output, state, journal, backups,
    plans, lock notes, anything under the test's folder except the emulator's own seed."""
    for text in project.outputs:
        assert SECRET not in text
    tmp_path = project.root.parent
    written = [
        path
        for path in tmp_path.rglob("*")
        if path.is_file() and project.sandbox.directory not in path.parents
    ]
    state_files = ("state.json", "journal.jsonl")
    assert any(path.name in state_files for path in written), "no state to search"
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    """An emulator of this test only, not yet started (``start(faults=…)``)."""
    directory = tmp_path / "server"
    directory.mkdir()
    server = Sandbox(directory)
    try:
        yield server
    finally:
        Running.reap_all()
        server.stop()


@pytest.fixture(autouse=True)
def _reap_processes() -> Iterator[None]:
    """Whatever a test asserted, no process it started outlives it with open pipes."""
    yield
    Running.reap_all()


@pytest.fixture
def project(tmp_path: Path, sandbox: Sandbox) -> Project:
    """A project folder whose ``e2e`` environment is the emulator, started without faults."""
    sandbox.start()
    return Project(tmp_path / "project", sandbox)
