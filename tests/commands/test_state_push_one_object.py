"""``state push`` of a state in which two records stand for one object (a hand edit of the
pulled copy that gave a record another's ID) is refused, as ``import`` and ``state adopt``
refuse to record an ID another record holds: the next apply would send one document's
values to the other's object."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.backends import backend_for
from customs_batch.commands.state import StateOptions, push_state
from customs_batch.environments import load_project
from customs_batch.errors import ExitCode, StateError
from customs_batch.state import RecordStatus, ResourceRecord, State

ROAD = "TemplateGroup/eu-road"
IMPORTS = "TemplateGroup/imports"


def _group(address: str, ident: object, code: str, **changes: object) -> ResourceRecord:
    record = ResourceRecord(
        address=address,
        status=RecordStatus.APPLIED,
        operation="create-template-group",
        spec={"name": code, "code": code, "companyId": 1},
        outputs={"id": ident, "code": code, "name": code},  # type: ignore[dict-item]
        identity=("companyId=1", f"code={code}"),
        updated_at="2026-11-29T08:00:00.000Z",
    )
    return record.with_changes(**changes) if changes else record


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CB_KEY", "sandbox-key")
    (tmp_path / "customs-batch.yaml").write_text(
        "environments:\n  e: {base_url: http://customs.push.test, api_key_env: CB_KEY}\n"
    )
    return tmp_path


def _options() -> StateOptions:
    return StateOptions("e", allow_empty_state=True)


def _stored() -> State:
    return backend_for(load_project().select("e"), allow_empty_state=True).read()


def _pushed_first() -> State:
    first = State(lineage="11111111-2222-3333-4444-555555555555", serial=1, resources={})
    first.resources[ROAD] = _group(ROAD, 2, "EU-ROAD")
    first.resources[IMPORTS] = _group(IMPORTS, 3, "IMP-X")
    push_state(_options(), first, force=False)
    return _stored()


@pytest.mark.parametrize("ident", [2, "2"])
def test_push_refuses_a_record_given_the_id_another_record_holds(
    project: Path, ident: object
) -> None:
    current = _pushed_first()
    edited = State(lineage=current.lineage, serial=current.serial + 1, resources={})
    edited.resources.update(current.resources)
    edited.resources[IMPORTS] = _group(IMPORTS, ident, "IMP-X")
    with pytest.raises(StateError) as refused:
        push_state(_options(), edited, force=False)
    error = refused.value
    assert error.exit_code is ExitCode.ERROR
    assert f"{IMPORTS} of the pushed state holds 2, which its record of {ROAD} holds too" in (
        error.message
    )
    assert "Nothing was pushed" in error.message
    assert _stored().resources[IMPORTS].outputs["id"] == 3
    # --force replaces a state of another lineage or serial, never makes one object two.
    with pytest.raises(StateError):
        push_state(_options(), edited, force=True)
    # A tombstone holds its object too (import counts it the same way).
    edited.resources[ROAD] = current.resources[ROAD].with_changes(
        status=RecordStatus.FORGOTTEN, forgotten_from=RecordStatus.APPLIED.value
    )
    with pytest.raises(StateError):
        push_state(_options(), edited, force=False)
    assert _stored().resources[IMPORTS].outputs["id"] == 3


def test_push_passes_what_it_does_not_bring_and_an_id_given_again(project: Path) -> None:
    current = _pushed_first()
    # The service gave 2 again (a sandbox reset) and refresh found eu-road's object gone:
    # the new group's record holds 2 as its own.
    again = State(lineage=current.lineage, serial=current.serial + 1, resources={})
    again.resources.update(current.resources)
    again.resources[ROAD] = current.resources[ROAD].with_changes(
        not_found_at="2026-11-29T08:10:00.000Z"
    )
    again.resources[IMPORTS] = _group(IMPORTS, 2, "IMP-X")
    push_state(_options(), again, force=False)
    assert _stored().resources[IMPORTS].outputs["id"] == 2
    # Pushed back as pulled: nothing the push brings is new.
    pulled = _stored()
    back = State(lineage=pulled.lineage, serial=pulled.serial + 1, resources={})
    back.resources.update(pulled.resources)
    back.resources[ROAD] = pulled.resources[ROAD].with_changes(not_found_at=None)
    push_state(_options(), back, force=False)
