"""Identity: what a document declares, not what it is called, decides whether it is new."""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from customs_batch.kinds import MAX_NAME, NAME_PATTERN, Address, Kind
from customs_batch.planning import Action, Operation, plan_changes
from customs_batch.planning.diff import in_flight_ended
from customs_batch.planning.model import Plan, PlannedChange
from customs_batch.state import RecordStatus, ResourceRecord, State
from customs_batch.state.records import Records

from .helpers import doc, movement, parsed_records

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
DEPARTURE: dict[str, Any] = {
    "type": "DEPARTURE",
    "companyId": 1,
    "commercialReference": "C-1",
    "departureOffice": "NL000396",
    "destinationOffice": "DE004058",
    "totalWeight": 10.0,
    "Principal": {"name": "A", "eoriNo": "NL123456789", "countryCode": "NL"},
    "DeclarationItems": [{"commodityCode": "090121", "originCountry": "BR", "netPrice": 5}],
}


def _state(*records: ResourceRecord) -> State:
    state = State(lineage="lin", serial=3)
    for record in records:
        state.apply(record.address, record)
    return state


def _applied(address: str, spec: dict[str, Any], **outputs: Any) -> ResourceRecord:
    return ResourceRecord(address, RecordStatus.APPLIED, "create", spec, outputs=outputs)


def _only(plan: Plan, address: str) -> PlannedChange:
    (change,) = [c for c in plan.changes if str(c.address) == address]
    return change


def _departure(name: str, index: int = 0, **changes: Any) -> Any:
    return doc(Kind.DEPARTURE_DECLARATION, name, {**DEPARTURE, **changes}, index)


def test_a_renamed_departure_moves_its_record_and_sends_nothing() -> None:
    state = _state(_applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003))
    plan = plan_changes([_departure("dep-2")], state, now=NOW)
    change = _only(plan, "DepartureDeclaration/dep-2")
    assert (change.action, change.operation) == (Action.MOVED, Operation.MOVE)
    assert str(change.moved_from) == "DepartureDeclaration/dep"
    assert "7003" in change.reason
    assert [str(c.address) for c in plan.changes] == ["DepartureDeclaration/dep-2"]
    assert plan.requests == 0
    assert not plan.blocked


def test_a_renamed_and_changed_departure_is_refused_naming_both_and_the_ways_out() -> None:
    state = _state(_applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003))
    plan = plan_changes([_departure("dep-2", totalWeight=11.0)], state, now=NOW)
    change = _only(plan, "DepartureDeclaration/dep-2")
    assert change.action is Action.REFUSED
    assert "DepartureDeclaration/dep " in change.reason + " "
    assert "totalWeight" in change.reason
    assert "state mv DepartureDeclaration/dep DepartureDeclaration/dep-2" in change.reason
    assert plan.requests == 0
    # The old name is not reported as orphaned on top: it is the refused one's twin.
    assert _only(plan, "DepartureDeclaration/dep").action is Action.ORPHANED


def test_a_renamed_import_whose_record_lacks_the_parties_is_not_told_to_revert_them() -> None:
    """Found by an outside probe: a departure imported (its record holds no parties: the
    service does not give them back) and renamed before the next apply was refused "with
    other values (Consignee, Principal) ... revert those changes", changes the user never
    made and could not revert; `state mv` is the way out that works."""
    imported = {k: v for k, v in DEPARTURE.items() if k != "Principal"}
    state = _state(
        ResourceRecord(
            "DepartureDeclaration/dep",
            RecordStatus.APPLIED,
            "import",
            imported,
            outputs={"declarationId": 7003},
        )
    )
    plan = plan_changes([_departure("dep-2")], state, now=NOW)
    change = _only(plan, "DepartureDeclaration/dep-2")
    assert change.action is Action.REFUSED
    assert "revert" not in change.reason
    assert "whose record holds no Principal (an import records only" in change.reason
    assert "state mv DepartureDeclaration/dep DepartureDeclaration/dep-2" in change.reason
    assert plan.requests == 0
    # The way out: moved, the record is planned as an update of the parties.
    moved = _state(
        replace(state.resources["DepartureDeclaration/dep"], address="DepartureDeclaration/dep-2")
    )
    after = _only(plan_changes([_departure("dep-2")], moved, now=NOW), "DepartureDeclaration/dep-2")
    assert after.action is Action.UPDATE, after


def test_another_declaration_with_other_goods_is_created() -> None:
    state = _state(_applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003))
    other = _departure("dep-2", commercialReference="C-2")
    assert _only(plan_changes([other], state, now=NOW), str(other.address)).action is Action.CREATE


def test_two_new_documents_of_one_declaration_are_both_refused() -> None:
    plan = plan_changes([_departure("a", 0), _departure("b", 1)], State.new(), now=NOW)
    for name in ("a", "b"):
        change = _only(plan, f"DepartureDeclaration/{name}")
        assert change.action is Action.REFUSED
        assert "declare it twice" in change.reason


def test_a_copy_of_a_recorded_document_under_another_name_is_refused() -> None:
    state = _state(_applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003))
    plan = plan_changes([_departure("dep", 0), _departure("copy", 1)], state, now=NOW)
    assert _only(plan, "DepartureDeclaration/dep").action is Action.NO_CHANGE
    copy = _only(plan, "DepartureDeclaration/copy")
    assert copy.action is Action.REFUSED
    assert "DepartureDeclaration/dep" in copy.reason


def test_a_forgotten_document_still_in_the_manifests_is_not_sent_again() -> None:
    tombstone = _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003).with_changes(
        status=RecordStatus.FORGOTTEN, forgotten_from="applied"
    )
    plan = plan_changes([_departure("dep")], _state(tombstone), now=NOW)
    change = _only(plan, "DepartureDeclaration/dep")
    assert change.action is Action.REFUSED
    assert "state restore" in change.reason and "--gone" in change.reason
    assert plan.requests == 0


def test_a_forgotten_document_says_what_sending_it_again_would_do_for_its_kind() -> None:
    # Found by an outside probe: a refused cancellation removed, `state rm`-ed and put back
    # was refused because sending it again "would declare it twice", untrue of a cancellation.
    cancellation = ResourceRecord(
        "ExportCancellation/c",
        RecordStatus.FORGOTTEN,
        "create",
        {"declarationId": 502},
        outputs={"declarationId": 502},
        forgotten_from="rejected",
    )
    departure = _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003)
    state = _state(
        cancellation,
        departure.with_changes(status=RecordStatus.FORGOTTEN, forgotten_from="applied"),
    )
    documents = [
        doc(Kind.EXPORT_CANCELLATION, "c", {"declarationId": 502}, 0),
        _departure("dep", 1),
    ]
    plan = plan_changes(documents, state, now=NOW)
    refused = _only(plan, "ExportCancellation/c")
    assert refused.action is Action.REFUSED
    assert "which would ask for its cancellation a second time" in refused.reason
    assert "declare" not in refused.reason
    assert "which would declare it twice" in _only(plan, "DepartureDeclaration/dep").reason


def test_a_rename_of_a_forgotten_record_of_unknown_outcome_says_to_restore_it_first() -> None:
    # Found by an outside probe: a runner killed while the departure's POST was held, the
    # document renamed and the old name `state rm`-ed; the plan said `state adopt OLD ID`,
    # which refuses a tombstone ("was forgotten by `customs-batch state rm`").
    tombstone = ResourceRecord(
        "DepartureDeclaration/dep",
        RecordStatus.FORGOTTEN,
        "create",
        DEPARTURE,
        forgotten_from="unknown",
    )
    plan = plan_changes([_departure("renamed")], _state(tombstone), now=NOW)
    change = _only(plan, "DepartureDeclaration/renamed")
    assert change.action is Action.REFUSED
    assert (
        "`customs-batch state restore DepartureDeclaration/dep`, then `customs-batch state "
        "adopt DepartureDeclaration/dep ID`" in change.reason
    )


@pytest.mark.parametrize("recorded", [True, False], ids=["sent before", "new"])
def test_a_reference_to_a_forgotten_document_is_refused_saying_so(recorded: bool) -> None:
    """Its value is not known any more: not "declarationId cannot change" (it did not), and
    not a document waiting for a value that never comes."""
    tombstone = _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003).with_changes(
        status=RecordStatus.FORGOTTEN, forgotten_from="applied"
    )
    sent = _applied(
        "TransitPartyUpdate/upd",
        {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
        declarationId=7003,
    )
    state = _state(tombstone, sent) if recorded else _state(tombstone)
    update = _party_update("${ref:DepartureDeclaration/dep.declarationId}")
    plan = plan_changes([_departure("dep"), update], state, now=NOW)
    change = _only(plan, "TransitPartyUpdate/upd")
    assert (change.action, change.operation) == (Action.REFUSED, Operation.NONE), change
    assert change.reason.startswith(
        "spec.declarationId refers to DepartureDeclaration/dep, which `customs-batch state rm` "
        "forgot"
    )
    assert "state restore DepartureDeclaration/dep" in change.reason
    assert plan.requests == 0


def test_a_forgotten_document_renamed_is_tracked_again_and_its_tombstone_is_not_orphaned() -> None:
    tombstone = _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003).with_changes(
        status=RecordStatus.FORGOTTEN, forgotten_from="applied"
    )
    plan = plan_changes([_departure("dep-2")], _state(tombstone), now=NOW)
    assert [(str(c.address), c.action) for c in plan.changes] == [
        ("DepartureDeclaration/dep-2", Action.MOVED)
    ]


def test_a_tombstone_no_longer_in_the_manifests_is_silent() -> None:
    tombstone = _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003).with_changes(
        status=RecordStatus.FORGOTTEN, forgotten_from="applied"
    )
    assert plan_changes([], _state(tombstone), now=NOW).changes == ()


def test_a_renamed_movement_moves_and_a_second_one_of_the_same_action_is_created() -> None:
    first = plan_changes([movement("mov-1", 0)], State.new(), now=NOW)
    recorded = _applied("Movement/mov-1", dict(first.changes[0].spec), movementId="mov_1")
    recorded = recorded.with_changes(identity=first.changes[0].identity)
    assert recorded.identity[-1] == "place=0"
    plan = plan_changes(
        [movement("mov-renamed", 0), movement("mov-2", 1)], _state(recorded), now=NOW
    )
    assert _only(plan, "Movement/mov-renamed").action is Action.MOVED
    second = _only(plan, "Movement/mov-2")
    assert second.action is Action.CREATE
    assert second.identity[-1] == "place=1"


def test_a_renamed_movement_keeps_the_place_it_was_sent_at_after_one_before_it_is_orphaned() -> (
    None
):
    """Found by an outside probe: m1, m2, m3 sent at places 0, 1, 2; m2 left out of the
    manifests (orphaned: its movement still holds place 1 at the service), m3 renamed, m4
    added. The renamed one was recorded at place 1 (its row's count under its new name) and
    m4 created at place 2, m3's: two records at place 1, none at 3, and the correcting
    movement of m2 later refused for m3's place."""
    sent = plan_changes(
        [movement(f"m{n}", n, quantity=n) for n in (1, 2, 3)], State.new(), now=NOW
    ).changes
    records = [
        _applied(str(c.address), dict(c.spec), movementId=f"mov_{n}").with_changes(
            identity=c.identity
        )
        for n, c in enumerate(sent, start=1)
    ]
    assert [r.identity[-1] for r in records] == ["place=0", "place=1", "place=2"]
    plan = plan_changes(
        [
            movement("m1", 0, quantity=1),
            movement("m3-renamed", 1, quantity=3),
            movement("m4", 2, quantity=4),
        ],
        _state(*records),
        now=NOW,
    )
    renamed = _only(plan, "Movement/m3-renamed")
    assert renamed.action is Action.MOVED
    assert renamed.identity[-1] == "place=2"
    added = _only(plan, "Movement/m4")
    assert (added.action, added.identity[-1]) == (Action.CREATE, "place=3")


