"""Rule checks of code-valued fields: countries, currencies, EORI, offices, UN/LOCODEs, HS codes,
kinds of packages, Incoterms, the security indicator, transport modes and guarantee types.

Each kind's model says which of its fields holds which sort of code (``code_fields``, in the
kind's module); one table here says how each sort is checked (``CODE_RULES``); one loop checks
them, asking the kind's model and never which kind it holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from customs_batch.findings import Finding
from customs_batch.kinds.checks import CodeSort
from customs_batch.kinds.registry import model_of
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


COUNTRY = CodeRule("code.country", codes.country_problem, hint_for=codes.country_hint)
CURRENCY = CodeRule(
    "code.currency", codes.currency_problem, "write an ISO 4217 code in capitals, e.g. EUR"
)
EORI = CodeRule("code.eori", codes.eori_problem, hint_for=codes.eori_hint)
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

CODE_RULES: dict[CodeSort, CodeRule] = {
    CodeSort.COUNTRY: COUNTRY,
    CodeSort.CURRENCY: CURRENCY,
    CodeSort.EORI: EORI,
    CodeSort.OFFICE: OFFICE,
    CodeSort.UNLOCODE: UNLOCODE,
    CodeSort.COMMODITY: COMMODITY,
    CodeSort.PACKAGE_KIND: PACKAGE_KIND,
    CodeSort.INCOTERM: INCOTERM,
    CodeSort.SECURITY: SECURITY,
    CodeSort.TRANSPORT_MODE: TRANSPORT_MODE,
    CodeSort.TRANSPORT_MEANS_MODE: TRANSPORT_MEANS_MODE,
    CodeSort.GUARANTEE_TYPE: GUARANTEE_TYPE,
}
"""The check of each sort of code; which field of a kind holds which sort is the kind's
``code_fields`` (its module, e.g. ``kinds/departure.py``'s ``CODE_FIELDS``)."""


def check_code_fields(document: Document) -> list[Finding]:
    """Findings for every code-valued field of the document that is not a valid code."""
    findings: list[Finding] = []
    for pattern, sort in model_of(document.kind).code_fields:
        code = CODE_RULES[sort]
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
