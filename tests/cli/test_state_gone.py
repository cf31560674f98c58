"""``state rm --gone`` asks the service before it removes a record for good: the next apply
may then send the same declaration again, so an object the service still holds is refused
(against the built-in emulator, in-process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord
from tests.cli.conftest import run

DEPARTURE = "DepartureDeclaration/dep-rtm-ham-0001"
MOVEMENT = "Movement/mov-a1-arrival"


def _state(project: Path) -> LocalBackend:
    return LocalBackend(project / ".customs-batch" / "local")


def _applied(project: Path, capsys: pytest.CaptureFixture[str], *addresses: str) -> None:
    targets = [arg for address in addresses for arg in ("--target", address)]
    code, out, err = run(capsys, "apply", "--auto-approve", *targets)
    assert code == 0, out + err


def test_an_object_the_service_still_holds_is_refused_and_nothing_is_removed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _applied(project, capsys, DEPARTURE, MOVEMENT)
    declared = _state(project).read().resources[DEPARTURE].outputs["declarationId"]

    code, out, err = run(capsys, "state", "rm", "--gone", MOVEMENT, DEPARTURE)

    assert code == 3, out + err
    assert f"{DEPARTURE} still exists at the service, which holds declarationId {declared}" in err
    assert f"`customs-batch state rm {DEPARTURE}`" in err
    resources = _state(project).read().resources
    assert resources[DEPARTURE].status is RecordStatus.APPLIED
    assert resources[MOVEMENT].status is RecordStatus.APPLIED  # the other one too: all or none
    # A tombstone is no way around it.
    assert run(capsys, "state", "rm", DEPARTURE)[0] == 0
    code, _, err = run(capsys, "state", "rm", "--gone", DEPARTURE)
    assert code == 3
    assert "still exists at the service" in err
    assert "keeps a tombstone" not in err  # it has one
    assert _state(project).read().resources[DEPARTURE].status is RecordStatus.FORGOTTEN


def test_an_object_the_service_no_longer_holds_is_removed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _applied(project, capsys, DEPARTURE)
    with _state(project).open("test") as session:  # an ID the service does not know
        record = session.state.resources[DEPARTURE]
        session.record(record.with_changes(outputs={**record.outputs, "declarationId": 99999}))

    code, out, err = run(capsys, "state", "rm", "--gone", DEPARTURE)

    assert code == 0, out + err
    assert "the service no longer holds declarationId 99999" in out
    assert DEPARTURE not in _state(project).read().resources


def test_a_kind_the_api_cannot_read_back_is_removed_saying_it_was_not_checked(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _applied(project, capsys, MOVEMENT)

    code, out, err = run(capsys, "state", "rm", "--gone", MOVEMENT)

    assert code == 0, out + err
    assert "not checked at the service: the API gives no way to read a Movement back" in out
    assert MOVEMENT not in _state(project).read().resources


@pytest.mark.parametrize("tombstone", [False, True])
def test_an_outcome_that_is_unknown_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str], tombstone: bool
) -> None:
    spec = {"commercialReference": "ACME-2026-0001"}
    with _state(project).open("test") as session:  # sent, no answer: no ID known
        session.record(ResourceRecord(DEPARTURE, RecordStatus.UNKNOWN, "submit-departure", spec))
    if tombstone:
        assert run(capsys, "state", "rm", DEPARTURE)[0] == 0

    code, out, err = run(capsys, "state", "rm", "--gone", DEPARTURE)

    assert code == 3, out + err
    assert "the outcome of its last request is unknown" in err
    assert f"`customs-batch state forget {DEPARTURE}`" in err
    assert (f"`customs-batch state restore {DEPARTURE}`" in err) is tombstone
    assert DEPARTURE in _state(project).read().resources
