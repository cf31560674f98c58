"""Printing records as a table, JSON, JSON Lines, CSV or YAML.

Records are the service's objects exactly as sent (``Record.raw``): JSON, JSON Lines and
YAML print them unchanged, in the service's field order, so scripts see what the service
said. CSV columns are every field in order of first appearance; nested values are JSON.
Tables (rich) show the chosen columns and fold cells to fit the terminal.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TextIO

import yaml
from rich.console import Console
from rich.table import Table

JsonObject = Mapping[str, Any]


class OutputFormat(StrEnum):
    """The ``-o`` choices."""

    TABLE = "table"
    JSON = "json"
    JSONL = "jsonl"
    CSV = "csv"
    YAML = "yaml"


@dataclass(frozen=True)
class Column:
    """A table column: its header and the record field it shows."""

    header: str
    field: str


def cell(value: Any) -> str:
    """A value as table or CSV text: nested values as compact JSON, None as empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def write_records(
    records: Sequence[JsonObject],
    fmt: OutputFormat,
    columns: Sequence[Column],
    out: TextIO,
    *,
    footer: str | None = None,
) -> None:
    """Print a list of records; ``footer`` (e.g. "page 1 of 3") only under a table."""
    plain = [dict(r) for r in records]
    if fmt is OutputFormat.JSON:
        out.write(json.dumps(plain, indent=2, ensure_ascii=False) + "\n")
    elif fmt is OutputFormat.JSONL:
        out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in plain)
    elif fmt is OutputFormat.YAML:
        out.write(yaml.safe_dump(plain, sort_keys=False, allow_unicode=True))
    elif fmt is OutputFormat.CSV:
        out.write(_csv(plain))
    else:
        table = Table()
        for column in columns:
            table.add_column(column.header, overflow="fold")
        for record in plain:
            table.add_row(*(cell(record.get(c.field)) for c in columns))
        console = _console(out)
        console.print(table)
        if footer:
            console.print(footer, style="dim")


def write_record(record: JsonObject, fmt: OutputFormat, out: TextIO) -> None:
    """Print one record; as a table it is a two-column list of fields and values."""
    plain = dict(record)
    if fmt is OutputFormat.JSON:
        out.write(json.dumps(plain, indent=2, ensure_ascii=False) + "\n")
    elif fmt is OutputFormat.JSONL:
        out.write(json.dumps(plain, ensure_ascii=False) + "\n")
    elif fmt is OutputFormat.YAML:
        out.write(yaml.safe_dump(plain, sort_keys=False, allow_unicode=True))
    elif fmt is OutputFormat.CSV:
        out.write(_csv([plain]))
    else:
        table = Table(show_header=False)
        table.add_column("field", overflow="fold")
        table.add_column("value", overflow="fold")
        for name, value in plain.items():
            table.add_row(name, cell(value))
        _console(out).print(table)


def _csv(records: Sequence[dict[str, Any]]) -> str:
    fields: dict[str, None] = {}
    for record in records:
        fields.update(dict.fromkeys(record))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(fields)
    for record in records:
        writer.writerow([cell(record.get(name)) for name in fields])
    return buffer.getvalue()


PIPED_WIDTH = 10_000
"""The width of a table written to a pipe or a file: wide enough that no row folds, so
``| grep`` and ``| cut`` see one record a line (rich would assume 80 columns)."""


def _console(out: TextIO) -> Console:
    # On a terminal, cells fold (see the columns above): a long ID wraps inside its cell,
    # whole, instead of being cut with an ellipsis or widening the table past the terminal.
    # Piped, a row stays on one line whatever its width.
    width = None if out.isatty() else PIPED_WIDTH
    return Console(file=out, highlight=False, soft_wrap=False, width=width)
