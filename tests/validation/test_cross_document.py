"""What one document says about another: the type of a reference's output, which sort of
declaration a declarationId names, and names that differ only by case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from customs_batch.findings import Finding, Severity
from customs_batch.kinds import Kind
from customs_batch.kinds.registry import KINDS
from customs_batch.manifest.document import Document
from customs_batch.validation.batch import validate_paths
from customs_batch.validation.cross_document import OUTPUT_TYPES, field_types
from customs_batch.validation.project import check_project
from customs_batch.validation.rules import check_rules
from tests.validation._documents import line_of, make_document
from tests.validation.samples import sample

DEP_ID = "${ref:DepartureDeclaration/dep-1.declarationId}"


def _doc(kind: Kind, name: str, index: int, **changes: Any) -> Document:
    return make_document(
        kind, sample(kind, **changes), name=name, index=index, line=1 + 100 * index,
        file=f"manifests/{index}.yaml",
    )  # fmt: skip


def _findings(documents: list[Document], rule: str) -> list[Finding]:
    return [f for f in check_project(documents) if f.rule == rule]


def test_every_output_has_a_type() -> None:
    for kind, model in KINDS.items():
        assert frozenset(model.output_types) == model.outputs, kind
    assert {kind: model.output_types for kind, model in KINDS.items()} == OUTPUT_TYPES


def test_the_schema_says_which_types_a_field_takes() -> None:
    assert field_types(Kind.EXPORT_CANCELLATION, ("declarationId",)) == {"integer"}
    assert field_types(Kind.DEPARTURE_DECLARATION, ("commercialReference",)) == {"string"}
    assert field_types(Kind.DEPARTURE_DECLARATION, ("DeclarationItems", 0, "grossMass")) == {
        "number"
    }
    assert field_types(Kind.DEPARTURE_DECLARATION, ("noSuchField",)) == frozenset()


def test_a_status_into_an_integer_declaration_id_is_an_error_at_the_reference() -> None:
    departure = _doc(Kind.DEPARTURE_DECLARATION, "dep-1", 0)
    update = _doc(
        Kind.TRANSIT_PARTY_UPDATE, "upd-1", 1,
        declarationId="${ref:DepartureDeclaration/dep-1.status}",
    )  # fmt: skip
    (finding,) = _findings([departure, update], "project.reference-type")
    assert finding.severity is Severity.ERROR
    assert finding.location.line == line_of(update, "spec", "declarationId")
    assert finding.message == (
        "${ref:DepartureDeclaration/dep-1.status} puts the status of a DepartureDeclaration, "
        "text, into declarationId, which takes an integer: apply would fail"
    )
    assert finding.hint == "refer to ${ref:DepartureDeclaration/dep-1.declarationId}"


def test_a_boolean_output_into_an_integer_field_is_an_error_too() -> None:
    cancel = _doc(Kind.EXPORT_CANCELLATION, "c-1", 0)
    other = _doc(
        Kind.EXPORT_CANCELLATION, "c-2", 1, declarationId="${ref:ExportCancellation/c-1.canceled}"
    )
    (finding,) = _findings([cancel, other], "project.reference-type")
    assert "a boolean, into declarationId, which takes an integer" in finding.message


def test_an_output_inside_text_is_text_and_not_checked() -> None:
    departure = _doc(Kind.DEPARTURE_DECLARATION, "dep-1", 0)
    second = _doc(
        Kind.DEPARTURE_DECLARATION, "dep-2", 1,
        commercialReference="after ${ref:DepartureDeclaration/dep-1.declarationId}",
    )  # fmt: skip
    assert _findings([departure, second], "project.reference-type") == []


def test_an_export_cancellation_of_a_transit_declaration_is_an_error() -> None:
    departure = _doc(Kind.DEPARTURE_DECLARATION, "dep-1", 0)
    cancel = _doc(Kind.EXPORT_CANCELLATION, "cancel-1", 1, declarationId=DEP_ID)
    (finding,) = _findings([departure, cancel], "project.wrong-declaration")
    assert finding.location.line == line_of(cancel, "spec", "declarationId")
    assert finding.document == "ExportCancellation/cancel-1"
    assert finding.message == (
        f"{DEP_ID} is the ID of the transit departure declaration (DepartureDeclaration/dep-1 "
        "at manifests/0.yaml:1), but an ExportCancellation cancels an export declaration "
        "(DELETE /v1/declarations/{id})"
    )
    assert finding.hint.startswith("write the ID of the export declaration to cancel")


def test_a_cancellation_through_a_party_update_is_still_the_transit_declaration() -> None:
    departure = _doc(Kind.DEPARTURE_DECLARATION, "dep-1", 0)
    update = _doc(Kind.TRANSIT_PARTY_UPDATE, "upd-1", 1, declarationId=DEP_ID)
    cancel = _doc(
        Kind.EXPORT_CANCELLATION, "cancel-1", 2,
        declarationId="${ref:TransitPartyUpdate/upd-1.declarationId}",
    )  # fmt: skip
    (finding,) = _findings([departure, update, cancel], "project.wrong-declaration")
    assert finding.document == "ExportCancellation/cancel-1"


def test_a_party_update_of_a_template_group_id_is_an_error() -> None:
    group = _doc(Kind.TEMPLATE_GROUP, "g1", 0)
    update = _doc(Kind.TRANSIT_PARTY_UPDATE, "upd-1", 1, declarationId="${ref:TemplateGroup/g1.id}")
    (finding,) = _findings([group, update], "project.wrong-declaration")
    assert "a template group, not a declaration" in finding.message


def test_an_arrival_party_update_of_a_departure_is_an_error_at_the_variant() -> None:
    departure = _doc(Kind.DEPARTURE_DECLARATION, "dep-1", 0)
    update = _doc(Kind.TRANSIT_PARTY_UPDATE, "upd-1", 1, declarationId=DEP_ID, variant="arrival")
    (finding,) = _findings([departure, update], "project.party-update-variant")
    assert finding.location.line == line_of(update, "spec", "variant")
    assert finding.message.startswith(
        "variant arrival updates an arrival declaration (PATCH /transit-declarations/{id}/"
        f"parties), but {DEP_ID} is the ID of the transit departure declaration"
    )
    assert finding.hint.startswith("write variant: departure")
    departure_variant = _doc(
        Kind.TRANSIT_PARTY_UPDATE, "upd-2", 2, declarationId=DEP_ID, variant="departure"
    )
    assert _findings([departure, departure_variant], "project.party-update-variant") == []


def test_names_that_differ_only_by_case_are_flagged_at_the_later_one() -> None:
    upper = _doc(Kind.MOVEMENT, "mov-B4-arrival", 0)
    lower = _doc(Kind.MOVEMENT, "mov-b4-arrival", 1, quantity=3)
    (finding,) = _findings([upper, lower], "project.name-case")
    assert finding.document == "Movement/mov-b4-arrival"
    assert finding.location.line == line_of(lower, "metadata", "name")
    assert finding.message == (
        "Movement/mov-b4-arrival differs from Movement/mov-B4-arrival at manifests/0.yaml:1 "
        "only by case: the same document written twice?"
    )
    # In the other order the capitalised one is the later one.
    lower_first = _doc(Kind.MOVEMENT, "mov-b4-arrival", 0)
    upper_later = _doc(Kind.MOVEMENT, "mov-B4-arrival", 1, quantity=3)
    (finding,) = _findings([lower_first, upper_later], "project.name-case")
    assert finding.document == "Movement/mov-B4-arrival"


def test_names_of_other_kinds_or_other_letters_are_not_flagged() -> None:
    documents = [
        _doc(Kind.MOVEMENT, "mov-B4", 0),
        _doc(Kind.HAWB_DEACTIVATION, "mov-b4", 1),
        _doc(Kind.MOVEMENT, "mov-B5", 2, quantity=3),
        _doc(Kind.MOVEMENT, "MOV-b6", 3, quantity=4),
    ]
    assert _findings(documents, "project.name-case") == []


def test_three_spellings_of_one_name_give_two_findings() -> None:
    documents = [
        _doc(Kind.MOVEMENT, "Mov-1", 0),
        _doc(Kind.MOVEMENT, "mov-1", 1, quantity=3),
        _doc(Kind.MOVEMENT, "MOV-1", 2, quantity=4),
    ]
    found = _findings(documents, "project.name-case")
    assert [f.document for f in found] == ["Movement/mov-1", "Movement/MOV-1"]


@pytest.mark.parametrize(
    ("quantity", "weight", "flagged"), [(0, 12.5, True), (0, 0, False), (2, 12.5, False)]
)
def test_a_movement_of_no_packages_that_weighs_something_is_an_error(
    quantity: int, weight: float, flagged: bool
) -> None:
    spec = sample(Kind.MOVEMENT, quantity=quantity, grossWeightKg=weight)
    document = make_document(Kind.MOVEMENT, spec)
    found = [f for f in check_rules(document) if f.rule == "movement.weight-without-packages"]
    assert bool(found) is flagged
    if flagged:
        assert found[0].location.line == line_of(document, "spec", "quantity")
        assert found[0].message == "the movement moves 0 packages but weighs 12.5 kg"


MANIFEST = """\
apiVersion: customs-batch/v1
kind: TemplateGroup
metadata: {name: g1}
spec: {name: EU road, code: EU-ROAD, companyId: 1}
---
apiVersion: customs-batch/v1
kind: ExportCancellation
metadata: {name: cancel-transit}
spec:
  declarationId: ${ref:TransitPartyUpdate/upd-arrival.declarationId}
