from __future__ import annotations

import pytest

from customs_batch.kinds import Kind
from customs_batch.kinds.model import KindModel, Reading, identity_of
from customs_batch.kinds.registry import model_of
from customs_batch.state import RecordStatus, ResourceRecord


def test_an_identity_is_each_field_named_with_its_value_as_compact_json() -> None:
    identity = identity_of("text", "number", "null", "missing", "object", "kind")
    spec = {
        "text": "shp_7Hk2Lm",
        "number": 1.5,
        "null": None,
        "object": {"z": [1, "é"], "a": True},
        "kind": Kind.MOVEMENT,  # a text of a str subclass: as the f-string shows it
    }
    assert identity(spec) == (
        "text=shp_7Hk2Lm",
        "number=1.5",
        "null=null",
        "missing=null",
        'object={"a":true,"z":[1,"\\u00e9"]}',
        "kind=Movement",
    )


def test_a_write_that_reads_its_object_first_counts_the_read_among_its_requests() -> None:
    # apply reads the object an update goes to before sending it (reads_first): the plan's
    # request count, and the time it takes at the rate limit, include that read.
    from customs_batch.kinds.actions import Operation
    from customs_batch.kinds.registry import KINDS

    reading = {operation for model in KINDS.values() for operation in model.reads_first}
    assert reading == {
        Operation.UPDATE_TEMPLATE_GROUP,
        Operation.UPDATE_DEPARTURE_PARTIES,
        Operation.UPDATE_TRANSIT_PARTIES,
        Operation.CANCEL_EXPORT,
        Operation.DEACTIVATE_HAWB,
    }
    for model in KINDS.values():
        for operation in model.send:
            # The read is the kind's to count: the operation itself sends one request
            # (a find-or-create and a resubmission read first as part of what they are).
            assert model.requests(operation) == operation.requests + (
                operation in model.reads_first
            )
        assert all(model.requests(operation) == 2 for operation in model.reads_first)
        assert model.reads_first <= set(model.send)
        assert not model.reads_first or (model.read_target or model.refresh) is not None


def test_a_kind_that_reads_first_counts_the_read_with_no_other_module_told() -> None:
    # A kind's lifecycle in one place: a kind that starts reading before one of its writes
    # counts it by saying so in its model, and a plan of that write counts it.
    from dataclasses import replace

    from customs_batch.kinds import Address, Kind
    from customs_batch.kinds.actions import Action, Operation
    from customs_batch.kinds.registry import model_of
    from customs_batch.planning.model import Plan, PlannedChange

    movement = model_of(Kind.MOVEMENT)
    assert movement.requests(Operation.CREATE_MOVEMENT) == 1
    reading = replace(movement, reads_first=frozenset({Operation.CREATE_MOVEMENT}))
    assert reading.requests(Operation.CREATE_MOVEMENT) == 2
    assert reading.requests(Operation.NONE) == 0
    change = PlannedChange(Address(Kind.MOVEMENT, "m"), Action.CREATE, Operation.CREATE_MOVEMENT)
    assert change.requests == 1 and Plan((change,), lineage="l", serial=1).requests == 1


def test_a_document_naming_an_object_it_did_not_make_is_told_to_correct_its_id() -> None:
    # Whether its last outcome is known or not, another object at the ID of an object the
    # document names (a party update's declaration made elsewhere) is not taken back with
    # `import`: the document's ID is corrected, once the record is dropped the way its
    # lifecycle allows (`state rm --gone` an applied one, `state forget` an unknown one).
    from customs_batch.kinds.model import not_found_words, unknown_not_found_words

    named = "the document's `declarationId`"
    applied = not_found_words("TransitPartyUpdate/u", 7, "t", "weight 1 there", named)
    unknown = unknown_not_found_words("TransitPartyUpdate/u", 7, "t", "weight 1 there", named)
    way_out = (
        "then correct the document's `declarationId` to the object meant, or remove the "
        "document, before the next apply (left as it is, the document is sent to 7 again"
    )
    assert way_out in applied and "state rm --gone TransitPartyUpdate/u" in applied
    assert way_out in unknown and "state forget TransitPartyUpdate/u" in unknown
    for words in (applied, unknown):
        assert "import" not in words and "template group" not in words
    group = not_found_words("TemplateGroup/g", 7, "t", "code 'X' there")
    assert way_out not in group and "import TemplateGroup/g 7" in group


