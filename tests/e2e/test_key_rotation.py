"""A key rotated while apply runs, against a real ``sandbox serve``: the emulator revokes
the key while the run's first request waits at its gate, the key file gets the new key, and
the run goes on with it; with the key file unchanged, the run stops at the 401 as before.
The race is held open by the emulator's gate, never by timing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e import batches
from tests.e2e.conftest import SECRET, Project, Sandbox, assert_secret_nowhere

pytestmark = pytest.mark.e2e

NEW_SECRET = "h8-e2e-Rotated-0b7d24c1-NeverWritten"


class KeyFileProject(Project):
    """A project whose ``e2e`` environment reads its key from a file outside the folder."""

    def __init__(self, root: Path, sandbox: Sandbox, key_file: Path) -> None:
        self.key_file = key_file
        key_file.parent.mkdir(parents=True, exist_ok=True)
        key_file.write_text(SECRET + "\n", encoding="utf-8")
        key_file.chmod(0o600)
        super().__init__(root, sandbox, parallelism=2)

    def environment(self) -> dict[str, Any]:
        settings = super().environment()
        del settings["api_key_env"]
        return {**settings, "api_key_file": str(self.key_file)}


@pytest.fixture
def project(tmp_path: Path, sandbox: Sandbox) -> KeyFileProject:
    sandbox.start()
    made = KeyFileProject(tmp_path / "project", sandbox, tmp_path / "keys" / "customs.key")
    made.write("manifests/movements.yaml", batches.movements(per_lane=5, lanes=2))
    return made


def _rotate_at_the_service(sandbox: Sandbox) -> None:
    """The operator rotates the key: from now on the old one is answered 401."""
    sandbox.client.post("/_sandbox/keys/rotate", json={"newKey": NEW_SECRET}).raise_for_status()
    sandbox.client.headers["Authorization"] = f"Bearer {NEW_SECRET}"


def _held_at_the_gate(project: KeyFileProject) -> Any:
    """An apply whose first request(s) wait at the emulator's closed gate."""
    project.sandbox.close_gate()
    run = project.start("apply", "--auto-approve")
    project.sandbox.wait_until_held(1)
    return run


def test_a_key_rotated_mid_run_is_read_again_and_the_run_completes_with_no_duplicates(
    project: KeyFileProject, sandbox: Sandbox
) -> None:
    run = _held_at_the_gate(project)
    _rotate_at_the_service(sandbox)
    project.key_file.write_text(NEW_SECRET + "\n", encoding="utf-8")
    sandbox.open_gate()
    code, stdout, stderr = run.finish()
    assert code == 0, stdout + stderr
    assert "Apply: 10 succeeded, 0 failed" in stdout
    assert "the service refused the API key, and its source holds a new one" in stderr

    stats = sandbox.get("/_sandbox/stats")
    refused = stats["unauthenticated"]
    assert 1 <= refused <= 2  # what waited at the gate (parallelism 2), sent once more
    assert sandbox.requests("POST", "/movements") == 10 + refused
    created = sandbox.movements()
    assert len(created) == 10 and not batches.duplicates(created)
    records = project.state()
    assert {r["status"] for r in records.values()} == {"applied"}
    assert {r["outputs"]["movementId"] for r in records.values()} == {
        m["movementId"] for m in created
    }
    assert_secret_nowhere(project)
    for text in project.outputs:
        assert NEW_SECRET not in text
    for path in project.state_dir.rglob("*"):
        assert NEW_SECRET.encode() not in path.read_bytes()


def test_a_401_with_the_key_unchanged_stops_the_run_as_before(
    project: KeyFileProject, sandbox: Sandbox
) -> None:
    run = _held_at_the_gate(project)
    _rotate_at_the_service(sandbox)  # the key file still holds the old key
    sandbox.open_gate()
    code, stdout, stderr = run.finish()
    assert code == 3, stdout + stderr
    assert "the service rejected the API key" in stderr
    assert "sending again with the new key" not in stderr
    assert sandbox.movements() == []
    assert sandbox.get("/_sandbox/stats")["unauthenticated"] <= 2  # nothing more was sent
    assert not any(r["status"] == "applied" for r in project.state().values())

    project.key_file.write_text(NEW_SECRET + "\n", encoding="utf-8")
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    created = sandbox.movements()
    assert len(created) == 10 and not batches.duplicates(created)
    assert_secret_nowhere(project)
