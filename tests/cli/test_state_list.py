"""``state list`` prints every record, one batch of lines at a time, as it always printed them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from customs_batch.cli.main import invoke
from customs_batch.state import RecordStatus, ResourceRecord, State
from customs_batch.state.file import write_state


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> State:
    """A state of 2,500 records (more than one batch) in the default environment's folder."""
    state = State(lineage="lin-1", serial=3)
    for number in range(2_500):
        address = f"Movement/mov-{number:05d}"
        status = RecordStatus.PENDING if number % 7 == 0 else RecordStatus.APPLIED
        state.apply(
            address,
            ResourceRecord(
                address,
                status,
                "create-movement",
                {"hawbId": f"hawb-{number}", "consignee": "Müller & Søn", "weight": 10.5},
                outputs={"movementId": f"mov_{number}", "b": 1} if number % 3 else {},
                updated_at="2026-11-21T06:00:00.000Z",
            ),
        )
    folder = tmp_path / ".customs-batch" / "local"
    folder.mkdir(parents=True)
    write_state(folder / "state.json", state)
    monkeypatch.chdir(tmp_path)
    return state


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = invoke(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_json_list_is_the_whole_state_as_one_json_object(
    state: State, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "state", "list", "--format", "json")
    assert code == 0, err
    resources = {a: state.resources[a].to_json() for a in sorted(state.resources)}
    body = {"formatVersion": 2, "resources": resources}
    assert out == json.dumps(body, indent=2, sort_keys=True) + "\n"


def test_the_text_list_has_one_line_per_record_in_address_order(
    state: State, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "state", "list")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 2_500
    assert lines[0] == "Movement/mov-00000  needs-decision"
    assert lines[1] == "Movement/mov-00001  applied  b=1 movementId=mov_1"
    assert lines == sorted(lines)


def test_an_empty_state_lists_nothing_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "state", "list") == (0, "", "The state is empty.\n")
    empty = json.dumps({"formatVersion": 2, "resources": {}}, indent=2, sort_keys=True) + "\n"
    assert run(capsys, "state", "list", "--format", "json") == (0, empty, "")


def test_an_unknown_outcome_the_next_apply_repeats_is_no_decision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A movement sent with a key still honoured is re-sent with it (the service replays
    # it): nothing to decide (and `state forget` keeps its key while it is honoured).
    # A departure whose answer was lost needs one.
    just_now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    state = State(lineage="lin-1", serial=3)
    for address, operation, key in (
        ("Movement/m", "create-movement", "key-1"),
        ("DepartureDeclaration/d", "submit-departure", None),
        ("ExportCancellation/c", "cancel-export", None),
    ):
        state.apply(
            address,
            ResourceRecord(
                address, RecordStatus.PENDING, operation, {}, idempotency_key=key,
                updated_at=just_now,
            ),
        )  # fmt: skip
    folder = tmp_path / ".customs-batch" / "local"
    folder.mkdir(parents=True)
    write_state(folder / "state.json", state)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "state", "list")
    assert code == 0, err
    assert out.splitlines() == [
        "DepartureDeclaration/d  needs-decision",
        "ExportCancellation/c  pending",
        "Movement/m  pending",
    ]
    code, out, err = run(capsys, "status", "--format", "json")
    assert code == 0, err
    shown = json.loads(out)  # (a movement has no state at the service worth following)
    assert [(e["address"], e["lifecycle"]) for e in shown["declarations"]] == [
        ("DepartureDeclaration/d", "needs-decision"),
        ("ExportCancellation/c", "unknown"),
    ]
    assert "the next apply repeats it" in shown["declarations"][1]["message"]
    assert shown["summary"]["blocking"] == 1


def test_status_calls_a_departure_customs_still_processes_pending_as_results_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    state = State(lineage="lin-1", serial=3)
    address = "DepartureDeclaration/d"
    state.apply(
        address,
        ResourceRecord(
            address, RecordStatus.APPLIED, "submit-departure", {},
            outputs={"declarationId": 7003, "status": "processing"},
            remote_status="processing",
        ),
    )  # fmt: skip
    folder = tmp_path / ".customs-batch" / "local"
    folder.mkdir(parents=True)
    write_state(folder / "state.json", state)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "status", "--format", "json")
    assert code == 0, err
    shown = json.loads(out)
    [entry] = shown["declarations"]
    assert (entry["serviceState"], entry["pending"]) == ("processing", True)
    assert shown["summary"]["pending"] == 1


