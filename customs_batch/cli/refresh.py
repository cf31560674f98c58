"""``customs-batch refresh`` and ``status``: what the service says now, what was last known."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from customs_batch.cli._command_line import with_env
from customs_batch.cli._files import format_option, output_option, write_output
from customs_batch.cli._inputs import allow_empty_state_option, lock_timeout_option
from customs_batch.cli._paths import ManifestPath
from customs_batch.cli._service import env_option, set_http_log, verbose_option
from customs_batch.commands.status import (
    RefreshOptions,
    StatusOptions,
    StatusResult,
    read_status,
    refresh_environment,
)
from customs_batch.errors import ExitCode
from customs_batch.escaping import printable
from customs_batch.execution.reconcile import StatusEntry, entry_lines
from customs_batch.execution.results import RowPlace
from customs_batch.findings import Location
from customs_batch.formats import VERSION_KEY, Formats
from customs_batch.html_report import Column, Row, html_report
from customs_batch.kinds.model import describe_error

STATUS_JSON_VERSION = 1

STATUS_FORMATS: Formats[Callable[[StatusResult], str]] = Formats("status", ("text", "json", "html"))
"""``status --format``: text for people, json for tools, html for a page to share."""


@STATUS_FORMATS.register("text")
def _status_text(result: StatusResult) -> str:
    # The service's words (an error, a status) as they came, its escapes escaped.
    return "".join(f"{printable(line)}\n" for line in _lines(result))


@STATUS_FORMATS.register("json")
def _status_json(result: StatusResult) -> str:
    body = {
        VERSION_KEY: STATUS_JSON_VERSION,
        "environment": result.environment,
        "declarations": [_entry_json(result, entry) for entry in result.entries],
        "summary": {
            "declarations": len(result.entries),
            "blocking": len(result.blocking),
            "pending": len(result.pending),
        },
    }
    return json.dumps(body, indent=2, sort_keys=True) + "\n"


def _entry_json(result: StatusResult, entry: StatusEntry) -> dict[str, Any]:
    """An entry with its spreadsheet row (``file``, ``sheet``, ``row``: null for a
    document written in a manifest); the commands its message gives name this run's --env,
    as the text's and the page's do (`with_env`)."""
    place = result.rows.get(entry.address)
    where = place.to_json() if place else {"file": None, "sheet": None, "row": None}
    return {**entry.to_json(), "message": with_env(entry.message), **where}


_STATUS_COLUMNS = (
    Column("address"),
    Column("status"),
    Column("ID"),
    Column("at the service"),
    Column("customs"),
    Column("errors", numeric=True),
    Column("service's errors and notes"),
)


@STATUS_FORMATS.register("html")
def _status_html(result: StatusResult) -> str:
    # The commands it gives to go on name this run's --env, as the text's do (`with_env`).
    summary = with_env(
        f"{_recorded_words(result.entries)}, "
        f"{len(result.blocking)} rejected, undone or needing a decision, "
        f"{len(result.pending)} not decided by customs yet (last known: "
        "`customs-batch refresh` reads the service)."
    )
    return html_report(
        f"customs-batch status of {result.environment}",
        _STATUS_COLUMNS,
        [_status_row(entry, result.rows.get(entry.address)) for entry in result.entries],
        summary=summary,
    )


def _recorded_words(entries: tuple[StatusEntry, ...]) -> str:
    """How many documents the page lists, and of which kinds (``3 recorded documents: 2
    DepartureDeclaration, 1 TransitPartyUpdate``), read from their addresses: every kind
    whose state at the service ``status`` follows, whatever kinds those are."""
    kinds = Counter(entry.address.partition("/")[0] for entry in entries)
    count = f"{len(entries)} recorded document{'' if len(entries) == 1 else 's'}"
    if not kinds:
        return count
    return f"{count} ({', '.join(f'{n} {kind}' for kind, n in sorted(kinds.items()))})"


def _status_row(entry: StatusEntry, place: RowPlace | None) -> Row:
    customs = (
        "rejected"
        if entry.rejected
        else "ended"
        if entry.ended
        else "undone"
        if entry.undone
        else "pending"
        if entry.pending
        else ""
    )
    notes = [describe_error(error) for error in entry.errors]
    if entry.message:
        notes.insert(0, with_env(entry.message))
    if entry.blocks or entry.lifecycle == "refused":
        tone = "refused"
    elif entry.pending:
        tone = "pending"
    else:
        tone = "done" if entry.lifecycle == "applied" else "neutral"
    return Row(
        (
            entry.address,
            entry.lifecycle,
            "" if entry.identifier is None else str(entry.identifier),
            entry.service_state or "",
            customs,
            str(len(entry.errors)),
            "\n".join(notes),
        ),
        location=None
        if place is None
        else Location(place.file, place.row, 0, (), place.sheet, place.row),
        tone=tone,
    )


def _lines(result: StatusResult) -> list[str]:
    """The entries of no spreadsheet as before; then a header per spreadsheet file and
    sheet, and each entry of it after its row number."""
    alone, groups = result.by_row()
    lines = [line for entry in alone for line in entry_lines(entry)]
    for (file, sheet), entries in groups.items():
        lines.append(f"{printable(file)}, sheet {printable(sheet)!r}:")
        for entry in entries:
            first, *rest = entry_lines(entry)
            number = f"row {result.rows[entry.address].row}"
            lines.append(f"  {number:<9} {first}")
            lines += [f"{' ' * 8}{line}" for line in rest]
    return lines


@click.command()
@env_option
@verbose_option
@lock_timeout_option
@allow_empty_state_option
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 1 while anything is rejected at the service, undone there (an export "
    "cancellation or a HAWB deactivation the next apply sends again), no longer found there "
    "or needs a decision, 2 when something changed at the service or a lost submission was "
    "taken back (the next apply submits it), 0 when nothing did.",
)
def refresh(
    env_name: str | None,
    verbose: bool,
    lock_timeout: float,
    allow_empty_state: bool,
    detailed_exitcode: bool,
) -> int:
    """Poll what the state knows and record what changed at the service.

    Departure declarations and party updates get their current status and errors; export
    declarations their status (a requested cancellation: customs' decision, once made);
    template groups that were changed elsewhere are recorded as
    the service holds them, so the next plan shows what the manifests would change back.
    Movements cannot be read back one by one: the API has no endpoint for it. A departure
    whose submission's outcome is unknown is looked for among the transit declarations
    created since: when none could be it, its record is dropped and the next plan submits
    it again; otherwise the ones that could be it are listed for `state adopt`. An object
    the service no longer holds is not changed in the state: the record notes when it was
    not found (status and plan say so) until you confirm it gone with `customs-batch
    state rm --gone ADDRESS` (the next apply then sends it again) or a refresh finds it.
    The same holds when the service holds another object at the recorded ID (a sandbox
    reset gave it again): the summary counts those apart from the ones no longer found.
    A refresh a failed read stops (exit 3: the service failing after the client's retries)
    keeps what it recorded before and prints it (stderr) before the error.

    \b
    Example:
      customs-batch refresh --env sandbox --detailed-exitcode
    """
    set_http_log(enabled=verbose)
    options = RefreshOptions(env_name, allow_empty_state, lock_timeout=lock_timeout)
    # The commands its lines give to go on name this run's --env (`with_env`).
    result = refresh_environment(options, notice=lambda text: click.echo(with_env(text), err=True))
    for lost in result.lost:
        click.echo(with_env(printable(lost)))
    for drift in result.changes:
        click.echo(with_env(printable(f"{drift.address}: {drift.message}")))
    for drift in result.missing:
        click.echo(with_env(printable(f"{drift.address}: {drift.message}")))
    missing = {drift.address for drift in result.missing}
    blocking = [entry for entry in result.status.blocking if entry.address not in missing]
    for entry in blocking:
        why = (
            "rejected at the service"
            if entry.rejected
            else "undone at the service (the next apply sends it again)"
            if entry.undone
            else "needs a decision"
        )
        click.echo(f"{entry.address}: {why}", err=True)
    for address in result.undone:
        click.echo(f"{address}: undone at the service (the next apply sends it again)", err=True)
    click.echo(
        f"Refreshed: {len(result.changes)} change(s) found, {len(result.not_found)} no longer "
        f"found at the service, {len(result.another_object)} with another object at the "
        f"recorded ID (a decision to make), {len(result.lost)} lost submission(s) looked for, "
        f"{len(blocking) + len(result.undone)} rejected, undone or needing a decision.",
        err=True,
    )
    return int(result.exit_code(detailed=detailed_exitcode))


@click.command()
@click.argument("paths", nargs=-1, type=ManifestPath())
@env_option
@format_option(
    STATUS_FORMATS,
    "text: a line per declaration; json: a stable object for tools; html: a page with a "
    "sortable, filterable table that opens in any browser.",
)
@output_option(
    STATUS_FORMATS,
    "status",
    "Write the status to FILE (readable by you only) instead of stdout.",
)
@allow_empty_state_option
def status(
    paths: tuple[Path, ...],
    env_name: str | None,
    format_name: str,
    output: Path | None,
    allow_empty_state: bool,
) -> int:
    """Show the declarations, party updates and cancellations of the state, last known status (no network).

    One marked rejected was refused at the service; one marked not-found was no longer found
    there by refresh (`customs-batch state rm --gone ADDRESS` once you confirm it gone); a
    cancellation marked pending has not
    been decided by customs yet; one marked undone was undone at the service (its
    declaration is not submitted there: the next apply sends it again); one marked in-flight was sent by an apply that still
    runs (it holds the state's lock) and has not recorded the answer yet. A party update
    shows its declaration's state: as the record of its departure holds it, where the state
    records that departure (its own updates and refresh change that record), else as its
    last answer or refresh gave it. Run `customs-batch refresh` first for the current status.
    Documents made from spreadsheet rows (forEach) are listed after the others, under a
    header per spreadsheet file and sheet, each after its row number; PATHS are the
    manifests read for it (default: the manifests of customs-batch.yaml, which may be
    missing). `--format json` gives
    `{"formatVersion": 1, "declarations": [...], "summary": {...}}`, each declaration with
    its lifecycle, ID, state at the service, whether customs rejected it or has not decided
    yet, whether what it did was undone there (`undone`: the next apply sends it again;
    counted in `summary.blocking`), the service's errors, and its spreadsheet file, sheet and row (null for a
    document written in a manifest). `customs-batch results` shows every row.

    \b
    Examples:
      customs-batch status --env sandbox
      customs-batch status --format json
      customs-batch status --format html -o status.html
    """
    result = read_status(StatusOptions(env_name, allow_empty_state, paths))
    rendered = STATUS_FORMATS.get(format_name)(result)
    if format_name == "text":  # the commands it gives name this run's --env
        rendered = with_env(rendered)
    if output is None:
        click.echo(rendered, nl=False)
    else:
        write_output(output, rendered, what="status")
    if format_name == "text" and not result.entries:
        click.echo("No declarations in the state.", err=True)
    return int(ExitCode.OK)
