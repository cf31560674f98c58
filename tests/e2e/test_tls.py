"""An environment whose service cannot be reached securely: apply stops at the first
handshake instead of retrying every operation, says what to do, records nothing as sent,
and once the environment is fixed the next run sends each document once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import batches
from tests.e2e.conftest import Project, Sandbox
from tests.tls import HandshakeCounter, make_certificate

pytestmark = pytest.mark.e2e


class MovedProject(Project):
    """A project whose ``e2e`` environment points at ``base_url`` while it is set, else at
    the emulator."""

    base_url: str | None = None

    def environment(self) -> dict[str, Any]:
        settings = super().environment()
        if self.base_url is not None:
            settings["base_url"] = self.base_url
        return settings


@pytest.fixture
def untrusted(tmp_path: Path) -> Iterator[HandshakeCounter]:
    certificate = make_certificate(tmp_path)
    server = HandshakeCounter(certificate)
    yield server
    server.close()


def test_an_untrusted_certificate_stops_apply_at_once_and_nothing_is_recorded(
    tmp_path: Path,
    sandbox: Sandbox,
    untrusted: HandshakeCounter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    sandbox.start()
    project = MovedProject(tmp_path / "project", sandbox)
    project.base_url = untrusted.url
    project.write_config()
    project.write("manifests/movements.yaml", batches.movements(per_lane=3, lanes=2))

    done = project.run("apply", "--auto-approve")

    assert done.returncode == 3, done.stdout + done.stderr
    assert "certificate is not trusted here" in done.stderr
    assert "SSL_CERT_FILE" in done.stderr  # the hint: what to do
    assert "0 succeeded" in done.stdout
    untrusted.close()
    # One handshake for each movement that was ready (the first of each lane), none again.
    assert untrusted.connections == 2
    assert project.state() == {}

    project.base_url = None  # the environment fixed: the emulator
    project.write_config()
    again = project.run("apply", "--auto-approve")
    assert again.returncode == 0, again.stdout + again.stderr
    created = sandbox.movements()
    assert len(created) == 6 and not batches.duplicates(created)
