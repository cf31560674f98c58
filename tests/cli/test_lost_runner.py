"""A runner lost outright (its machine gone) keeps nothing of its run: the next run starts
from the state kept before it, against the built-in emulator, which kept what the lost run
sent. Its movements are sent again under the same Idempotency-Keys, and the service answers
with the ones the lost run made instead of making each a second time."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

from customs_batch.sandbox import InProcessTransport, create_app
from customs_batch.state import LocalBackend
from tests.cli.conftest import run

KEPT = ("state.json", "journal.jsonl", "history.jsonl")
"""The files of the state folder a CI job keeps (commits) after its run."""


def movements_at_the_service(folder: Path) -> list[str]:
    """The ID of every movement the emulator of ``folder`` holds, as it lists them."""
    app = create_app(db_path=folder / "sandbox.sqlite3", rate_limit=None)
    transport = InProcessTransport(app)
    headers = {"Authorization": "Bearer sandbox-key"}
    try:
        with httpx.Client(transport=transport, base_url="http://sandbox.local") as client:
            answer = client.get("/_sandbox/movements", headers=headers)
            assert answer.status_code == 200, answer.text
            return [movement["movementId"] for movement in answer.json()]
    finally:
        transport.close()


def movements_recorded(folder: Path) -> list[str]:
    """The movement ID of every movement the state of ``folder`` records."""
    records = LocalBackend(folder).read().resources
    return sorted(
        str(record.outputs["movementId"])
        for address, record in records.items()
        if address.startswith("Movement/")
    )


def test_a_run_again_from_the_state_before_a_lost_one_makes_no_second_movement(
    project: Path, capsys: pytest.CaptureFixture[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = project / ".customs-batch" / "local"
    code, out, err = run(capsys, "apply", "--auto-approve", "-l", "lane=rtm-ham")
    assert code == 0, out + err
    kept = tmp_path_factory.mktemp("kept")
    for name in KEPT:  # the state the job before committed
        if (folder / name).exists():
            shutil.copy2(folder / name, kept / name)

    code, out, err = run(capsys, "apply", "--auto-approve")  # the lost run
    assert code == 0, out + err
    movements = movements_recorded(folder)
    assert movements and sorted(movements_at_the_service(folder)) == movements

    for name in KEPT:  # its runner lost: nothing of what it recorded was kept
        (folder / name).unlink(missing_ok=True)
        if (kept / name).exists():
            shutil.copy2(kept / name, folder / name)
    (folder / "state.json.backup").unlink(missing_ok=True)

    code, out, err = run(capsys, "apply", "--auto-approve")
    assert "Movement/" in out, out + err
    # Its departures are held for a decision (tests/e2e/test_lost_runner.py), not declared
    # again; the movements go.
    assert code == 1, out + err
    assert "? needs decision DepartureDeclaration/dep-rtm-ant-0002" in out
    assert sorted(movements_at_the_service(folder)) == movements  # each movement once
    assert movements_recorded(folder) == movements  # recorded as the ones the lost run made
