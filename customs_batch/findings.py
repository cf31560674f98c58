"""Findings: what validation reports, with a location a user can act on."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import NamedTuple

from customs_batch.picklable import quick_pickle


class Severity(StrEnum):
    """How bad a finding is; ``--strict`` makes warnings fail too."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


JsonPath = tuple[str | int, ...]

OUT_OF_MEMORY = "file.out-of-memory"
"""The rule of a finding that the run ran out of memory loading a file (or reading its
spreadsheet): a fact about the run's resources, not about the files, which another run with
more memory does not meet; so it is never kept in the load cache."""


def column_letter(index: int) -> str:
    """The spreadsheet letter of a 1-based column: 1 -> A, 27 -> AA."""
    letters = ""
    while index > 0:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


_AS_CONSONANT = ("uni", "use", "usu", "uti", "eu", "one", "once")
"""Words that begin with a vowel letter but are said with a consonant (a unique, a user)."""


def a_or_an(word: str) -> str:
    """``word`` with the article it is said with: ``an integer``, ``a number``,
    ``an ExportCancellation``."""
    lower = word.lower()
    vowel = lower[:1] in tuple("aeiou") and not lower.startswith(_AS_CONSONANT)
    return f"{'an' if vowel else 'a'} {word}"


class CsvReading(NamedTuple):
    """How a CSV file is read as its ``forEach`` states it: ``encoding`` and ``delimiter``
    (None: detected)."""

    encoding: str | None
    delimiter: str | None


@quick_pickle
@dataclass(frozen=True, slots=True)
class Location:
    """Where a finding points.

    ``line`` and ``column`` are 1-based (0 when unknown). ``path`` is the JSON path of the
    value inside its document (``("spec", "Principal", "eoriNo")``). For a value that came
    from a spreadsheet row, ``sheet``, ``row``, :attr:`column_number` and ``column_name``
    name the cell; in a CSV file ``line`` and ``column`` are where the cell is in the text
    (``cell_column`` is then its column number), in a workbook its row and column number.
    """

    file: str
    line: int = 0
    column: int = 0
    path: JsonPath = ()
    sheet: str | None = None
    row: int | None = None
    column_name: str | None = None
    used_at: Location | None = None
    """For a value a template copied from the document's ``values`` (``{{ values.office }}``):
    the place in the template that used it; the location itself is then the value in the
    manifest, where it is fixed."""
    cell_column: int | None = None
    """For a CSV file's cell: its 1-based column number (0: the whole row), ``column`` being
    its character column in the text; None where ``column`` is the column number."""
    reading: CsvReading | None = field(default=None, compare=False)
    """For a CSV file's cell or row: the ``encoding`` and ``delimiter`` its ``forEach``
    states (a copy of the file reads it so); None: detected, as the reader does."""

    @property
    def column_number(self) -> int:
        """For a spreadsheet cell: its 1-based column number (0 for a whole row)."""
        return self.column if self.cell_column is None else self.cell_column

    def cell(self) -> str | None:
        """``sheet 'Movements', row 12, column E 'Gross weight'`` for a spreadsheet cell or
        row (``column`` is then the 1-based column number); None for a place in a text file."""
        if self.sheet is None:
            return None
        text = f"sheet {self.sheet!r}, row {self.row}"
        if self.column_number >= 1:
            text += f", column {column_letter(self.column_number)}"
            if self.column_name:
                text += f" {self.column_name!r}"
        elif self.column_name:
            text += f", column {self.column_name!r}"
        return text

    def used_at_text(self) -> str | None:
        """``used by the template at templates/t1-road.yaml.j2:21:21``, or None."""
        used = self.used_at
        if used is None:
            return None
        where = used.file
        if used.line >= 1:
            where += f":{used.line}"
            if used.column >= 1:
                where += f":{used.column}"
        return f"used by the template at {where}"

    def json_path(self) -> str:
        """The path in JSONPath form: ``$.spec.DeclarationItems[0].grossMass``."""
        out = "$"
        for part in self.path:
            out += f"[{part}]" if isinstance(part, int) else f".{part}"
        return out


