"""One entry point for every spreadsheet format."""

from __future__ import annotations

from collections.abc import Iterator

from customs_batch.manifest.spreadsheet.csvfile import read_csv
from customs_batch.manifest.spreadsheet.model import Row, RowSource, SheetError
from customs_batch.manifest.spreadsheet.xlsx import read_xlsx

XLSX_SUFFIXES = frozenset({".xlsx", ".xlsm", ".xlsb", ".xls", ".ods"})
CSV_SUFFIXES = frozenset({".csv", ".tsv", ".txt"})


def read_rows(source: RowSource) -> Iterator[Row]:
    """Stream the data rows of ``source``, skipping blank rows, within its row range."""
    suffix = source.path.suffix.lower()
    if not source.path.is_file():
        raise SheetError(
            f"spreadsheet {source.path} does not exist",
            file=str(source.path),
            hint="forEach.file is relative to the manifest that names it",
        )
    if suffix in XLSX_SUFFIXES:
        return read_xlsx(source)
    if suffix in CSV_SUFFIXES:
        return read_csv(source)
    raise SheetError(
        f"{source.path}: unknown spreadsheet type {suffix!r}",
        file=str(source.path),
        hint="use a .xlsx or a .csv file",
    )
