"""GitHub Actions workflow commands, so findings appear as annotations on the diff."""

from __future__ import annotations

from typing import TYPE_CHECKING

from customs_batch.escaping import printable
from customs_batch.findings import Finding, Severity
from customs_batch.validation.reporters._base import (
    Reporter,
    from_workspace,
    register,
    summary_line,
)

if TYPE_CHECKING:
    from customs_batch.validation.batch import ValidationResult

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


@register("github")
class GithubReporter(Reporter):
    """``::error file=F,line=L,col=C,title=RULE::message`` per finding, then a summary."""

    def render(self, result: ValidationResult) -> str:
        lines = [_command(finding) for finding in result.findings]
        lines.append(summary_line(result))
        return "\n".join(lines) + "\n"


def _command(finding: Finding) -> str:
    loc = finding.location
    # The runner unescapes %0A and %0D: only what it cannot carry is escaped here.
    props = [f"file={escape_property(printable(from_workspace(loc.file), lines=True))}"]
    if loc.line >= 1:
        props.append(f"line={loc.line}")
        if loc.column >= 1:
            props.append(f"col={loc.column}")
    props.append(f"title={escape_property(finding.rule)}")
    message = printable(finding.message, lines=True)
    if loc.sheet is not None:
        message += f" ({printable(loc.cell() or '', lines=True)})"
    used = loc.used_at_text()
    if used is not None:
        message += f" ({printable(used, lines=True)})"
    if finding.hint:
        message += f"\nhint: {printable(finding.hint, lines=True)}"
    return f"::{_COMMANDS[finding.severity]} {','.join(props)}::{escape_data(message)}"


def escape_data(text: str) -> str:
    """Escape a command's message the way the Actions runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value: as for data, plus ``:`` and ``,`` which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")
