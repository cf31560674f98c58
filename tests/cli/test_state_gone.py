"""``state rm --gone`` asks the service before it removes a record for good: the next apply
may then send the same declaration again, so an object the service still holds is refused
(against the built-in emulator, in-process)."""

from __future__ import annotations

import contextlib
import json
import shlex
import sqlite3
from datetime import UTC, datetime, timedelta
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

    code, out, err = run(capsys, "state", "rm", "--gone", DEPARTURE, MOVEMENT)

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


@pytest.mark.parametrize("tombstone", [False, True])
def test_a_kind_the_api_cannot_read_back_is_refused_and_nothing_is_removed(
    project: Path, capsys: pytest.CaptureFixture[str], tombstone: bool
) -> None:
    # Nothing can confirm a movement gone: removed on the user's word, the next plan would
    # create it again, a second movement at the service.
    _applied(project, capsys, MOVEMENT)
    if tombstone:
        code, out, _ = run(capsys, "state", "rm", MOVEMENT)
        assert code == 0
        assert "--gone" not in out  # not the way to a recipe that is refused
        assert "nothing can confirm it gone" in " ".join(out.split())

    code, out, err = run(capsys, "state", "rm", "--gone", MOVEMENT)

    assert code == 3, out + err
    said = " ".join(err.split())
    assert "the API gives no way to read a Movement back" in said
    assert "Nothing was removed" in said
    assert (f"`customs-batch state rm {MOVEMENT}` stops tracking it" in said) is not tombstone
    assert "corrected by a new one" in said
    record = _state(project).read().resources[MOVEMENT]
    assert record.status is (RecordStatus.FORGOTTEN if tombstone else RecordStatus.APPLIED)
    code, out, err = run(capsys, "plan", "--target", MOVEMENT)
    assert "+ create" not in out, out + err


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


def test_the_recipe_the_refusal_of_an_edited_departure_gives_submits_the_corrected_one(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The user edits a submitted departure; plan refuses it and says what to do when the
    # declaration itself is wrong. Followed as written once customs cancelled it, the
    # corrected document is submitted as a new declaration.
    _applied(project, capsys, DEPARTURE)
    first = _state(project).read().resources[DEPARTURE].outputs["declarationId"]
    departures = project / "manifests" / "departures.yaml"
    text = departures.read_text(encoding="utf-8")
    assert text.count("totalWeight: 137.5") == 1
    departures.write_text(text.replace("totalWeight: 137.5", "totalWeight: 140"), "utf-8")

    code, out, err = run(capsys, "plan", "--target", DEPARTURE)
    recipe = f"`customs-batch state rm --gone {DEPARTURE}`"
    assert recipe in " ".join((out + err).split()), out + err
    # While customs holds it, the recipe refuses, and nothing is sent again.
    code, out, err = run(capsys, "state", "rm", "--gone", DEPARTURE)
    assert code == 3 and "still exists at the service" in err

    # Customs cancels the declaration (outside the API): the emulator's record says so.
    database = sqlite3.connect(project / ".customs-batch" / "local" / "sandbox.sqlite3")
    with contextlib.closing(database):
        (body,) = database.execute(
            "SELECT body FROM records WHERE tbl = 'transitDeclarations' AND id = ?",
            (str(first),),
        ).fetchone()
        database.execute(
            "UPDATE records SET body = ? WHERE tbl = 'transitDeclarations' AND id = ?",
            (json.dumps({**json.loads(body), "status": "canceled"}), str(first)),
        )
        database.commit()

    code, out, err = run(capsys, *shlex.split(recipe.strip("`"))[1:])
    assert code == 0, out + err
    _applied(project, capsys, DEPARTURE)
    record = _state(project).read().resources[DEPARTURE]
    assert record.status is RecordStatus.APPLIED
    assert record.outputs["declarationId"] != first
    assert record.spec["totalWeight"] == 140


def test_a_forgotten_movement_s_refusals_name_no_recipe_that_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `state rm` twice, or `state forget`, of a forgotten movement pointed at `state rm
    # --gone`, which refuses a movement (the API cannot read it back).
    _applied(project, capsys, MOVEMENT)
    assert run(capsys, "state", "rm", MOVEMENT)[0] == 0
    for argv in (("state", "rm", MOVEMENT), ("state", "forget", MOVEMENT)):
        code, out, err = run(capsys, *argv)
        said = " ".join(err.split())
        assert code == 3, out + err
        assert "--gone" not in said and "stays forgotten for good" in said, said
        assert f"state restore {MOVEMENT}" in said


def test_a_party_update_whose_declaration_was_gone_is_not_taken_as_written_to_its_successor(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # After a sandbox reset the departure and its party update are not found; the departure,
    # removed with --gone, is submitted again and given the same number. The update's
    # declaration found there again is the new one, which never received its parties: the
    # plan must not call it unchanged, and the way out it names must send them there.
    update = "TransitPartyUpdate/dep-rtm-ham-0001-consignee"
    _applied(project, capsys, DEPARTURE, update)
    declared = _state(project).read().resources[DEPARTURE].outputs["declarationId"]
    assert isinstance(declared, int)
    reset = declared + 1  # the number the service gives next: the state's, after a reset
    # Written a minute before the reset: the declaration submitted again is made after it.
    written = (datetime.now(UTC) - timedelta(minutes=1)).isoformat(timespec="milliseconds")
    with _state(project).open("test") as session:
        for address in (DEPARTURE, update):
            record = session.state.resources[address]
            outputs = {**record.outputs, "declarationId": reset}
            spec = {**record.spec, "declarationId": reset} if address == update else record.spec
            session.record(
                record.with_changes(
                    outputs=outputs, spec=spec, updated_at=written.replace("+00:00", "Z")
                )
            )
    assert run(capsys, "refresh")[0] == 0
    assert run(capsys, "state", "rm", "--gone", DEPARTURE)[0] == 0
    # The emulator still lists the declaration this test takes as gone with the reset:
    # apply holds the departure for it (a lost run's, as far as it can tell), and the user
    # says it is not.
    code, out, err = run(capsys, "apply", "--auto-approve", "--target", DEPARTURE)
    assert code == 1 and f"with this document's values: {declared}." in out, out + err
    assert run(capsys, "state", "forget", DEPARTURE)[0] == 0
    _applied(project, capsys, DEPARTURE)
    assert _state(project).read().resources[DEPARTURE].outputs["declarationId"] == reset

    run(capsys, "refresh")
    code, out, err = run(capsys, "plan", "--target", update)

    assert "1 need a decision" in out, out + err
    # Made after the update's write, the declaration at the number is another one.
    assert f"the service holds another object at {reset} than the one recorded" in out
    code, out, err = run(capsys, "state", "rm", "--gone", update)
    assert code == 0, out + err
    code, out, err = run(capsys, "apply", "--auto-approve", "--target", update)
    assert code == 0, out + err
    assert f"done     {update}  declarationId={reset}" in out
