"""Project-wide checks: addresses, references, cycles and duplicated work."""

from __future__ import annotations

from typing import Any

import pytest

from customs_batch.findings import Severity
from customs_batch.kinds import Kind
from customs_batch.manifest.document import Document
from customs_batch.validation.project import check_project
from tests.validation._documents import line_of, make_document
from tests.validation.samples import sample

DEP_REF = "${ref:DepartureDeclaration/dep-1.declarationId}"


CONSIGNEE_EORI = {"eoriNo": "NL123456789"}
"""A party field the sample departure leaves out (its consignee has no EORI)."""


def _doc(
    kind: Kind,
    address_name: str,
    index: int,
    depends_on: tuple[str, ...] = (),
    file: str | None = None,
    **changes: Any,
) -> Document:
    """A document of its own file (``manifests/INDEX.yaml``) unless ``file`` is given."""
    return make_document(
        kind, sample(kind, **changes), name=address_name, index=index, line=1 + 100 * index,
        file=file or f"manifests/{index}.yaml", depends_on=depends_on,
    )  # fmt: skip


def _rules(documents: list[Document]) -> list[tuple[str, Severity, str | None, int]]:
    return [(f.rule, f.severity, f.document, f.location.line) for f in check_project(documents)]


def test_distinct_documents_have_no_findings() -> None:
    documents = [
        _doc(Kind.DEPARTURE_DECLARATION, "dep-1", 0),
        _doc(
            Kind.TRANSIT_PARTY_UPDATE,
            "upd-1",
            1,
            ("DepartureDeclaration/dep-1",),
            declarationId=DEP_REF,
            Principal=None,
            Consignee=CONSIGNEE_EORI,
        ),
        _doc(Kind.EXPORT_CANCELLATION, "cancel-1", 2),
        _doc(Kind.MOVEMENT, "mov-1", 3),
        _doc(Kind.HAWB_DEACTIVATION, "deact-1", 4, hawbId="hawb_b2"),
        _doc(Kind.TEMPLATE_GROUP, "g1", 5),
        _doc(Kind.TEMPLATE_GROUP, "g2", 6, code="EU-ROAD", companyId=2),
    ]
    assert _rules(documents) == []


def test_duplicate_address_points_at_the_second_and_names_the_first() -> None:
    first = _doc(Kind.MOVEMENT, "mov-1", 0)
    second = _doc(Kind.MOVEMENT, "mov-1", 1, quantity=3, hawbId="hawb_a2")
    (finding,) = check_project([first, second])
    assert finding.rule == "project.duplicate-address"
    assert finding.location.file == "manifests/1.yaml"
    assert finding.location.line == line_of(second, "metadata", "name")
    assert "manifests/0.yaml:1" in finding.message
    same_name_other_kind = _doc(Kind.HAWB_DEACTIVATION, "mov-1", 1, hawbId="hawb_b2")
    assert check_project([first, same_name_other_kind]) == []


def test_reference_to_a_missing_document() -> None:
    update = _doc(Kind.TRANSIT_PARTY_UPDATE, "upd-1", 0, declarationId=DEP_REF)
    assert _rules([update]) == [
        ("project.unknown-reference", Severity.ERROR, "TransitPartyUpdate/upd-1", line_of(update, "spec", "declarationId"))
    ]  # fmt: skip


def test_reference_to_a_field_the_outcome_does_not_have() -> None:
    departure = _doc(Kind.DEPARTURE_DECLARATION, "dep-1", 0)
    cancel = _doc(
        Kind.EXPORT_CANCELLATION, "c-1", 1, declarationId="${ref:DepartureDeclaration/dep-1.mrn}"
    )
    (finding,) = check_project([departure, cancel])
    assert finding.rule == "project.unknown-output-field"
    assert finding.location.line == line_of(cancel, "spec", "declarationId")
    assert finding.hint == "use one of: declarationId, status"


def test_depends_on_a_missing_document() -> None:
    movement = _doc(Kind.MOVEMENT, "mov-1", 0, ("TemplateGroup/nope",))
    assert _rules([movement]) == [
        ("project.unknown-dependency", Severity.ERROR, "Movement/mov-1", line_of(movement, "metadata", "dependsOn", 0))
    ]  # fmt: skip