def test_a_new_movement_where_an_orphan_of_a_renamed_ones_request_was_sent_names_true_ways_out() -> (
    None
):
    """Two identical movements a and b sent; a removed, b renamed (it takes a's record: the
    same request), c added after it. c comes at b's place: refused, and the words said
    `state mv b c` "to plan them as changes" (a movement cannot change: plan then refused
    that) and to make it differ in an identifying field. They now name the ways out that
    work: previousNames in the renamed one, or `state rm` of b; each is then followed."""
    sent = plan_changes([movement("a", 0), movement("b", 1)], State.new(), now=NOW).changes
    a, b = (
        _applied(str(c.address), dict(c.spec), movementId=f"mov_{n}").with_changes(
            identity=c.identity
        )
        for n, c in enumerate(sent, start=1)
    )
    documents = [movement("renamed", 0), movement("c", 1, quantity=2)]
    refused = _only(plan_changes(documents, _state(a, b), now=NOW), "Movement/c")
    assert refused.action is Action.REFUSED
    reason = refused.reason
    assert "state mv Movement/b Movement/c" not in reason
    assert "plan them as changes" not in reason and "make it differ" not in reason
    assert "`metadata.previousNames: [b]` in Movement/renamed" in reason
    assert "`customs-batch state rm Movement/b`" in reason

    # previousNames: the renamed one takes b's record and place; c comes after it.
    declared = [replace(documents[0], previous_names=("b",)), documents[1]]
    plan = plan_changes(declared, _state(a, b), now=NOW)
    assert _only(plan, "Movement/renamed").action is Action.MOVED
    assert _only(plan, "Movement/c").action is Action.CREATE
    # `state rm Movement/b`: a tombstone; c is created.
    forgotten = b.with_changes(status=RecordStatus.FORGOTTEN, forgotten_from="applied")
    plan = plan_changes(documents, _state(a, forgotten), now=NOW)
    assert _only(plan, "Movement/c").action is Action.CREATE


def test_a_movement_recorded_before_identities_moves_only_when_the_request_is_the_same() -> None:
    spec = dict(movement("x", 0).spec)
    legacy = _applied("Movement/mov-1", spec, movementId="mov_1")
    moved = plan_changes([movement("mov-renamed", 0)], _state(legacy), now=NOW)
    assert _only(moved, "Movement/mov-renamed").action is Action.MOVED


def test_with_a_selection_a_match_outside_it_is_refused_not_moved() -> None:
    state = _state(_applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003))
    plan = plan_changes([_departure("dep-2")], state, now=NOW, orphans=False)
    change = _only(plan, "DepartureDeclaration/dep-2")
    assert change.action is Action.REFUSED
    assert "without a selection" in change.reason


def test_a_reference_to_a_moved_departure_resolves_through_the_move() -> None:
    state = _state(
        _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003),
        _applied(
            "TransitPartyUpdate/upd",
            {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
            declarationId=7003,
        ),
    )
    update = doc(
        Kind.TRANSIT_PARTY_UPDATE,
        "upd",
        {
            "declarationId": "${ref:DepartureDeclaration/dep-2.declarationId}",
            "Consignee": {"eoriNo": "DE1"},
        },
        1,
    )
    plan = plan_changes([_departure("dep-2"), update], state, now=NOW)
    assert _only(plan, "DepartureDeclaration/dep-2").action is Action.MOVED
    assert _only(plan, "TransitPartyUpdate/upd").action is Action.NO_CHANGE


def _rejected(spec: dict[str, Any]) -> ResourceRecord:
    return _applied("DepartureDeclaration/dep", spec, declarationId=7003).with_changes(
        remote_status="invalid", remote_errors=({"code": "X"},)
    )


def _party_update(declaration_id: Any) -> Any:
    return doc(
        Kind.TRANSIT_PARTY_UPDATE,
        "upd",
        {
            "declarationId": declaration_id,
            "Consignee": {"eoriNo": "DE1"},
        },
        1,
    )


def test_a_party_update_follows_its_departure_when_that_is_resubmitted() -> None:
    recorded_update = _applied(
        "TransitPartyUpdate/upd",
        {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
        declarationId=7003,
    )
    state = _state(_rejected(DEPARTURE), recorded_update)
    update = _party_update("${ref:DepartureDeclaration/dep.declarationId}")
    plan = plan_changes([_departure("dep", commercialReference="C-9"), update], state, now=NOW)
    assert _only(plan, "DepartureDeclaration/dep").action is Action.RESUBMIT
    follows = _only(plan, "TransitPartyUpdate/upd")
    assert follows.action is Action.UPDATE, follows.reason
    assert follows.operation is Operation.UPDATE_TRANSIT_PARTIES
    assert follows.unknown == (("declarationId",),)  # known after apply: the new ID
    assert "resubmitted" in follows.reason


def test_a_party_update_left_on_a_replaced_declaration_is_sent_to_the_new_one() -> None:
    # The departure was resubmitted by an earlier run (7003 -> 7004) while its party update
    # stayed on 7003: the next plan sends it to 7004 instead of refusing a changed ID.
    departure = _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7004).with_changes(
        superseded=({"outputs": {"declarationId": 7003}, "remoteStatus": "invalid"},)
    )
    recorded_update = _applied(
        "TransitPartyUpdate/upd",
        {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
        declarationId=7003,
    )
    plan = plan_changes(
        [_departure("dep"), _party_update("${ref:DepartureDeclaration/dep.declarationId}")],
        _state(departure, recorded_update),
        now=NOW,
    )
    follows = _only(plan, "TransitPartyUpdate/upd")
    assert follows.action is Action.UPDATE, follows.reason
    assert follows.spec["declarationId"] == 7004


def test_a_literal_declaration_id_that_changes_is_still_refused() -> None:
    recorded_update = _applied(
        "TransitPartyUpdate/upd",
        {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
        declarationId=7003,
    )
    plan = plan_changes([_party_update(7005)], _state(recorded_update), now=NOW)
    assert _only(plan, "TransitPartyUpdate/upd").action is Action.REFUSED


def _resubmitted() -> ResourceRecord:
    """The departure customs rejected as 7003, corrected and submitted again as 7004."""
    return _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7004).with_changes(
        superseded=({"outputs": {"declarationId": 7003}, "remoteStatus": "invalid"},)
    )


def test_a_party_update_naming_a_replaced_declaration_by_its_id_is_refused() -> None:
    plan = plan_changes([_departure("dep"), _party_update(7003)], _state(_resubmitted()), now=NOW)
    refused = _only(plan, "TransitPartyUpdate/upd")
    assert (refused.action, refused.operation) == (Action.REFUSED, Operation.NONE)
    assert "declarationId 7003 names an object DepartureDeclaration/dep replaced" in refused.reason
    assert "submitted again as 7004" in refused.reason
    assert "${ref:DepartureDeclaration/dep.declarationId}" in refused.reason


def test_a_party_update_sent_before_the_resubmission_is_refused_not_unchanged() -> None:
    # Sent to 7003 before customs rejected it: the document still names 7003, so the new
    # declaration would never get its parties, and the plan would say nothing is left to do.
    recorded_update = _applied(
        "TransitPartyUpdate/upd",
        {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
        declarationId=7003,
    )
    state = _state(_resubmitted(), recorded_update)
    plan = plan_changes([_departure("dep"), _party_update(7003)], state, now=NOW)
    assert _only(plan, "TransitPartyUpdate/upd").action is Action.REFUSED


@pytest.mark.parametrize("sent_before", [True, False], ids=["sent before", "new"])
def test_a_party_update_naming_the_declaration_this_plan_resubmits_is_refused_in_that_plan(
    sent_before: bool,
) -> None:
    """Not "unchanged" (or a creation) in the run that resubmits the departure, and refused
    only by the plan after it: this plan says so already, and sends nothing to 7003."""
    recorded_update = _applied(
        "TransitPartyUpdate/upd",
        {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
        declarationId=7003,
    )
    records = (_rejected(DEPARTURE), recorded_update) if sent_before else (_rejected(DEPARTURE),)
    documents = [_departure("dep", commercialReference="C-9"), _party_update(7003)]
    plan = plan_changes(documents, _state(*records), now=NOW)
    assert _only(plan, "DepartureDeclaration/dep").action is Action.RESUBMIT
    change = _only(plan, "TransitPartyUpdate/upd")
    assert (change.action, change.operation) == (Action.REFUSED, Operation.NONE), change
    assert "DepartureDeclaration/dep, which this plan submits again" in change.reason
    assert "${ref:DepartureDeclaration/dep.declarationId}" in change.reason
    # Named by its reference, it follows the resubmission instead.
    follows = _party_update("${ref:DepartureDeclaration/dep.declarationId}")
    plan = plan_changes([documents[0], follows], _state(*records), now=NOW)
    assert _only(plan, "TransitPartyUpdate/upd").action is not Action.REFUSED


def test_a_party_update_naming_the_declaration_that_took_its_place_is_created() -> None:
    plan = plan_changes([_departure("dep"), _party_update(7004)], _state(_resubmitted()), now=NOW)
    assert _only(plan, "TransitPartyUpdate/upd").action is Action.CREATE


def test_a_party_update_chained_to_another_by_reference_follows_the_resubmission() -> None:
    # B names its declaration through A (${ref:TransitPartyUpdate/a.declarationId}); A follows
    # the departure this plan submits again. B took A's recorded 7003 and was refused for
    # naming the rejected declaration "by its number", though it names it by a reference.
    a_spec = {
        "declarationId": "${ref:DepartureDeclaration/dep.declarationId}",
        "Consignee": {"eoriNo": "DE1"},
    }
    b_spec = {
        "declarationId": "${ref:TransitPartyUpdate/a.declarationId}",
        "Consignor": {"eoriNo": "DE2"},
    }
    recorded = [
        _rejected(DEPARTURE),
        _applied("TransitPartyUpdate/a", {**a_spec, "declarationId": 7003}, declarationId=7003),
        _applied("TransitPartyUpdate/b", {**b_spec, "declarationId": 7003}, declarationId=7003),
    ]
    documents = [
        _departure("dep", commercialReference="C-9"),
        doc(Kind.TRANSIT_PARTY_UPDATE, "a", a_spec, 1, "DepartureDeclaration/dep"),
        doc(Kind.TRANSIT_PARTY_UPDATE, "b", b_spec, 2, "TransitPartyUpdate/a"),
    ]
    plan = plan_changes(documents, _state(*recorded), now=NOW)
    assert _only(plan, "DepartureDeclaration/dep").action is Action.RESUBMIT
    for name in ("a", "b"):
        change = _only(plan, f"TransitPartyUpdate/{name}")
        assert change.action is not Action.REFUSED, change.reason
        assert change.operation.writes_state, change
        assert ("declarationId",) in change.unknown  # known after apply: the new one


def test_what_depends_on_a_rejected_departure_is_held_in_the_plan_as_apply_holds_it() -> None:
    # apply skips it: the plan counted it "1 to create" with its request all the same.
    update = _party_update("${ref:DepartureDeclaration/dep.declarationId}")
    update = replace(update, depends_on=(update.references[0].target,))
    plan = plan_changes([_departure("dep"), update], _state(_rejected(DEPARTURE)), now=NOW)
    assert _only(plan, "DepartureDeclaration/dep").action is Action.REJECTED
    held = _only(plan, "TransitPartyUpdate/upd")
    assert (held.action, held.operation) == (Action.REFUSED, Operation.NONE)
    assert "it depends on DepartureDeclaration/dep, which customs rejected" in held.reason
    assert plan.counts[Action.CREATE] == 0 and plan.requests == 0


def _renamed(name: str, *previous: str, **changes: Any) -> Any:
    document = _departure(name, **changes)
    return replace(document, previous_names=previous)


def test_a_declared_rename_moves_the_record_even_with_a_change_and_plans_the_change() -> None:
    state = _state(_applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003))
    same = plan_changes([_renamed("dep-2", "dep")], state, now=NOW)
    assert _only(same, "DepartureDeclaration/dep-2").action is Action.MOVED
    changed_party = {**DEPARTURE["Principal"], "name": "B"}
    plan = plan_changes([_renamed("dep-2", "dep", Principal=changed_party)], state, now=NOW)
    change = _only(plan, "DepartureDeclaration/dep-2")
    assert (change.action, change.operation) == (Action.UPDATE, Operation.UPDATE_DEPARTURE_PARTIES)
    assert str(change.moved_from) == "DepartureDeclaration/dep"
    assert [str(c.address) for c in plan.changes] == ["DepartureDeclaration/dep-2"]
    fixed = plan_changes([_renamed("dep-2", "dep", totalWeight=99.0)], state, now=NOW)
    assert _only(fixed, "DepartureDeclaration/dep-2").action is Action.REFUSED


_HELD: dict[str, dict[str, Any]] = {
    "another object at its ID": dict(
        not_found_at="2026-11-21T11:00:00Z", found_instead="totalWeight 999.0 there"
    ),
    "not found": dict(not_found_at="2026-11-21T11:00:00Z"),
    "canceled": dict(remote_status="canceled"),
    "rejected": dict(remote_status="invalid", remote_errors=({"code": "X"},)),
    "outcome unknown": dict(status=RecordStatus.UNKNOWN, operation="submit-departure", outputs={}),
}
"""What a departure's record can hold that plan holds its document for, whatever it asks."""


def _plan_of_held(held: str, name: str, declared: bool, **changes: Any) -> Plan:
    """The departure ``dep``'s record held for ``held``, its document named ``name`` (listing
    ``dep`` in previousNames when ``declared``), and a party update through that name that
    changes its consignee."""
    record = _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003)
    sent = _applied(
        "TransitPartyUpdate/upd",
        {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
        declarationId=7003,
    )
    departure = _renamed(name, "dep", **changes) if declared else _departure(name, **changes)
    update = doc(
        Kind.TRANSIT_PARTY_UPDATE,
        "upd",
        {
            "declarationId": f"${{ref:DepartureDeclaration/{name}.declarationId}}",
            "Consignee": {"eoriNo": "DE2"},
        },
        1,
    )
    update = replace(update, depends_on=(update.references[0].target,))
    state = _state(record.with_changes(**_HELD[held]), sent)
    return plan_changes([departure, update], state, now=NOW)


@pytest.mark.parametrize(
    ("held", "declared"),
    [(held, declared) for held in _HELD for declared in (False, True)],
)
def test_a_renamed_departure_is_held_as_its_record_is_under_its_old_name(
    held: str, declared: bool
) -> None:
    """A rename carries what its record is: planned ``moved`` + ``update``, the party update
    went to another client's declaration at 7003 (or a canceled one), and a rename of a
    rejected, not found or unknown one passed as ``moved``, exit 0."""
    before = _plan_of_held(held, "dep", declared=False)
    after = _plan_of_held(held, "dep-2", declared)
    kept = _only(before, "DepartureDeclaration/dep")
    change = _only(after, "DepartureDeclaration/dep-2")
    assert kept.action in (Action.NEEDS_DECISION, Action.REJECTED)
    assert (change.action, change.operation) == (kept.action, Operation.NONE)
    assert str(change.moved_from) == "DepartureDeclaration/dep"
    assert change.reason.startswith("renamed from DepartureDeclaration/dep")
    # Its ways out name the record where it stays until it is sorted out.
    assert "its record stays under DepartureDeclaration/dep and nothing is sent" in change.reason
    assert change.reason.endswith(kept.reason)
    # What depends on it is held the same, and the counts and the exit code are the same.
    update = _only(after, "TransitPartyUpdate/upd")
    assert (update.action, update.operation) == (Action.REFUSED, Operation.NONE)
    if held != "outcome unknown":  # else no ID to send it to: refused as without the rename
        assert "it depends on DepartureDeclaration/dep-2" in update.reason
    assert _only(before, "TransitPartyUpdate/upd").action is Action.REFUSED
    assert after.counts == before.counts
    assert len(after.blocked) == len(before.blocked) == 2
    assert after.requests == 0 and not after.has_changes
    # The old name is its record, not an orphan.
    assert "DepartureDeclaration/dep" not in {str(c.address) for c in after.changes}


def test_a_declared_rename_of_a_request_in_flight_waits_then_needs_the_same_decision() -> None:
    """A saved plan made while a run's submission was in flight, applied after that run
    ended: the renamed document is held for a decision as without the rename (it stayed
    ``waiting``, sending nothing and blocking nothing, its record never looked up under
    its old name)."""
    at = NOW.isoformat().replace("+00:00", "Z")
    sent = ResourceRecord(
        "DepartureDeclaration/dep",
        RecordStatus.PENDING,
        "submit-departure",
        DEPARTURE,
        updated_at=at,
    )
    state = _state(sent)
    plan = plan_changes(
        [_renamed("dep-2", "dep")],
        state,
        now=NOW,
        in_flight=lambda when: "in flight" if when == at else None,
    )
    waiting = _only(plan, "DepartureDeclaration/dep-2")
    assert (waiting.action, waiting.operation) == (Action.WAITING, Operation.NONE)
    assert waiting.in_flight and str(waiting.moved_from) == "DepartureDeclaration/dep"
    ended = _only(in_flight_ended(plan, state, NOW), "DepartureDeclaration/dep-2")
    assert ended.action is Action.NEEDS_DECISION
    assert ended.reason.startswith("renamed from DepartureDeclaration/dep, whose record stays")
    assert "state adopt DepartureDeclaration/dep ID" in ended.reason


def test_a_declared_rename_of_a_rejected_departure_with_a_correction_resubmits_it() -> None:
    # The correction goes out as a new declaration under the new name (apply moves the
    # record first); a correction of what it declares is refused, with `state mv` as the
    # way to rename it first (the rename alone is held as rejected, its record unmoved).
    rejected = _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003)
    rejected = rejected.with_changes(remote_status="invalid", remote_errors=({"code": "X"},))
    plan = plan_changes([_renamed("dep-2", "dep", totalWeight=11.0)], _state(rejected), now=NOW)
    change = _only(plan, "DepartureDeclaration/dep-2")
    assert (change.action, change.operation) == (Action.RESUBMIT, Operation.RESUBMIT_DEPARTURE)
    assert str(change.moved_from) == "DepartureDeclaration/dep"
    assert "its record moves to this name, then: " in change.reason
    corrected = plan_changes(
        [_renamed("dep-2", "dep", commercialReference="C-9")], _state(rejected), now=NOW
    )
    refused = _only(corrected, "DepartureDeclaration/dep-2")
    assert refused.action is Action.REFUSED
    assert "state mv DepartureDeclaration/dep DepartureDeclaration/dep-2" in refused.reason


def test_a_declared_rename_of_a_movement_of_unknown_outcome_needs_the_same_decision() -> None:
    first = plan_changes([movement("mov", 0, quantity=1)], State.new(), now=NOW)
    lost = ResourceRecord(
        "Movement/mov",
        RecordStatus.UNKNOWN,
        "create-movement",
        dict(first.changes[0].spec),
        identity=first.changes[0].identity,
        idempotency_key="k",
        updated_at=NOW.isoformat(),
    )
    edited = movement("mov", 0, quantity=2)
    before = _only(plan_changes([edited], _state(lost), now=NOW), "Movement/mov")
    renamed = replace(movement("mov-2", 0, quantity=2), previous_names=("mov",))
    plan = plan_changes([renamed], _state(lost), now=NOW)
    change = _only(plan, "Movement/mov-2")
    assert before.action is Action.NEEDS_DECISION
    assert (change.action, change.operation) == (Action.NEEDS_DECISION, Operation.NONE)
    assert "state adopt Movement/mov MOVEMENT_ID" in change.reason
    assert plan.blocked == (change,)


def test_a_declared_rename_of_a_name_still_in_the_manifests_is_refused() -> None:
    state = _state(_applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003))
    plan = plan_changes(
        [_departure("dep", 0), _renamed("dep-2", "dep", commercialReference="C-2")], state, now=NOW
    )
    change = _only(plan, "DepartureDeclaration/dep-2")
    assert change.action is Action.REFUSED
    assert "still in the manifests" in change.reason


