"""Printing records as a table, JSON, JSON Lines, CSV or YAML: the ``records`` formats.

Records are the service's objects exactly as sent (``Record.raw``) or a command's own
settings (``env``): JSON, JSON Lines and YAML print them unchanged, in their field order, so
scripts see what the service said. CSV columns are every field in order of first
appearance; nested values are JSON. Tables (rich) show the chosen columns and fold cells to
fit the terminal; written to a pipe or a file, a row stays on one line.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from customs_batch.cli._files import write_output
from customs_batch.escaping import csv_text, json_document, printable, yaml_documents
from customs_batch.formats import VERSION_KEY, Formats

JsonObject = Mapping[str, Any]


@dataclass(frozen=True)
class Column:
    """A table column: its header and the record field it shows."""

    header: str
    field: str


@dataclass(frozen=True)
class Records:
    """What a records format is given.

    ``rows`` are the records; ``single`` says the command shows one record (a table of
    fields and values, a JSON object rather than an array); ``columns`` are a list's table
    columns; ``footer`` (e.g. "page 1 of 3: 20 of 57 records") goes under a table only, so
    the formats for scripts stay pure data. ``version``: the format version of a command's
    own records (``env``), which JSON, JSON Lines and YAML carry under ``formatVersion``: a
    single record beside its fields, a list as ``{"formatVersion": N, <key>: [...]}``, each
    JSON line beside its fields; None for the service's objects, printed as they are.
    """

    rows: Sequence[JsonObject]
    columns: Sequence[Column] = ()
    single: bool = False
    footer: str | None = None
    version: int | None = None
    key: str = "records"


RecordWriter = Callable[[Records, TextIO], None]

RECORD_FORMATS: Formats[RecordWriter] = Formats(
    "records", ("table", "json", "jsonl", "csv", "yaml")
)
"""``get`` and ``env`` ``--format``: a table for people; json, jsonl, csv and yaml for
scripts."""


def cell(value: Any) -> str:
    """A value as table or CSV text: nested values as compact JSON, None as empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def write_records(records: Records, format_name: str, out: TextIO) -> None:
    """Write ``records`` to ``out`` in format ``format_name``."""
    RECORD_FORMATS.get(format_name)(records, out)


def show_records(records: Records, format_name: str, output: Path | None = None) -> None:
    """Print ``records`` in format ``format_name``, to ``output`` (a private file) when given,
    else to standard output."""
    if output is None:
        write_records(records, format_name, sys.stdout)
        return
    buffer = io.StringIO()
    write_records(records, format_name, buffer)
    write_output(output, buffer.getvalue(), what="records")


def _plain(records: Records) -> Any:
    rows = [dict(r) for r in records.rows]
    plain = rows[0] if records.single and rows else rows
    if records.version is None:
        return plain
    if isinstance(plain, dict):
        return {VERSION_KEY: records.version, **plain}
    return {VERSION_KEY: records.version, records.key: plain}


@RECORD_FORMATS.register("json")
def _json(records: Records, out: TextIO) -> None:
    # The service's JSON may escape a lone surrogate (\udcff): kept escaped, valid UTF-8.
    out.write(json_document(json.dumps(_plain(records), indent=2, ensure_ascii=False)) + "\n")


@RECORD_FORMATS.register("jsonl")
def _jsonl(records: Records, out: TextIO) -> None:
    version = {} if records.version is None else {VERSION_KEY: records.version}
    out.writelines(
        json_document(json.dumps({**version, **r}, ensure_ascii=False)) + "\n" for r in records.rows
    )


@RECORD_FORMATS.register("yaml")
def _yaml(records: Records, out: TextIO) -> None:
    out.write(yaml_documents([_plain(records)], sort_keys=False, allow_unicode=True))


@RECORD_FORMATS.register("csv")
def _csv(records: Records, out: TextIO) -> None:
    rows = [dict(r) for r in records.rows]
    fields: dict[str, None] = {}
    for record in rows:
        fields.update(dict.fromkeys(record))
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(fields)
    for record in rows:
        writer.writerow([_csv_cell(record.get(name)) for name in fields])


def _csv_cell(value: Any) -> str:
    """A value as CSV text; the service's text (a reference a manifest set to ``=...``) is
    never a formula when the file is opened in a spreadsheet program (a number stays one),
    and a nested value (a party, the items) is JSON whose strings escape what the service's
    text at the top level has escaped too (a right-to-left override, a terminal escape)."""
    if isinstance(value, str):
        return csv_text(value)
    if isinstance(value, dict | list):
        return json_document(cell(value))
    return cell(value)


@RECORD_FORMATS.register("table")
def _table(records: Records, out: TextIO) -> None:
    if records.single:
        table = Table(show_header=False)
        table.add_column("field", overflow="fold")
        table.add_column("value", overflow="fold")
        for record in records.rows:
            for name, value in record.items():
                table.add_row(_table_text(name), _table_text(cell(value)))
    else:
        table = Table()
        for column in records.columns:
            table.add_column(column.header, overflow="fold")
        for record in records.rows:
            table.add_row(*(_table_text(cell(record.get(c.field))) for c in records.columns))
    console = _console(out)
    console.print(table)
    if records.footer:
        console.print(records.footer, style="dim")


def _table_text(text: str) -> Text:
    """The service's text as a table shows it: as written, never read as rich's markup (a
    template group named ``Export [de]`` lost ``[de]``, and one named ``a[/x]`` ended the
    command in an error), on one line, a control character (a terminal escape) written as
    its escape, as every other report writes text from outside."""
    return Text(printable(text))


PIPED_WIDTH = 10_000
"""The width of a table written to a pipe or a file: wide enough that no row folds, so
``| grep`` and ``| cut`` see one record a line (rich would assume 80 columns)."""


def _console(out: TextIO) -> Console:
    # On a terminal, cells fold (see the columns above): a long ID wraps inside its cell,
    # whole, instead of being cut with an ellipsis or widening the table past the terminal.
    # Piped, a row stays on one line whatever its width.
    width = None if out.isatty() else PIPED_WIDTH
    return Console(file=out, highlight=False, soft_wrap=False, width=width)
