"""Markdown for a pull-request comment or a GitHub job summary: the counts, then a table of
findings, errors first, cut short (and said so) before GitHub's comment limit."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from customs_batch.escaping import markdown_text, printable
from customs_batch.findings import Finding, Severity
from customs_batch.validation.reporters._base import Reporter, register, summary_line

if TYPE_CHECKING:
    from customs_batch.validation.batch import ValidationResult

# Under GitHub's 65,536-character comment limit, with room for what a workflow adds.
MAX_CHARACTERS = 60_000
_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@register("markdown")
class MarkdownReporter(Reporter):
    """A heading with the outcome, then one table row per finding: severity, rule, where
    (file:line, and the sheet, row and column of a spreadsheet cell), message and hint."""

    max_characters = MAX_CHARACTERS

    def render(self, result: ValidationResult) -> str:
        failed = result.failed(strict=self.options.strict)
        outcome = "failed" if failed else "passed"
        lines = [f"### customs-batch validate: {outcome}", "", f"**{summary_line(result)}**", ""]
        findings = sorted(result.findings, key=lambda f: _ORDER[f.severity])
        if not findings:
            return "\n".join(lines) + "\n"
        lines += ["| | rule | where | message |", "|---|---|---|---|"]
        used = sum(len(line) + 1 for line in lines)
        for index, finding in enumerate(findings):
            row = _row(finding)
            if used + len(row) + 200 > self.max_characters:
                rest = len(findings) - index
                lines += ["", f"... and {rest} more: run `customs-batch validate` for all."]
                break
            lines.append(row)
            used += len(row) + 1
        return "\n".join(lines) + "\n"


def _row(finding: Finding) -> str:
    loc = finding.location
    place = printable(f"{loc.file}:{loc.line}" if loc.line >= 1 else loc.file)
    where = _code(place.replace("|", "\\|"))
    if loc.sheet is not None:
        where += f" {_cell(loc.cell() or '')}"
    message = _cell(finding.message)
    used = loc.used_at_text()
    if used is not None:
        message += f" ({_cell(used)})"
    if finding.hint:
        message += f"<br>*hint:* {_cell(finding.hint)}"
    return f"| {finding.severity.value} | `{finding.rule}` | {where} | {message} |"


def _cell(text: str) -> str:
    """Text inside a table cell, shown as itself: one line (control characters escaped), its
    HTML, pipes and markdown escaped, no mention or issue reference (a value quoted in a
    message may hold any of them)."""
    return markdown_text(text)


def _code(text: str) -> str:
    """A code span around ``text``, whatever backticks it holds: a fence longer than its
    longest run of them (CommonMark), padded when it starts or ends with one."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
