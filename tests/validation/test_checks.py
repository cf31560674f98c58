"""validate_documents: the public entry point, findings sorted by place."""

from __future__ import annotations

import customs_batch.validation as validation
from customs_batch.findings import Severity
from customs_batch.kinds import Kind
from customs_batch.validation import check_spec_schema, validate_documents
from tests.validation._documents import line_of, make_document
from tests.validation.samples import SAMPLES, sample


def test_public_api() -> None:
    assert set(validation.__all__) == {
        "CompiledSchema", "Violation", "check_spec_schema", "compiled", "spec_schema",
        "validate_documents",
    }  # fmt: skip


def test_a_valid_batch_has_no_findings() -> None:
    documents = [
        make_document(kind, spec, name=f"d{i}", index=i, file=f"m{i}.yaml")
        for i, (kind, spec) in enumerate(SAMPLES.items())
        if kind is not Kind.HAWB_DEACTIVATION  # would deactivate the HAWB the movement moves
    ]
    assert validate_documents(documents) == []


def test_schema_finding_points_at_the_value_or_the_mapping_missing_a_field() -> None:
    document = make_document(Kind.MOVEMENT, sample(Kind.MOVEMENT, quantity="ten", partyId=None, customsDeclaration={"source": "EXTERNAL", "documentType": "X"}), line=40)  # fmt: skip
    found = {(f.rule, f.location.line, f.location.path) for f in check_spec_schema(document)}
    assert found == {("schema.type", line_of(document, "spec", "quantity"), ("spec", "quantity"))}
    missing = make_document(Kind.HAWB_DEACTIVATION, {"shipmentId": "shp_1"}, line=7)
    (finding,) = check_spec_schema(missing)
    assert (finding.rule, finding.location.line, finding.severity) == (
        "schema.required",
        line_of(missing, "spec"),
        Severity.ERROR,
    )
    assert finding.document == "HawbDeactivation/doc"


def test_findings_of_all_stages_are_sorted_by_file_line_column() -> None:
    late = make_document(Kind.MOVEMENT, sample(Kind.MOVEMENT, action="ISL", quantity="ten"), name="b", file="b.yaml", index=1)  # fmt: skip
    early = make_document(Kind.EXPORT_CANCELLATION, {"declarationId": "x"}, name="a", file="a.yaml", index=0)  # fmt: skip
    twin = make_document(Kind.MOVEMENT, sample(Kind.MOVEMENT, action="ISL", quantity="ten"), name="b", file="b.yaml", line=300, index=2)  # fmt: skip
    findings = validate_documents([late, early, twin])
    places = [(f.location.file, f.location.line, f.location.column) for f in findings]
    assert places == sorted(places)
    assert [f.rule for f in findings] == [
        "schema.type",  # a.yaml
        "schema.type", "movement.declaration-forbidden",  # b.yaml, first movement
        "project.duplicate-address",  # the second, at its name, above its spec
        "schema.type", "movement.declaration-forbidden",
    ]  # fmt: skip


def test_mrn_check_digit_setting_reaches_the_rules() -> None:
    spec = sample(Kind.MOVEMENT)
    spec["customsDeclaration"]["declarationNumber"] = "24NLR1234567890123"
    document = make_document(Kind.MOVEMENT, spec)
    assert [f.severity for f in validate_documents([document])] == [Severity.ERROR]
    assert [
        f.severity for f in validate_documents([document], mrn_check_digit=Severity.WARNING)
    ] == [Severity.WARNING]
    assert validate_documents([document], mrn_check_digit=None) == []


def test_a_type_hint_takes_the_article_its_type_is_said_with() -> None:
    # The hint said "write a integer".
    document = make_document(Kind.MOVEMENT, sample(Kind.MOVEMENT, quantity="ten"))
    (finding,) = check_spec_schema(document)
    assert finding.hint is not None and finding.hint.startswith("write an integer (")