def test_a_party_update_shows_its_declarations_status_as_its_departures_record_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by an outside probe: a party update was sent when its declaration was ready;
    # the departure's own parties were then updated (processing again). `state list`
    # showed the departure `status=processing` and the party update `status=ready`, the
    # status of the time it was sent, though both name one declaration.
    state = State(lineage="lin-1", serial=3)
    at = "2026-11-21T06:00:00.000Z"
    records = [
        ResourceRecord(
            "DepartureDeclaration/d",
            RecordStatus.APPLIED,
            "submit-departure",
            {"commercialReference": "CR-1"},
            outputs={"declarationId": 7003, "status": "processing"},
            remote_status="processing",
            updated_at=at,
        ),
        ResourceRecord(
            "TransitPartyUpdate/u",
            RecordStatus.APPLIED,
            "update-transit-parties",
            {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
            outputs={"declarationId": 7003, "status": "ready"},
            updated_at=at,
        ),
        ResourceRecord(  # a declaration made elsewhere: no record of it to read
            "TransitPartyUpdate/v",
            RecordStatus.APPLIED,
            "update-transit-parties",
            {"declarationId": 7009, "Consignee": {"eoriNo": "DE2"}},
            outputs={"declarationId": 7009, "status": "ready"},
            updated_at=at,
        ),
    ]
    for record in records:
        state.apply(record.address, record)
    folder = tmp_path / ".customs-batch" / "local"
    folder.mkdir(parents=True)
    write_state(folder / "state.json", state)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "state", "list")
    assert code == 0, err
    lines = out.splitlines()
    assert "TransitPartyUpdate/u  applied  declarationId=7003 status=processing" in lines
    assert "TransitPartyUpdate/v  applied  declarationId=7009 status=ready" in lines


def test_the_services_text_in_a_record_is_listed_as_it_is_its_escapes_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by a probe: another client renamed a group "x\x1b[2J z" at the service and
    # refresh recorded it; `state list` passed the escape to the terminal (clearing it),
    # and piped, click dropped it: the line said "x z", which is not the name.
    state = State(lineage="lin-1", serial=1)
    address = "TemplateGroup/g"
    record = ResourceRecord(
        address,
        RecordStatus.APPLIED,
        "create-template-group",
        {"name": "grp", "code": "G1", "companyId": 1},
        outputs={"id": 4, "name": "x\x1b[2J\nz"},
        updated_at="2026-11-21T06:00:00.000Z",
    )
    state.apply(address, record)
    folder = tmp_path / ".customs-batch" / "local"
    folder.mkdir(parents=True)
    write_state(folder / "state.json", state)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "state", "list")
    assert code == 0, err
    assert out == "TemplateGroup/g  applied  id=4 name=x\\x1b[2J\\nz\n"


def test_status_prints_the_services_words_with_their_escapes_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The service's errors (which may quote what a document sent, a YAML "\e" included)
    # and status reach `status` as they came: a terminal escape in them is printed as its
    # escape, never passed to the terminal.
    state = State(lineage="lin-1", serial=3)
    address = "DepartureDeclaration/d"
    state.apply(
        address,
        ResourceRecord(
            address, RecordStatus.APPLIED, "submit-departure", {},
            outputs={"declarationId": 7003, "status": "invalid"},
            remote_status="invalid\x1b[2J",
            remote_errors=({"field": "Consignee.city", "message": "unknown city 'K\x1b[31m'"},),
        ),
    )  # fmt: skip
    folder = tmp_path / ".customs-batch" / "local"
    folder.mkdir(parents=True)
    write_state(folder / "state.json", state)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "status")
    assert code in (0, 1) and "internal error" not in err, err
    assert "\x1b" not in out, out
    assert "invalid\\x1b[2J" in out and "K\\x1b[31m" in out, out


def test_status_lists_party_updates_with_their_declarations_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found in review: `status` listed departures and cancellations only, so a party update
    # applied (its declaration sent back to processing) was in no line of it. It is listed,
    # with its declaration's state as its departure's record holds it (that record is what
    # refresh and the departure's own updates change), or as its last answer gave it for a
    # declaration made elsewhere.
    state = State(lineage="lin-1", serial=3)
    records = [
        ResourceRecord(
            "DepartureDeclaration/d", RecordStatus.APPLIED, "submit-departure",
            {"commercialReference": "CR-1"},
            outputs={"declarationId": 7003, "status": "processing"},
            remote_status="processing",
        ),
        ResourceRecord(
            "TransitPartyUpdate/u", RecordStatus.APPLIED, "update-transit-parties",
            {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
            outputs={"declarationId": 7003, "status": "ready"},
            remote_status="ready",
        ),
        ResourceRecord(
            "TransitPartyUpdate/v", RecordStatus.APPLIED, "update-transit-parties",
            {"declarationId": 7009, "Consignee": {"eoriNo": "DE2"}},
            outputs={"declarationId": 7009, "status": "ready"},
        ),
    ]  # fmt: skip
    for record in records:
        state.apply(record.address, record)
    folder = tmp_path / ".customs-batch" / "local"
    folder.mkdir(parents=True)
    write_state(folder / "state.json", state)
    monkeypatch.chdir(tmp_path)

    code, out, err = run(capsys, "status", "--format", "json")

    assert code == 0, err
    shown = {e["address"]: e for e in json.loads(out)["declarations"]}
    assert [(a, e["id"], e["serviceState"], e["pending"]) for a, e in shown.items()] == [
        ("DepartureDeclaration/d", 7003, "processing", True),
        ("TransitPartyUpdate/u", 7003, "processing", True),
        ("TransitPartyUpdate/v", 7009, "ready", False),
    ]
    code, out, err = run(capsys, "status")
    assert code == 0, err
    assert "TransitPartyUpdate/v  7009  ready" in out.splitlines()
    assert any(
        line.startswith("TransitPartyUpdate/u  7003  processing") for line in out.splitlines()
    )
