"""The one way to the service: a client, and the state's session under its lock."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.backends import backend_for
from customs_batch.commands.session import locked_session, open_client
from customs_batch.environments import load_project
from customs_batch.errors import StateError


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_session_holds_the_lock_until_both_are_closed(project: Path) -> None:
    environment = load_project().select(None)
    backend = backend_for(environment)
    with locked_session(environment, backend, "refresh", lock_timeout=0.0) as (client, session):
        assert session.lock_info.operation == "refresh"
        assert client.list_template_groups(page_size=1).records
        with pytest.raises(StateError, match="lock"):
            backend_for(environment).open("apply", lock_timeout=0.0)
    # Released on the way out: the next run takes it.
    with backend.open("apply", lock_timeout=0.0) as again:
        assert again.lock_info.operation == "apply"


def test_a_client_alone_takes_no_lock(project: Path) -> None:
    environment = load_project().select(None)
    with open_client(environment) as client:
        assert client.list_shipments().records
        with backend_for(environment).open("apply", lock_timeout=0.0):
            pass
