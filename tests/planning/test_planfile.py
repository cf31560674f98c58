from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from customs_batch.planning import Action, plan_changes
from customs_batch.planning.planfile import (
    MRN_CHECK_WORDS,
    PlanFileError,
    _seal,
    check_current,
    check_inputs,
    digest_documents,
    is_plan_file,
    mrn_check_word,
    read_plan,
    saved_plan_among,
    write_plan,
)
from customs_batch.sensitive import Sealer
from customs_batch.state import RecordStatus, ResourceRecord, State

from .helpers import movement

SEALER = Sealer(lambda: "test-api-key")


def test_a_saved_plan_reads_back_equal(tmp_path: Path) -> None:
    docs = [movement("a", 0), movement("b", 1)]
    plan = plan_changes(docs, State(lineage="lin", serial=2), inputs_digest=digest_documents(docs))
    write_plan(tmp_path / "p.json", plan, environment="local", sealer=SEALER)
    assert read_plan(tmp_path / "p.json", environment="local") == plan
    body = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    assert list(body)[:2] == ["format", "formatVersion"] and "version" not in body


def test_a_plan_file_of_the_earlier_spelling_still_reads(tmp_path: Path) -> None:
    docs = [movement("a", 0)]
    plan = plan_changes(docs, State(lineage="lin", serial=2), inputs_digest=digest_documents(docs))
    write_plan(tmp_path / "p.json", plan, environment="local", sealer=SEALER)
    body = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    body = {"format": body.pop("format"), "version": body.pop("formatVersion"), **body}
    body["seal"] = _seal(body)  # (plans of that spelling had none: they are refused now)
    (tmp_path / "p.json").write_text(json.dumps(body), encoding="utf-8")
    assert read_plan(tmp_path / "p.json", environment="local") == plan


def test_the_digest_follows_the_specs() -> None:
    assert digest_documents([movement("a", 0)]) == digest_documents([movement("a", 5)])
    assert digest_documents([movement("a", 0)]) != digest_documents([movement("a", 0, quantity=2)])


def test_the_digest_is_the_one_plans_saved_earlier_carry() -> None:
    # A saved plan carries the digest of the manifests it was made from, to compare with
    # theirs later: it must not change with how it is computed (hashed entry by entry since
    # plans keep less memory).
    docs = [movement("b", 1, quantity=7), movement("a", 0)]
    whole = json.dumps(
        [[str(d.address), d.spec, [str(a) for a in d.depends_on]] for d in reversed(docs)],
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    assert digest_documents(docs) == "sha256:" + hashlib.sha256(whole.encode()).hexdigest()
    empty = hashlib.sha256(b"[]").hexdigest()
    assert digest_documents([]) == f"sha256:{empty}"


def test_a_plan_for_another_environment_or_a_moved_state_is_refused(tmp_path: Path) -> None:
    plan = plan_changes([movement("a", 0)], State(lineage="lin", serial=2))
    write_plan(tmp_path / "p.json", plan, environment="local", sealer=SEALER)
    with pytest.raises(PlanFileError, match="made for environment 'local'") as caught:
        read_plan(tmp_path / "p.json", environment="sandbox")
    # The way on, spelled out to run as printed.
    assert caught.value.hint is not None
    assert f"`customs-batch apply {tmp_path / 'p.json'} --env local`" in caught.value.hint
    check_current(plan, State(lineage="lin", serial=2), source=tmp_path / "p.json")
    with pytest.raises(PlanFileError, match="stale"):
        check_current(plan, State(lineage="lin", serial=3), source=tmp_path / "p.json")
    with pytest.raises(PlanFileError, match="another state"):
        check_current(plan, State(lineage="other", serial=2), source=tmp_path / "p.json")


def test_a_plan_made_on_a_journal_is_current_only_once_that_very_journal_is_folded(
    tmp_path: Path,
) -> None:
    source = tmp_path / "p.json"
    seen = State(lineage="lin", serial=3, journal="sha256:aa")
    plan = plan_changes([movement("a", 0)], seen)
    write_plan(source, plan, environment="local", sealer=SEALER)
    saved = read_plan(source, environment="local")
    assert saved.journal == "sha256:aa"
    # The run had stopped: the next command folds the very journal the plan saw.
    check_current(saved, State(lineage="lin", serial=3, journal="sha256:aa"), source=source)
    # The run was still recording: it folded more itself, into a state of the same serial.
    for later in ("", "sha256:bb"):
        with pytest.raises(PlanFileError, match="while the journal of another run"):
            check_current(saved, State(lineage="lin", serial=3, journal=later), source=source)
    # A plan made on a state without a journal is stale once one is folded (serial + 1).
    clean = plan_changes([movement("a", 0)], State(lineage="lin", serial=2))
    check_current(clean, State(lineage="lin", serial=2), source=source)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{",
        b'{"format": "other"}',
        b'{"format": "customs-batch-plan", "version": 1, "environment": "local", "changes": [{}]}',
    ],
)
def test_a_damaged_plan_file_is_a_clear_error(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "p.json").write_bytes(content)
    with pytest.raises(PlanFileError):
        read_plan(tmp_path / "p.json", environment="local")


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"address": None}, "null is not an address"),
        ({"address": 5}, "5 is not an address"),
        ({"dependsOn": [[1]]}, "[1] is not an address"),
        ({"movedFrom": 5}, "5 is not an address"),
        ({"action": "explode"}, "'explode' is not a valid Action"),
        # Read as it was, an integer key was sent with the changes before it, then apply
        # said "failed Movement/a: AttributeError: 'int' object has no attribute 'replace'".
        ({"idempotencyKey": 5}, "idempotencyKey of Movement/a is 5"),
        ({"unknown": [[{"a": 1}]]}, "unknown of Movement/a holds a path that is not one"),
        ({"changed": [{"a": 1}]}, "changed of Movement/a holds a value that is not text"),
    ],
)
def test_a_plan_file_edited_into_nonsense_is_refused_naming_what(
    tmp_path: Path, change: dict[str, object], why: str
) -> None:
    # Was an "internal error" (a bug to report) for a value that is not text.
    plan = plan_changes([movement("a", 0)], State(lineage="lin", serial=2))
    write_plan(tmp_path / "p.json", plan, environment="local", sealer=SEALER)
    body = json.loads((tmp_path / "p.json").read_text())
    body["changes"][0].update(change)
    (tmp_path / "p.json").write_text(json.dumps(body))
    with pytest.raises(PlanFileError, match="the plan file was changed since"):
        read_plan(tmp_path / "p.json", environment="local")
    # Sealed again (a file crafted whole): still read as damaged, never an internal error.
    body["seal"] = _seal(body)
    (tmp_path / "p.json").write_text(json.dumps(body))
    with pytest.raises(PlanFileError) as caught:
        read_plan(tmp_path / "p.json", environment="local")
    assert caught.value.message == f"{tmp_path / 'p.json'}: the plan file is damaged ({why})"
    assert caught.value.hint and "customs-batch plan -out FILE" in caught.value.hint


