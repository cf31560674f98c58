"""Departure rules beyond formats (UN/LOCODE vs country, masses, GRN) and party updates."""

from __future__ import annotations

from typing import Any

import pytest

from customs_batch.findings import Severity
from customs_batch.kinds import Kind
from customs_batch.validation.rules import check_rules
from tests.validation._documents import line_of, make_document
from tests.validation.samples import DEPARTURE, sample

ITEM_0, ITEM_1 = DEPARTURE["DeclarationItems"]
GUARANTEE = DEPARTURE["DeclarationGuarantees"][0]


def _findings(
    kind: Kind = Kind.DEPARTURE_DECLARATION,
    /,
    check_digits: Severity | None = Severity.ERROR,
    **changes: Any,
) -> tuple[list[tuple[str, Severity, int]], Any]:
    document = make_document(kind, sample(kind, **changes), line=20)
    found = [
        (f.rule, f.severity, f.location.line)
        for f in check_rules(document, check_digits=check_digits)
    ]
    return found, document


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"totalWeight": 130.0009},  # items 130.0: within rounding the other way too
        {"totalWeight": 129.9995},
        {"unloadingCountry": None},
        {"loadingCountry": "${ref:TemplateGroup/g.code}"},
        {"DeclarationItems": [{**ITEM_0, "netWeight": 62.5}], "totalWeight": 62.5},
        {"DeclarationItems": [{**ITEM_0, "grossMass": "62.5"}], "totalWeight": 1},  # type: the schema's
        {"DeclarationGuarantees": [{**GUARANTEE, "guaranteeReferenceNumber": "TIR-XB12345678"}]},
        {"DeclarationGuarantees": [{**GUARANTEE, "guaranteeReferenceNumber": "20DE0000000000002ABC1234"}]},
    ],
)  # fmt: skip
def test_valid_departures_have_no_findings(changes: dict[str, Any]) -> None:
    assert _findings(**changes)[0] == []


@pytest.mark.parametrize(
    ("changes", "rule", "path"),
    [
        ({"loadingCountry": "NL"}, "code.unlocode-country", ("loadingUNLocode",)),
        ({"unloadingUNLocode": "BEANR"}, "code.unlocode-country", ("unloadingUNLocode",)),
        ({"totalWeight": 129.99}, "mass.items-exceed-total", ("totalWeight",)),
        ({"DeclarationItems": [ITEM_0, {**ITEM_1, "netWeight": 67.6}]}, "mass.net-above-gross", ("DeclarationItems", 1, "netWeight")),
        ({"DeclarationGuarantees": [{**GUARANTEE, "guaranteeReferenceNumber": "20DE0000000000005"}]}, "grn.check-digit", ("DeclarationGuarantees", 0, "guaranteeReferenceNumber")),
    ],
)  # fmt: skip
def test_departure_rule_findings(changes: dict[str, Any], rule: str, path: tuple[Any, ...]) -> None:
    found, document = _findings(**changes)
    assert found == [(rule, Severity.ERROR, line_of(document, "spec", *path))]


@pytest.mark.parametrize(
    ("total", "found"),
    [
        (130.0, []),
        (130.002, []),  # two items: up to a gram each is rounding
        (130.0021, [("mass.total-above-items", Severity.WARNING)]),
        (150, [("mass.total-above-items", Severity.WARNING)]),
        (129.9979, [("mass.items-exceed-total", Severity.ERROR)]),
    ],
)
def test_total_weight_against_the_items(total: float, found: list[tuple[str, Severity]]) -> None:
    rules, document = _findings(totalWeight=total)  # items: 62.5 + 67.5 kg
    assert rules == [
        (rule, severity, line_of(document, "spec", "totalWeight")) for rule, severity in found
    ]


