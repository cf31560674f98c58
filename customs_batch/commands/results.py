"""``results`` as a function: where every spreadsheet row stands after apply, and (with
``annotate``) the results written into a copy of each spreadsheet."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from customs_batch.commands._inputs import Inputs
from customs_batch.environments import load_project
from customs_batch.execution.results import ResultStatus, RowResult, row_results
from customs_batch.findings import Severity
from customs_batch.planning.inputs import load_inputs
from customs_batch.state.lock import in_flight_of

if TYPE_CHECKING:
    from customs_batch.reports.results_workbook import ResultsFile


@dataclass(frozen=True)
class ResultsOptions:
    """What ``results`` reads: the manifests, the selection and the environment of
    ``inputs`` (as ``plan`` and ``apply`` take them); ``annotate``: the folder to write
    the results copies of the spreadsheets in (None: none are written)."""

    inputs: Inputs = field(default_factory=Inputs)
    annotate: Path | None = None
    option: str = "--annotate"
    """The command's option that gave ``annotate``, for the messages about it."""
    go_on_words: Callable[[str], str] | None = None
    """How the copies write a command they give to go on (`` `customs-batch plan` ``): the
    command line adds this run's ``--env`` to it, as its own text does; None: as given."""


@dataclass(frozen=True)
class ResultsResult:
    """Every row of the spreadsheets the manifests expand over, by file, sheet and row;
    the copies written; and how many errors the manifests have outside any row (those
    stop the rows of a whole sheet: ``validate`` shows them)."""

    environment: str
    rows: tuple[RowResult, ...]
    written: tuple[ResultsFile, ...] = ()
    manifest_errors: int = 0

    def counts(self) -> dict[ResultStatus, int]:
        """Rows per status, in the order of :class:`ResultStatus` (worst first); the
        copies' counts when copies were written (they add rows the manifests made nothing
        of)."""
        counted: dict[ResultStatus, int] = {}
        if self.written:
            for file in self.written:
                for status, number in file.counts.items():
                    counted[status] = counted.get(status, 0) + number
        else:
            for row in self.rows:
                counted[row.status] = counted.get(row.status, 0) + 1
        return {status: counted[status] for status in ResultStatus if status in counted}


def collect_results(options: ResultsOptions) -> ResultsResult:
    """Read the manifests (errors included: a row with errors says so), the selection and
    the environment's state (no network; run ``refresh`` first for the latest status), and
    join them row by row; with ``annotate``, write the copies."""
    inputs = options.inputs
    selection = inputs.selection()
    environment = inputs.chosen_environment()
    paths = list(inputs.paths) or load_project().manifest_paths()
    loaded = load_inputs(paths, mrn_check_digit=inputs.mrn_check_digit, cache=inputs.cache)
    selected = None
    if not selection.everything:
        selected = [doc.address for doc in selection.apply(loaded.documents)]
    backend = inputs.backend(environment)
    state = backend.read()
    findings = loaded.validation.findings
    in_flight = in_flight_of(backend.running_holder())
    rows = tuple(row_results(loaded.documents, findings, state, selected, in_flight))
    outside = sum(
        1
        for finding in findings
        if finding.severity is Severity.ERROR
        and (finding.location.sheet is None or not finding.location.row)
    )
    written: tuple[ResultsFile, ...] = ()
    if options.annotate is not None:
        # openpyxl: only for a run that writes the copies.
        from customs_batch.reports.results_workbook import write_results_workbooks

        copied = rows if options.go_on_words is None else _worded(rows, options.go_on_words)
        written = tuple(write_results_workbooks(copied, options.annotate, option=options.option))
    return ResultsResult(environment.name, rows, written, outside)


def _worded(rows: tuple[RowResult, ...], words: Callable[[str], str]) -> tuple[RowResult, ...]:
    """``rows`` with each of their errors as ``words`` writes it."""
    return tuple(
        replace(
            row,
            problems=tuple(words(problem) for problem in row.problems),
            documents=tuple(
                replace(doc, errors=tuple(words(error) for error in doc.errors))
                for doc in row.documents
            ),
        )
        for row in rows
    )
