"""The spreadsheet columns that give a sensitive value (a guarantee's access code), found
while a file's rows are loaded.

Two things need them. A finding at a cell of such a column that is not at the sensitive field
itself (the cell read into ``values`` and from there into the access code: ``row.cell-type``
at ``values.code``) could quote the cell: it is told without the value, as a finding at the
field is (:class:`customs_batch.findings.Finding`). And ``validate --annotate`` leaves these
columns empty in its copies, as ``results --annotate`` does (docs/spreadsheets.md).

A column is found as ``results --annotate`` finds it (a cell of the row holding the text of
a sensitive value of the row's document, or a column the row's reading noted as read into
one, however composed: ``Document.sensitive_columns``), and also by where the value was
taken from (its cell, when the value is a number the cell shows otherwise). Only column names are kept, never
a value: they travel back from a loading process and live in the load cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from customs_batch.findings import Finding, Location, withheld
from customs_batch.manifest.document import Document
from customs_batch.sensitive import has_sensitive, sensitive_paths, values_at

SheetColumn = tuple[str, str, str]
"""A spreadsheet column: the file, the sheet, the column's name (its header)."""


class SensitiveCells:
    """The sensitive columns of one file's rows, noted document by document."""

    __slots__ = ("_found",)

    def __init__(self) -> None:
        self._found: set[SheetColumn] = set()

    def note(self, document: Document) -> None:
        """Note the columns of the row ``document`` came from that gave it a sensitive
        value: the cell a value was taken from, and any cell of the row holding its text."""
        source = document.source
        if source.sheet is None or document.row is None or not has_sensitive(document.kind):
            return
        self._found.update(
            (source.file, source.sheet, name) for _, name in document.sensitive_columns
        )
        for path in sensitive_paths(document.kind):
            for where, value in values_at(document.spec, path):
                if value in (None, ""):
                    continue
                cell = document.positions.get(("spec", *where))
                if cell is not None and cell.sheet is not None and cell.column_name:
                    self._found.add((cell.file, cell.sheet, cell.column_name))
                text = str(value).strip()
                self._found.update(
                    (source.file, source.sheet, str(name))
                    for name, held in document.row.items()
                    if held is not None and str(held).strip() == text
                )

    def withheld(self, findings: Iterable[Finding]) -> list[Finding]:
        """``findings``, each at a cell of a sensitive column told without its value (also
        those of the rows read before the column was known); the columns of the findings
        already told so are noted too (a row whose only code was mistyped)."""
        findings = list(findings)
        self._found.update(
            _column(finding.location)
            for finding in findings
            if finding.sensitive and finding.location.sheet is not None
            if finding.location.column_name
        )
        if not self._found:
            return findings
        return [self._withheld(finding) for finding in findings]

    def _withheld(self, finding: Finding) -> Finding:
        location = finding.location
        if finding.sensitive or location.sheet is None or not location.column_name:
            return finding
        return withheld(finding) if _column(location) in self._found else finding

    def columns(self) -> frozenset[SheetColumn]:
        """Every column noted."""
        return frozenset(self._found)


def _column(location: Location) -> SheetColumn:
    return (location.file, location.sheet or "", location.column_name or "")


def value_lines(document: Document) -> set[tuple[str, int]]:
    """The lines of a manifest whose ``values`` hold a sensitive value of ``document`` (
    ``values: {code: "1234"}`` feeding ``accessCode: "{{ values.code }}"``, by a template or
    an expression): the report's masking of a line knows a sensitive field by its name, not
    there, so a finding at such a line is told without quoting it (:func:`without_lines`)."""
    if not has_sensitive(document.kind) or not document.values:
        return set()
    secrets = {
        str(value)
        for path in sensitive_paths(document.kind)
        for _, value in values_at(document.spec, path)
        if value is not None and not isinstance(value, dict | list)
    }
    if not secrets:
        return set()
    lines: set[tuple[str, int]] = set()
    for where, value in _leaves(document.values, ("values",)):
        if str(value) in secrets:
            position = document.positions.get(where)
            if position is not None and position.sheet is None:
                lines.add((position.file, position.line))
    return lines


def _leaves(
    value: object, path: tuple[str | int, ...]
) -> Iterable[tuple[tuple[str | int, ...], object]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for number, item in enumerate(value):
            yield from _leaves(item, (*path, number))
    else:
        yield path, value


def without_lines(findings: list[Finding], lines: set[tuple[str, int]]) -> list[Finding]:
    """``findings`` with each one at one of ``lines`` marked sensitive: no report quotes
    its source line (its message and place stay)."""
    if not lines:
        return findings
    return [
        replace(finding, sensitive=True)
        if not finding.sensitive and (finding.location.file, finding.location.line) in lines
        else finding
        for finding in findings
    ]