def test_a_declared_rename_of_a_movement_another_took_by_its_request_says_which_and_how() -> None:
    """Found by an outside probe: two movements asking alike, the first new and the second
    renamed from the record (`previousNames`); the first took the record by its request, and
    the second was refused with "list it in the previousNames of one document only", which
    it already was: the way out said nothing of the first, and could not be followed."""
    first = plan_changes([movement("mov", 0, quantity=4)], State.new(), now=NOW)
    sent = _applied("Movement/mov", dict(first.changes[0].spec), movementId="mov_1")
    state = _state(sent.with_changes(identity=first.changes[0].identity))
    alike = movement("mov-q", 0, quantity=4)
    declared = replace(movement("mov-p", 1, quantity=4), previous_names=("mov",))
    plan = plan_changes([alike, declared], state, now=NOW)
    assert _only(plan, "Movement/mov-q").action is Action.MOVED
    refused = _only(plan, "Movement/mov-p")
    assert refused.action is Action.REFUSED
    assert "taken over by Movement/mov-q in this plan" in refused.reason
    assert "put it before Movement/mov-q in the manifests" in refused.reason
    assert "remove mov from its previousNames" in refused.reason
    assert plan.requests == 0
    # Both ways out work: put first, it takes the record and the other is a new movement;
    # without the previousNames it is the new one.
    for documents in (
        [replace(declared, index=0), replace(alike, index=1)],
        [alike, replace(declared, previous_names=())],
    ):
        plan = plan_changes(documents, state, now=NOW)
        actions = sorted(c.action.value for c in plan.changes)
        assert actions == sorted([Action.MOVED.value, Action.CREATE.value]), plan.changes
        assert not plan.blocked

    # Two documents naming the record in previousNames: the second is told so.
    both = [replace(alike, previous_names=("mov",)), declared]
    twice = _only(plan_changes(both, state, now=NOW), "Movement/mov-p")
    assert twice.action is Action.REFUSED
    assert "lists it in its previousNames too" in twice.reason


def test_a_correcting_movement_after_state_rm_of_the_wrong_one_is_created() -> None:
    # The movement's own advice: record the correcting movement as a new document, remove
    # the wrong one from the manifests and `state rm` it.
    first = plan_changes([movement("mov-wrong", 0, quantity=1)], State.new(), now=NOW)
    wrong = _applied("Movement/mov-wrong", dict(first.changes[0].spec), movementId="mov_1")
    wrong = wrong.with_changes(identity=first.changes[0].identity)
    correcting = movement("mov-right", 0, quantity=2)
    refused = plan_changes([correcting], _state(wrong), now=NOW)
    assert _only(refused, "Movement/mov-right").action is Action.REFUSED  # still tracked
    forgotten = wrong.with_changes(status=RecordStatus.FORGOTTEN, forgotten_from="applied")
    plan = plan_changes([correcting], _state(forgotten), now=NOW)
    assert _only(plan, "Movement/mov-right").action is Action.CREATE


def test_a_movement_recorded_before_identities_with_another_request_is_no_obstacle() -> None:
    legacy = _applied("Movement/mov-1", dict(movement("x", 0, quantity=1).spec))
    plan = plan_changes([movement("mov-new", 0, quantity=5)], _state(legacy), now=NOW)
    assert _only(plan, "Movement/mov-new").action is Action.CREATE


def test_a_creation_reads_the_recorded_identities_without_parsing_the_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = {}
    for number in range(50):
        spec = {**DEPARTURE, "commercialReference": f"C-{number + 100}"}
        first = plan_changes([_departure(f"d{number}", **spec)], State.new(), now=NOW)
        record = _applied(f"DepartureDeclaration/d{number}", spec, declarationId=number)
        record = record.with_changes(identity=first.changes[0].identity)
        texts[record.address] = json.dumps(record.to_json())
    legacy = _applied("DepartureDeclaration/old", {**DEPARTURE, "commercialReference": "C-9"})
    texts[legacy.address] = json.dumps(legacy.to_json())
    state = State(lineage="l", serial=1, resources=Records.from_texts(texts, "test"))
    parsed: list[str] = []
    real = ResourceRecord.from_json

    def counting(address: str, data: Any) -> ResourceRecord:
        parsed.append(address)
        return real(address, data)

    monkeypatch.setattr(ResourceRecord, "from_json", staticmethod(counting))
    copy = _departure("copy-of-d7", commercialReference="C-107")
    plan = plan_changes([copy], state, now=NOW, orphans=False)
    assert _only(plan, "DepartureDeclaration/copy-of-d7").action is Action.REFUSED
    # Only the record written before identities were kept, and the one that matched.
    assert set(parsed) == {"DepartureDeclaration/d7", "DepartureDeclaration/old"}


def test_recorded_identities_are_read_as_json_reads_them() -> None:
    """The identity read from a record's text without parsing the record: the same words as
    a JSON parser gives, None (the record is then parsed) for anything but a list of text."""
    from customs_batch.planning.identity import _recorded_identity

    words = ["type=DEPARTURE", 'ref=C-"1"', "office=Zürich \\u00e9", "é\\\\"]
    text = json.dumps({"status": "applied", "identity": words}).encode()
    assert _recorded_identity(text) == tuple(words)
    assert _recorded_identity(text.decode()) == tuple(words)
    assert _recorded_identity(json.dumps({"identity": words}, ensure_ascii=False)) == tuple(words)
    for held in ("[]", "[1, 2]", '["a", null]', '["a", ["b"]]', '["a",]', '["a" "b"]'):
        assert _recorded_identity(b'{"identity": ' + held.encode() + b"}") is None
    assert _recorded_identity(b'{"status": "applied"}') is None


