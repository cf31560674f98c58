"""One entry point for every spreadsheet format."""

from __future__ import annotations

from collections.abc import Iterator

from customs_batch.manifest.dependencies import SPREADSHEET, note
from customs_batch.manifest.spreadsheet.model import Row, RowSource, SheetError

XLSX_SUFFIXES = frozenset({".xlsx", ".xlsm", ".xlsb", ".xls", ".ods"})
CSV_SUFFIXES = frozenset({".csv", ".tsv", ".txt"})


def read_rows(source: RowSource) -> Iterator[Row]:
    """Stream the data rows of ``source``, skipping blank rows, within its row range and its
    limits (a file over them is a SheetError before a row is read)."""
    # The readers are imported here: python-calamine and zipfile cost a manifest without a
    # spreadsheet about 10 ms of start-up.
    note(SPREADSHEET, source.path)
    suffix = source.path.suffix.lower()
    if suffix in XLSX_SUFFIXES:
        from customs_batch.manifest.spreadsheet.xlsx import read_xlsx

        return read_xlsx(source)
    if suffix in CSV_SUFFIXES:
        from customs_batch.manifest.spreadsheet.csvfile import read_csv

        return read_csv(source)
    raise SheetError(
        f"{source.path}: unknown spreadsheet type {suffix!r}",
        file=str(source.path),
        hint="use a .xlsx or a .csv file",
    )
