"""The real CLI against a real ``sandbox serve`` process over HTTP, with a distinctive key.

Covers the read commands over several pages, 401/403/404 in plain words, a rate-limited
service, faults, and the secret search: after every run, the key appears nowhere in what
the tool printed or wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from tests.client.seeds import MANY, big_seed_data

pytestmark = pytest.mark.e2e

SECRET = "e2e-Key-9f3c1d-DoNotLeak"
INSPECTOR = "e2e-inspector-key"
"""A key of the same company for the test's own questions (the counters)."""
CONFIG = """\
environments:
  e2e:
    base_url: {url}
    api_key_env: CB_E2E_KEY
  wrong:
    base_url: {url}
    api_key_env: CB_E2E_WRONG_KEY
  inactive:
    base_url: {url}
    api_key_env: CB_E2E_INACTIVE_KEY
"""


ANNOUNCE = "customs-batch sandbox listening on "


def _serve(directory: Path, *options: str) -> Iterator[str]:
    """``sandbox serve`` on a port the system chooses (--port 0); its URL, from the line it
    prints once it listens (connections wait in its queue from then on)."""
    seed = directory / "seed.yaml"
    data = big_seed_data(SECRET)
    data["apiKeys"].append({"key": INSPECTOR, "companyId": 1})
    seed.write_text(yaml.safe_dump(data), encoding="utf-8")
    command = [sys.executable, "-m", "customs_batch", "sandbox", "serve", "--host", "127.0.0.1"]
    command += ["--port", "0", "--seed", str(seed), *options]
    log_path = directory / "server.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=log, cwd=directory, text=True
        )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        if not first.startswith(ANNOUNCE):
            pytest.fail(f"sandbox serve did not start: {first}{log_path.read_text()}")
        yield first.removeprefix(ANNOUNCE).strip()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An emulator without rate limit, seeded with the distinctive key and big lists."""
    yield from _serve(tmp_path_factory.mktemp("server"), "--rate-limit", "off")


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An emulator allowing one request per second, with some 5xx and dropped connections."""
    yield from _serve(
        tmp_path_factory.mktemp("slow-server"),
        "--rate-limit",
        "1/second",
        "--faults",
        "5xx=0.2,drop=0.1",
        "--fault-seed",
        "7",
    )


def _stats(url: str) -> dict[str, object]:
    """The emulator's counters, asked with a key of their own: the limit is per key, so the
    question never waits for the window the run used up."""
    answer = httpx.get(f"{url}/_sandbox/stats", headers={"Authorization": f"Bearer {INSPECTOR}"})
    assert answer.status_code == 200, answer.text
    stats = answer.json()
    assert isinstance(stats, dict)
    return stats


class Project:
    """A project directory whose environments point at one server; runs the real CLI."""

    def __init__(self, root: Path, url: str) -> None:
        self.root = root
        self.outputs: list[str] = []
        root.mkdir(exist_ok=True)
        (root / "customs-batch.yaml").write_text(CONFIG.format(url=url), encoding="utf-8")

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "CB_E2E_KEY": SECRET,
            "CB_E2E_WRONG_KEY": SECRET + "-revoked",
            "CB_E2E_INACTIVE_KEY": "inactive-key",
            "COLUMNS": "120",
        }
        done = subprocess.run(
            [sys.executable, "-m", "customs_batch", *argv],
            capture_output=True,
            text=True,
            cwd=self.root,
            env=env,
            timeout=120,
            check=False,
        )
        self.outputs += [done.stdout, done.stderr]
        return done


@pytest.fixture
def project(tmp_path: Path, server: str) -> Project:
    return Project(tmp_path / "project", server)


def _assert_secret_nowhere(project: Project, tmp_path: Path) -> None:
    for text in project.outputs:
        assert SECRET not in text
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written, "the run wrote nothing to search"
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path


def test_reads_over_http_and_the_key_never_leaks(project: Project, tmp_path: Path) -> None:
    done = project.run("get", "shipments", "--all", "--format", "json", "--env", "e2e", "--verbose")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)) == MANY + 1
    assert "Bearer ***" in done.stderr
    done = project.run("get", "hawbs", "shp_big", "--all", "--format", "csv", "--env", "e2e", "-v")
    assert len(done.stdout.splitlines()) == MANY + 1
    done = project.run("get", "items", "--all", "--format", "jsonl", "--env", "e2e", "-v")
    assert len(done.stdout.splitlines()) == MANY
    done = project.run("get", "transit", "7001", "--env", "e2e", "-v", "--format", "yaml")
    assert yaml.safe_load(done.stdout)["declarationId"] == 7001
    done = project.run("get", "template-groups", "--env", "e2e", "-v")
    assert done.returncode == 0
    assert "more with --page 2" in done.stdout
    assert project.run("env", "check", "--env", "e2e", "-v").returncode == 0
    assert project.run("env", "show", "e2e").returncode == 0
    _assert_secret_nowhere(project, tmp_path)


def test_404_401_403_are_one_plain_line(project: Project, tmp_path: Path) -> None:
    done = project.run("get", "declaration", "999", "--env", "e2e", "-v")
    assert done.returncode == 3
    assert "not found" in done.stderr.splitlines()[-1]
    done = project.run("get", "shipments", "--env", "wrong")
    assert done.returncode == 3
    assert len(done.stderr.strip().splitlines()) == 1
    assert "rejected the API key" in done.stderr
    done = project.run("env", "check", "--env", "wrong", "-v")
    assert done.returncode == 3
    assert "invalid or expired (401)" in done.stderr
    done = project.run("env", "check", "--env", "inactive")
    assert done.returncode == 3
    assert "refuses it (403)" in done.stderr
    _assert_secret_nowhere(project, tmp_path)


def test_a_rate_limited_faulty_service_still_answers(slow_server: str, tmp_path: Path) -> None:
    project = Project(tmp_path / "project", slow_server)
    done = project.run("get", "shipments", "--all", "--format", "json", "--env", "e2e", "-v")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)) == MANY + 1
    assert int(str(_stats(slow_server)["rateLimited"])) >= 1
    _assert_secret_nowhere(project, tmp_path)
