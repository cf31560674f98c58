"""`refresh`'s words against the built-in emulator: what it found, counted as what it is."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli.conftest import run

GROUP = "TemplateGroup/eu-road"


def _give_the_group_another_code(project: Path, group: str) -> None:
    """Another group at the recorded ID (the sandbox reset and its ID given again)."""
    from customs_batch.state import LocalBackend

    record = LocalBackend(project / ".customs-batch" / "local").read().resources[group]
    database = project / ".customs-batch" / "local" / "sandbox.sqlite3"
    with sqlite3.connect(database) as connection:
        (body,) = connection.execute(
            "SELECT body FROM records WHERE tbl = 'templateGroups' AND id = ?",
            (str(record.outputs["id"]),),
        ).fetchone()
        connection.execute(
            "UPDATE records SET body = ? WHERE tbl = 'templateGroups' AND id = ?",
            (json.dumps({**json.loads(body), "code": "COLLEAGUE"}), str(record.outputs["id"])),
        )


def test_the_summary_counts_another_object_at_the_recorded_id_as_such(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found in review: the summary said "1 no longer found at the service" of a record
    # whose ID the service gave another group: it holds an object there, and the record
    # needs a decision.
    assert run(capsys, "apply", "--auto-approve", "--target", GROUP)[0] == 0
    _give_the_group_another_code(project, GROUP)

    code, out, err = run(capsys, "refresh", "--detailed-exitcode")

    assert code == 1, out + err
    assert f"{GROUP}: " in out and "another object" in out
    assert (
        "0 change(s) found, 0 no longer found at the service, 1 with another object at the "
        "recorded ID (a decision to make)"
    ) in " ".join(err.split())
