"""The rule checks of one document: what JSON Schema cannot express.

Every document's texts are checked for control characters (whatever its kind), then its
code fields (its kind's ``code_fields``), then the rule sets its kind's model names
(``rules``): validation asks the model, never which kind it holds.
"""

from __future__ import annotations

from collections.abc import Callable

from customs_batch.findings import Finding, Severity
from customs_batch.kinds.checks import RuleSet
from customs_batch.kinds.registry import model_of
from customs_batch.manifest.document import Document
from customs_batch.validation.code_fields import check_code_fields
from customs_batch.validation.control_characters import check_control_characters
from customs_batch.validation.movement_rules import check_movement
from customs_batch.validation.reference_data import check_hs_codes
from customs_batch.validation.transit_rules import check_departure, check_party_update
from customs_batch.validation.unlocodes import check_unlocodes

Rule = Callable[[Document, Severity | None], list[Finding]]
"""A rule set's check: the document, and the severity of a wrong MRN or GRN check character
(None: not checked)."""

RULE_SETS: dict[RuleSet, Rule] = {
    RuleSet.DEPARTURE: check_departure,
    RuleSet.PARTY_UPDATE: lambda document, _check_digits: check_party_update(document),
    RuleSet.MOVEMENT: check_movement,
}
"""The function that checks each rule set a kind's model may name."""


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
    findings = check_control_characters(document)
    findings.extend(check_code_fields(document))
    findings.extend(check_hs_codes(document, hs_codes))
    findings.extend(check_unlocodes(document, unlocodes))
    for rule_set in model_of(document.kind).rules:
        findings.extend(RULE_SETS[rule_set](document, check_digits))
    return findings