def test_records_of_no_kind_or_no_name_are_no_identity() -> None:
    spec = {**DEPARTURE, "commercialReference": "C-5"}
    first = plan_changes([_departure("d", **spec)], State.new(), now=NOW)
    record = _applied("DepartureDeclaration/d", spec, declarationId=5)
    record = record.with_changes(identity=first.changes[0].identity)
    text = json.dumps(record.to_json())
    texts = {"Nothing/d": text, "DepartureDeclaration/": text, "DepartureDeclaration": text}
    texts["DepartureDeclaration/d"] = text
    state = State(lineage="l", serial=1, resources=Records.from_texts(texts, "test"))
    copy = _departure("copy", commercialReference="C-5")
    plan = plan_changes([copy], state, now=NOW, orphans=False)
    change = _only(plan, "DepartureDeclaration/copy")
    # The one record of a kind and a name is found and named (outside the selection, so
    # refused, not moved); the others are no records of a document.
    assert change.action is Action.REFUSED
    assert change.reason.startswith("the state records DepartureDeclaration/d with ")


def test_the_words_documents_share_are_one_string_for_all() -> None:
    # A plan of 100,000 creations keeps every identity: a word many share (the action, the
    # place, the shipment) is one string for all of them.
    documents = [movement(f"mov-{n}", n, hawb=f"hawb_{n}") for n in range(4)]
    plan = plan_changes(documents, State("lineage"))
    identities = [change.identity for change in plan.changes]
    assert all(change.action is Action.CREATE for change in plan.changes)
    first = identities[0]
    assert first[1:2] == ("hawbId=hawb_0",)
    for other in identities[1:]:  # the same shipment, action and place; another HAWB
        assert [a is b for a, b in zip(first, other, strict=True)] == [True, False, True, True]


def _sent(name: str, index: int, quantity: int, place: int) -> ResourceRecord:
    """The record of a movement sent as the ``place``-th ISL of its HAWB."""
    spec = dict(movement(name, index, quantity=quantity).spec)
    record = _applied(f"Movement/{name}", spec, movementId=f"mov_{name}")
    identity = ("shipmentId=shp_7Hk2Lm", "hawbId=hawb_a1", "action=ISL", f"place={place}")
    return record.with_changes(identity=identity)


def test_a_row_inserted_above_movements_named_by_row_number_sends_nothing_twice() -> None:
    # Sent as rows 3 and 4 (2 and 3 packages); a row of 1 package is then inserted above
    # them, so every later row's name shifts by one and the last name is new.
    state = _state(_sent("isl-3", 0, 2, 0), _sent("isl-4", 1, 3, 1))
    documents = [
        movement("isl-3", 0, quantity=1),
        movement("isl-4", 1, quantity=2),
        movement("isl-5", 2, quantity=3),
    ]
    plan = plan_changes(documents, state, now=NOW)
    shifted = _only(plan, "Movement/isl-5")
    assert shifted.action is Action.REFUSED, shifted.reason
    assert "Movement/isl-4" in shifted.reason
    assert "state mv Movement/isl-4 Movement/isl-5" in shifted.reason
    assert plan.requests == 0


def _sent_on(name: str, index: int, hawb: str) -> ResourceRecord:
    """The record of a movement sent as the first ISL of ``hawb``."""
    spec = dict(movement(name, index, hawb=hawb).spec)
    record = _applied(f"Movement/{name}", spec, movementId=f"mov_{name}")
    identity = ("shipmentId=shp_7Hk2Lm", f"hawbId={hawb}", "action=ISL", "place=0")
    return record.with_changes(identity=identity)


@pytest.mark.parametrize("rows", [2, 3])
def test_a_row_of_another_hawb_inserted_above_sent_movements_has_a_way_out(rows: int) -> None:
    # Found by an outside probe: a sheet of movements named by row number, one HAWB a row;
    # a row inserted above sent ones. The document whose name the inserted row took was
    # refused as "immutable... revert, or state rm", and the next name as "still in the
    # manifests... remove one of the two documents": state rm led to a tombstone refusing
    # the new row, and no refusal named the way out (`state mv` of each record to the name
    # that now asks for it), so the new row could not be sent.
    hawbs = [f"hawb_a{n}" for n in range(2, 2 + rows)]
    state = _state(*(_sent_on(f"m-{n}", n, hawb) for n, hawb in enumerate(hawbs, 1)))
    documents = [
        movement("m-1", 0, hawb="hawb_new"),
        *(movement(f"m-{n}", n, hawb=hawb) for n, hawb in enumerate(hawbs, 2)),
    ]
    plan = plan_changes(documents, state, now=NOW)
    assert plan.requests == 0
    ways = set()
    for n in range(1, rows + 2):
        change = _only(plan, f"Movement/m-{n}")
        assert change.action is Action.REFUSED, change
        assert "the requests of this lane have moved" in change.reason
        ways.update(re.findall(r"`customs-batch state mv (\S+) (\S+)`", change.reason))
    # Followed literally, in any order: the records move to the names asking for them.
    followed = State(lineage="lin", serial=4)
    target = dict(ways)
    assert len(target) == len(ways) == rows  # one way for each record
    for address, record in state.resources.items():
        to = target[address]
        followed.apply(to, replace(record, address=to))
    again = plan_changes(documents, followed, now=NOW)
    assert _only(again, "Movement/m-1").action is Action.CREATE
    for n in range(2, rows + 2):
        assert _only(again, f"Movement/m-{n}").action in (Action.NO_CHANGE, Action.MOVED)
    assert again.requests == 1


def test_a_row_removed_above_a_sent_movement_moves_its_record_to_the_next_name() -> None:
    # Sent as rows 2 (3 packages, first of its lane) and 4 (1 package, second); row 2 is
    # removed, so row 4's request is now the first of the lane, named by its new row (3).
    # It was compared with row 2's record at that place ("declares the same, with other
    # values") and refused with a hint that led to a loop: it is row 4's record, renamed.
    state = _state(_sent("isl-2", 0, 3, 0), _sent("isl-4", 1, 1, 1))
    plan = plan_changes([movement("isl-3", 0, quantity=1)], state, now=NOW)
    moved = _only(plan, "Movement/isl-3")
    assert (moved.action, str(moved.moved_from)) == (Action.MOVED, "Movement/isl-4")
    assert _only(plan, "Movement/isl-2").action is Action.ORPHANED  # sent; cannot be deleted
    assert plan.requests == 0


def test_a_movement_inserted_above_a_sent_one_says_which_document_asks_its_place_now() -> None:
    # Names count rows of a sheet that holds other lanes too: the sent row 3 is row 4 now,
    # and the new row 2 comes where row 3 was sent. The refusal called row 3's record
    # "no longer in the manifests", and its hint (state mv) led to the opposite refusal.
    state = _state(_sent("isl-3", 0, 3, 0))
    documents = [movement("isl-2", 0, quantity=1), movement("isl-4", 1, quantity=3)]
    plan = plan_changes(documents, state, now=NOW)
    refused = _only(plan, "Movement/isl-2")
    assert refused.action is Action.REFUSED
    assert "it comes where Movement/isl-3 (mov_isl-3 at the service) was sent" in refused.reason
    assert "that request is now asked for by Movement/isl-4" in refused.reason
    assert "no longer in the manifests" not in refused.reason
    assert _only(plan, "Movement/isl-4").action is Action.MOVED
    assert plan.requests == 0


def test_a_refusal_names_a_movements_place_as_docs_count_it() -> None:
    # Found by an outside probe: a new movement put before the second sent ISL of its HAWB
    # was refused "(..., action=ISL, place=1)", while docs/state.md counts places as "the
    # first arrival, the second": place=1 read as the first. The words now say which.
    state = _state(_sent("isl-a", 0, 2, 0), _sent("isl-b", 1, 3, 1))
    documents = [
        movement("isl-a", 0, quantity=2),
        movement("isl-new", 1, quantity=9),
        movement("isl-b", 2, quantity=3),
    ]
    refused = _only(plan_changes(documents, state, now=NOW), "Movement/isl-new")
    assert refused.action is Action.REFUSED
    assert "it comes where Movement/isl-b (mov_isl-b) was sent" in refused.reason
    assert "action=ISL, the second of them, place=1 counted from 0)" in refused.reason


def test_a_second_movement_asking_what_a_recorded_one_asks_is_still_created() -> None:
    state = _state(_sent("isl-a", 0, 3, 0))
    plan = plan_changes(
        [movement("isl-a", 0, quantity=3), movement("isl-b", 1, quantity=3)], state, now=NOW
    )
    assert _only(plan, "Movement/isl-a").action is Action.NO_CHANGE
    assert _only(plan, "Movement/isl-b").action is Action.CREATE


def test_a_second_movement_is_created_when_the_recorded_one_comes_later() -> None:
    # isl-a was sent as the second ISL of its HAWB; the first is gone for good (`state rm
    # --gone`). A new movement of the same request comes before isl-a: its place is free,
    # and isl-a's own document, still to be planned, still asks what isl-a recorded.
    state = _state(_sent("isl-a", 0, 3, 1))
    plan = plan_changes(
        [movement("isl-b", 0, quantity=3), movement("isl-a", 1, quantity=3)], state, now=NOW
    )
    assert _only(plan, "Movement/isl-b").action is Action.CREATE
    assert _only(plan, "Movement/isl-a").action is Action.NO_CHANGE


def test_a_renamed_movement_whose_place_moved_takes_its_record() -> None:
    # Sent: a (2 packages, the first ISL) and b (3, the second). b's document is renamed d
    # and a new movement c comes between them: d asks what b recorded, at another place.
    state = _state(_sent("a", 0, 2, 0), _sent("b", 1, 3, 1))
    plan = plan_changes(
        [
            movement("a", 0, quantity=2),
            movement("c", 1, quantity=5),
            movement("d", 2, quantity=3),
        ],
        state,
        now=NOW,
    )
    assert _only(plan, "Movement/a").action is Action.NO_CHANGE
    moved = _only(plan, "Movement/d")
    assert (moved.action, str(moved.moved_from)) == (Action.MOVED, "Movement/b")
    assert _only(plan, "Movement/c").action is Action.REFUSED  # b's place, another request
    assert plan.requests == 0


def test_a_movement_put_before_those_sent_is_refused_with_a_way_out() -> None:
    state = _state(_sent("isl-1", 0, 4, 0), _sent("isl-2", 1, 3, 1))
    plan = plan_changes(
        [
            movement("isl-0", 0, quantity=1),
            movement("isl-1", 1, quantity=4),
            movement("isl-2", 2, quantity=3),
        ],
        state,
        now=NOW,
    )
    early = _only(plan, "Movement/isl-0")
    assert early.action is Action.REFUSED
    assert "after" in early.reason and "Movement/isl-1" in early.reason
    assert "make them differ" not in early.reason  # the fields are the HAWB's own
    assert _only(plan, "Movement/isl-1").action is Action.NO_CHANGE


@pytest.mark.parametrize("removed", ["forgotten", "orphaned"])
def test_a_movement_added_after_the_last_sent_one_of_a_lane_with_one_removed_is_created(
    removed: str,
) -> None:
    # a, b and c sent as the first three VAH of the HAWB; b removed from the manifests (and
    # forgotten by `state rm`, or only orphaned): b still holds its place at the service.
    # A new d after c was counted at c's place and refused: "put its document after c".
    b = _sent("b", 1, 2, 1)
    if removed == "forgotten":
        b = b.with_changes(status=RecordStatus.FORGOTTEN, forgotten_from="applied")
    state = _state(_sent("a", 0, 1, 0), b, _sent("c", 2, 3, 2))
    documents = [
        movement("a", 0, quantity=1),
        movement("c", 1, quantity=3),
        movement("d", 2, quantity=4),
    ]
    plan = plan_changes(documents, state, now=NOW)
    new = _only(plan, "Movement/d")
    assert new.action is Action.CREATE, new.reason
    assert new.identity[-1] == "place=3"
    assert _only(plan, "Movement/c").action is Action.NO_CHANGE
    # Put before c instead, it comes where b was sent: a correction of b once b is
    # forgotten (docs/state.md), refused while b is only orphaned.
    documents = [documents[0], movement("d", 1, quantity=4), movement("c", 2, quantity=3)]
    early = _only(plan_changes(documents, state, now=NOW), "Movement/d")
    if removed == "forgotten":
        assert (early.action, early.identity[-1]) == (Action.CREATE, "place=1")
    else:
        assert early.action is Action.REFUSED and "Movement/b" in early.reason


