"""Grouping spreadsheet findings in the text report, so a sheet with a thousand bad rows
does not flood the screen: per file and rule, the first few in full, then one line naming
the rows of the rest, and a count per rule. Machine formats keep every finding."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from customs_batch.findings import Finding

SHOWN = 5
"""Findings shown in full per file and rule, when a group is elided."""
GROUP_AT = 10
"""A group of more findings than this is elided."""
LISTED_ROWS = 20
"""Row numbers named in the line that stands for the elided findings."""


@dataclass(frozen=True)
class Elided:
    """The findings of one file and rule left out of the text report."""

    file: str
    rule: str
    rows: tuple[int, ...]

    def line(self) -> str:
        """``… and 995 more error[row.cell-type] in data/m.csv at rows 17, 18, …``."""
        listed = ", ".join(str(row) for row in self.rows[:LISTED_ROWS])
        if len(self.rows) > LISTED_ROWS:
            listed += ", …"
        return f"… and {len(self.rows)} more [{self.rule}] in {self.file} at rows {listed}"


def grouped(findings: Iterable[Finding]) -> Iterator[Finding | Elided]:
    """``findings`` in their order, with big groups of spreadsheet findings elided (their
    :class:`Elided` lines come after the findings shown)."""
    findings = list(findings)
    sizes = Counter(_group(f) for f in findings if f.location.sheet is not None)
    if not sizes:  # no spreadsheet findings: nothing to elide
        yield from findings
        return
    shown: Counter[tuple[str, str]] = Counter()
    hidden: dict[tuple[str, str], list[int]] = {}
    for finding in findings:
        key = _group(finding)
        if finding.location.sheet is None or sizes[key] <= GROUP_AT or shown[key] < SHOWN:
            shown[key] += 1
            yield finding
        else:
            hidden.setdefault(key, []).append(finding.location.row or finding.location.line)
    for (file, rule), rows in hidden.items():
        yield Elided(file, rule, tuple(rows))


def rule_counts(findings: Iterable[Finding]) -> str:
    """``per rule: row.cell-type 998, schema.enum 3``, by count then rule."""
    counts = Counter(finding.rule for finding in findings)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return "per rule: " + ", ".join(f"{rule} {count}" for rule, count in ordered)


def _group(finding: Finding) -> tuple[str, str]:
    return finding.location.file, finding.rule
