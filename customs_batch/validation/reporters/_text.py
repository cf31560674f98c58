"""The compiler-style text report: location, rule, message, source line, caret, hint."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from customs_batch.escaping import printable
from customs_batch.findings import Finding, JsonPath
from customs_batch.validation.reporters._base import Reporter, register, summary_line
from customs_batch.validation.reporters._grouping import Elided, grouped, rule_counts
from customs_batch.validation.reporters._source import SourceLines

if TYPE_CHECKING:
    from customs_batch.validation.batch import ValidationResult

_REMEMBERED = 4096
"""Escaped file names and hints kept for reuse in a report, at most (then forgotten)."""
LINES_A_PIECE = 4096
"""Lines of findings in a piece of the report (:meth:`TextReporter.pieces`), about."""


@register("text")
class TextReporter(Reporter):
    """``file:line:col: error[rule]: message``, the source line, a caret, then the hint."""

    def render(self, result: ValidationResult) -> str:
        return "".join(self.pieces(result))

    def pieces(self, result: ValidationResult) -> Iterator[str]:
        """The report a piece of about :data:`LINES_A_PIECE` lines at a time: 200,000
        findings were all held as lines, then joined, before a byte was written."""
        lines = _FindingLines()
        out: list[str] = []
        elided = False
        for item in grouped(result.findings):
            if isinstance(item, Elided):
                elided = True
                out.append(printable(item.line()))
            else:
                out.extend(lines.of(item))
            if len(out) >= LINES_A_PIECE:
                out.append("")  # the piece's last newline
                yield "\n".join(out)
                out.clear()
        if elided:
            out.append(rule_counts(result.findings))
        out.extend(_suppressed_line(finding) for finding in result.suppressed)
        # The last newline joined on, not added: adding would copy the piece again.
        out += (summary_line(result), "")
        yield "\n".join(out)


class _FindingLines:
    """The lines of one finding after another, their source lines quoted from one
    :class:`SourceLines`.

    Findings share most of their texts (the file name, the JSON path, the hint; 91,000
    warnings of one rule share all three): each is escaped once and looked up after that.
    """

    def __init__(self) -> None:
        self.sources = SourceLines()
        self._escaped: dict[str, str] = {}
        # The last path shown and its text; by identity: (1,) == (True,), but not its text.
        self._path: JsonPath = ()
        self._path_text = ""

    def of(self, finding: Finding) -> list[str]:
        """``file:line:col: severity[rule]: message``, then what shows where and why."""
        # Every text from outside is printable(): a file name or value cannot start a line.
        loc = finding.location
        known = self._escaped  # looked up here, not in a method: 5% of a big report
        file = known.get(loc.file) or self._escape(loc.file)
        # The numbers need no escaping: printable() escapes character by character.
        if loc.line < 1:
            where = file
        elif loc.column < 1:
            where = f"{file}:{loc.line}"
        else:
            where = f"{file}:{loc.line}:{loc.column}"
        # A StrEnum formats as its value (ReprEnum): cheaper than the .value property.
        lines = [f"{where}: {finding.severity}[{finding.rule}]: {printable(finding.message)}"]
        if loc.sheet is not None:
            lines.append(f"  cell: {printable(loc.cell() or '')}")
        elif not finding.sensitive:  # the line of a sensitive value holds the value
            shown = self.sources.excerpt(loc.file, loc.line, loc.column)
            if shown is not None:
                source, column = shown
                lines.append(f"  {printable(source)}")
                if column >= 1:
                    lines.append(f"  {_caret_padding(source, column)}^")
        used = loc.used_at
        if used is not None:
            lines.append(f"  {printable(loc.used_at_text() or '')}")
            template_line = None
            if not finding.sensitive:
                template_line = self.sources.excerpt(used.file, used.line, used.column)
            if template_line is not None:
                lines.append(f"    {printable(template_line[0].strip())}")
        if loc.path:
            if loc.path is not self._path:  # the findings of one check share their path
                self._path, self._path_text = loc.path, printable(loc.json_path())
            lines.append(f"  path: {self._path_text}")
        if finding.hint:
            lines.append(f"  hint: {known.get(finding.hint) or self._escape(finding.hint)}")
        return lines

    def _escape(self, text: str) -> str:
        if len(self._escaped) >= _REMEMBERED:
            self._escaped.clear()
        shown = self._escaped[text] = printable(text)
        return shown


def _suppressed_line(finding: Finding) -> str:
    assert finding.suppression is not None
    suppression = finding.suppression
    # Every text from outside is printable(), as in a finding's lines.
    return printable(
        f"{_where(finding)}: suppressed[{finding.rule}]: {finding.message} "
        f"(reason: {suppression.reason}; at {suppression.where})"
    )


def _where(finding: Finding) -> str:
    loc = finding.location
    if loc.line < 1:
        return loc.file
    if loc.column < 1:
        return f"{loc.file}:{loc.line}"
    return f"{loc.file}:{loc.line}:{loc.column}"


def _caret_padding(source: str, column: int) -> str:
    # Keep tabs as tabs so the caret lands under the right character in any tab width.
    if column == 1:
        return ""
    prefix = printable(source[: column - 1])
    if "\t" not in prefix:
        return " " * len(prefix)
    return "".join("\t" if char == "\t" else " " for char in prefix)