def _group(code: str) -> dict[str, Any]:
    return {
        "name": f"Group {code}",
        "code": code,
        "companyId": 1,
        "DeclarationTemplates": [
            {"procedureType": "H1", "declarationOffice": "NL000396", "countryOfDestination": "NL"}
        ],
    }


def _groups(*codes: str) -> list[Any]:
    return [doc(Kind.TEMPLATE_GROUP, f"group-{n}", _group(code), n) for n, code in enumerate(codes)]


def _group_state(*codes: str) -> State:
    return _state(
        *(
            replace(
                _applied(f"TemplateGroup/group-{n}", _group(code), id=10 + n, code=code),
                identity=("companyId=1", f"code={code}"),
            )
            for n, code in enumerate(codes)
        )
    )


def test_two_documents_renamed_into_each_others_names_are_refused_not_updated() -> None:
    """group-0 and group-1 swap names: each would be "updated" into the other's group, which
    turns each object at the service into the other declaration (or is refused as a
    duplicate code half-way through)."""
    state = _group_state("ROAD", "RAIL")
    plan = plan_changes(_groups("RAIL", "ROAD"), state, now=NOW)
    for me, other in (("group-0", "group-1"), ("group-1", "group-0")):
        change = _only(plan, f"TemplateGroup/{me}")
        assert change.action is Action.REFUSED, change
        assert f"TemplateGroup/{other} (1{other[-1]} at the service)" in change.reason
        assert (
            f"`customs-batch state mv TemplateGroup/{me} TemplateGroup/{me}-previous`, and "
            "the same for each document refused so"
        ) in change.reason
    assert plan.requests == 0
    assert plan.blocked


def test_names_rotated_among_three_documents_have_a_way_out_that_works_followed_literally() -> None:
    """Found by an outside probe: group-0, group-1 and group-2 took each other's names in a
    round (a sheet's rows named by row number, its last row moved first). Each refusal said
    `state mv ADDR ADDR-previous`, then `state mv OTHER ADDR`: followed in the order shown,
    a later step moved a record an earlier step had put in place, another failed (`not in
    the state`), and a record was left at the wrong name. Now each says to move its record
    aside, and the next plan moves every record to the document that declares it."""
    state = _group_state("ROAD", "RAIL", "SEA")
    rotated = _groups("SEA", "ROAD", "RAIL")
    plan = plan_changes(rotated, state, now=NOW)
    asides = {}
    for n in range(3):
        change = _only(plan, f"TemplateGroup/group-{n}")
        assert change.action is Action.REFUSED, change
        assert "then `customs-batch state mv TemplateGroup/group-" not in change.reason
        asides[f"TemplateGroup/group-{n}"] = _way_out_aside(
            change.reason, f"TemplateGroup/group-{n}"
        )
    assert plan.requests == 0
    # `state mv` of each, as the refusals say.
    followed = State(lineage="lin", serial=4)
    for address, record in state.resources.items():
        aside = asides[address]
        followed.apply(aside, replace(record, address=aside))
    again = plan_changes(rotated, followed, now=NOW)
    for n, was in enumerate((2, 0, 1)):
        change = _only(again, f"TemplateGroup/group-{n}")
        assert change.action is Action.MOVED, change
        assert f"TemplateGroup/group-{was}-previous (1{was} at the service)" in change.reason
    assert again.requests == 0


def test_a_row_inserted_in_the_middle_has_ways_out_that_work_followed_literally() -> None:
    """Found by an outside probe: a row inserted in the middle of a sheet whose documents are
    named by row number, the rows after it re-sorted. The refusals named `state mv group-1
    group-1-previous, then state mv group-2 group-1` and `state mv group-2 group-3` for one
    record: followed in the order shown, the second moved the record the first had put in
    place to the wrong document. Now each names only the records to move aside, and the
    next plan gives each to the document that declares it; the new row is created."""
    state = _group_state("ROAD", "RAIL", "SEA")
    inserted = _groups("ROAD", "AIR", "RAIL", "SEA")
    plan = plan_changes(inserted, state, now=NOW)
    assert _only(plan, "TemplateGroup/group-0").action is Action.NO_CHANGE
    aside = set()
    for n in (1, 2, 3):
        change = _only(plan, f"TemplateGroup/group-{n}")
        assert change.action is Action.REFUSED, change
        assert not re.search(r"`customs-batch state mv \S+ TemplateGroup/group-\d`", change.reason)
        aside.update(re.findall(r"`customs-batch state mv (\S+) (\S+-previous)`", change.reason))
    assert aside == {
        ("TemplateGroup/group-1", "TemplateGroup/group-1-previous"),
        ("TemplateGroup/group-2", "TemplateGroup/group-2-previous"),
    }
    assert plan.requests == 0
    followed = State(lineage="lin", serial=4)
    for address, record in state.resources.items():
        target = dict(aside).get(address, address)
        followed.apply(target, replace(record, address=target))
    again = plan_changes(inserted, followed, now=NOW)
    assert _only(again, "TemplateGroup/group-1").action is Action.CREATE
    for n in (2, 3):
        change = _only(again, f"TemplateGroup/group-{n}")
        assert change.action is Action.MOVED, change
        assert f"TemplateGroup/group-{n - 1}-previous (1{n - 1} at the service)" in change.reason
    assert again.requests == 1


def _way_out_aside(reason: str, address: str) -> str:
    """The name the refusal's first `state mv` moves ``address``'s record aside to."""
    found = re.search(rf"`customs-batch state mv {re.escape(address)} (\S+)`", reason)
    assert found is not None, reason
    return found.group(1)


def test_a_swap_refusal_moves_a_record_aside_to_a_name_state_mv_takes() -> None:
    """Found by an outside probe: the way out named `state mv ADDR ADDR-previous`, which
    `state mv` refuses for a name within 9 characters of the 200 allowed ("at most 200
    characters long"), and for a name the state already holds ("already in the state"):
    followed literally, its first step failed."""
    long_a, long_b = "a" * 195, "b" * 195
    state = _state(
        replace(
            _applied(f"TemplateGroup/{long_a}", _group("ROAD"), id=10, code="ROAD"),
            identity=("companyId=1", "code=ROAD"),
        ),
        replace(
            _applied(f"TemplateGroup/{long_b}", _group("RAIL"), id=11, code="RAIL"),
            identity=("companyId=1", "code=RAIL"),
        ),
    )
    swapped = [
        doc(Kind.TEMPLATE_GROUP, long_a, _group("RAIL"), 0),
        doc(Kind.TEMPLATE_GROUP, long_b, _group("ROAD"), 1),
    ]
    plan = plan_changes(swapped, state, now=NOW)
    for name in (long_a, long_b):
        change = _only(plan, f"TemplateGroup/{name}")
        assert change.action is Action.REFUSED, change
        aside = Address.parse(_way_out_aside(change.reason, f"TemplateGroup/{name}"))
        assert aside is not None and aside.kind is Kind.TEMPLATE_GROUP
        assert len(aside.name) <= MAX_NAME and re.fullmatch(NAME_PATTERN, aside.name)
        assert aside.name.endswith("-previous") and str(aside) not in state.resources

    # group-0-previous held already (an earlier swap's record, say): another free name.
    state = _group_state("ROAD", "RAIL")
    state.apply(
        "TemplateGroup/group-0-previous",
        _applied("TemplateGroup/group-0-previous", _group("SEA"), id=12, code="SEA"),
    )
    plan = plan_changes(_groups("RAIL", "ROAD"), state, now=NOW)
    change = _only(plan, "TemplateGroup/group-0")
    assert change.action is Action.REFUSED, change
    aside_0 = _way_out_aside(change.reason, "TemplateGroup/group-0")
    assert aside_0 == "TemplateGroup/group-0-previous-2"


def test_a_row_inserted_above_documents_named_by_row_updates_no_group_into_another() -> None:
    """Rows named by their number: a row inserted in the middle gives group-1 the new row's
    code and group-2 the code group-1 recorded. Updating group-1 would turn the RAIL group
    into the new AIR group, and group-2 would then be a second RAIL group."""
    state = _group_state("ROAD", "RAIL")
    plan = plan_changes(_groups("ROAD", "AIR", "RAIL"), state, now=NOW)
    assert _only(plan, "TemplateGroup/group-0").action is Action.NO_CHANGE
    shifted = _only(plan, "TemplateGroup/group-1")
    assert shifted.action is Action.REFUSED, shifted
    assert "which TemplateGroup/group-2 now declares" in shifted.reason
    assert "`customs-batch state mv TemplateGroup/group-1 TemplateGroup/group-2`" in (
        shifted.reason
    )
    last = _only(plan, "TemplateGroup/group-2")
    assert last.action is Action.REFUSED
    assert "now declares something else" in last.reason
    assert "`customs-batch state mv TemplateGroup/group-1 TemplateGroup/group-2`" in last.reason
    assert plan.requests == 0

    # The way out the plan names: the record goes to the name that declares it now.
    moved = _state(
        replace(state.resources["TemplateGroup/group-0"]),
        replace(
            state.resources["TemplateGroup/group-1"],
            address="TemplateGroup/group-2",
        ),
    )
    plan = plan_changes(_groups("ROAD", "AIR", "RAIL"), moved, now=NOW)
    assert _only(plan, "TemplateGroup/group-1").action is Action.CREATE
    assert _only(plan, "TemplateGroup/group-2").action is Action.NO_CHANGE
    assert not plan.blocked


def test_a_changed_code_nothing_else_declares_is_still_an_update() -> None:
    state = _group_state("ROAD", "RAIL")
    plan = plan_changes(_groups("ROAD", "AIR"), state, now=NOW)
    change = _only(plan, "TemplateGroup/group-1")
    assert change.action is Action.UPDATE, change
    assert "code" in change.changed


def test_a_selection_that_leaves_out_who_now_declares_a_record_refuses_its_update() -> None:
    """-l/--target of group-1 alone, after a row inserted above it: the document that now
    declares RAIL (group-2) is not in the selection, so the update is refused, not sent."""
    state = _group_state("ROAD", "RAIL")
    selected = [doc(Kind.TEMPLATE_GROUP, "group-1", _group("AIR"), 1)]
    plan = plan_changes(selected, state, now=NOW, orphans=False)
    change = _only(plan, "TemplateGroup/group-1")
    assert change.action is Action.REFUSED, change
    assert "Plan without a selection" in change.reason
    assert "the selection (-l, --target, --exclude) leaves out" in change.reason
    assert plan.requests == 0
    # The whole batch decides: the same change with nothing else declaring RAIL is an update.
    plan = plan_changes(_groups("ROAD", "AIR"), state, now=NOW)
    assert _only(plan, "TemplateGroup/group-1").action is Action.UPDATE


def _group_renamed(to: str, code: str, *previous: str, **changes: Any) -> Any:
    document = doc(Kind.TEMPLATE_GROUP, to, {**_group(code), **changes}, 0)
    return replace(document, previous_names=previous)


@pytest.mark.parametrize("forgotten", [False, True], ids=["tracked", "forgotten by state rm"])
def test_a_declared_rename_to_a_record_of_another_declaration_is_refused(forgotten: bool) -> None:
    """previousNames naming by mistake a record that declares something else (another
    code): taking it over would turn that object into this document's group."""
    state = _group_state("DEFAULT")
    if forgotten:
        record = state.resources["TemplateGroup/group-0"]
        state = _state(record.with_changes(status=RecordStatus.FORGOTTEN, forgotten_from="applied"))
    plan = plan_changes([_group_renamed("group-x", "GRP-X", "group-0")], state, now=NOW)
    change = _only(plan, "TemplateGroup/group-x")
    assert (change.action, change.operation) == (Action.REFUSED, Operation.NONE), change
    assert change.moved_from is None
    assert "code=DEFAULT" in change.reason and "code=GRP-X" in change.reason
    assert ("forgotten by `customs-batch state rm`" in change.reason) is forgotten
    assert plan.requests == 0


def test_a_declared_rename_with_a_change_says_whose_record_it_takes_over() -> None:
    state = _group_state("ROAD")
    plan = plan_changes(
        [_group_renamed("group-x", "ROAD", "group-0", name="Road imports")], state, now=NOW
    )
    change = _only(plan, "TemplateGroup/group-x")
    assert change.action is Action.UPDATE, change
    assert str(change.moved_from) == "TemplateGroup/group-0"
    assert change.reason.startswith("renamed from TemplateGroup/group-0 (metadata.previousNames)")
    same = plan_changes([_group_renamed("group-x", "ROAD", "group-0")], state, now=NOW)
    assert _only(same, "TemplateGroup/group-x").action is Action.MOVED


