"""The movement rules of the API document, with the line each finding points at."""

from __future__ import annotations

from typing import Any

import pytest

from customs_batch.findings import Severity
from customs_batch.kinds import Kind
from customs_batch.validation.rules import check_rules
from tests.validation._documents import line_of, make_document
from tests.validation.samples import sample

EXTERNAL = {"source": "EXTERNAL", "documentType": "X", "declarationType": "IM",
            "declarationNumber": "24NLR1234567890120"}  # fmt: skip


def _findings(
    check_digits: Severity | None = Severity.ERROR, **changes: Any
) -> list[tuple[str, Severity, int]]:
    document = make_document(Kind.MOVEMENT, sample(Kind.MOVEMENT, **changes), line=10)
    return [
        (f.rule, f.severity, f.location.line)
        for f in check_rules(document, check_digits=check_digits)
    ]


def _line(*path: str | int, **changes: Any) -> int:
    document = make_document(Kind.MOVEMENT, sample(Kind.MOVEMENT, **changes), line=10)
    return line_of(document, "spec", *path)


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"action": "VAB", "customsDeclaration": {"source": "RTO_LICENSE"}},
        {"action": "ISL", "customsDeclaration": None},
        {"action": "USL", "customsDeclaration": None},
        {"action": "ISC", "partyId": None, "customsDeclaration": {"source": "INTERNAL", "declarationId": "dec_q9"}},
        {"action": "ISC", "customsDeclaration": {"source": "ENTREPOT", "documentType": "N"}},
        {"action": "USC", "partyId": None, "customsDeclaration": {"source": "DECO"}},
        {"customsDeclaration": {**EXTERNAL, "declarationNumber": "INV-2024-0001"}},
        {"customsDeclaration": {**EXTERNAL, "declarationNumber": "${ref:Movement/m.movementId}"}},
    ],
)  # fmt: skip
def test_valid_movements_have_no_findings(changes: dict[str, Any]) -> None:
    assert _findings(**changes) == []


@pytest.mark.parametrize(
    ("changes", "rule", "severity", "path"),
    [
        ({"action": "VAH", "customsDeclaration": None}, "movement.declaration-missing", Severity.WARNING, ("action",)),
        ({"action": "VAB", "customsDeclaration": None}, "movement.declaration-missing", Severity.WARNING, ("action",)),
        ({"action": "ISC", "customsDeclaration": None}, "movement.declaration-missing", Severity.WARNING, ("action",)),
        ({"action": "USC", "customsDeclaration": None}, "movement.declaration-missing", Severity.WARNING, ("action",)),
        ({"action": "ISL"}, "movement.declaration-forbidden", Severity.ERROR, ("customsDeclaration",)),
        ({"action": "USL"}, "movement.declaration-forbidden", Severity.ERROR, ("customsDeclaration",)),
        ({"action": "VAH", "customsDeclaration": {"source": "DECO"}}, "movement.source-not-allowed", Severity.ERROR, ("customsDeclaration", "source")),
        ({"action": "ISC", "customsDeclaration": {"source": "RTO_LICENSE"}}, "movement.source-not-allowed", Severity.ERROR, ("customsDeclaration", "source")),
        ({"action": "ISC", "customsDeclaration": {"source": "DECO"}}, "movement.source-not-allowed", Severity.ERROR, ("customsDeclaration", "source")),
        ({"customsDeclaration": {"source": "EXTERNAL", "documentType": "X", "declarationType": "IM"}}, "movement.source-field-missing", Severity.ERROR, ("customsDeclaration",)),
        ({"action": "ISC", "customsDeclaration": {"source": "INTERNAL"}}, "movement.source-field-missing", Severity.ERROR, ("customsDeclaration",)),
        ({"customsDeclaration": {"source": "RTO_LICENSE", "documentType": "X"}}, "movement.source-field-forbidden", Severity.ERROR, ("customsDeclaration", "documentType")),
        ({"action": "ISC", "customsDeclaration": {"source": "ENTREPOT", "documentType": "N", "declarationNumber": "1"}}, "movement.source-field-forbidden", Severity.ERROR, ("customsDeclaration", "declarationNumber")),
        ({"partyId": None}, "movement.party-required", Severity.ERROR, ("action",)),
        ({"action": "ISL", "partyId": None, "customsDeclaration": None}, "movement.party-required", Severity.ERROR, ("action",)),
        ({"customsDeclaration": {**EXTERNAL, "declarationNumber": "24NLR1234567890123"}}, "mrn.check-digit", Severity.ERROR, ("customsDeclaration", "declarationNumber")),
        ({"customsDeclaration": {**EXTERNAL, "declarationNumber": "24QQR1234567890120"}}, "mrn.format", Severity.ERROR, ("customsDeclaration", "declarationNumber")),
        ({"customsDeclaration": {**EXTERNAL, "declarationNumber": "24NLr1234567890120"}}, "mrn.format", Severity.ERROR, ("customsDeclaration", "declarationNumber")),
        # The year in Arabic-Indic digits: an internal error (KeyError) at the check character.
        ({"customsDeclaration": {**EXTERNAL, "declarationNumber": "\u0662\u0664NLR1234567890120"}}, "mrn.format", Severity.ERROR, ("customsDeclaration", "declarationNumber")),
    ],
)  # fmt: skip
def test_movement_rule_findings(
    changes: dict[str, Any], rule: str, severity: Severity, path: tuple[str, ...]
) -> None:
    assert _findings(**changes) == [(rule, severity, _line(*path, **changes))]


