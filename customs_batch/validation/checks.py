"""Validate a batch of rendered documents: schema, rule and project-wide checks."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from customs_batch.findings import Finding, Severity
from customs_batch.kinds import Address
from customs_batch.manifest.document import Document
from customs_batch.validation.project import check_project
from customs_batch.validation.rules import check_rules
from customs_batch.validation.schema_check import check_spec_schema
from customs_batch.validation.team_rules import check_team_rules


def validate_documents(
    documents: Sequence[Document],
    *,
    mrn_check_digit: Severity | None = Severity.ERROR,
    hs_codes: Severity | None = Severity.WARNING,
    unlocodes: Severity | None = Severity.WARNING,
    broken: Collection[Address] = (),
) -> list[Finding]:
    """Every finding about ``documents``, sorted by file, line and column.

    ``mrn_check_digit`` is the severity of a wrong MRN or GRN check character; None turns
    that check off (``--mrn-check-digit off``); ``hs_codes`` likewise for a commodity code
    whose HS subheading does not exist (``--hs-codes off``), ``unlocodes`` for a UN/LOCODE
    missing from the code list (``--unlocodes off``). ``broken`` are the addresses of documents
    that loading left out for an error (see :func:`broken_addresses`).
    """
    findings: list[Finding] = []
    for document in documents:
        findings.extend(check_spec_schema(document))
        findings.extend(
            check_rules(
                document, check_digits=mrn_check_digit, hs_codes=hs_codes, unlocodes=unlocodes
            )
        )
        findings.extend(check_team_rules(document))
    findings.extend(check_project(documents, broken))
    # A stable sort keeps the checks' order among findings at the same place.
    findings.sort(key=lambda f: (f.location.file, f.location.line, f.location.column))
    return findings