---
apiVersion: customs-batch/v1
kind: TransitPartyUpdate
metadata: {name: upd-arrival}
spec:
  declarationId: ${ref:TemplateGroup/g1.id}
  variant: arrival
  Principal: {name: Acme, eoriNo: NL123456789, countryCode: NL}
---
apiVersion: customs-batch/v1
kind: TransitPartyUpdate
metadata: {name: upd-status}
spec:
  declarationId: ${ref:TemplateGroup/g1.code}
  Principal: {name: Acme, eoriNo: NL123456789, countryCode: NL}
---
apiVersion: customs-batch/v1
kind: HawbDeactivation
metadata: {name: h-B4}
spec: {shipmentId: shp_1, hawbId: hawb_b4}
---
apiVersion: customs-batch/v1
kind: HawbDeactivation
metadata: {name: h-b4}
spec: {shipmentId: shp_1, hawbId: hawb_b5}
---
apiVersion: customs-batch/v1
kind: TransitPartyUpdate
metadata: {name: upd-departure}
spec:
  declarationId: ${ref:DepartureDeclaration/dep-1.declarationId}
  variant: arrival
  Principal: {name: Acme, eoriNo: NL123456789, countryCode: NL}
---
apiVersion: customs-batch/v1
kind: DepartureDeclaration
metadata: {name: dep-1}
"""


def test_validate_finds_them_in_files_at_their_lines() -> None:
    # validate_paths checks the batch on the slim copies of its documents: what these
    # checks read must survive the slimming.
    departure = yaml.safe_dump({"spec": sample(Kind.DEPARTURE_DECLARATION)}, sort_keys=False)
    Path("m.yaml").write_text(MANIFEST + departure, encoding="utf-8")
    result = validate_paths(["m.yaml"])
    lines = MANIFEST.splitlines()

    def line(text: str, after: int = 0) -> int:
        return lines.index(text, after) + 1

    # (upd-departure also writes the departure's Principal: project.two-owners, not
    # the subject here.)
    found = [f for f in result.findings if f.rule != "project.two-owners"]
    assert [(f.rule, f.location.line) for f in found] == [
        ("project.wrong-declaration", line(
            "  declarationId: ${ref:TransitPartyUpdate/upd-arrival.declarationId}"
        )),
        ("project.wrong-declaration", line("  declarationId: ${ref:TemplateGroup/g1.id}")),
        ("project.reference-type", line("  declarationId: ${ref:TemplateGroup/g1.code}")),
        ("project.name-case", line("metadata: {name: h-b4}")),
        ("project.party-update-variant", line("  variant: arrival", 40)),
    ]  # fmt: skip