def test_a_cycle_is_reported_once_at_the_entry_of_its_first_document_that_closes_it() -> None:
    departure = _doc(Kind.DEPARTURE_DECLARATION, "dep-1", 0, ("TransitPartyUpdate/upd-1",))
    update = _doc(
        Kind.TRANSIT_PARTY_UPDATE,
        "upd-1",
        1,
        declarationId=DEP_REF,
        Principal=None,
        Consignee=CONSIGNEE_EORI,
    )
    findings = check_project([departure, update])
    assert [(f.rule, f.location.file, f.location.line, f.message) for f in findings] == [
        ("project.cycle", "manifests/0.yaml", line_of(departure, "metadata", "dependsOn", 0),
         "dependency cycle: DepartureDeclaration/dep-1 -> TransitPartyUpdate/upd-1 -> DepartureDeclaration/dep-1"),
    ]  # fmt: skip


@pytest.mark.parametrize("through", ["dependsOn", "reference"])
def test_a_cycle_of_10000_documents_is_one_short_finding(through: str) -> None:
    size = 10_000

    def link(i: int) -> Document:
        following = f"ExportCancellation/c{(i + 1) % size}"
        if through == "dependsOn":
            return _doc(Kind.EXPORT_CANCELLATION, f"c{i}", i, (following,), declarationId=i + 1)
        reference = "${ref:" + following + ".declarationId}"
        return _doc(Kind.EXPORT_CANCELLATION, f"c{i}", i, declarationId=reference)

    (finding,) = check_project([link(i) for i in range(size)])
    assert finding.rule == "project.cycle"
    assert finding.document == "ExportCancellation/c0"
    assert finding.message == (
        "dependency cycle of 10,000 documents: ExportCancellation/c0 -> ExportCancellation/c1 "
        "-> ExportCancellation/c2 -> ExportCancellation/c3 -> ExportCancellation/c4 -> ... "
        "(9,995 more) -> ExportCancellation/c0"
    )


def test_self_dependency_is_a_cycle() -> None:
    movement = _doc(Kind.MOVEMENT, "mov-1", 0, ("Movement/mov-1",))
    assert [f.rule for f in check_project([movement])] == ["project.cycle"]


def test_duplicate_template_code_is_reported_at_each_code() -> None:
    first = _doc(Kind.TEMPLATE_GROUP, "g1", 0)
    second = _doc(Kind.TEMPLATE_GROUP, "g2", 1, name="Other name")
    findings = check_project([first, second])
    assert _rules([first, second]) == [
        ("project.duplicate-template-code", Severity.ERROR, "TemplateGroup/g1", line_of(first, "spec", "code")),
        ("project.duplicate-template-code", Severity.ERROR, "TemplateGroup/g2", line_of(second, "spec", "code")),
    ]  # fmt: skip
    code_2, code_1 = line_of(second, "spec", "code"), line_of(first, "spec", "code")
    assert f"also used by TemplateGroup/g2 at manifests/1.yaml:{code_2}" in findings[0].message
    assert f"also used by TemplateGroup/g1 at manifests/0.yaml:{code_1}" in findings[1].message


def test_equal_template_groups_are_reported_as_a_duplicate_code_only() -> None:
    documents = [_doc(Kind.TEMPLATE_GROUP, "g1", 0), _doc(Kind.TEMPLATE_GROUP, "g2", 1)]
    assert {f.rule for f in check_project(documents)} == {"project.duplicate-template-code"}


def test_two_documents_that_would_send_the_same_request() -> None:
    cancel_1 = _doc(Kind.EXPORT_CANCELLATION, "c-1", 0)
    cancel_2 = _doc(Kind.EXPORT_CANCELLATION, "c-2", 1)
    assert _rules([cancel_1, cancel_2]) == [
        ("project.duplicate-request", Severity.ERROR, "ExportCancellation/c-2", line_of(cancel_2, "spec"))
    ]  # fmt: skip
    movement_1 = _doc(Kind.MOVEMENT, "m-1", 0, file="manifests/m.yaml")
    movement_2 = _doc(Kind.MOVEMENT, "m-2", 1, file="manifests/m.yaml")
    assert [(f.rule, f.severity) for f in check_project([movement_1, movement_2])] == [
        ("project.duplicate-request", Severity.WARNING)
    ]


def test_many_repeated_requests_are_each_reported_in_the_order_of_their_documents() -> None:
    """The fingerprints are grouped a part at a time (to bound memory): the findings still
    come one per repeat, in the order of the documents, whichever part each group is in."""
    documents = []
    for number in range(40):  # 20 pairs, each pair one request, interleaved
        documents.append(
            _doc(Kind.EXPORT_CANCELLATION, f"c-{number}", number, declarationId=500 + number % 20)
        )
    findings = check_project(documents)
    assert [f.document for f in findings] == [f"ExportCancellation/c-{n}" for n in range(20, 40)]
    assert {f.rule for f in findings} == {"project.duplicate-request"}


