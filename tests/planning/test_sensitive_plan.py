"""Plan compares a sensitive value by its digest: a changed access code is a change, the
same code is none, and a saved plan holds only the digest, restored from the manifests at
apply."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from customs_batch.client import RateLimit
from customs_batch.kinds import Kind
from customs_batch.planning import plan_changes
from customs_batch.planning.model import Action
from customs_batch.planning.planfile import (
    PlanFileError,
    digest_documents,
    needs_manifests,
    read_plan,
    restore_sensitive,
    write_plan,
)
from customs_batch.reports import PlanView, render_plan
from customs_batch.sensitive import Sealer, is_digest
from customs_batch.state import RecordStatus, ResourceRecord, State

from .helpers import doc

CODE = "Zx-acc-9137"
SEALER = Sealer(lambda: "key-of-the-test")


def _spec(code: str) -> dict[str, Any]:
    return {
        "declarationType": "EX",
        "DeclarationGuarantees": [{"guaranteeType": "1", "accessCode": code}],
    }


def _departure(code: str) -> Any:
    return doc(Kind.DEPARTURE_DECLARATION, "dep-1", _spec(code), 0)


def _state(code: str, sealer: Sealer = SEALER) -> State:
    state = State(lineage="lin", serial=3, sealer=sealer)
    state.apply(
        "DepartureDeclaration/dep-1",
        ResourceRecord(
            "DepartureDeclaration/dep-1",
            RecordStatus.APPLIED,
            "create",
            _spec(code),
            {"declarationId": 7},
            remote_status="processing",
        ),
    )
    return state


def test_the_record_holds_a_digest_and_the_same_code_is_no_change() -> None:
    state = _state(CODE)
    kept = state.resources["DepartureDeclaration/dep-1"].spec["DeclarationGuarantees"][0]
    assert is_digest(kept["accessCode"])
    plan = plan_changes([_departure(CODE)], state)
    assert [c.action for c in plan.changes] == [Action.NO_CHANGE]


def test_a_changed_code_is_a_change_shown_only_as_sensitive() -> None:
    plan = plan_changes([_departure("Zx-acc-0000")], _state(CODE))
    (change,) = plan.changes
    assert change.action is Action.REFUSED  # a departure's guarantees are fixed
    assert [v.path for v in change.values] == ["DeclarationGuarantees[0].accessCode"]
    assert all(is_digest(v.old) and is_digest(v.new) for v in change.values)
    for name in ("text", "json", "markdown"):
        shown = render_plan(name, PlanView(plan, "local", RateLimit(None, 60), True))
        assert CODE not in shown and "Zx-acc-0000" not in shown, name


def test_a_digest_made_under_another_key_cannot_be_compared_and_is_left() -> None:
    state = _state(CODE, sealer=Sealer(lambda: "the key before its rotation"))
    state.sealer = SEALER
    plan = plan_changes([_departure("Zx-acc-0000")], state)
    assert [c.action for c in plan.changes] == [Action.NO_CHANGE]


def test_a_saved_plan_holds_a_digest_and_apply_restores_the_code(tmp_path: Path) -> None:
    plan = plan_changes([_departure(CODE)], State(lineage="", serial=0, sealer=SEALER))
    assert plan.changes[0].action is Action.CREATE
    path = tmp_path / "p.plan"
    write_plan(path, plan, environment="local", sealer=SEALER, manifests=["manifests"])
    assert CODE not in path.read_text()
    body = json.loads(path.read_text())
    assert body["manifests"] == ["manifests"]
    saved = read_plan(path, environment="local")
    assert needs_manifests(saved)

    restored = restore_sensitive(
        saved, {"DepartureDeclaration/dep-1": _spec(CODE)}, SEALER, source=path
    )
    assert restored.changes[0].spec == _spec(CODE)
    assert not needs_manifests(restored)

    with pytest.raises(PlanFileError, match="not the value the plan was made with"):
        restore_sensitive(
            saved, {"DepartureDeclaration/dep-1": _spec("other")}, SEALER, source=path
        )
    with pytest.raises(PlanFileError, match="no longer hold DepartureDeclaration/dep-1"):
        restore_sensitive(saved, {}, SEALER, source=path)


@pytest.mark.parametrize("code", [CODE, "other"])
def test_a_saved_plan_applied_under_another_api_key_says_the_key_differs(
    tmp_path: Path, code: str
) -> None:
    # A key rotated (or mistyped) since plan -out: the digest's key tells it from a changed
    # code, which the manifests may or may not hold.
    plan = plan_changes([_departure(CODE)], State(lineage="lin", serial=0, sealer=SEALER))
    path = tmp_path / "p.plan"
    write_plan(path, plan, environment="remote", sealer=SEALER, manifests=["manifests"])
    saved = read_plan(path, environment="remote")
    with pytest.raises(PlanFileError) as caught:
        restore_sensitive(
            saved,
            {"DepartureDeclaration/dep-1": _spec(code)},
            Sealer(lambda: "the key after its rotation"),
            source=path,
            environment="remote",
        )
    message = str(caught.value)
    assert "the API key environment 'remote' uses now is not the one the plan was made" in message
    assert "DepartureDeclaration/dep-1 DeclarationGuarantees[0].accessCode" in message
    assert "manifests changed" not in message
    assert caught.value.hint is not None
    assert "`customs-batch env check --env remote`" in caught.value.hint
    assert "`customs-batch plan -out FILE --env remote`" in caught.value.hint


def test_without_the_api_key_a_recorded_code_is_taken_as_unchanged_and_counted() -> None:
    def no_key() -> str:
        raise RuntimeError("the key is not set")

    state = _state(CODE)
    state.sealer = Sealer(no_key)
    plan = plan_changes([_departure("Zx-acc-0000")], state)
    assert [c.action for c in plan.changes] == [Action.NO_CHANGE]
    assert state.sealer.uncompared == 1
    # A code where the record has none is a change, shown only as (sensitive).
    bare = _spec(CODE)
    del bare["DeclarationGuarantees"][0]["accessCode"]
    state = State(lineage="lin", serial=3, sealer=Sealer(no_key))
    state.apply(
        "DepartureDeclaration/dep-1",
        ResourceRecord("DepartureDeclaration/dep-1", RecordStatus.APPLIED, "create", bare, {}),
    )
    (change,) = plan_changes([_departure(CODE)], state).changes
    assert [(v.path, v.old, v.new) for v in change.values] == [
        ("DeclarationGuarantees[0].accessCode", None, "(sensitive)")
    ]


def _plain_digest(code: str) -> str:
    entry = [
        "DepartureDeclaration/dep-1",
        _spec(code),
        [],
    ]
    text = json.dumps([entry], sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_the_inputs_digest_of_a_saved_plan_cannot_be_tested_against_codes() -> None:
    # A plain SHA-256 over the documents gave the code away: `render --format json` prints
    # the rest of them, and trying the codes finds the one whose digest the plan file holds.
    keyed = digest_documents([_departure(CODE)], SEALER, "lin")
    assert keyed != _plain_digest(CODE)
    assert keyed != digest_documents([_departure(CODE)], Sealer(lambda: "another key"), "lin")
    assert keyed != digest_documents([_departure("Zx-acc-9138")], SEALER, "lin")  # a change
    # Without a key a code is left out of the digest.
    unkeyed = digest_documents([_departure(CODE)])
    assert unkeyed == digest_documents([_departure("Zx-acc-9138")]) != _plain_digest(CODE)