def test_a_total_above_the_items_is_only_told_when_every_item_has_a_mass() -> None:
    items = [ITEM_0, {key: value for key, value in ITEM_1.items() if key != "grossMass"}]
    assert _findings(totalWeight=150, DeclarationItems=items)[0] == []


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan")])
@pytest.mark.parametrize("where", ["totalWeight", "grossMass", "netWeight"])
def test_a_mass_the_schema_refuses_as_not_finite_gets_no_mass_rule(
    number: float, where: str
) -> None:
    # totalWeight: 1e400 was schema.not-finite and also "totalWeight inf kg is inf kg above
    # the items' gross masses"; a .nan grossMass, "137.5 kg is nan kg above".
    if where == "totalWeight":
        rules, _ = _findings(totalWeight=number)
    else:
        items = [{**ITEM_0, where: number}, ITEM_1]
        rules, _ = _findings(DeclarationItems=items)
    assert rules == []


@pytest.mark.parametrize("where", ["totalWeight", "grossMass", "netWeight"])
def test_a_mass_beyond_any_float_is_no_internal_error(where: str) -> None:
    # "internal error: OverflowError: int too large to convert to float".
    if where == "totalWeight":
        rules, _ = _findings(totalWeight=10**400)
    else:
        rules, _ = _findings(DeclarationItems=[{**ITEM_0, where: 10**400}, ITEM_1])
    assert rules == []


def test_masses_are_named_in_the_message() -> None:
    document = make_document(
        Kind.DEPARTURE_DECLARATION, sample(Kind.DEPARTURE_DECLARATION, totalWeight=100)
    )
    (finding,) = check_rules(document)
    assert finding.message == "the items' gross masses add up to 130 kg, above totalWeight 100 kg"
    document = make_document(
        Kind.DEPARTURE_DECLARATION, sample(Kind.DEPARTURE_DECLARATION, totalWeight=145.5)
    )
    (finding,) = check_rules(document)
    assert finding.message == (
        "totalWeight 145.5 kg is 15.5 kg above the items' gross masses, which add up to 130 kg"
    )


def test_grn_check_digit_follows_the_mrn_setting() -> None:
    wrong: dict[str, Any] = {
        "DeclarationGuarantees": [{**GUARANTEE, "guaranteeReferenceNumber": "20DE0000000000005"}]
    }
    assert [f[:2] for f in _findings(check_digits=Severity.WARNING, **wrong)[0]] == [
        ("grn.check-digit", Severity.WARNING)
    ]
    assert _findings(check_digits=None, **wrong)[0] == []


def test_a_grn_with_a_space_around_it_is_an_error_whatever_the_check_digit_setting() -> None:
    spaced: dict[str, Any] = {
        "DeclarationGuarantees": [{**GUARANTEE, "guaranteeReferenceNumber": "20DE0000000000005 "}]
    }
    assert sorted(f[:2] for f in _findings(**spaced)[0]) == [
        ("grn.check-digit", Severity.ERROR),
        ("grn.format", Severity.ERROR),
    ]
    assert [f[:2] for f in _findings(check_digits=None, **spaced)[0]] == [
        ("grn.format", Severity.ERROR)
    ]


def test_party_update_needs_a_party() -> None:
    found, document = _findings(Kind.TRANSIT_PARTY_UPDATE, Principal=None)
    assert found == [("party-update.no-party", Severity.ERROR, line_of(document, "spec"))]
    assert _findings(Kind.TRANSIT_PARTY_UPDATE)[0] == []
    assert _findings(Kind.TRANSIT_PARTY_UPDATE, Principal=None, Consignee={"name": "B"})[0] == []


def test_a_grn_with_spaces_inside_it_is_an_error_and_checked_without_them() -> None:
    spaced: dict[str, Any] = {
        "DeclarationGuarantees": [
            {**GUARANTEE, "guaranteeReferenceNumber": "20DE 0000 0000 0000 5"}
        ]
    }
    assert sorted(f[:2] for f in _findings(**spaced)[0]) == [
        ("grn.check-digit", Severity.ERROR),
        ("grn.format", Severity.ERROR),
    ]
