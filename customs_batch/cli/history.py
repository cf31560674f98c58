"""``customs-batch history [ADDR]`` and ``history verify``: what apply sent, and its proof."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable

import click

from customs_batch.cli._choices import Given
from customs_batch.cli._files import format_option
from customs_batch.cli._paths import parse_address
from customs_batch.cli._service import env_option
from customs_batch.commands import Inputs
from customs_batch.commands.history import (
    HistoryOptions,
    HistoryRow,
    parse_since,
    read_history,
    verify_history,
)
from customs_batch.errors import ExitCode, UsageError
from customs_batch.escaping import csv_text, json_document, printable
from customs_batch.formats import VERSION_KEY, Formats
from customs_batch.state.history import Verification

HISTORY_JSON_VERSION = 1
VERIFY = "verify"

HISTORY_FORMATS: Formats[Callable[[list[HistoryRow]], str]] = Formats(
    "history", ("text", "json", "csv")
)
"""``history --format``: a line per request, a JSON document, or CSV with a header."""


def _who(row: HistoryRow) -> str:
    operator = row.operator
    who = f"{operator.get('user', '?')}@{operator.get('host', '?')}"
    ci = operator.get("ci")
    if isinstance(ci, dict):
        run = ci.get("url") or f"run {ci.get('runId', '')}"
        actor = f" by {ci['actor']}" if ci.get("actor") else ""
        who += f" ({ci.get('system', 'ci')} {run}{actor})"
    return who


def _ids(row: HistoryRow) -> str:
    words = [f"{k}={v}" for k, v in (row.ids or {}).items()]
    if row.mrn:
        words.append(f"mrn={row.mrn}")
    return " ".join(words)


@HISTORY_FORMATS.register("text")
def _text(rows: list[HistoryRow]) -> str:
    lines = []
    for row in rows:
        what = row.operation if row.event in ("request", "answer") else row.event
        if row.moved_from:
            what += f" from {row.moved_from}"
        parts = [row.time, row.address, what, str(row.status), _ids(row)]
        parts += [f"by {_who(row)}", f"commit {row.commit or '-'}", f"run {row.run}"]
        if row.failure:
            parts.append(row.failure)
        # Fields of a file anyone with the folder may edit: one line each, no escape
        # sequence reaches the terminal.
        lines.append(printable("  ".join(part for part in parts if part)))
    return "".join(f"{line}\n" for line in lines)


@HISTORY_FORMATS.register("json")
def _json(rows: list[HistoryRow]) -> str:
    body = {VERSION_KEY: HISTORY_JSON_VERSION, "entries": [row.to_json() for row in rows]}
    return json_document(json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False)) + "\n"


CSV_COLUMNS = [
    "seq",
    "time",
    "run",
    "user",
    "host",
    "ci_system",
    "ci_run",
    "ci_url",
    "commit",
    "address",
    "operation",
    "event",
    "idempotency_key",
    "status",
    "answered_at",
    "method",
    "path",
    "body_digest",
    "ids",
    "mrn",
    "errors",
    "failure",
    "moved_from",
]


def _csv_field(value: object) -> object:
    """A number as it is; any other value (hand-edited, it may be anything) as text a
    spreadsheet program never runs as a formula."""
    if value is None:
        return ""
    return value if isinstance(value, int | float) else csv_text(str(value))


@HISTORY_FORMATS.register("csv")
def _csv(rows: list[HistoryRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        ci = row.operator.get("ci") or {}
        last = row.requests[-1] if row.requests else {}
        fields: list[object] = [
            row.seq,
            row.time,
            row.run,
            row.operator.get("user", ""),
            row.operator.get("host", ""),
            ci.get("system", ""),
            ci.get("runId", ""),
            ci.get("url", ""),
            row.commit,
            row.address,
            row.operation,
            row.event,
            row.idempotency_key or "",
            row.status,
            row.answered_at or "",
            last.get("method") or "",
            last.get("path") or "",
            # An entry written before bodies were digested under a key holds bodySha256.
            last.get("bodyDigest") or last.get("bodySha256") or "",
            " ".join(f"{k}={v}" for k, v in (row.ids or {}).items()),
            row.mrn or "",
            "" if row.errors is None else json.dumps(row.errors, sort_keys=True),
            row.failure or "",
            row.moved_from or "",
        ]
        # Text is never a formula when the file is opened in a spreadsheet program.
        writer.writerow([_csv_field(field) for field in fields])
    return out.getvalue()


@click.command()
@click.argument("address", required=False, metavar="[ADDR|verify]")
@env_option
@click.option(
    "--since",
    metavar="DATE",
    type=Given("a date, like 2026-11-25"),
    help="Only what was sent at or after DATE (2026-11-25, or 2026-11-25T10:00:00Z).",
)
@format_option(
    HISTORY_FORMATS,
    'text: a line per request; json: {"formatVersion": 1, "entries": [...]}; csv: a row per '
    "request, with a header.",
)
def history(address: str | None, env_name: str | None, since: str | None, format_name: str) -> int:
    """Show what apply sent to an environment, or prove its history unbroken (`verify`).

    Each request apply sent (and each record moved or dropped) is kept for good in the
    environment's history: when, which run, who (user, host, CI run), from which commit of
    the manifests, the address, the operation, the Idempotency-Key, a digest of the exact
    body sent keyed by the API key (an HMAC-SHA256, never the body: a plain hash would give a
    guarantee's access code away), the answer's status, the IDs and MRN it gave, and the
    service's errors. A request whose answer was never recorded shows the status `unknown`.
    With ADDR, only that document's.

    `history verify` walks the hash chain of every entry and exits 1, naming the first
    broken entry, when one was changed, removed or reordered.

    \b
    Examples:
      customs-batch history --env production
      customs-batch history DepartureDeclaration/dep-ham-0001 --since 2026-11-01
      customs-batch history --format csv > history.csv
      customs-batch history verify --env production
    """
    inputs = Inputs(environment=env_name)
    if address == VERIFY:
        if since is not None:
            raise UsageError("history verify checks every entry: --since does not apply")
        return _verify(inputs, format_name)
    if address is not None:
        parse_address(address)  # a typo is a usage error, not an empty history
    options = HistoryOptions(inputs, address, parse_since(since) if since is not None else None)
    rows = read_history(options)
    click.echo(HISTORY_FORMATS.get(format_name)(rows), nl=False)
    if format_name == "text" and not rows:
        what = f" for {address}" if address else ""
        when = f" since {since}" if since else ""
        said = "holds nothing" if not when else "holds no entry"
        click.echo(f"The history {said}{what}{when}.", err=True)
    return int(ExitCode.OK)


def _verify(inputs: Inputs, format_name: str) -> int:
    if format_name == "csv":
        raise UsageError("history verify prints text or json", hint="use --format json")
    result = verify_history(inputs)
    if format_name == "json":
        click.echo(json.dumps(_verification_json(result), indent=2, sort_keys=True))
    elif result.ok:
        click.echo(
            f"The history is unbroken: {result.entries} entries"
            + (
                f", the last (seq {result.last_seq}) with hash {result.last_hash}."
                if result.entries
                else "."
            )
        )
    else:
        click.echo(
            f"error: the history is broken at {result.broken_at}: {result.reason}.\n"
            f"  The {result.entries} entries before it are unbroken"
            + (
                f" (the last: seq {result.last_seq}, hash {result.last_hash})."
                if result.entries
                else "."
            ),
            err=True,
        )
    return int(ExitCode.OK if result.ok else ExitCode.FINDINGS)


def _verification_json(result: Verification) -> dict[str, object]:
    return {
        VERSION_KEY: HISTORY_JSON_VERSION,
        "ok": result.ok,
        "entries": result.entries,
        "lastSeq": result.last_seq,
        "lastHash": result.last_hash,
        "brokenAt": result.broken_at,
        "reason": result.reason or None,
    }