def test_a_crafted_serial_too_large_is_refused_as_damaged(tmp_path: Path) -> None:
    # A serial of 1e400 (infinity to the JSON reader) was "internal error: OverflowError".
    plan = plan_changes([movement("a", 0)], State(lineage="lin", serial=2))
    write_plan(tmp_path / "p.json", plan, environment="local", sealer=SEALER)
    body = json.loads((tmp_path / "p.json").read_text())
    body["serial"] = float("inf")
    body["seal"] = _seal(body)
    (tmp_path / "p.json").write_text(json.dumps(body).replace("Infinity", "1e400"))
    why = "the plan file is damaged (cannot convert float infinity to integer)"
    with pytest.raises(PlanFileError, match=re.escape(why)):
        read_plan(tmp_path / "p.json", environment="local")


def test_a_format_version_written_as_text_is_told_apart(tmp_path: Path) -> None:
    # It said "plan format version 1 is not 1".
    (tmp_path / "p.json").write_text('{"format": "customs-batch-plan", "formatVersion": "1"}')
    with pytest.raises(PlanFileError, match='plan format version "1" is not 1'):
        read_plan(tmp_path / "p.json", environment="local")


@pytest.mark.parametrize(
    "edit",
    [
        lambda body: body["changes"][0].update(action="create"),  # a recorded one, sent again
        lambda body: body["changes"].append(dict(body["changes"][0], address="Movement/b")),
        lambda body: body.update(serial=body["serial"] + 1),
        lambda body: body.pop("seal"),  # written by an earlier version, or stripped
    ],
)
def test_a_plan_file_edited_since_it_was_written_is_refused(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None]
) -> None:
    state = State(lineage="lin", serial=2)
    state.apply("Movement/a", _recorded_movement())
    plan = plan_changes([movement("a", 0)], state)
    assert plan.changes[0].action is Action.NO_CHANGE
    write_plan(tmp_path / "p.json", plan, environment="local", sealer=SEALER)
    assert read_plan(tmp_path / "p.json", environment="local").changes == plan.changes
    body = json.loads((tmp_path / "p.json").read_text())
    edit(body)
    (tmp_path / "p.json").write_text(json.dumps(body, indent=2))
    with pytest.raises(PlanFileError) as caught:
        read_plan(tmp_path / "p.json", environment="local")
    assert "the plan file was changed since `customs-batch plan -out` wrote it" in str(caught.value)
    assert caught.value.hint == "make a new one with `customs-batch plan -out FILE`"


