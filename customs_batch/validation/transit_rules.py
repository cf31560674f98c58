"""Rule checks of transit documents that JSON Schema cannot express: UN/LOCODE against the
country, item masses against each other and the total, GRN check characters, and a party
update that updates no party."""

from __future__ import annotations

import math

from customs_batch.findings import Finding, Severity
from customs_batch.manifest.document import Document
from customs_batch.validation import codes
from customs_batch.validation.common import (
    is_reference,
    mappings_at,
    number_at,
    spec_finding,
    strings_at,
)

# Masses are written with up to three decimals (grams): a difference of up to a gram per
# item is rounding, not a mistake.
MASS_TOLERANCE = 0.001
PARTIES = ("Principal", "Consignor", "Consignee")


def check_departure(document: Document, grn_check_digit: Severity | None) -> list[Finding]:
    """Findings of the departure rules beyond the code formats and the schema."""
    return [
        *_unlocode_country(document, "loadingUNLocode", "loadingCountry"),
        *_unlocode_country(document, "unloadingUNLocode", "unloadingCountry"),
        *_item_masses(document),
        *_total_mass(document),
        *_guarantee_numbers(document, grn_check_digit),
    ]


def check_party_update(document: Document) -> list[Finding]:
    """A party update must carry at least one of Principal, Consignor, Consignee."""
    if any(party in document.spec for party in PARTIES):
        return []
    message = "the party update carries no party"
    hint = "add Principal, Consignor or Consignee with the fields to change"
    return [spec_finding(document, "party-update.no-party", (), message, hint)]


def _unlocode_country(document: Document, code_field: str, country_field: str) -> list[Finding]:
    country = document.spec.get(country_field)
    if not isinstance(country, str) or is_reference(country):
        return []
    findings = []
    for path, code in strings_at(document.spec, (code_field,)):
        if len(code) == 5 and code[:2] != country:
            message = (
                f"{code_field} {code!r} lies in {code[:2]}, but {country_field} is {country!r}"
            )
            hint = f"make {country_field} and the first two letters of {code_field} agree"
            findings.append(spec_finding(document, "code.unlocode-country", path, message, hint))
    return findings


def _item_masses(document: Document) -> list[Finding]:
    findings = []
    for index, item in mappings_at(document.spec, "DeclarationItems"):
        gross, net = number_at(item, "grossMass"), number_at(item, "netWeight")
        if gross is not None and net is not None and net > gross + MASS_TOLERANCE:
            message = f"item {index + 1}: net mass {net:g} kg is above its gross mass {gross:g} kg"
            hint = "the gross mass includes the packaging: check netWeight and grossMass"
            path = ("DeclarationItems", index, "netWeight")
            findings.append(spec_finding(document, "mass.net-above-gross", path, message, hint))
    return findings


def _total_mass(document: Document) -> list[Finding]:
    """totalWeight against the sum of the items' grossMass.

    Each mass may be rounded to the gram, so the two may differ by up to a gram per item.
    Items heavier than the total is an error (the consignment cannot weigh less than its
    goods); a total heavier than the items is a warning: usually a typing error, but it can
    be real (packaging declared only for the whole consignment). The surplus is only known
    when every item has a grossMass.
    """
    total = number_at(document.spec, "totalWeight")
    if total is None:
        return []
    items = [item for _, item in mappings_at(document.spec, "DeclarationItems")]
    masses = [number_at(item, "grossMass") for item in items]
    known = [mass for mass in masses if mass is not None]
    items_total = math.fsum(known)
    tolerance = MASS_TOLERANCE * max(1, len(items))
    path = ("totalWeight",)
    if items_total > total + tolerance:
        message = (
            f"the items' gross masses add up to {items_total:g} kg, above totalWeight {total:g} kg"
        )
        hint = (
            "totalWeight is the gross mass of the whole consignment: raise it or correct the items"
        )
        return [spec_finding(document, "mass.items-exceed-total", path, message, hint)]
    if not known or len(known) < len(masses) or total <= items_total + tolerance:
        return []
    message = (
        f"totalWeight {total:g} kg is {total - items_total:g} kg above the items' gross "
        f"masses, which add up to {items_total:g} kg"
    )
    hint = (
        "totalWeight is normally the sum of the items' grossMass: correct it or the items; "
        "if the difference is real (packaging declared only for the whole consignment), "
        "ignore this warning"
    )
    return [spec_finding(document, "mass.total-above-items", path, message, hint, Severity.WARNING)]


def _guarantee_numbers(document: Document, severity: Severity | None) -> list[Finding]:
    findings = []
    pattern = ("DeclarationGuarantees", "*", "guaranteeReferenceNumber")
    for path, written in strings_at(document.spec, pattern):
        grn = codes.without_spaces(written)  # the GRN within spaces copied along with it
        # Other guarantee references (a TIR carnet number, a waiver) have no check character.
        if not codes.looks_like_grn(grn):
            continue
        spaced = codes.spaced_problem(written, "GRN")
        if spaced is not None:
            hint = "write the GRN exactly as customs issued it, without spaces"
            findings.append(spec_finding(document, "grn.format", path, spaced, hint))
        problem = codes.grn_check_problem(grn) if severity is not None else None
        if problem is not None and severity is not None:
            hint = (
                "check the GRN for a typing error; --mrn-check-digit warning|off relaxes this check"
            )
            findings.append(
                spec_finding(document, "grn.check-digit", path, problem, hint, severity)
            )
    return findings
