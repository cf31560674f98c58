"""``customs-batch results``: where every spreadsheet row stands after apply, in the terminal
or written back into a copy of each spreadsheet (``--annotate DIR``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from customs_batch.cli._cache import no_cache_option
from customs_batch.cli._command_line import with_env
from customs_batch.cli._files import format_option, output_option, write_output
from customs_batch.cli._inputs import (
    MRN_CHECK_LEVELS,
    allow_empty_state_option,
    mrn_check_digit_option,
    selection_options,
)
from customs_batch.cli._once import OnceOption
from customs_batch.cli._paths import FolderToWrite, ManifestPath
from customs_batch.cli._service import env_option
from customs_batch.commands import Inputs
from customs_batch.commands.results import ResultsOptions, ResultsResult, collect_results
from customs_batch.errors import ExitCode
from customs_batch.escaping import printable
from customs_batch.execution.results import Outcome, RowResult
from customs_batch.findings import Location
from customs_batch.formats import VERSION_KEY, Formats
from customs_batch.html_report import Column, Row, html_report
from customs_batch.kinds.model import ServiceId

if TYPE_CHECKING:
    from customs_batch.reports.results_workbook import ResultsFile

RESULTS_JSON_VERSION = 1

RESULTS_FORMATS: Formats[Callable[[ResultsResult], Iterator[str]]] = Formats(
    "results", ("text", "json", "html")
)
"""``results --format``: text for people, json for tools, html for a page to share. Each
gives the report in pieces, written as they come: text and json a piece for every
:data:`ROWS_A_PIECE` rows (the whole report of 100,000 rows was held twice over, as lines
and joined), html whole (its page is built whole)."""

ROWS_A_PIECE = 256
"""Rows of a text or json piece: few enough writes, and a piece small whatever the rows."""

annotate_option = click.option(
    "--annotate",
    "annotate_dir",
    cls=OnceOption,
    noun="folder",
    type=FolderToWrite(),
    metavar="DIR",
    help="Write into DIR an XLSX copy of every spreadsheet the manifests expand over, with "
    "the result columns after each row, coloured, and a first Summary sheet (0600; the "
    "originals are never changed).",
)


@RESULTS_FORMATS.register("text")
def _results_text(result: ResultsResult) -> Iterator[str]:
    # Each piece ends a line: a command a line quotes is never cut (see with_env).
    lines: list[str] = []
    group = None
    for number, row in enumerate(result.rows, 1):
        if (row.file, row.sheet) != group:
            group = (row.file, row.sheet)
            lines.append(f"{printable(row.file)}, sheet {printable(row.sheet)!r}")
        lines += _row_lines(row)
        if number % ROWS_A_PIECE == 0:
            yield "".join(f"{line}\n" for line in lines)
            lines.clear()
    if lines:
        yield "".join(f"{line}\n" for line in lines)


def _row_lines(row: RowResult) -> list[str]:
    if not row.documents:
        first = [f"  row {row.row:<5} {row.status.value:<14} (no document)"]
    else:
        first = []
        for index, doc in enumerate(row.documents):
            number = f"row {row.row:<5}" if index == 0 else " " * 9
            ids = "  ".join(f"{what.value} {value}" for what, value in doc.ids.items())
            words = [doc.status.value.ljust(14), doc.address, ids, doc.service_state or ""]
            if doc.at:
                words.append(doc.at)
            text = "  ".join(word for word in words if word)
            first.append(f"  {number} {printable(text)}")
    return first + [f"{' ' * 12}{printable(error)}" for error in row.errors]


_ROWS_HERE = "\0rows\0"
"""Where the rows go in the json object written around them (no text of a row is this)."""


@RESULTS_FORMATS.register("json")
def _results_json(result: ResultsResult) -> Iterator[str]:
    # The object is json.dumps(..., indent=2, sort_keys=True) of it whole, written with its
    # rows one after another: the text around them first, each row indented as that would.
    body = {
        VERSION_KEY: RESULTS_JSON_VERSION,
        "environment": result.environment,
        "rows": _ROWS_HERE,
        "summary": {status.value: number for status, number in result.counts().items()},
        "manifestErrors": result.manifest_errors,
        "written": [_written_json(file) for file in result.written],
    }
    before, after = json.dumps(body, indent=2, sort_keys=True).split(json.dumps(_ROWS_HERE))
    if not result.rows:
        yield f"{before}[]{after}\n"
        return
    pieces = [f"{before}["]
    for number, row in enumerate(result.rows, 1):
        text = json.dumps(row.to_json(), indent=2, sort_keys=True).replace("\n", "\n    ")
        pieces.append(f"{',' if number > 1 else ''}\n    {text}")
        if number % ROWS_A_PIECE == 0:
            yield "".join(pieces)
            pieces.clear()
    pieces.append(f"\n  ]{after}\n")
    yield "".join(pieces)


_HTML_COLUMNS = (
    Column("result"),
    Column("document"),
    Column("declaration ID"),
    Column("MRN"),
    Column("movement ID"),
    Column("other ID"),
    Column("at the service"),
    Column("service's errors"),
    Column("recorded at"),
)
_ID_COLUMNS = (ServiceId.DECLARATION, ServiceId.MRN, ServiceId.MOVEMENT, ServiceId.OTHER)
_TONES = {Outcome.FAILED: "refused", Outcome.WAITING: "pending", Outcome.DONE: "done"}


@RESULTS_FORMATS.register("html")
def _results_html(result: ResultsResult) -> Iterator[str]:
    yield _results_page(result)


def _results_page(result: ResultsResult) -> str:
    counts = ", ".join(f"{number} {status.value}" for status, number in result.counts().items())
    summary = f"{len(result.rows)} spreadsheet row(s): {counts or 'none'}."
    if result.manifest_errors:
        summary += (
            f" The manifests have {result.manifest_errors} error(s) outside any row "
            "(`customs-batch validate` lists them)."
        )
    return html_report(
        f"customs-batch results of {result.environment}",
        _HTML_COLUMNS,
        [_html_row(row) for row in result.rows],
        summary=with_env(summary),
    )


def _html_row(row: RowResult) -> Row:
    """A row: its status, its documents and their IDs (a line each), where it is; the
    commands its errors give to go on name this run's --env, as the text's do."""
    cells = (
        row.status.value,
        "\n".join(doc.address for doc in row.documents) or "(no document)",
        *("\n".join(str(value) for value in row.ids(what)) for what in _ID_COLUMNS),
        "\n".join(doc.service_state or "" for doc in row.documents).strip(),
        "\n".join(with_env(error) for error in row.errors),
        row.at,
    )
    location = Location(row.file, row.row, sheet=row.sheet, row=row.row)
    return Row(cells, location=location, tone=_TONES.get(row.status.outcome, "neutral"))


def _written_json(file: ResultsFile) -> dict[str, object]:
    return {
        "source": file.source,
        "path": str(file.written),
        "rows": {status.value: number for status, number in file.counts.items()},
    }


def report_written(written: tuple[ResultsFile, ...]) -> None:
    """Say on stderr where each results copy went and what it counts."""
    for file in written:
        counts = ", ".join(f"{number} {status.value}" for status, number in file.counts.items())
        click.echo(f"wrote {printable(str(file.written))} ({counts})", err=True)


@click.command()
@click.argument("paths", nargs=-1, type=ManifestPath())
@env_option
@format_option(
    RESULTS_FORMATS,
    "text: rows by file and sheet; json: a stable object for tools; html: a page with a "
    "sortable, filterable table that opens in any browser.",
)
@output_option(RESULTS_FORMATS, "results")
@annotate_option
@selection_options
@mrn_check_digit_option
@allow_empty_state_option
@no_cache_option
def results(
    paths: tuple[Path, ...],
    env_name: str | None,
    format_name: str,
    output: Path | None,
    annotate_dir: Path | None,
    labels: tuple[str, ...],
    targets: tuple[str, ...],
    excluded: tuple[str, ...],
    mrn_check_digit: str,
    no_cache: bool,
    allow_empty_state: bool,
) -> int:
    """Show where every spreadsheet row stands after apply, or write it into the workbook.

    For each row of the spreadsheets the manifests expand over with forEach (PATHS, default:
    the manifests of customs-batch.yaml): its document, the IDs the service gave (declaration
    ID, MRN where known, movement ID), its status from the state, the service's errors and
    when the last outcome was recorded. A row says whether it was done, is pending at the
    service, was rejected, gave no document (a row with errors), was skipped because a
    document it depends on failed, or was not applied yet. The state is read as last known
    (no network): run `customs-batch refresh` first for the latest status. The exit code is
    0 whatever the rows say.

    With --annotate DIR, every spreadsheet is copied to DIR as XLSX (a CSV file too:
    data/departures.csv becomes DIR/data/departures.csv.xlsx) with result columns after each
    row, filled red for a failed row, yellow for one waiting and green for one done, the
    header row frozen, and a first sheet Summary counting the rows per status with a link
    to each row. The copies are readable by you only; a column that gave a guarantee access
    code is left empty.

    \b
    Examples:
      customs-batch results --env sandbox
      customs-batch results manifests/ --annotate results/
      customs-batch results --format json -l lane=spreadsheet
      customs-batch results --format html -o results.html
    """
    inputs = Inputs(
        paths,
        labels,
        targets,
        env_name,
        allow_empty_state,
        excluded,
        cache=not no_cache,
        mrn_check_digit=MRN_CHECK_LEVELS[mrn_check_digit],
    )
    result = collect_results(ResultsOptions(inputs, annotate_dir, go_on_words=with_env))
    rendered = RESULTS_FORMATS.get(format_name)(result)
    if format_name in ("text", "json"):  # the commands it gives name this run's --env
        rendered = map(with_env, rendered)
    if output is None:
        for piece in rendered:
            click.echo(piece, nl=False)
    else:
        write_output(output, rendered, what="results")
    report_written(result.written)
    if format_name == "text" and not result.rows:
        click.echo("No spreadsheet rows in the manifests.", err=True)
    if result.manifest_errors:
        click.echo(
            f"warning: the manifests have {result.manifest_errors} error(s) outside any "
            "spreadsheet row; `customs-batch validate` lists them",
            err=True,
        )
    return int(ExitCode.OK)