@pytest.mark.parametrize(
    "spaced", [" 24NLR1234567890123", "24NLR1234567890123 ", "\t24NLR1234567890123 "]
)
def test_an_mrn_with_a_space_around_it_is_an_error_and_checked_within(spaced: str) -> None:
    """A cell copied from a customs letter brings a space along: every MRN check was skipped,
    and the MRN went out with its space."""
    changes: dict[str, Any] = {"customsDeclaration": {**EXTERNAL, "declarationNumber": spaced}}
    line = _line("customsDeclaration", "declarationNumber", **changes)
    assert sorted(_findings(**changes)) == [
        ("mrn.check-digit", Severity.ERROR, line),
        ("mrn.format", Severity.ERROR, line),
    ]
    right = {"customsDeclaration": {**EXTERNAL, "declarationNumber": spaced.replace("23", "20")}}
    document = make_document(Kind.MOVEMENT, sample(Kind.MOVEMENT, **right))
    (finding,) = check_rules(document, check_digits=None)
    where = " and ".join(
        side for side, at in (("before", spaced[0].isspace()), ("after", spaced[-1] == " ")) if at
    )
    assert finding.message == (
        f"MRN {spaced.replace('23', '20')!r} has a space {where} it, which would be sent with it"
    )
    assert "without spaces" in finding.hint


def test_unknown_action_or_source_is_left_to_the_schema() -> None:
    assert _findings(action="XXX") == []
    assert _findings(customsDeclaration={"source": "OTHER"}) == []


def test_mrn_check_digit_severity_can_be_lowered_or_turned_off() -> None:
    wrong = {"customsDeclaration": {**EXTERNAL, "declarationNumber": "24NLR1234567890123"}}
    line = _line("customsDeclaration", "declarationNumber", **wrong)
    assert _findings(Severity.WARNING, **wrong) == [("mrn.check-digit", Severity.WARNING, line)]
    assert _findings(None, **wrong) == []


def test_messages_name_the_action_and_hints_the_way_out() -> None:
    document = make_document(
        Kind.MOVEMENT, sample(Kind.MOVEMENT, action="ISC", customsDeclaration={"source": "DECO"})
    )
    (finding,) = check_rules(document)
    assert finding.message == "source DECO is not accepted for ISC movements"
    assert finding.hint == "use one of: ENTREPOT, EXTERNAL, INTERNAL"
    assert finding.document == "Movement/doc"


@pytest.mark.parametrize("weight", [float("inf"), float("nan")])
def test_a_weight_the_schema_refuses_as_not_finite_gets_no_movement_rule(weight: float) -> None:
    # quantity 0 with grossWeightKg .nan was also movement.weight-without-packages.
    assert _findings(quantity=0, grossWeightKg=weight) == []


@pytest.mark.parametrize(
    "spaced", ["24NLR 1234567890120", "24NL R123 4567 8901 20", " 24NL R1234567890120"]
)
def test_an_mrn_with_spaces_inside_it_is_an_error_and_checked_without_them(spaced: str) -> None:
    # An MRN copied as a letter prints it, in groups, was no MRN to the check and went out
    # with its spaces.
    changes: dict[str, Any] = {"customsDeclaration": {**EXTERNAL, "declarationNumber": spaced}}
    document = make_document(Kind.MOVEMENT, sample(Kind.MOVEMENT, **changes))
    (finding,) = check_rules(document, check_digits=Severity.ERROR)
    assert finding.rule == "mrn.format"
    assert "spaces inside it, which would be sent with it" in finding.message
    wrong = spaced.replace("20", "21")
    changes = {"customsDeclaration": {**EXTERNAL, "declarationNumber": wrong}}
    document = make_document(Kind.MOVEMENT, sample(Kind.MOVEMENT, **changes))
    rules = sorted(f.rule for f in check_rules(document, check_digits=Severity.ERROR))
    assert rules == ["mrn.check-digit", "mrn.format"]
