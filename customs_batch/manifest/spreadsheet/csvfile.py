"""CSV rows as real exports come: UTF-8 with or without a BOM, Windows-1252, `;` `,` or tab
delimiters, CRLF line ends and quoted fields holding newlines. Every value is text (or None
for an empty field); documents convert it by their schema.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterator
from typing import IO

from customs_batch.manifest.spreadsheet.header import build_header
from customs_batch.manifest.spreadsheet.limits import (
    MAX_COLUMNS,
    TOO_LARGE,
    open_sheet_file,
    too_many_columns,
    too_many_rows,
)
from customs_batch.manifest.spreadsheet.model import MEGABYTE, Row, RowSource, SheetError
from customs_batch.manifest.text_pool import TextPool
from customs_batch.manifest.yaml._line_bound import MAX_LINE_MB_VARIABLE, max_line_bytes

SAMPLE_BYTES = 64 * 1024
DELIMITERS = (";", ",", "\t", "|")


def read_csv(source: RowSource) -> Iterator[Row]:
    """The data rows, numbered as a spreadsheet program numbers them (the header is row 1)."""
    file = str(source.path)
    with open_sheet_file(source) as raw:
        sample = raw.read(SAMPLE_BYTES)
        if b"\x00" in sample:
            raise SheetError(
                f"{file} is not a text file",
                file=file,
                hint="a CSV export is text; for an Excel workbook use a .xlsx file",
            )
        raw.seek(0)
        encoding = source.encoding or detect_encoding(sample)
        yield from _decoded_rows(raw, source, file, encoding)


def _decoded_rows(raw: IO[bytes], source: RowSource, file: str, encoding: str) -> Iterator[Row]:
    try:
        with io.TextIOWrapper(raw, encoding=encoding, newline="") as text:
            yield from _rows(text, source, file, encoding)
    except UnicodeDecodeError as exc:
        raise SheetError(
            f"{file} is not valid {encoding} ({exc.reason} at byte {exc.start})",
            file=file,
            hint="say the file's encoding in forEach, e.g. `encoding: cp1252`",
        ) from exc
    except LookupError as exc:
        raise SheetError(f"unknown encoding {encoding!r} for {file}", file=file) from exc


def detect_encoding(sample: bytes) -> str:
    """UTF-8 (BOM or not) when the sample decodes as UTF-8, else Windows-1252."""
    if sample.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8"


def detect_delimiter(header_line: str) -> str:
    """The delimiter that splits the header line the most (outside quotes)."""
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for char in header_line:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in counts:
            counts[char] += 1
    best = max(DELIMITERS, key=lambda d: counts[d])
    return best if counts[best] else ","


def _bounded_lines(text: IO[str], file: str, limit: int) -> Iterator[str]:
    """The lines of ``text``, none read whole when longer than ``limit`` characters: a 500 MB
    line (a field, or a header of millions of columns) would cost gigabytes before the CSV
    reader's own field limit (128 KB) saw it."""
    number = 0
    while line := text.readline(limit + 1):
        number += 1
        if len(line) > limit and not line.endswith(("\n", "\r")):
            raised = max(2 * limit // MEGABYTE, 2)
            raise SheetError(
                f"{file}: line {number:,} is longer than {limit / MEGABYTE:.1f} MB; the file "
                "is not read further",
                file=file,
                rule=TOO_LARGE,
                hint="check that this is the right file; to read it anyway, raise the bound "
                f"with {MAX_LINE_MB_VARIABLE}={raised} (megabytes)",
            )
        yield line


def _rows(text: IO[str], source: RowSource, file: str, encoding: str) -> Iterator[Row]:
    limit = max_line_bytes()
    delimiter = source.delimiter
    if delimiter is None:
        first = text.readline(limit + 1)
        delimiter = detect_delimiter(first)
        text.seek(0)
    lines = _bounded_lines(text, file, limit)
    reader = csv.reader(lines, delimiter=delimiter, quotechar='"', strict=False)
    header = None
    number = rows_read = 0
    pool = TextPool()
    try:
        for record in reader:
            number += 1
            if len(record) > MAX_COLUMNS:
                raise too_many_columns(file, number, len(record))
            values = [value if value.strip() else None for value in record]
            if header is None:
                if number < source.header_row:
                    continue
                header = build_header(values, file=file, row=number)
                continue
            if not source.wants(number) or all(v is None for v in values):
                continue
            rows_read += 1
            if rows_read > source.limits.rows:
                raise too_many_rows(file, source.limits, number)
            yield Row(
                number,
                pool.share(
                    {
                        name: values[column - 1] if column <= len(values) else None
                        for name, column in zip(header.names, header.columns, strict=True)
                    }
                ),
                header,
            )
    except csv.Error as exc:
        raise SheetError(f"{file}, row {number + 1}: {exc}", file=file, row=number + 1) from exc
    if header is None:
        raise SheetError(
            f"{file} has no row {source.header_row} to take the header from",
            file=file,
            hint="check `header:` in forEach, or that the file is not empty",
        )
