"""What reading one spreadsheet may cost, and the error when a file asks for more.

A workbook is checked before it is handed to the XLSX reader (see ``workbook_check``), which
holds every cell of the sheet's used range in memory (about 32 bytes a cell, empty ones
too): one cell at XFD1048576 would ask for half a terabyte, and a small zip can expand to
gigabytes. Each limit is raised in ``forEach`` (``maxRows``, ``maxCells``, ``maxMegabytes``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from customs_batch.manifest.spreadsheet.model import RowSource, SheetError, SheetLimits
from customs_batch.userfiles import FileRefused, InputKind, open_user_file

TOO_LARGE = "sheet.too-large"
MAX_COLUMNS = 16_384
"""The most columns a row may have: as many as a spreadsheet program has (A to XFD)."""


def too_large(file: str, what: str, key: str, limit: int) -> SheetError:
    """The error for a spreadsheet over the ``key`` limit (a forEach key), saying how to
    raise it."""
    unit = " MB" if key == "maxMegabytes" else ""
    return SheetError(
        f"{file}: {what}, over the limit of {limit:,}{unit} (forEach {key})",
        file=file,
        rule=TOO_LARGE,
        hint=(
            f"check that this is the right file; if it is, raise the limit in forEach, "
            f"e.g. `{key}: {limit * 2}`, or split the file"
        ),
    )


def too_many_rows(file: str, limits: SheetLimits, row: int) -> SheetError:
    """The error for the data row past ``maxRows`` (``row`` as the sheet numbers it)."""
    what = f"more than {limits.rows:,} data rows (row {row} is one too many)"
    return too_large(file, what, "maxRows", limits.rows)


def too_many_columns(file: str, row: int, columns: int) -> SheetError:
    """The error for a row of more than :data:`MAX_COLUMNS` columns."""
    return SheetError(
        f"{file}: row {row} has {columns:,} columns, more than a spreadsheet can have "
        f"({MAX_COLUMNS:,}, A to XFD)",
        file=file,
        row=row,
        rule=TOO_LARGE,
        hint="check that this is the right file and its delimiter (forEach delimiter)",
    )


@contextmanager
def open_sheet_file(source: RowSource) -> Iterator[BinaryIO]:
    """The spreadsheet opened for reading once it is known to be a regular file of at most
    ``maxMegabytes``; anything else is a SheetError naming the file."""
    file = str(source.path)
    if not os.path.lexists(source.path):
        raise SheetError(
            f"spreadsheet {file} does not exist",
            file=file,
            hint="forEach.file is relative to the manifest that names it",
        )
    megabytes = source.limits.megabytes
    raise_hint = f"raise the limit in forEach, e.g. `maxMegabytes: {megabytes * 2}`"
    try:
        with open_user_file(
            source.path,
            limit=source.limits.bytes,
            raise_hint=raise_hint,
            kind=InputKind.SPREADSHEET,
        ) as f:
            yield f
    except FileRefused as refused:
        rule = TOO_LARGE if refused.rule == "file.too-large" else "sheet.unreadable"
        message = f"{file}: {refused.reason}"
        if refused.rule == "file.too-large":
            message += " (forEach maxMegabytes)"
        raise SheetError(message, file=file, hint=refused.hint, rule=rule) from None
    except OSError as exc:
        raise SheetError(f"cannot read {file} ({exc.strerror})", file=file) from exc
