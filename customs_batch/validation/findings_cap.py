"""At most so many findings from one file: past that, one finding for each rule says how many
more of it were left out.

A document of 100,000 unknown keys gives 100,000 findings of one mistake repeated (0.4 GB
to hold and report as JSON); the first thousands say what is wrong as well as all of them,
and a run after fixing those shows the rest. The finding for the ones left out carries
their rule and their worst severity, so that the run fails exactly when it would have, and
a suppression of that rule (in ``customs-batch.yaml``, or in the annotation of the one
document they all belong to) silences it with them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from customs_batch.findings import Finding, Location, Severity

MAX_FINDINGS_PER_FILE = 10_000
_WORST_FIRST = (Severity.ERROR, Severity.WARNING, Severity.INFO)


@dataclass
class _LeftOut:
    """The findings of one rule left out: how many, the first, the worst severity, and the
    document they all name (None when they name several, or none)."""

    first: Finding
    count: int = 1
    severity: Severity = Severity.INFO
    document: str | None = None


class FindingsCap:
    """The findings of one file, kept up to ``limit`` in the order they come; the rest only
    counted, by rule (see :meth:`left_out`)."""

    def __init__(self, limit: int | None = None, *, kept: int = 0) -> None:
        """``kept``: findings of the file already reported (by its own checks, when these
        are the project-wide checks' findings at it)."""
        self.limit = MAX_FINDINGS_PER_FILE if limit is None else limit
        self._kept = kept
        self._left_out: dict[str, _LeftOut] = {}
        self.left_out_documents: set[str] = set()
        """The documents the findings left out name: documents with a problem, for the
        project-wide checks, as if the findings had been kept."""

    def admit(self, finding: Finding) -> bool:
        """Whether ``finding`` is within the limit (to keep); if not, it is counted."""
        if self._kept < self.limit:
            self._kept += 1
            return True
        group = self._left_out.get(finding.rule)
        if group is None:
            group = self._left_out[finding.rule] = _LeftOut(
                finding, 0, finding.severity, finding.document
            )
        group.count += 1
        if _WORST_FIRST.index(finding.severity) < _WORST_FIRST.index(group.severity):
            group.severity = finding.severity
        if finding.document != group.document:
            group.document = None
        if finding.document is not None:
            self.left_out_documents.add(finding.document)
        return False

    def admitted(self, findings: Iterable[Finding]) -> list[Finding]:
        """The findings of ``findings`` within the limit; the others are counted."""
        return [finding for finding in findings if self.admit(finding)]

    def left_out(self) -> list[Finding]:
        """One finding for each rule of the findings left out, at the first of them."""
        return [self._summary(rule, group) for rule, group in self._left_out.items()]

    def _summary(self, rule: str, group: _LeftOut) -> Finding:
        first = group.first.location
        where = first.cell() or (f"line {first.line:,}" if first.line else first.file)
        if first.sheet is not None and first.file:
            where = f"{first.file}, {where}"
        message = (
            f"{group.count:,} more {rule} finding{'s' if group.count > 1 else ''} of this file "
            f"left out, the first at {where}: a file reports at most {self.limit:,} findings"
        )
        hint = (
            "Fix the findings reported (often one mistake, repeated) and validate again: the "
            "rest are reported then."
        )
        # At the first one left out, but never at a spreadsheet cell: the text report folds
        # the findings of a sheet, and this one must stay in view.
        location = first if first.sheet is None else Location(first.file)
        return Finding(
            rule,
            group.severity,
            message,
            location,
            hint,
            document=group.document,
            rule_at=group.first.rule_at,
        )


def capped_at_each_file(
    findings: Iterable[Finding], earlier: Iterable[Finding], limit: int | None = None
) -> list[Finding]:
    """``findings`` (the project-wide checks': duplicate requests, references, names) within
    each file's limit, counted after the ``earlier`` findings of the same files (their own
    checks'); the rest of each file counted by rule as :class:`FindingsCap` does."""
    findings = list(findings)
    limit = MAX_FINDINGS_PER_FILE if limit is None else limit
    per_file: dict[str, int] = {}
    for finding in findings:
        per_file[finding.location.file] = per_file.get(finding.location.file, 0) + 1
    before: dict[str, int] = dict.fromkeys(per_file, 0)
    for finding in earlier:
        if finding.location.file in before:
            before[finding.location.file] += 1
    caps = {
        file: FindingsCap(limit, kept=before[file])
        for file, count in per_file.items()
        if count + before[file] > limit
    }
    if not caps:
        return findings
    kept = [
        finding
        for finding in findings
        if (cap := caps.get(finding.location.file)) is None or cap.admit(finding)
    ]
    for cap in caps.values():
        kept += cap.left_out()
    return kept
