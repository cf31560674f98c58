"""``customs-batch validate``: check manifests offline and report the findings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from customs_batch.cli._cache import no_cache_option
from customs_batch.cli._choices import CutChoice
from customs_batch.cli._files import (
    append_step_summary,
    format_option,
    output_option,
    write_output,
)
from customs_batch.cli._inputs import MRN_CHECK_LEVELS, mrn_check_digit_option
from customs_batch.cli._once import OnceOption
from customs_batch.cli._paths import FolderToWrite, ManifestPath
from customs_batch.cli._rows import rows_option
from customs_batch.commands.validate import ValidateOptions, annotate_inputs, validate_manifests
from customs_batch.escaping import printable
from customs_batch.findings import Severity
from customs_batch.manifest import RowRange
from customs_batch.validation.reporters import (
    FINDINGS_FORMATS,
    ReportOptions,
    make_reporter,
    summary_line,
)

if TYPE_CHECKING:
    from customs_batch.validation.annotate import AnnotatedFile

# A commodity code whose HS subheading is unknown may be newer than the shipped edition.
HS_CODE_LEVELS: dict[str, Severity | None] = {"warning": Severity.WARNING, "off": None}
# Likewise a UN/LOCODE missing from the shipped code list.
UNLOCODE_LEVELS: dict[str, Severity | None] = {"warning": Severity.WARNING, "off": None}


@click.command()
@click.argument("paths", nargs=-1, type=ManifestPath(readable=True))
@format_option(
    FINDINGS_FORMATS,
    "Report format: text for people, html for a page that opens in any browser, the others "
    "for CI and tools.",
)
@click.option("--strict", is_flag=True, help="Warnings fail the run too.")
@mrn_check_digit_option
@click.option(
    "--hs-codes",
    type=CutChoice(list(HS_CODE_LEVELS)),
    default="warning",
    show_default=True,
    help="How a commodity code whose HS subheading does not exist (HS 2022) is reported.",
)
@click.option(
    "--unlocodes",
    type=CutChoice(list(UNLOCODE_LEVELS)),
    default="warning",
    show_default=True,
    help="How a UN/LOCODE missing from the UN/LOCODE code list (2023-1) is reported.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Processes that load files, at most four per CPU (default: one per CPU for big "
    "inputs, else 1).",
)
@output_option(
    FINDINGS_FORMATS,
    "report",
    "Write the report to FILE (readable by you only); the summary still goes to stderr.",
)
@click.option(
    "--annotate",
    "annotate_dir",
    cls=OnceOption,
    noun="folder",
    type=FolderToWrite(),
    default=None,
    metavar="DIR",
    help="Write to DIR an XLSX copy of every spreadsheet input with findings, each such "
    "cell highlighted and commented, and a first sheet listing them. The inputs are not changed.",
)
@rows_option
@no_cache_option
def validate(
    paths: tuple[Path, ...],
    format_name: str,
    strict: bool,
    mrn_check_digit: str,
    hs_codes: str,
    unlocodes: str,
    jobs: int | None,
    output: Path | None,
    annotate_dir: Path | None,
    rows: RowRange | None,
    no_cache: bool,
) -> int:
    """Validate manifests offline: YAML, envelope, templates, schemas, customs rules.

    PATHS are manifest files or folders (default: the manifests list of customs-batch.yaml,
    else the current folder). Exits 0 when clean, 1 when there are errors (or warnings, with
    --strict).

    \b
    Examples:
      customs-batch validate
      customs-batch validate manifests/ --strict
      customs-batch validate manifests/ --format github
      customs-batch validate manifests/ --format sarif -o validate.sarif
      customs-batch validate manifests/ --format html -o validate.html
      customs-batch validate manifests/ --annotate annotated/
    """
    done = validate_manifests(
        ValidateOptions(
            paths,
            strict=strict,
            mrn_check_digit=MRN_CHECK_LEVELS[mrn_check_digit],
            hs_codes=HS_CODE_LEVELS[hs_codes],
            unlocodes=UNLOCODE_LEVELS[unlocodes],
            jobs=jobs,
            rows=rows,
            cache=not no_cache,
            graph=FINDINGS_FORMATS.get(format_name).draws_graph,
        )
    )
    result = done.validation
    options = ReportOptions(strict=strict)
    report = make_reporter(format_name, options).pieces(result)
    if output is None:
        for piece in report:
            click.echo(piece, nl=False)
    else:
        write_output(output, report, what="report")
        click.echo(summary_line(result), err=True)
    append_step_summary(lambda: make_reporter("markdown", options).render(result))
    if annotate_dir is not None:
        _report_annotated(annotate_inputs(done, annotate_dir))
    return int(done.exit_code)


def _report_annotated(written: tuple[AnnotatedFile, ...]) -> None:
    for copy in written:
        noun = "finding" if copy.findings == 1 else "findings"
        # A newline in a file's or DIR's name starts no line: printed escaped, as init's.
        source, target = printable(str(copy.source)), printable(str(copy.written))
        click.echo(f"Annotated {source} ({copy.findings} {noun}): {target}", err=True)
    if not written:
        # (A spreadsheet that could not be read has findings, but no row to mark.)
        click.echo("No finding points at a row of a spreadsheet: nothing to annotate.", err=True)