def test_a_party_update_that_may_name_its_declaration_by_a_ref_is_not_told_only_to_correct_it() -> (
    None
):
    # A party update of a departure of the state names its declaration as
    # `${ref:DepartureDeclaration/NAME.declarationId}`: once another declaration is at that
    # number, there is nothing in its document to correct; it follows the departure, sent
    # again once that record is removed too. The words said only "correct the document's
    # `declarationId`" and "left as it is, the document is sent to 7003 again" (false of a
    # ref). A literal number is still told to be corrected; an arrival's update names no
    # departure.
    from customs_batch.jsontypes import JSON
    from customs_batch.kinds.registry import model_of
    from customs_batch.state.model import RecordStatus, ResourceRecord

    model = model_of(Kind.TRANSIT_PARTY_UPDATE)

    def words(spec: dict[str, JSON], status: RecordStatus = RecordStatus.APPLIED) -> str:
        record = ResourceRecord(
            address="TransitPartyUpdate/u",
            status=status,
            operation="update-parties",
            spec={"declarationId": 7003, **spec},
            outputs={"declarationId": 7003},
            not_found_at="t",
            found_instead="weight 1 there",
        )
        return model.not_found_words("TransitPartyUpdate/u", record, "t", "weight 1 there")

    ref = "`${ref:DepartureDeclaration/NAME.declarationId}`"
    for said in (words({}), words({}, RecordStatus.UNKNOWN)):
        assert ref in said and "state rm --gone DepartureDeclaration/NAME" in said
        assert "sends this document to the new declarationId, nothing to correct" in said
        assert "where it names 7003 itself, correct the document's `declarationId`" in said
    arrival = words({"variant": "arrival"})
    assert ref not in arrival
    assert "then correct the document's `declarationId` to the object meant" in arrival


def _words_of(model: KindModel) -> set[str | None]:
    """Every status word a kind's lists hold, a word none holds, and no word."""
    lists = (
        model.done_states or (),
        model.pending_states,
        model.processing_states,
        model.rejected_states,
        model.ended_states,
        model.undone_states,
    )
    return {*(word for words in lists for word in words), "BLOCKED", "active", None}


@pytest.mark.parametrize("kind", list(Kind))
def test_every_kind_reads_a_state_as_its_lists_say_when_its_record_tells_nothing_more(
    kind: Kind,
) -> None:
    # The seam (KindModel.reading) decides what plan, apply, refresh, status, results and the
    # notifications say of a state; a record that was never read done reads as the lists say,
    # for every kind's lifecycle (departure, template group, movement, party update, export
    # cancellation, HAWB deactivation).
    model = model_of(kind)
    record = ResourceRecord(f"{kind.value}/x", RecordStatus.APPLIED, "create", {})
    for word in _words_of(model):
        reading = model.reading(word, record)
        assert reading is model.reading(word), (kind, word)
        assert (reading is Reading.REJECTED) == (word in model.rejected_states), (kind, word)
        assert model.rejected(word, record) == (word in model.rejected_states), (kind, word)
        assert model.undone(word, record) == (word in model.undone_states), (kind, word)
        if reading is Reading.PENDING:
            assert model.undecided(word), (kind, word)
        if reading is Reading.DONE:
            assert not model.undecided(word) and word not in model.processing_states


@pytest.mark.parametrize("kind", [kind for kind in Kind if kind is not Kind.EXPORT_CANCELLATION])
def test_a_record_read_done_before_changes_nothing_for_the_other_kinds(kind: Kind) -> None:
    # Only an export cancellation reads the record (granted before: undone, not refused);
    # the other kinds' records are not even noted, and read as their lists say.
    model = model_of(kind)
    record = ResourceRecord(
        f"{kind.value}/x", RecordStatus.APPLIED, "create", {}, remote_status="ready"
    )
    assert model.reads_record is None
    assert model.noting_done(record, "2026-01-01T00:00:00.000Z") is record
    done_before = record.with_changes(done_at="2026-01-01T00:00:00.000Z")
    for word in _words_of(model):
        assert model.reading(word, done_before) is model.reading(word), (kind, word)


def test_an_answer_field_that_is_a_list_or_an_object_is_not_taken_as_an_output() -> None:
    # A service out of its contract (a movement's status answered as a list): recorded, the
    # record would be malformed, and every later command would refuse the whole state.
    import json

    from customs_batch.client._models import Record
    from customs_batch.kinds.model import outputs_of

    answer = Record.from_json(
        {"movementId": "mov_1", "status": ["QUEUED"], "shipmentId": {"id": 7}}
    )
    outputs = outputs_of(
        frozenset({"movementId", "status", "shipmentId"}), answer, {"shipmentId": "shp_1"}
    )
    assert outputs == {"movementId": "mov_1", "shipmentId": "shp_1"}
    record = ResourceRecord(
        address="Movement/m",
        status=RecordStatus.APPLIED,
        operation="create_movement",
        spec={},
        outputs=outputs,
    )
    again = ResourceRecord.from_json("Movement/m", json.loads(json.dumps(record.to_json())))
    assert again.outputs == outputs
    # Every scalar the API gives is taken as it is.
    scalars = Record.from_json({"id": 2, "code": None, "name": "x", "isActive": False})
    assert outputs_of(frozenset({"id", "code", "name", "isActive"}), scalars) == {
        "id": 2,
        "code": None,
        "name": "x",
        "isActive": False,
    }
