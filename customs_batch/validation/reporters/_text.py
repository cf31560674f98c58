"""The compiler-style text report: location, rule, message, source line, caret, hint."""

from __future__ import annotations

from typing import TYPE_CHECKING

from customs_batch.escaping import printable
from customs_batch.findings import Finding
from customs_batch.validation.reporters._base import Reporter, register, summary_line
from customs_batch.validation.reporters._grouping import Elided, grouped, rule_counts
from customs_batch.validation.reporters._source import SourceLines

if TYPE_CHECKING:
    from customs_batch.validation.batch import ValidationResult


@register("text")
class TextReporter(Reporter):
    """``file:line:col: error[rule]: message``, the source line, a caret, then the hint."""

    def render(self, result: ValidationResult) -> str:
        sources = SourceLines()
        out: list[str] = []
        elided = False
        for item in grouped(result.findings):
            if isinstance(item, Elided):
                elided = True
                out.append(printable(item.line()))
            else:
                out.extend(_finding_lines(item, sources))
        if elided:
            out.append(rule_counts(result.findings))
        out.extend(_suppressed_line(finding) for finding in result.suppressed)
        out.append(summary_line(result))
        return "\n".join(out) + "\n"


def _finding_lines(finding: Finding, sources: SourceLines) -> list[str]:
    # Every text from outside is printable(): a file name or value cannot start a line.
    message = printable(finding.message)
    lines = [f"{printable(_where(finding))}: {finding.severity.value}[{finding.rule}]: {message}"]
    loc = finding.location
    if loc.sheet is not None:
        lines.append(f"  cell: {printable(loc.cell() or '')}")
    else:
        shown = sources.excerpt(loc.file, loc.line, loc.column)
        if shown is not None:
            source, column = shown
            lines.append(f"  {printable(source)}")
            if column >= 1:
                lines.append(f"  {_caret_padding(source, column)}^")
    used = loc.used_at_text()
    if used is not None and loc.used_at is not None:
        lines.append(f"  {used}")
        template_line = sources.excerpt(loc.used_at.file, loc.used_at.line, loc.used_at.column)
        if template_line is not None:
            lines.append(f"    {template_line[0].strip()}")
    if loc.path:
        lines.append(f"  path: {printable(loc.json_path())}")
    if finding.hint:
        lines.append(f"  hint: {printable(finding.hint)}")
    return lines


def _suppressed_line(finding: Finding) -> str:
    assert finding.suppression is not None
    suppression = finding.suppression
    return (
        f"{_where(finding)}: suppressed[{finding.rule}]: {finding.message} "
        f"(reason: {suppression.reason}; at {suppression.where})"
    )


def _where(finding: Finding) -> str:
    loc = finding.location
    where = loc.file
    if loc.line >= 1:
        where += f":{loc.line}"
        if loc.column >= 1:
            where += f":{loc.column}"
    return where


def _caret_padding(source: str, column: int) -> str:
    # Keep tabs as tabs so the caret lands under the right character in any tab width.
    prefix = printable(source[: column - 1])
    return "".join("\t" if char == "\t" else " " for char in prefix)
