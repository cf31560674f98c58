"""Rule checks of code-valued fields: countries, currencies, EORI, offices, UN/LOCODEs, HS codes,
kinds of packages, Incoterms, the security indicator, transport modes and guarantee types.

One table says which field of which kind holds which sort of code; one loop checks them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from customs_batch.findings import Finding
from customs_batch.kinds import Kind
from customs_batch.manifest.document import Document
from customs_batch.validation import code_lists, codes
from customs_batch.validation.common import spec_finding, strings_at


@dataclass(frozen=True)
class CodeRule:
    """A sort of code: its rule id, its check and what to write instead.

    ``problem`` gives the message alone (the hint is ``hint``, or ``hint_for`` of the value)
    or the message and a hint of its own.
    """

    rule: str
    problem: Callable[[str], str | tuple[str, str] | None]
    hint: str = ""
    hint_for: Callable[[str], str] | None = None


COUNTRY = CodeRule(
    "code.country", codes.country_problem, "write an ISO 3166-1 alpha-2 code in capitals, e.g. DE"
)
CURRENCY = CodeRule(
    "code.currency", codes.currency_problem, "write an ISO 4217 code in capitals, e.g. EUR"
)
EORI = CodeRule(
    "code.eori", codes.eori_problem, "write the EORI as issued, e.g. NL123456789 (no spaces)"
)
OFFICE = CodeRule(
    "code.customs-office", codes.office_problem, "write the office reference number, e.g. DE004073"
)
UNLOCODE = CodeRule(
    "code.unlocode",
    codes.unlocode_problem,
    "write the 5-character UN/LOCODE without space, e.g. DEHAM",
)
COMMODITY = CodeRule("code.commodity", codes.commodity_problem, hint_for=codes.commodity_hint)
PACKAGE_KIND = CodeRule("code.package-kind", code_lists.package_kind_problem)
INCOTERM = CodeRule("code.incoterm", code_lists.incoterm_problem)
SECURITY = CodeRule("code.security", code_lists.security_problem)
TRANSPORT_MODE = CodeRule("code.transport-mode", code_lists.transport_mode_problem)
TRANSPORT_MEANS_MODE = CodeRule("code.transport-mode", code_lists.transport_means_mode_problem)
GUARANTEE_TYPE = CodeRule("code.guarantee-type", code_lists.guarantee_type_problem)

_PARTY_FIELDS: tuple[tuple[tuple[str, ...], CodeRule], ...] = tuple(
    item
    for party in ("Principal", "Consignor", "Consignee")
    for item in (((party, "eoriNo"), EORI), ((party, "countryCode"), COUNTRY))
)

_TEMPLATE_FIELDS: tuple[tuple[tuple[str, ...], CodeRule], ...] = tuple(
    (("DeclarationTemplates", "*", field), rule)
    for field, rule in (
        ("declarationOffice", OFFICE),
        ("customsOfficeOfExport", OFFICE),
        ("customsOfficeOfExit", OFFICE),
        ("supervisingOffice", OFFICE),
        ("countryOfDispatch", COUNTRY),
        ("countryOfDestination", COUNTRY),
        ("countryOfBorder", COUNTRY),
        ("incoterm", INCOTERM),
        ("arrivalTransportType", TRANSPORT_MODE),
        ("borderTransportType", TRANSPORT_MODE),
    )
)

CODE_FIELDS: dict[Kind, tuple[tuple[tuple[str, ...], CodeRule], ...]] = {
    Kind.DEPARTURE_DECLARATION: (
        (("departureOffice",), OFFICE),
        (("destinationOffice",), OFFICE),
        (("countryOfDispatch",), COUNTRY),
        (("countryOfDestination",), COUNTRY),
        (("loadingCountry",), COUNTRY),
        (("unloadingCountry",), COUNTRY),
        (("loadingUNLocode",), UNLOCODE),
        (("unloadingUNLocode",), UNLOCODE),
        (("security",), SECURITY),
        (("goodsLocationAddress", "Address", "countryCode"), COUNTRY),
        *_PARTY_FIELDS,
        (("TransportMeans", "*", "nationality"), COUNTRY),
        (("TransportMeans", "*", "transportType"), TRANSPORT_MEANS_MODE),
        (("DeclarationGuarantees", "*", "guaranteeType"), GUARANTEE_TYPE),
        (("DeclarationGuarantees", "*", "currencyCode"), CURRENCY),
        (("DeclarationItems", "*", "commodityCode"), COMMODITY),
        (("DeclarationItems", "*", "originCountry"), COUNTRY),
        (("DeclarationItems", "*", "currency"), CURRENCY),
        (("DeclarationItems", "*", "packaging", "*", "typeOfPackages"), PACKAGE_KIND),
    ),
    Kind.TRANSIT_PARTY_UPDATE: _PARTY_FIELDS,
    Kind.TEMPLATE_GROUP: _TEMPLATE_FIELDS,
}


def check_code_fields(document: Document) -> list[Finding]:
    """Findings for every code-valued field of the document that is not a valid code."""
    findings: list[Finding] = []
    for pattern, code in CODE_FIELDS.get(document.kind, ()):
        for path, value in strings_at(document.spec, pattern):
            problem = code.problem(value)
            if problem is None:
                continue
            if isinstance(problem, tuple):
                message, hint = problem
            else:
                message = problem
                hint = code.hint_for(value) if code.hint_for is not None else code.hint
            findings.append(spec_finding(document, code.rule, path, message, hint))
    return findings
