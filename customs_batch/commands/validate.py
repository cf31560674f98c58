"""``validate`` as functions: check manifests offline; annotate the spreadsheet inputs
that have findings (after the report is out, so a refused folder loses no report).

Light at import (only the standard library and the project's light modules): a plain
``validate one.yaml`` must not pay for what it does not use (docs/benchmarks.md, "CLI
start-up"); the loading and checking code is imported when the command runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from customs_batch.errors import ExitCode
from customs_batch.findings import Severity

if TYPE_CHECKING:
    from customs_batch.manifest import RowRange
    from customs_batch.validation.annotate import AnnotatedFile
    from customs_batch.validation.batch import ValidationResult


@dataclass(frozen=True)
class ValidateOptions:
    """What ``validate`` was asked to check, and how.

    ``paths``: manifest files or folders (empty: the ``manifests`` of customs-batch.yaml,
    else the current folder). ``mrn_check_digit``, ``hs_codes``, ``unlocodes``: the
    severity of a wrong MRN check character, of an unknown HS subheading and of a UN/LOCODE
    missing from the code list (None: not reported). ``graph``: also work out the
    documents' dependency graph (a format that draws it).
    """

    paths: tuple[Path, ...] = ()
    strict: bool = False
    mrn_check_digit: Severity | None = Severity.ERROR
    hs_codes: Severity | None = Severity.WARNING
    unlocodes: Severity | None = Severity.WARNING
    jobs: int | None = None
    rows: RowRange | None = None
    cache: bool = True
    graph: bool = False


@dataclass(frozen=True)
class ValidateResult:
    """The findings, and the exit code they make."""

    validation: ValidationResult
    strict: bool

    @property
    def exit_code(self) -> ExitCode:
        """1 when there are errors (or warnings, with ``strict``), else 0."""
        return ExitCode.FINDINGS if self.validation.failed(strict=self.strict) else ExitCode.OK


def validate_manifests(options: ValidateOptions) -> ValidateResult:
    """Load and check every document under ``options.paths``."""
    from customs_batch.validation.batch import validate_paths

    paths = options.paths
    if not paths:  # the project's settings (and what they import) only when they say where
        from customs_batch.environments import load_project

        paths = tuple(load_project().manifest_paths())
    result = validate_paths(
        list(paths),
        jobs=options.jobs,
        mrn_check_digit=options.mrn_check_digit,
        rows=options.rows,
        hs_codes=options.hs_codes,
        unlocodes=options.unlocodes,
        cache=options.cache,
        graph=options.graph,
    )
    return ValidateResult(result, options.strict)


def annotate_inputs(result: ValidateResult, folder: Path) -> tuple[AnnotatedFile, ...]:
    """``validate --annotate DIR``: an annotated XLSX copy, under ``folder``, of every
    spreadsheet input with findings (the inputs are not changed); what was written."""
    from customs_batch.validation.annotate import annotate_spreadsheets

    validation = result.validation
    return tuple(annotate_spreadsheets(validation.findings, folder, validation.sensitive_columns))