@pytest.mark.parametrize("kept", [True, False])
def test_numbers_of_an_identity_are_compared_by_value(kept: bool) -> None:
    # companyId 1 and 1.0 are one company at the service: a departure renamed with its
    # companyId written 1.0 is the recorded declaration, not a second one.
    identity = ("companyId=1", "commercialReference=C-1", "departureOffice=NL000396",
                "destinationOffice=DE004058", "goods=090121/BR") if kept else ()  # fmt: skip
    record = replace(
        _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003), identity=identity
    )
    plan = plan_changes([_departure("dep-2", companyId=1.0)], _state(record), now=NOW)
    change = _only(plan, "DepartureDeclaration/dep-2")
    assert (change.action, str(change.moved_from)) == (Action.MOVED, "DepartureDeclaration/dep")
    two = plan_changes([_departure("dep-a"), _departure("dep-b", companyId=1.0)], _state(), now=NOW)
    assert {c.action for c in two.changes} == {Action.REFUSED}
    cancellations = plan_changes(
        [
            doc(Kind.EXPORT_CANCELLATION, "c-1", {"declarationId": 501}, 0),
            doc(Kind.EXPORT_CANCELLATION, "c-2", {"declarationId": 501.0}, 1),
        ],
        _state(),
        now=NOW,
    )
    assert {c.action for c in cancellations.changes} == {Action.REFUSED}


def test_two_writers_of_one_party_field_are_refused_once_the_ids_are_known() -> None:
    # validate cannot tell that ${ref:} and 7003 name one declaration: the plan can.
    state = _state(_applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003))
    by_ref = doc(
        Kind.TRANSIT_PARTY_UPDATE, "a-by-ref",
        {"declarationId": "${ref:DepartureDeclaration/dep.declarationId}",
         "Consignee": {"name": "Initech"}},
        1,
    )  # fmt: skip
    by_id = doc(
        Kind.TRANSIT_PARTY_UPDATE, "b-by-id",
        {"declarationId": 7003, "Consignee": {"name": "Globex"}}, 2,
    )  # fmt: skip
    elsewhere = doc(
        Kind.TRANSIT_PARTY_UPDATE, "c-other", {"declarationId": 7004, "Consignee": {"name": "X"}}, 3
    )  # fmt: skip
    owned = doc(
        Kind.TRANSIT_PARTY_UPDATE, "d-owned",
        {"declarationId": 7003.0, "Principal": {"name": "B"}}, 4,
    )  # fmt: skip
    plan = plan_changes([_departure("dep"), by_ref, by_id, elsewhere, owned], state, now=NOW)
    assert _only(plan, "TransitPartyUpdate/a-by-ref").action is Action.CREATE
    refused = _only(plan, "TransitPartyUpdate/b-by-id")
    assert refused.action is Action.REFUSED and refused.requests == 0
    assert "Consignee.name of declaration 7003 is written by TransitPartyUpdate/a-by-ref" in (
        refused.reason
    )
    assert _only(plan, "TransitPartyUpdate/c-other").action is Action.CREATE
    # What the departure writes is its own.
    owned_change = _only(plan, "TransitPartyUpdate/d-owned")
    assert owned_change.action is Action.REFUSED
    assert "written by DepartureDeclaration/dep" in owned_change.reason


def _row_update(name: str, departure: str, eori: str, index: int) -> Any:
    spec = {
        "declarationId": f"${{ref:DepartureDeclaration/{departure}.declarationId}}",
        "Consignee": {"eoriNo": eori},
    }
    return doc(Kind.TRANSIT_PARTY_UPDATE, name, spec, index)


def _sent_rows(first: str, second: str, *eoris: str) -> State:
    """Two departures (C-1: 7003, C-2: 7004) sent with a party update each (``eoris``)."""
    return _state(
        _applied(f"DepartureDeclaration/{first}", DEPARTURE, declarationId=7003),
        _applied(
            f"DepartureDeclaration/{second}",
            {**DEPARTURE, "commercialReference": "C-2"},
            declarationId=7004,
        ),
        *(
            _applied(
                f"TransitPartyUpdate/{name}-eori",
                {"declarationId": ident, "Consignee": {"eoriNo": eori}},
                declarationId=ident,
            )
            for name, ident, eori in zip((first, second), (7003, 7004), eoris, strict=True)
        ),
    )


@pytest.mark.parametrize(("first", "second"), [("dep-2", "dep-3"), ("alpha", "bravo")])
def test_a_party_update_through_a_name_that_moved_to_another_declaration_is_refused(
    first: str, second: str
) -> None:
    """The rows of a sheet reordered (named by row number), or two departures renamed into
    each other's names: each party update's ${ref:} now reaches the other row's record. The
    departures are refused; an update sent through their names would write one row's EORI
    on the other row's declaration."""
    state = _sent_rows(first, second, "DE1", "DE2")
    documents = [
        _departure(first, 0, commercialReference="C-2"),
        _row_update(f"{first}-eori", first, "DE2", 1),
        _departure(second, 2),
        _row_update(f"{second}-eori", second, "DE1", 3),
    ]
    plan = plan_changes(documents, state, now=NOW)
    for name, held in ((first, 7003), (second, 7004)):
        assert _only(plan, f"DepartureDeclaration/{name}").action is Action.REFUSED
        update = _only(plan, f"TransitPartyUpdate/{name}-eori")
        assert (update.action, update.operation) == (Action.REFUSED, Operation.NONE), update
        assert update.idempotency_key is None
        assert (
            f"spec.declarationId refers to DepartureDeclaration/{name}, refused in this plan: "
            f"the name DepartureDeclaration/{name} now stands for another declaration than "
            f"the one its record holds ({held} at the service)"
        ) in update.reason
    assert plan.requests == 0
    assert plan.counts[Action.UPDATE] == 0


def test_what_reaches_a_moved_name_through_another_document_waits_with_it() -> None:
    # A new party update naming its declaration through the first one's output, and a new
    # one through the moved name itself: neither is sent.
    state = _sent_rows("dep-2", "dep-3", "DE1", "DE2")
    chained = doc(
        Kind.TRANSIT_PARTY_UPDATE,
        "dep-2-consignor",
        {"declarationId": "${ref:TransitPartyUpdate/dep-2-eori.declarationId}",
         "Consignor": {"eoriNo": "NL9"}},
        4,
    )  # fmt: skip
    new = doc(
        Kind.TRANSIT_PARTY_UPDATE,
        "dep-3-principal",
        {"declarationId": "${ref:DepartureDeclaration/dep-3.declarationId}",
         "Principal": {"eoriNo": "NL8"}},
        5,
    )  # fmt: skip
    documents = [
        _departure("dep-2", 0, commercialReference="C-2"),
        _row_update("dep-2-eori", "dep-2", "DE2", 1),
        _departure("dep-3", 2),
        _row_update("dep-3-eori", "dep-3", "DE1", 3),
        chained,
        new,
    ]
    plan = plan_changes(documents, state, now=NOW)
    through = _only(plan, "TransitPartyUpdate/dep-2-consignor")
    assert through.action is Action.REFUSED, through
    assert (
        "spec.declarationId refers to TransitPartyUpdate/dep-2-eori, which reaches its "
        "declaration through DepartureDeclaration/dep-2, refused in this plan"
    ) in through.reason
    created = _only(plan, "TransitPartyUpdate/dep-3-principal")
    assert created.action is Action.REFUSED, created
    assert "refers to DepartureDeclaration/dep-3, refused in this plan" in created.reason
    assert plan.requests == 0


def test_a_party_update_asking_what_its_record_holds_stays_unchanged_through_a_moved_name() -> None:
    # Nothing would be sent for it: it is not refused on top of the departures.
    state = _sent_rows("dep-2", "dep-3", "DE1", "DE1")
    documents = [
        _departure("dep-2", 0, commercialReference="C-2"),
        _row_update("dep-2-eori", "dep-2", "DE1", 1),
        _departure("dep-3", 2),
        _row_update("dep-3-eori", "dep-3", "DE1", 3),
    ]
    plan = plan_changes(documents, state, now=NOW)
    assert _only(plan, "DepartureDeclaration/dep-2").action is Action.REFUSED
    for name in ("dep-2-eori", "dep-3-eori"):
        assert _only(plan, f"TransitPartyUpdate/{name}").action is Action.NO_CHANGE


def test_a_party_update_of_a_departure_refused_for_a_change_it_cannot_make_is_sent() -> None:
    # The departure's name still stands for its own declaration: what reaches it through
    # the name goes where it always went.
    state = _sent_rows("dep-2", "dep-3", "DE1", "DE2")
    documents = [
        _departure("dep-2", 0, totalWeight=11.0),
        _row_update("dep-2-eori", "dep-2", "DE9", 1),
    ]
    plan = plan_changes(documents, state, now=NOW)
    refused = _only(plan, "DepartureDeclaration/dep-2")
    assert refused.action is Action.REFUSED and "cannot change" in refused.reason
    update = _only(plan, "TransitPartyUpdate/dep-2-eori")
    assert update.action is Action.UPDATE, update.reason
    assert update.spec["declarationId"] == 7003


def _renamed_with_its_update() -> tuple[State, list[Any]]:
    """``dep`` (7003) renamed to ``dep-new`` with a party field changed (refused: the same
    declaration under a new name, with other values), its party update's ${ref:} following
    the new name with an edited EORI."""
    state = _state(
        _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003),
        _applied(
            "TransitPartyUpdate/upd",
            {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
            declarationId=7003,
        ),
    )
    principal = {**DEPARTURE["Principal"], "name": "B"}
    documents = [
        _departure("dep-new", 0, Principal=principal),
        _row_update("upd", "dep-new", "DE9", 1),
    ]
    return state, documents


def test_a_party_update_through_a_departure_this_plan_does_not_create_waits_for_it() -> None:
    # It was refused as a "declarationId of a party update cannot change", whose way out
    # (state rm it, write a new document) led to a tombstone and a further refusal: the
    # departure's own refusal (its state mv) is all there is to do.
    state, documents = _renamed_with_its_update()
    plan = plan_changes(documents, state, now=NOW)
    departure = _only(plan, "DepartureDeclaration/dep-new")
    assert departure.action is Action.REFUSED
    assert "`customs-batch state mv DepartureDeclaration/dep DepartureDeclaration/dep-new`" in (
        departure.reason
    )
    update = _only(plan, "TransitPartyUpdate/upd")
    assert (update.action, update.operation) == (Action.REFUSED, Operation.NONE)
    assert update.reason.startswith(
        "spec.declarationId refers to DepartureDeclaration/dep-new, refused in this plan: "
        "this plan does not create DepartureDeclaration/dep-new"
    ), update.reason
    assert "cannot change" not in update.reason and "state rm" not in update.reason

    # The way out the departure names, and nothing else: both are updates of 7003.
    record = state.resources["DepartureDeclaration/dep"]
    moved = _state(
        replace(record, address="DepartureDeclaration/dep-new"),
        state.resources["TransitPartyUpdate/upd"],
    )
    plan = plan_changes(documents, moved, now=NOW)
    assert _only(plan, "DepartureDeclaration/dep-new").action is Action.UPDATE
    update = _only(plan, "TransitPartyUpdate/upd")
    assert update.action is Action.UPDATE, update.reason
    assert update.spec["declarationId"] == 7003


def test_a_new_party_update_of_a_refused_new_departure_is_refused_not_planned_to_create() -> None:
    # apply could only fail it ("its source was not applied") while the plan counted it a
    # creation.
    state = _state(_applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003))
    documents = [
        _departure("dep", 0),
        _departure("copy", 1),  # a second name for the same declaration: refused
        _row_update("copy-eori", "copy", "DE9", 2),
    ]
    plan = plan_changes(documents, state, now=NOW)
    assert _only(plan, "DepartureDeclaration/copy").action is Action.REFUSED
    update = _only(plan, "TransitPartyUpdate/copy-eori")
    assert update.action is Action.REFUSED, update
    assert "this plan does not create DepartureDeclaration/copy" in update.reason
    assert plan.counts[Action.CREATE] == 0 and plan.requests == 0


