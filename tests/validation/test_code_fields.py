"""Code-valued fields of each kind: countries, currencies, EORI, offices, UN/LOCODEs, HS codes."""

from __future__ import annotations

from typing import Any

import pytest

from customs_batch.findings import Severity
from customs_batch.kinds import Kind
from customs_batch.validation.code_fields import check_code_fields
from tests.validation._documents import line_of, make_document
from tests.validation.samples import sample


def _set(spec: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    node: Any = spec
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return spec


@pytest.mark.parametrize("kind", list(Kind))
def test_valid_samples_have_no_code_findings(kind: Kind) -> None:
    assert check_code_fields(make_document(kind, sample(kind))) == []


@pytest.mark.parametrize(
    ("kind", "path", "value", "rule"),
    [
        (Kind.DEPARTURE_DECLARATION, ("departureOffice",), "DE00407", "code.customs-office"),
        (Kind.DEPARTURE_DECLARATION, ("destinationOffice",), "ZZ000854", "code.customs-office"),
        (Kind.DEPARTURE_DECLARATION, ("countryOfDispatch",), "Germany", "code.country"),
        (Kind.DEPARTURE_DECLARATION, ("countryOfDestination",), "nl", "code.country"),
        (Kind.DEPARTURE_DECLARATION, ("loadingCountry",), "XX", "code.country"),
        (Kind.DEPARTURE_DECLARATION, ("unloadingCountry",), "NLD", "code.country"),
        (Kind.DEPARTURE_DECLARATION, ("loadingUNLocode",), "DE HAM", "code.unlocode"),
        (Kind.DEPARTURE_DECLARATION, ("unloadingUNLocode",), "QQRTM", "code.unlocode"),
        (Kind.DEPARTURE_DECLARATION, ("goodsLocationAddress", "Address", "countryCode"), "D", "code.country"),
        (Kind.DEPARTURE_DECLARATION, ("Principal", "eoriNo"), "DE 1234", "code.eori"),
        (Kind.DEPARTURE_DECLARATION, ("Consignee", "countryCode"), "UK", "code.country"),
        (Kind.DEPARTURE_DECLARATION, ("TransportMeans", 0, "nationality"), "D", "code.country"),
        (Kind.DEPARTURE_DECLARATION, ("DeclarationGuarantees", 0, "currencyCode"), "EURO", "code.currency"),
        (Kind.DEPARTURE_DECLARATION, ("DeclarationItems", 1, "commodityCode"), "7318", "code.commodity"),
        (Kind.DEPARTURE_DECLARATION, ("DeclarationItems", 0, "originCountry"), "CN ", "code.country"),
        (Kind.DEPARTURE_DECLARATION, ("DeclarationItems", 1, "currency"), "XYZ", "code.currency"),
        (Kind.TRANSIT_PARTY_UPDATE, ("Principal", "eoriNo"), "123456789", "code.eori"),
        (Kind.TRANSIT_PARTY_UPDATE, ("Principal", "countryCode"), "EU", "code.country"),
        (Kind.TEMPLATE_GROUP, ("DeclarationTemplates", 0, "declarationOffice"), "DE-004073", "code.customs-office"),
        (Kind.TEMPLATE_GROUP, ("DeclarationTemplates", 0, "countryOfDispatch"), "GER", "code.country"),
    ],
)  # fmt: skip
def test_bad_code_is_an_error_at_its_line(
    kind: Kind, path: tuple[str | int, ...], value: str, rule: str
) -> None:
    document = make_document(kind, _set(sample(kind), path, value), line=5)
    (finding,) = check_code_fields(document)
    assert (finding.rule, finding.severity) == (rule, Severity.ERROR)
    assert finding.location.line == line_of(document, "spec", *path)
    assert finding.location.path == ("spec", *path)
    assert repr(value) in finding.message and finding.hint


def test_references_and_wrong_types_are_not_checked_as_codes() -> None:
    spec = sample(Kind.DEPARTURE_DECLARATION, countryOfDispatch="${ref:TemplateGroup/g.code}")
    spec["departureOffice"] = 4073  # the schema reports the type
    assert check_code_fields(make_document(Kind.DEPARTURE_DECLARATION, spec)) == []


@pytest.mark.parametrize(
    ("value", "meant"),
    [
        ("UK", "GB"),  # the United Kingdom's everyday code, not ISO's
        ("EL", "GR"),  # Greece in EU VAT numbers
        ("nl", "NL"),
        ("NL ", "NL"),
        ("NLD", "NL"),  # alpha-3
        ("deu", "DE"),
    ],
)
def test_a_country_written_as_people_write_it_gets_the_code_meant(value: str, meant: str) -> None:
    # Every wrong country got "write an ISO 3166-1 alpha-2 code in capitals, e.g. DE": 'UK'
    # was not told that the United Kingdom is GB.
    spec = sample(Kind.DEPARTURE_DECLARATION)
    document = make_document(Kind.DEPARTURE_DECLARATION, _set(spec, ("loadingCountry",), value))
    (finding,) = check_code_fields(document)
    assert f"write {meant}" in finding.hint


@pytest.mark.parametrize(
    ("value", "meant"),
    [
        ("nl123456789", "NL123456789"),
        ("NL 1234 5678 9", "NL123456789"),
        ("de-123456789", "DE123456789"),
    ],
)
def test_an_eori_in_small_letters_or_with_spaces_gets_the_eori_meant(
    value: str, meant: str
) -> None:
    spec = sample(Kind.DEPARTURE_DECLARATION)
    document = make_document(Kind.DEPARTURE_DECLARATION, _set(spec, ("Consignor", "eoriNo"), value))
    (finding,) = check_code_fields(document)
    assert finding.hint.startswith(f"write {meant}:")


def test_an_eori_past_repair_keeps_the_general_hint() -> None:
    spec = _set(sample(Kind.DEPARTURE_DECLARATION), ("Consignor", "eoriNo"), "12345")
    (finding,) = check_code_fields(make_document(Kind.DEPARTURE_DECLARATION, spec))
    assert finding.hint == "write the EORI as issued, e.g. NL123456789 (no spaces)"
