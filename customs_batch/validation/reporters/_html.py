"""The findings as one HTML page (:mod:`customs_batch.html_report`): a sortable, filterable
table with each finding's file and line (or sheet, row and column), and the documents'
dependency graph, each box coloured by the worst finding of its document."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from customs_batch.findings import Finding, Severity
from customs_batch.html_report import Column, Graph, GraphEdge, GraphNode, Row, html_report
from customs_batch.validation.reporters._base import Reporter, register, summary_line

if TYPE_CHECKING:
    from customs_batch.validation.batch import ValidationResult

MAX_NODES = 200
"""Past this many documents the page leaves the graph out: a picture of thousands of boxes
helps nobody (``plan --format html`` groups them)."""

COLUMNS = (Column("severity"), Column("rule"), Column("message"), Column("hint"))

# Fill and border of a document's box, by its worst finding (as the plan's pictures colour).
_COLOURS = {
    Severity.ERROR: ("#ffe3e3", "#c92a2a"),
    Severity.WARNING: ("#fff3bf", "#e67700"),
    Severity.INFO: ("#e7f5ff", "#1c7ed6"),
    None: ("#d3f9d8", "#2b8a3e"),
}
_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@register("html")
class HtmlReporter(Reporter):
    """A page that opens in any browser, offline: the outcome and counts, every finding
    (suppressed ones marked), and the graph of the documents."""

    draws_graph = True

    def render(self, result: ValidationResult) -> str:
        outcome = "failed" if result.failed(strict=self.options.strict) else "passed"
        rows = [_row(finding) for finding in result.findings]
        rows += [_row(finding, suppressed=True) for finding in result.suppressed]
        return html_report(
            f"customs-batch validate: {outcome}",
            COLUMNS,
            rows,
            summary=summary_line(result),
            graph=findings_graph(result),
        )


def findings_graph(result: ValidationResult) -> Graph | None:
    """The documents and their dependencies, each coloured by its worst finding; None past
    :data:`MAX_NODES` documents."""
    if len(result.documents) > MAX_NODES:
        return None
    worst: dict[str, Severity] = {}
    counts: dict[str, int] = defaultdict(int)
    for finding in result.findings:
        if finding.document is None:
            continue
        counts[finding.document] += 1
        known = worst.get(finding.document)
        if known is None or _RANK[finding.severity] < _RANK[known]:
            worst[finding.document] = finding.severity
    ids = {entry.address: f"d{index}" for index, entry in enumerate(result.documents)}
    nodes = []
    for entry in result.documents:
        count = counts[entry.address]
        said = "no findings" if not count else f"{count} finding{'s' if count > 1 else ''}"
        fill, stroke = _COLOURS[worst.get(entry.address)]
        nodes.append(GraphNode(ids[entry.address], (entry.address, said), fill, stroke))
    edges = tuple(
        GraphEdge(ids[first], ids[then], why)
        for first, then, why in result.edges
        if first in ids and then in ids
    )
    return Graph(tuple(nodes), edges, f"Dependency graph ({len(nodes)} documents)")


def _row(finding: Finding, *, suppressed: bool = False) -> Row:
    severity = finding.severity.value
    message = finding.message
    used = finding.location.used_at_text()
    if used is not None:
        message += f" ({used})"
    if suppressed and finding.suppression is not None:
        severity += " (suppressed)"
        message += f"\nsuppressed: {finding.suppression.reason} ({finding.suppression.where})"
    return Row(
        (severity, finding.rule, message, finding.hint),
        location=finding.location,
        tone="neutral" if suppressed else severity,
    )