NFC = unicodedata.normalize("NFC", "MÜLLER-0001")
NFD = unicodedata.normalize("NFD", "MÜLLER-0001")


@pytest.mark.parametrize(
    "other",
    [
        NFD,
        f"{NFC} ",
        f"\u00a0{NFC}\t",
        f"{NFC}\u200b",  # a zero-width space pasted in with the cell
        f"\ufeff{NFC}",  # a byte-order mark left at the start of a cell
        "MÜLLER\u2060-0001",  # a word joiner inside
        f"{NFD}\u200b",
    ],
)
def test_a_reference_written_in_another_unicode_form_or_with_spaces_is_one_declaration(
    other: str,
) -> None:
    # The same letters decomposed (macOS, some exports), a cell re-exported with a space or
    # with a character that prints as nothing: printed alike, the same declaration, never
    # sent twice (a renamed row's departure was planned `+ create` beside its orphaned
    # record when its reference had gained a zero-width space).
    assert NFC != NFD
    two = plan_changes(
        [
            _departure("a", 0, commercialReference=NFC),
            _departure("b", 1, commercialReference=other),
        ],
        State.new(),
        now=NOW,
    )
    assert {c.action for c in two.changes} == {Action.REFUSED}
    spec = {**DEPARTURE, "commercialReference": NFC}
    state = _state(_applied("DepartureDeclaration/dep", spec, declarationId=7003))
    renamed = plan_changes([_departure("dep-2", commercialReference=other)], state, now=NOW)
    change = _only(renamed, "DepartureDeclaration/dep-2")
    assert change.action is Action.REFUSED
    assert "DepartureDeclaration/dep (7003 at the service)" in change.reason
    assert "commercialReference only written differently" in change.reason
    assert renamed.requests == 0


@pytest.mark.parametrize(
    ("recorded", "exported"),
    [
        ("0012", "12"),  # leading zeros dropped
        ("12", "12.0"),  # a whole number written as a decimal
        ("12", "12,0"),  # the same in a German export
        ("123456789012345678", "1.23457E+17"),  # a long reference in scientific notation
        ("123456789012345678", "1,23457E+17"),
        ("123456789012345678", "123456789012346000"),  # fifteen digits kept
    ],
)
def test_a_key_a_spreadsheet_re_typed_as_a_number_is_refused_not_created_twice(
    recorded: str, exported: str
) -> None:
    # A re-export that read the reference column as numbers renamed the rows' documents
    # (named by the reference) and re-typed the key: plan showed `+ create` beside the
    # orphaned record of the first export, and apply made a second declaration.
    spec = {**DEPARTURE, "commercialReference": recorded}
    state = _state(_applied(f"DepartureDeclaration/dep-{recorded}", spec, declarationId=7003))
    plan = plan_changes([_departure("dep-new", commercialReference=exported)], state, now=NOW)
    change = _only(plan, "DepartureDeclaration/dep-new")
    assert change.action is Action.REFUSED
    assert f"DepartureDeclaration/dep-{recorded} (7003 at the service)" in change.reason
    assert f"commercialReference {exported!r} where it has {recorded!r}" in change.reason
    assert "probably changed by the export" in change.reason
    assert plan.requests == 0
    # With a selection that leaves the record's document out, the same refusal's cause.
    selected = plan_changes(
        [_departure("dep-new", commercialReference=exported)], state, now=NOW, orphans=False
    )
    assert _only(selected, "DepartureDeclaration/dep-new").action is Action.REFUSED


@pytest.mark.parametrize("exported", ["13", "0013", "1200", "1.23458E+17", "C-0012", "12a"])
def test_another_number_than_the_recorded_key_is_a_new_declaration(exported: str) -> None:
    # Only the same number written another way is taken for a re-typed key.
    recorded = "123456789012345678" if "E" in exported else "0012"
    spec = {**DEPARTURE, "commercialReference": recorded}
    state = _state(_applied("DepartureDeclaration/dep", spec, declarationId=7003))
    plan = plan_changes([_departure("dep-new", commercialReference=exported)], state, now=NOW)
    assert _only(plan, "DepartureDeclaration/dep-new").action is Action.CREATE


def test_a_re_typed_key_is_refused_after_state_rm_and_created_beside_a_named_record() -> None:
    # `state rm` of the orphan (as its plan line offers) keeps a tombstone that refuses the
    # re-typed row all the same; a record whose document is still in the manifests (two
    # rows of the batch) is no twin.
    spec = {**DEPARTURE, "commercialReference": "0012"}
    record = _applied("DepartureDeclaration/dep", spec, declarationId=7003)
    forgotten = replace(
        record, status=RecordStatus.FORGOTTEN, forgotten_from=RecordStatus.APPLIED.value
    )
    plan = plan_changes(
        [_departure("dep-new", commercialReference="12")], _state(forgotten), now=NOW
    )
    change = _only(plan, "DepartureDeclaration/dep-new")
    assert change.action is Action.REFUSED
    assert "forgotten by `customs-batch state rm`, but for numbers written" in change.reason
    assert "`customs-batch state rm --gone DepartureDeclaration/dep`" in change.reason
    both = plan_changes(
        [
            _departure("dep", 0, commercialReference="0012"),
            _departure("dep-new", 1, commercialReference="12"),
        ],
        _state(record),
        now=NOW,
    )
    assert _only(both, "DepartureDeclaration/dep-new").action is Action.CREATE


def test_a_key_re_typed_under_the_same_name_is_said_to_be_re_typed() -> None:
    # A document named by another column (its record under the same name) whose reference
    # a re-export re-typed: refused as a change customs cannot take, in words that did not
    # say the two values are one number written another way, nor how to put it back.
    spec = {**DEPARTURE, "commercialReference": "0012"}
    state = _state(_applied("DepartureDeclaration/dep", spec, declarationId=7003))
    plan = plan_changes([_departure("dep", commercialReference="12")], state, now=NOW)
    change = _only(plan, "DepartureDeclaration/dep")
    assert change.action is Action.REFUSED
    assert "commercialReference '12' for '0012': the same number written another way" in (
        change.reason
    )
    assert "format the column as Text" in change.reason
    other = plan_changes([_departure("dep", commercialReference="13")], state, now=NOW)
    assert "the same number" not in _only(other, "DepartureDeclaration/dep").reason


def test_a_percentage_cell_sent_as_its_number_is_said_to_be_one() -> None:
    # Earlier releases read a cell showing 40% as 0.4 and sent it; read as the sheet shows
    # it now, the declaration was refused as a change, in words that did not say why nor
    # how to declare it as sent.
    spec = {**DEPARTURE, "commercialReference": "0.4"}
    state = _state(_applied("DepartureDeclaration/dep", spec, declarationId=7003))
    plan = plan_changes([_departure("dep", commercialReference="40%")], state, now=NOW)
    reason = _only(plan, "DepartureDeclaration/dep").reason
    assert "commercialReference '40%' for '0.4': a cell under a percentage format" in reason
    assert "declare its column `number` in forEach.columns" in reason
    other = plan_changes([_departure("dep", commercialReference="41%")], state, now=NOW)
    assert "percentage" not in _only(other, "DepartureDeclaration/dep").reason


def test_looking_for_a_re_typed_key_parses_no_record_it_does_not_match(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A plan with a selection leaves most records of a big state unnamed: each is compared
    # by the identity its text keeps, and only a record of the same shape is parsed.
    rows = {}
    for n in range(50):
        spec = {**DEPARTURE, "commercialReference": f"C-{n}"}
        record = _applied(f"DepartureDeclaration/dep-{n}", spec, declarationId=7000 + n)
        identity = [
            "companyId=1", f"commercialReference=C-{n}", "departureOffice=NL000396",
            "destinationOffice=DE004058", "goods=090121/BR",
        ]  # fmt: skip
        rows[record.address] = json.dumps({**record.to_json(), "identity": identity})
    retyped = {**DEPARTURE, "commercialReference": "0012"}
    twin = _applied("DepartureDeclaration/twin", retyped, declarationId=6999)
    words = [*identity[:1], "commercialReference=0012", *identity[2:]]
    rows[twin.address] = json.dumps({**twin.to_json(), "identity": words})
    state = State("lin", 3, Records.from_texts(rows, "the database"))
    parsed = parsed_records(monkeypatch)
    plan = plan_changes(
        [_departure("new", commercialReference="12")], state, now=NOW, orphans=False
    )
    assert _only(plan, "DepartureDeclaration/new").action is Action.REFUSED
    assert parsed == ["DepartureDeclaration/twin"]


def test_a_commodity_code_re_typed_as_a_number_is_refused_too() -> None:
    # A departure's goods are an identity of several codes: one re-typed among them.
    items = [
        {"commodityCode": "090121", "originCountry": "BR", "netPrice": 5},
        {"commodityCode": "731815", "originCountry": "NL", "netPrice": 5},
    ]
    state = _state(
        _applied(
            "DepartureDeclaration/dep", {**DEPARTURE, "DeclarationItems": items}, declarationId=7
        )
    )
    retyped = [{**items[0], "commodityCode": "90121"}, items[1]]
    plan = plan_changes([_departure("dep-new", DeclarationItems=retyped)], state, now=NOW)
    change = _only(plan, "DepartureDeclaration/dep-new")
    assert change.action is Action.REFUSED
    assert "goods '731815/NL,90121/BR' where it has '090121/BR,731815/NL'" in change.reason


def test_a_party_written_in_another_unicode_form_is_said_to_be_only_respelled() -> None:
    # A spreadsheet re-exported decomposed changes the texts inside a party and an item too:
    # the refusal listed those fields as other values, though nothing of them had changed.
    item = DEPARTURE["DeclarationItems"][0]
    spec = {
        **DEPARTURE,
        "Principal": {**DEPARTURE["Principal"], "name": NFC},
        "DeclarationItems": [{**item, "description": NFC}],
    }
    state = _state(_applied("DepartureDeclaration/dep", spec, declarationId=7003))
    items = [{**item, "description": f"{NFD}\u200b"}]
    principal = {**DEPARTURE["Principal"], "name": NFD}
    renamed = plan_changes(
        [_departure("dep-2", Principal=principal, DeclarationItems=items)], state, now=NOW
    )
    change = _only(renamed, "DepartureDeclaration/dep-2")
    assert change.action is Action.REFUSED
    assert "(DeclarationItems, Principal; DeclarationItems, Principal only written" in (
        change.reason
    )
    # A real change of a party is not said to be one.
    other = {**DEPARTURE["Principal"], "name": "Another"}
    changed = _only(
        plan_changes([_departure("dep-2", Principal=other)], state, now=NOW),
        "DepartureDeclaration/dep-2",
    )
    assert changed.action is Action.REFUSED
    assert "only written differently" not in changed.reason


def test_a_record_whose_identity_was_kept_unnormalised_still_matches() -> None:
    # A record written before identities were normalised keeps its words as they were; it
    # is compared normalised, from its text as from its parsed record.
    spec = {**DEPARTURE, "commercialReference": f"{NFD} "}
    words = ["companyId=1", f"commercialReference={NFD} ", "departureOffice=NL000396",
             "destinationOffice=DE004058", "goods=090121/BR"]  # fmt: skip
    record = replace(
        _applied("DepartureDeclaration/dep", spec, declarationId=7003), identity=tuple(words)
    )
    for state in (
        _state(record),
        State(
            lineage="l",
            serial=1,
            resources=Records.from_texts({record.address: json.dumps(record.to_json())}, "t"),
        ),
    ):
        renamed = plan_changes([_departure("dep-2", commercialReference=NFC)], state, now=NOW)
        change = _only(renamed, "DepartureDeclaration/dep-2")
        assert change.action is Action.REFUSED, change
        assert "DepartureDeclaration/dep (7003" in change.reason
    # A group recorded with its code "ROAD " whose document now says "ROAD": an update of its
    # code, not a change of what it declares (which a selection could not plan).
    group = _group_state("ROAD ")
    selected = [doc(Kind.TEMPLATE_GROUP, "group-0", _group("ROAD"), 0)]
    plan = plan_changes(selected, group, now=NOW, orphans=False)
    assert _only(plan, "TemplateGroup/group-0").action is Action.UPDATE


def test_case_still_tells_references_apart() -> None:
    # The API does not say references are case-insensitive: "c-1" is another one.
    state = _state(_applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003))
    plan = plan_changes([_departure("dep-2", commercialReference="c-1")], state, now=NOW)
    assert _only(plan, "DepartureDeclaration/dep-2").action is Action.CREATE