def _recorded_movement() -> ResourceRecord:
    return ResourceRecord(
        "Movement/a",
        RecordStatus.APPLIED,
        "create-movement",
        dict(movement("a", 0).spec),
        outputs={"movementId": "mov_1"},
    )


def test_a_saved_plan_re_saved_with_a_byte_order_mark_is_still_one(tmp_path: Path) -> None:
    # An editor may re-save a file with a UTF-8 BOM first: it is the same plan, and its seal
    # still refuses one edited on the way.
    docs = [movement("a", 0)]
    plan = plan_changes(docs, State(lineage="lin", serial=2), inputs_digest=digest_documents(docs))
    write_plan(tmp_path / "p.plan", plan, environment="local", sealer=SEALER)
    text = (tmp_path / "p.plan").read_bytes()
    (tmp_path / "bom.plan").write_bytes(b"\xef\xbb\xbf" + text)
    assert is_plan_file(tmp_path / "bom.plan")
    assert saved_plan_among([tmp_path / "bom.plan"]) == tmp_path / "bom.plan"
    assert read_plan(tmp_path / "bom.plan", environment="local") == plan
    edited = text.replace(b'"serial": 2', b'"serial": 3')
    assert edited != text
    (tmp_path / "edited.plan").write_bytes(b"\xef\xbb\xbf" + edited)
    assert saved_plan_among([tmp_path / "edited.plan"]) == tmp_path / "edited.plan"
    with pytest.raises(PlanFileError, match="the plan file was changed since"):
        read_plan(tmp_path / "edited.plan", environment="local")


@pytest.mark.parametrize("level", ["error", "warning", "off"])
def test_a_saved_plan_records_its_mrn_check_level(tmp_path: Path, level: str) -> None:
    plan = plan_changes([movement("a", 0)], State(lineage="lin", serial=2))
    plan = replace(plan, mrn_check_digit=level)
    write_plan(tmp_path / "p.json", plan, environment="local", sealer=SEALER)
    body = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    assert body["options"] == {"mrnCheckDigit": level}
    assert read_plan(tmp_path / "p.json", environment="local") == plan
    assert MRN_CHECK_WORDS[mrn_check_word(MRN_CHECK_WORDS[level])] == MRN_CHECK_WORDS[level]


def test_a_plan_file_without_options_or_with_a_level_it_does_not_know(tmp_path: Path) -> None:
    # Written before plans recorded their options: read, with no level of its own.
    plan = plan_changes([movement("a", 0)], State(lineage="lin", serial=2))
    write_plan(tmp_path / "p.json", plan, environment="local", sealer=SEALER)
    body = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    del body["options"]
    body["seal"] = _seal(body)
    (tmp_path / "p.json").write_text(json.dumps(body), encoding="utf-8")
    assert read_plan(tmp_path / "p.json", environment="local").mrn_check_digit is None
    body["options"] = {"mrnCheckDigit": "lenient"}
    body["seal"] = _seal(body)
    (tmp_path / "p.json").write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(PlanFileError, match=r"damaged .*mrnCheckDigit is 'lenient'"):
        read_plan(tmp_path / "p.json", environment="local")


def test_a_saved_plan_records_the_part_it_was_made_for(tmp_path: Path) -> None:
    # apply chooses the same documents again to compare them with the inputs digest.
    plan = plan_changes([movement("a", 0)], State(lineage="lin", serial=2))
    plan = replace(plan, labels=("lane=a",), targets=("Movement/a",), excluded=("Movement/b",))
    write_plan(tmp_path / "p.json", plan, environment="local", sealer=SEALER)
    body = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    assert body["options"] == {
        "labels": ["lane=a"],
        "targets": ["Movement/a"],
        "exclude": ["Movement/b"],
    }
    assert read_plan(tmp_path / "p.json", environment="local") == plan
    body["options"] = {"targets": "Movement/a"}
    body["seal"] = _seal(body)
    (tmp_path / "p.json").write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(PlanFileError, match=r"damaged .*options.targets is 'Movement/a'"):
        read_plan(tmp_path / "p.json", environment="local")


def test_a_saved_plan_is_checked_against_its_manifests_digest(tmp_path: Path) -> None:
    docs = [movement("a", 0)]
    plan = plan_changes(docs, State(lineage="lin", serial=2), inputs_digest=digest_documents(docs))
    check_inputs(plan, digest_documents(docs), source=tmp_path / "p.plan")
    changed = digest_documents([movement("a", 0, quantity=2)])
    with pytest.raises(PlanFileError, match=r"the manifests \(\.\), with their templates"):
        check_inputs(plan, changed, source=tmp_path / "p.plan")
    with pytest.raises(PlanFileError, match=r"or the API key changed"):
        check_inputs(plan, changed, source=tmp_path / "p.plan", keyed=True)
