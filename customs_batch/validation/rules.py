"""The rule checks of one document, by kind: what JSON Schema cannot express."""

from __future__ import annotations

from customs_batch.findings import Finding, Severity
from customs_batch.kinds import Kind
from customs_batch.manifest.document import Document
from customs_batch.validation.code_fields import check_code_fields
from customs_batch.validation.movement_rules import check_movement
from customs_batch.validation.reference_data import check_hs_codes
from customs_batch.validation.transit_rules import check_departure, check_party_update
from customs_batch.validation.unlocodes import check_unlocodes


def check_rules(
    document: Document,
    *,
    check_digits: Severity | None = Severity.ERROR,
    hs_codes: Severity | None = Severity.WARNING,
    unlocodes: Severity | None = Severity.WARNING,
) -> list[Finding]:
    """Findings of the customs rules for one document.

    ``check_digits`` is the severity of a wrong MRN or GRN check character (None: not checked);
    the formats themselves are always errors. ``hs_codes`` is the severity of a commodity
    code whose HS subheading does not exist (None: not checked), ``unlocodes`` that of a
    UN/LOCODE missing from the shipped code list (None: not checked).
    """
    findings = check_code_fields(document)
    findings.extend(check_hs_codes(document, hs_codes))
    findings.extend(check_unlocodes(document, unlocodes))
    if document.kind is Kind.MOVEMENT:
        findings.extend(check_movement(document, check_digits))
    elif document.kind is Kind.DEPARTURE_DECLARATION:
        findings.extend(check_departure(document, check_digits))
    elif document.kind is Kind.TRANSIT_PARTY_UPDATE:
        findings.extend(check_party_update(document))
    return findings