def test_template_group_codes_are_compared_normalised() -> None:
    groups = [
        doc(Kind.TEMPLATE_GROUP, "g-1", {"companyId": 1, "name": "G", "code": NFC}, 0),
        doc(Kind.TEMPLATE_GROUP, "g-2", {"companyId": 1, "name": "G", "code": NFD}, 1),
    ]
    plan = plan_changes(groups, State.new(), now=NOW)
    assert {c.action for c in plan.changes} == {Action.REFUSED}


def _update_of_7001(name: str, index: int, **parties: Any) -> Any:
    return doc(Kind.TRANSIT_PARTY_UPDATE, name, {"declarationId": 7001, **parties}, index)


EORI = {"Consignee": {"eoriNo": "DE123456789012345"}}
CITY = {"Consignee": {"city": "Bremen"}}


def test_two_party_updates_of_other_fields_of_one_party_are_both_sent() -> None:
    # Each PATCH writes the fields it names; each field has one writer. Two of other fields
    # of one party are two writes (validate passes them), not one declared twice.
    two = [_update_of_7001("pu-eori", 0, **EORI), _update_of_7001("pu-city", 1, **CITY)]
    plan = plan_changes(two, State.new(), now=NOW)
    assert [c.action for c in plan.changes] == [Action.CREATE, Action.CREATE]
    # One of them applied before the other was added.
    state = _state(_applied("TransitPartyUpdate/pu-eori", {"declarationId": 7001, **EORI},
                            declarationId=7001))  # fmt: skip
    plan = plan_changes(two, state, now=NOW)
    assert _only(plan, "TransitPartyUpdate/pu-eori").action is Action.NO_CHANGE
    assert _only(plan, "TransitPartyUpdate/pu-city").action is Action.CREATE
    # The same field twice is still refused.
    same = plan_changes(
        [_update_of_7001("a", 0, **EORI), _update_of_7001("b", 1, Consignee={"eoriNo": "DE9"})],
        State.new(),
        now=NOW,
    )
    assert {c.action for c in same.changes} == {Action.REFUSED}


@pytest.mark.parametrize("as_text", [False, True])
def test_a_party_update_recorded_with_its_roles_only_is_compared_by_its_fields(
    as_text: bool,
) -> None:
    # Records written while the identity named the party roles keep those words: they are
    # compared by the fields of the request they recorded.
    spec = {"declarationId": 7001, **EORI}
    record = replace(
        _applied("TransitPartyUpdate/pu-eori", spec, declarationId=7001),
        identity=("declarationId=7001", "variant=null", "parties=Consignee"),
    )
    texts = {record.address: json.dumps(record.to_json())}
    state = (
        State(lineage="l", serial=1, resources=Records.from_texts(texts, "t"))
        if as_text
        else _state(record)
    )
    # Its own document, its value changed, planned with a selection: an update of the same
    # field (what it declares has not changed), not a refusal.
    changed = _update_of_7001("pu-eori", 0, Consignee={"eoriNo": "DE999"})
    own = plan_changes([changed], state, now=NOW, orphans=False)
    assert _only(own, "TransitPartyUpdate/pu-eori").action is Action.UPDATE
    # Renamed: moved; another field beside it: created.
    renamed = plan_changes(
        [_update_of_7001("pu-eori-2", 0, **EORI), _update_of_7001("pu-city", 1, **CITY)],
        state,
        now=NOW,
    )
    moved = _only(renamed, "TransitPartyUpdate/pu-eori-2")
    assert (moved.action, str(moved.moved_from)) == (Action.MOVED, "TransitPartyUpdate/pu-eori")
    assert _only(renamed, "TransitPartyUpdate/pu-city").action is Action.CREATE
    # Named in previousNames: taken over, not refused as declaring something else.
    declared = replace(_update_of_7001("pu-x", 0, **EORI), previous_names=("pu-eori",))
    taken = _only(plan_changes([declared], state, now=NOW), "TransitPartyUpdate/pu-x")
    assert taken.action is Action.MOVED, taken


def test_a_forgotten_movement_still_in_the_manifests_names_no_gone() -> None:
    # state rm --gone refuses a kind the API cannot read back: the refusal does not name it.
    document = movement("m", 0)
    tombstone = _applied(
        "Movement/m", dict(document.spec), movementId="mov_1", shipmentId="shp_7Hk2Lm"
    ).with_changes(status=RecordStatus.FORGOTTEN, forgotten_from="applied")
    plan = plan_changes([document], _state(tombstone), now=NOW)
    change = _only(plan, "Movement/m")
    assert change.action is Action.REFUSED
    assert "state restore" in change.reason and "--gone" not in change.reason


@pytest.mark.parametrize("whole", [True, False])
def test_a_field_added_to_a_party_update_is_an_update_with_a_selection_too(whole: bool) -> None:
    # Found in review: the fields a party update writes are part of its identity (d07057e),
    # and under -l/--target adding Consignee.city to it was refused as changing what it
    # declares ("plan without a selection"), though it still goes to its declaration.
    from customs_batch.kinds.registry import model_of

    sent: dict[str, Any] = {"declarationId": 7003, "Consignee": {"eoriNo": "DE123456789012345"}}
    identify = model_of(Kind.TRANSIT_PARTY_UPDATE).identity
    assert identify is not None
    record = ResourceRecord(
        "TransitPartyUpdate/u",
        RecordStatus.APPLIED,
        "update-transit-parties",
        sent,
        outputs={"declarationId": 7003, "status": "processing"},
        identity=tuple(identify(sent)),
    )
    consignee = {**sent["Consignee"], "city": "Bremen"}
    edited = doc(Kind.TRANSIT_PARTY_UPDATE, "u", {"declarationId": 7003, "Consignee": consignee}, 0)
    (change,) = plan_changes([edited], _state(record), now=NOW, orphans=whole).changes
    assert change.action is Action.UPDATE, change.reason
    # Another declaration is still another declaration.
    moved = doc(Kind.TRANSIT_PARTY_UPDATE, "u", {"declarationId": 7004, "Consignee": consignee}, 0)
    (other,) = plan_changes([moved], _state(record), now=NOW, orphans=whole).changes
    assert other.action is Action.REFUSED, other


def test_a_reference_only_respaced_is_refused_saying_it_is_only_written_differently() -> None:
    # Found by an outside probe: "MY-0001" re-exported as "MY-0001 " under the same name was
    # refused as a change of a field that cannot change, with no word that it only differs
    # in how it is written (which docs/state.md promises).
    from tests.client.bodies import departure

    sent = departure()
    record = ResourceRecord(
        "DepartureDeclaration/d",
        RecordStatus.APPLIED,
        "submit-departure",
        sent,
        outputs={"declarationId": 7003, "status": "ready"},
    )
    respaced = {**sent, "commercialReference": f"{sent['commercialReference']} "}
    document = doc(Kind.DEPARTURE_DECLARATION, "d", respaced, 0)
    (change,) = plan_changes([document], _state(record), now=NOW).changes
    assert change.action is Action.REFUSED
    assert "commercialReference only written differently" in change.reason, change.reason


def test_a_record_gone_from_the_manifests_with_another_object_at_its_id_says_so() -> None:
    # Its document removed, a departure's record that refresh found another declaration
    # at the number of was said to be "not found at the service" (the plan passed over
    # what refresh noted), although the service holds a declaration there.
    noted = _applied("DepartureDeclaration/dep", DEPARTURE, declarationId=7003).with_changes(
        **_HELD["another object at its ID"]
    )
    [change] = plan_changes([], _state(noted), now=NOW).changes
    assert change.action is Action.NEEDS_DECISION
    assert change.reason.startswith("no longer in the manifests, and the service holds another")
    assert "totalWeight 999.0 there" in change.reason and "was not found" not in change.reason


_REFUSED_CANCELLATION = ResourceRecord(
    "ExportCancellation/old",
    RecordStatus.FORGOTTEN,
    "cancel-export",
    {"declarationId": 502},
    outputs={"declarationId": 502, "canceled": False},
    remote_status="submitted",
    forgotten_from="applied",
)
"""A cancellation customs refused (502 read ``submitted`` after it), then removed from the
manifests and forgotten by ``state rm``, as the rejected way out said."""


@pytest.mark.parametrize("declared", [False, True])
@pytest.mark.parametrize("kind", ["departure", "cancellation"])
def test_a_new_document_on_the_tombstone_of_a_rejected_object_gets_a_way_out_that_works(
    kind: str, declared: bool
) -> None:
    """Found by an outside probe: a cancellation customs refused, its document removed and
    its record forgotten (`state rm`) as the plan said; a new document asking customs again
    (`cancel-502-again`) was held `rejected`, saying to remove the document and `state rm
    ExportCancellation/old`, which was done, and which `state rm` refuses for a tombstone
    (exit 3): no way out worked. The same for a departure customs found invalid. It stays
    rejected (nothing sent), and the way out is `state rm --gone OLD`, which confirms at the
    service that customs never accepted it."""
    if kind == "departure":
        record = _applied("DepartureDeclaration/old", DEPARTURE, declarationId=7003).with_changes(
            status=RecordStatus.FORGOTTEN,
            forgotten_from="applied",
            remote_status="invalid",
            remote_errors=({"code": "X"},),
        )
        document = _departure("new")
    else:
        record = _REFUSED_CANCELLATION
        document = doc(Kind.EXPORT_CANCELLATION, "new", {"declarationId": 502}, 0)
    if declared:
        document = replace(document, previous_names=("old",))
    plan = plan_changes([document], _state(record), now=NOW)
    change = _only(plan, f"{record.address.partition('/')[0]}/new")
    assert (change.action, change.operation) == (Action.REJECTED, Operation.NONE)
    assert plan.requests == 0 and len(plan.blocked) == 1
    assert f"`customs-batch state rm {record.address}`" not in change.reason
    assert f"`customs-batch state rm --gone {record.address}`" in change.reason
    assert f"{record.address} is forgotten already" in change.reason


def test_a_party_update_pointed_elsewhere_under_its_forgotten_name_is_told_to_take_a_new_one() -> (
    None
):
    # Found by an outside probe: a party update `state rm`-ed, then pointed at another
    # declaration under the same name, was refused "remove the document, or restore it";
    # restored, it was refused "declarationId cannot change... state rm it": the ways out
    # sent the user back and forth, and neither said that a new name sends it.
    from customs_batch.kinds.registry import model_of

    identify = model_of(Kind.TRANSIT_PARTY_UPDATE).identity
    assert identify is not None
    sent: dict[str, Any] = {
        "declarationId": 7004,
        "variant": "departure",
        "Consignee": {"eoriNo": "DE123456789012345"},
    }
    record = ResourceRecord(
        "TransitPartyUpdate/u",
        RecordStatus.FORGOTTEN,
        "update_parties",
        sent,
        outputs={"declarationId": 7004},
        identity=tuple(identify(sent)),
        forgotten_from=RecordStatus.APPLIED.value,
    )
    state = _state(record)
    pointed = doc(Kind.TRANSIT_PARTY_UPDATE, "u", {**sent, "declarationId": 7003}, 0)
    change = _only(plan_changes([pointed], state, now=NOW), "TransitPartyUpdate/u")
    assert change.action is Action.REFUSED
    assert "give it a new name: the tombstone keeps TransitPartyUpdate/u" in change.reason
    same = doc(Kind.TRANSIT_PARTY_UPDATE, "u", sent, 0)
    kept = _only(plan_changes([same], state, now=NOW), "TransitPartyUpdate/u")
    assert kept.action is Action.REFUSED
    assert "new name" not in kept.reason


def test_a_template_group_code_re_typed_as_a_number_is_refused_not_updated() -> None:
    # Found by an outside probe: a sheet of template groups named by another column, whose
    # code column a re-export re-typed (0012 as 12), was a green `~ update`, and apply wrote
    # the re-typed code over the group's at the service.
    state = _state(
        replace(
            _applied("TemplateGroup/g", _group("0012"), id=10, code="0012"),
            identity=("companyId=1", "code=0012"),
        )
    )
    plan = plan_changes([doc(Kind.TEMPLATE_GROUP, "g", _group("12"), 0)], state, now=NOW)
    change = _only(plan, "TemplateGroup/g")
    assert change.action is Action.REFUSED
    assert "code '12' where it has '0012'" in change.reason
    assert plan.requests == 0
    # A real change of the code is an update, as before.
    other = plan_changes([doc(Kind.TEMPLATE_GROUP, "g", _group("13"), 0)], state, now=NOW)
    assert _only(other, "TemplateGroup/g").action is Action.UPDATE
