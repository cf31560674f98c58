"""Fixtures shared by every test: each test runs inside its own tmp_path, with none of the
environment variables the tool reads set by whoever runs the tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from customs_batch.userfiles import forget_files_read
from tests.postgres import PostgresCluster

TOOL_VARIABLE_PREFIX = "CUSTOMS_BATCH_"
"""Every variable of ours (the environment, the bounds, CUSTOMS_BATCH_DEBUG, a state's URL)."""

TOOL_VARIABLES = (
    # A GitHub Actions job: the summary file commands append to, and the job's markers.
    "GITHUB_STEP_SUMMARY",
    "GITHUB_WORKSPACE",
    "GITHUB_ACTIONS",
    "CI",
    # The CI run an apply's history names (GitHub Actions, GitLab CI).
    "GITHUB_RUN_ID",
    "GITHUB_SERVER_URL",
    "GITHUB_REPOSITORY",
    "GITHUB_SHA",
    "GITHUB_ACTOR",
    "CI_JOB_ID",
    "CI_JOB_URL",
    "CI_COMMIT_SHA",
    "GITLAB_USER_LOGIN",
    # What rich reads to choose colour, width and interactivity.
    "NO_COLOR",
    "FORCE_COLOR",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "COLUMNS",
    "LINES",
    "JUPYTER_COLUMNS",
    "JUPYTER_LINES",
    "TERM",
    "COLORTERM",
    # What httpx reads to route a request through a proxy.
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    # What libpq reads to fill in a database URL (host, port, user, password, TLS).
    "PGHOST",
    "PGHOSTADDR",
    "PGPORT",
    "PGDATABASE",
    "PGUSER",
    "PGPASSWORD",
    "PGPASSFILE",
    "PGSERVICE",
    "PGSERVICEFILE",
    "PGSSLMODE",
    "PGOPTIONS",
    "PGAPPNAME",
    "PGCONNECT_TIMEOUT",
    # Where the load cache goes without a project (the isolated HOME's .cache instead).
    "XDG_CACHE_HOME",
)
"""The variables, not ours, that change what the tool does or where it writes."""


def clear_tool_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset every variable the tool reads, for the length of one test."""
    for name in list(os.environ):
        if name.startswith(TOOL_VARIABLE_PREFIX) or name in TOOL_VARIABLES:
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Keep every test away from the user's home, config, working directory and job summary."""
    home = tmp_path / "home"
    home.mkdir()
    clear_tool_variables(monkeypatch)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.chdir(tmp_path)
    # What an earlier test read is no input of this one (an output may replace it).
    forget_files_read()
    yield


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    """A real PostgreSQL server for the whole test session (see tests/postgres.py)."""
    cluster = PostgresCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture
def postgres_url(postgres: PostgresCluster) -> str:
    """The URL of a new, empty database of this test only."""
    return postgres.new_database()