def test_hawb_deactivated_in_the_batch_that_moves_it() -> None:
    documents = [
        _doc(Kind.MOVEMENT, "m-1", 0, file="manifests/m.yaml"),
        _doc(Kind.MOVEMENT, "m-2", 1, file="manifests/m.yaml", action="VAB"),
        _doc(Kind.MOVEMENT, "m-3", 2, hawbId="hawb_other"),
        _doc(Kind.HAWB_DEACTIVATION, "d-1", 3),
    ]
    (finding,) = check_project(documents)
    assert (finding.rule, finding.severity) == (
        "project.hawb-deactivated-with-movements",
        Severity.WARNING,
    )
    assert finding.location.line == line_of(documents[3], "spec", "hawbId")
    assert "Movement/m-1 (and 1 more movements)" in finding.message
    assert "order matters" in finding.message


def test_two_departures_declaring_the_same_goods_are_an_error_validate_gives() -> None:
    # Reported: a departure copied for another consignee, its commercial reference left as
    # it was: validate said 0 errors, and only plan refused both ("would declare it twice").
    first = _doc(Kind.DEPARTURE_DECLARATION, "dep-1", 0)
    consignee = {**sample(Kind.DEPARTURE_DECLARATION)["Consignee"], "name": "Initech GmbH"}
    twin = _doc(Kind.DEPARTURE_DECLARATION, "dep-2", 1, Consignee=consignee)
    findings = check_project([first, twin])
    assert [(f.rule, f.severity, f.document) for f in findings] == [
        ("project.same-declaration", Severity.ERROR, "DepartureDeclaration/dep-2")
    ]
    assert "dep-1 at manifests/0.yaml:1" in findings[0].message
    assert "the same companyId, commercialReference, departureOffice" in findings[0].message
    # Another reference is another declaration; the same request twice is said once.
    other = _doc(Kind.DEPARTURE_DECLARATION, "dep-3", 2, commercialReference="REF-1002")
    assert check_project([first, other]) == []
    copy = _doc(Kind.DEPARTURE_DECLARATION, "dep-4", 3)
    assert [f.rule for f in check_project([first, copy])] == ["project.duplicate-request"]


def test_a_spec_holding_the_slim_identity_key_is_no_internal_error() -> None:
    # Found in review: YAML can write the key "\0identity" a slim document keeps its
    # identity under; a 5 or a list there crashed the checks (the schema refuses the key).
    for value in (5, ["x"], "x"):
        changes: dict[str, Any] = {"\0identity": value}
        odd = _doc(Kind.DEPARTURE_DECLARATION, "dep-1", 0, **changes)
        other = _doc(Kind.DEPARTURE_DECLARATION, "dep-2", 1, commercialReference="REF-9")
        assert check_project([odd, other]) == []


@pytest.mark.parametrize("written", ["decomposed", "spaced"])
def test_a_reference_or_code_written_differently_is_the_same(written: str) -> None:
    # "MÜLLER-0001" composed in one file and decomposed (macOS, some exports) or with a space
    # after it in another: printed alike, compared as plan compares them (NFC, stripped).
    import unicodedata

    from customs_batch.validation.project import key_numbers, meeting_keys

    nfc = unicodedata.normalize("NFC", "MÜLLER-0001")
    other = unicodedata.normalize("NFD", nfc) if written == "decomposed" else f"{nfc} "
    first = _doc(Kind.DEPARTURE_DECLARATION, "dep-1", 0, commercialReference=nfc)
    twin = _doc(Kind.DEPARTURE_DECLARATION, "dep-2", 1, commercialReference=other)
    assert [f.rule for f in check_project([first, twin])] == ["project.same-declaration"]
    g1 = _doc(Kind.TEMPLATE_GROUP, "g1", 2, code=nfc)
    g2 = _doc(Kind.TEMPLATE_GROUP, "g2", 3, code=other, name="Other name")
    found = check_project([g1, g2])
    assert [f.rule for f in found] == ["project.duplicate-template-code"] * 2
    assert "in another Unicode form, or with spaces around them" in found[0].message
    # In two files, they meet: each file's keys say so, so they are checked together.
    for a, b in ((first, twin), (g1, g2)):
        assert set(key_numbers(meeting_keys([a]))) & set(key_numbers(meeting_keys([b])))
    # Case is kept: the API does not say references or codes are case-insensitive.
    lower = _doc(Kind.TEMPLATE_GROUP, "g3", 4, code=nfc.lower(), name="Third")
    assert check_project([g1, lower]) == []