@quick_pickle
@dataclass(frozen=True, slots=True)
class Suppression:
    """Why a finding is not counted: the reason given, and where it was given (``file:line``).

    ``in_source`` is true for a document's own ``customs-batch/suppress`` annotation, false
    for an entry of ``suppress:`` in ``customs-batch.yaml``."""

    reason: str
    where: str
    in_source: bool


@quick_pickle
@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found in the input: rule id, severity, message, location and hint."""

    rule: str
    severity: Severity
    message: str
    location: Location
    hint: str = ""
    document: str | None = field(default=None, compare=False)
    """The address (``Kind/name``) of the document the finding belongs to, when known."""
    suppression: Suppression | None = field(default=None, compare=False)
    """Set on a finding a suppression with a reason silenced (reported apart, never failing)."""
    rule_at: Location | None = field(default=None, compare=False)
    """For a finding of one of the team's policies (its own id, or ``policy.evaluation-error``):
    where that policy is written, its file and the line of its ``id``."""
    sensitive: bool = field(default=False, compare=False)
    """Set on a finding about a sensitive value (a guarantee's access code: a field the
    schemas mark ``x-sensitive``): its message does not quote the value, and no report shows
    the source line that holds it. Whoever makes such a finding may write its message without
    the value and set this; else it is set here (see :meth:`__post_init__`)."""
    signal: str | None = field(default=None, compare=False)
    """A mark that a later step of the run acts on (e.g.
    :data:`customs_batch.manifest.NO_ROW_IN_RANGE`), so that it never reads the message:
    the words can change, the signal stays. Never shown."""

    def __post_init__(self) -> None:
        # The one place every finding passes, whoever makes it (a schema check, a cell, a
        # template, a rule, a policy): a message about a sensitive value could quote it, and
        # would then be in every report and in the load cache. Cheap: one set look-up for
        # nearly every path.
        if self.sensitive or (_NAMES or _sensitive_names()).isdisjoint(self.location.path):
            return
        if at_sensitive_value(self.location.path):
            object.__setattr__(self, "message", _withheld_message(self))
            object.__setattr__(self, "sensitive", True)


_NAMES: frozenset[str] = frozenset()
"""The names of the sensitive fields (``accessCode``), once read from the schemas."""


def _sensitive_names() -> frozenset[str]:
    global _NAMES
    from customs_batch.sensitive import sensitive_names  # here: findings.py stays light

    _NAMES = sensitive_names()
    return _NAMES


NOT_SHOWN = "the value is not shown, being sensitive"
"""What a finding about a sensitive value says in place of the value."""


def at_sensitive_value(path: JsonPath) -> bool:
    """Whether a finding at ``path`` (``("spec", "DeclarationGuarantees", 0, "accessCode")``)
    is about a sensitive value, or one inside it."""
    if len(path) < 2:
        return False
    from customs_batch.sensitive import covers  # here: findings.py stays light at import

    return covers(path[1:] if path[0] == "spec" else path)


def withheld(finding: Finding) -> Finding:
    """``finding`` marked as about a sensitive value, its message saying only where and
    which check failed (for a finding that could quote one, found out after it was made)."""
    return replace(finding, message=_withheld_message(finding), sensitive=True)


def _withheld_message(finding: Finding) -> str:
    """What a finding about a sensitive value says when its maker quoted no message without
    the value: where, and which check failed."""
    location = finding.location
    if location.column_name and not at_sensitive_value(location.path):
        column = f"column {location.column_name!r}"
        return f"{column}: the cell fails the check {finding.rule}; {NOT_SHOWN}"
    path = location.path
    steps = path[1:] if path[:1] == ("spec",) else path
    field_text = ""
    for step in steps:
        field_text += f"[{step}]" if isinstance(step, int) else (f".{step}" if field_text else step)
    return f"{field_text}: the value fails the check {finding.rule}; {NOT_SHOWN}"
