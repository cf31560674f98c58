"""The JSON report: a stable, versioned object for tools."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from customs_batch.escaping import json_document
from customs_batch.findings import Finding, Severity
from customs_batch.formats import VERSION_KEY
from customs_batch.validation.reporters._base import Reporter, register

if TYPE_CHECKING:
    from customs_batch.validation.batch import ValidationResult

FORMAT_VERSION = 2
"""2: the version is under ``formatVersion`` (1 had ``version``), as in every JSON output.
Added since, without a new version: ``summary.suppressed`` and the ``suppressed`` list."""


@register("json")
class JsonReporter(Reporter):
    """``{formatVersion: 2, summary: {...}, findings: [...]}``, keys in a fixed order."""

    def render(self, result: ValidationResult) -> str:
        counts = result.counts()
        failed = any(self.fails(finding) for finding in result.findings)
        report = {
            VERSION_KEY: FORMAT_VERSION,
            "summary": {
                "ok": not failed,
                "errors": counts[Severity.ERROR],
                "warnings": counts[Severity.WARNING],
                "infos": counts[Severity.INFO],
                "documents": result.document_count,
                "files": len(result.files),
                "suppressed": len(result.suppressed),
            },
            "findings": [finding_object(finding) for finding in result.findings],
            "suppressed": [_suppressed_object(finding) for finding in result.suppressed],
        }
        return json_document(json.dumps(report, indent=2, ensure_ascii=False)) + "\n"


def _suppressed_object(finding: Finding) -> dict[str, Any]:
    assert finding.suppression is not None
    out = finding_object(finding)
    out["suppression"] = {
        "reason": finding.suppression.reason,
        "where": finding.suppression.where,
    }
    return out


def finding_object(finding: Finding) -> dict[str, Any]:
    """One finding as the JSON report writes it."""
    loc = finding.location
    cell = None
    if loc.sheet is not None:
        cell = {"sheet": loc.sheet, "row": loc.row, "column": loc.column_name}
    return {
        "rule": finding.rule,
        "severity": finding.severity.value,
        "message": finding.message,
        "hint": finding.hint,
        "file": loc.file,
        "line": loc.line,
        "column": loc.column,
        "path": loc.json_path(),
        "document": finding.document,
        "cell": cell,
        "usedAt": _used_at(finding),
    }


def _used_at(finding: Finding) -> dict[str, Any] | None:
    """Where a template used the value, for a value it copied from ``values``."""
    used = finding.location.used_at
    if used is None:
        return None
    return {"file": used.file, "line": used.line, "column": used.column}
