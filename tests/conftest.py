"""Fixtures shared by every test: each test runs inside its own tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.postgres import PostgresCluster


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Keep every test away from the user's home, config and working directory."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("CUSTOMS_BATCH_ENV", raising=False)
    monkeypatch.chdir(tmp_path)
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
