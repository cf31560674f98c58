"""One owner per remote field: a party field of a declaration is written by one document."""

from __future__ import annotations

from typing import Any

from customs_batch.findings import Finding
from customs_batch.kinds import Kind
from customs_batch.manifest.document import Document
from customs_batch.validation.project import check_project
from tests.validation._documents import line_of, make_document
from tests.validation.samples import sample

DEP_REF = "${ref:DepartureDeclaration/dep-1.declarationId}"
RULE = "project.two-owners"


def _departure() -> Document:
    return make_document(
        Kind.DEPARTURE_DECLARATION,
        sample(Kind.DEPARTURE_DECLARATION),
        name="dep-1",
        file="manifests/departures.yaml",
    )


def _update(name: str, index: int, **changes: Any) -> Document:
    return make_document(
        Kind.TRANSIT_PARTY_UPDATE,
        sample(Kind.TRANSIT_PARTY_UPDATE, Principal=None, **changes),
        name=name,
        index=index,
        file="manifests/updates.yaml",
        line=1 + 100 * index,
    )


def _owned_twice(documents: list[Document]) -> list[Finding]:
    return [f for f in check_project(documents) if f.rule == RULE]


def test_a_party_update_writing_a_field_its_departure_writes_names_both() -> None:
    moved = {"street": "Am Sandtorkai 50", "city": "Rotterdam", "eoriNo": "NL123456789"}
    update = _update("upd-1", 1, declarationId=DEP_REF, Consignee=moved)
    (finding,) = _owned_twice([_departure(), update])
    assert finding.document == "TransitPartyUpdate/upd-1"
    assert (finding.location.file, finding.location.line) == (
        "manifests/updates.yaml",
        line_of(update, "spec", "Consignee", "street"),
    )
    assert finding.message.startswith("Consignee.street, Consignee.city of the declaration of")
    assert "DepartureDeclaration/dep-1 at manifests/departures.yaml:1" in finding.message
    assert "owns every party field it writes" in finding.hint
    assert "make the change in DepartureDeclaration/dep-1" in finding.hint


def test_a_party_update_may_write_what_its_departure_leaves_out() -> None:
    update = _update("upd-1", 1, declarationId=DEP_REF, Consignee={"eoriNo": "NL123456789"})
    assert _owned_twice([_departure(), update]) == []


def test_a_party_update_of_a_declaration_made_elsewhere_is_unrestricted() -> None:
    street = {"street": "Haven 2"}  # the departure's consignee's street, another declaration
    update = _update("upd-1", 1, declarationId=7002, Consignee=street)
    assert _owned_twice([_departure(), update]) == []


def test_two_party_updates_of_one_declaration_may_not_write_one_field() -> None:
    first = _update("upd-1", 1, declarationId=7002, Consignee={"street": "Haven 2"})
    second = _update("upd-2", 2, declarationId=7002, Consignee={"street": "Kade 9", "city": "X"})
    (finding,) = _owned_twice([first, second])
    assert finding.document == "TransitPartyUpdate/upd-2"
    assert "Consignee.street of declaration 7002" in finding.message
    assert "TransitPartyUpdate/upd-1 at manifests/updates.yaml:101" in finding.message
    other_variant = _update(
        "upd-3", 3, declarationId=7002, variant="arrival", Consignee={"street": "Kade 9"}
    )
    assert _owned_twice([first, other_variant]) == []


def test_two_party_updates_of_one_departure_of_the_manifests_may_not_write_one_field() -> None:
    eori = {"eoriNo": "NL123456789"}
    first = _update("upd-1", 1, declarationId=DEP_REF, Consignee=eori)
    second = _update("upd-2", 2, declarationId=DEP_REF, Consignee=eori)
    (finding,) = _owned_twice([_departure(), first, second])
    assert finding.document == "TransitPartyUpdate/upd-2"
    assert "Consignee.eoriNo" in finding.message and "TransitPartyUpdate/upd-1" in finding.message
