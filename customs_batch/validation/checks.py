"""Validate a batch of rendered documents: schema, rule and project-wide checks."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from customs_batch.findings import Finding, JsonPath, Severity
from customs_batch.kinds import Address
from customs_batch.manifest.document import Document
from customs_batch.validation.project import check_project
from customs_batch.validation.rules import check_rules
from customs_batch.validation.schema_check import check_envelope_schema, check_spec_schema
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
    that loading left out for an error (see :func:`broken_addresses`). An incomplete document
    (one with ``left_out`` values) gets its own checks only, like a document left out.
    """
    findings: list[Finding] = []
    complete: list[Document] = []
    incomplete: set[Address] = set()
    for document in documents:
        findings.extend(
            document_findings(
                document, mrn_check_digit=mrn_check_digit, hs_codes=hs_codes, unlocodes=unlocodes
            )
        )
        findings.extend(check_team_rules(document))
        if document.left_out:
            incomplete.add(document.address)
        else:
            complete.append(document)
    findings.extend(check_project(complete, {*broken, *incomplete}))
    # A stable sort keeps the checks' order among findings at the same place.
    findings.sort(key=lambda f: (f.location.file, f.location.line, f.location.column))
    return findings


def document_findings(
    document: Document,
    *,
    mrn_check_digit: Severity | None = Severity.ERROR,
    hs_codes: Severity | None = Severity.WARNING,
    unlocodes: Severity | None = Severity.WARNING,
) -> list[Finding]:
    """The schemas' (envelope and spec) and the rules' findings on one document (see :func:`validate_documents`
    for the options). For an incomplete document, findings about the values left out (a
    missing required field that was left out, anything at or inside it) are not reported:
    loading already said why they are missing."""
    findings = check_envelope_schema(document) + check_spec_schema(document)
    findings += check_rules(
        document, check_digits=mrn_check_digit, hs_codes=hs_codes, unlocodes=unlocodes
    )
    if document.left_out:
        findings = [f for f in findings if not _about_left_out(f, document.left_out)]
    return findings


def _about_left_out(finding: Finding, left_out: tuple[JsonPath, ...]) -> bool:
    path = finding.location.path
    for gone in left_out:
        if path[: len(gone)] == gone:
            return True
        # At the mapping that lacks it, naming it: "missing required field "quantity"",
        # "ISL movements need partyId".
        if path == gone[:-1] and re.search(rf"\b{re.escape(str(gone[-1]))}\b", finding.message):
            return True
    return False
