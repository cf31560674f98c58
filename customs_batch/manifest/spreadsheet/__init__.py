"""Reading the rows of spreadsheet exports (XLSX and CSV) that ``forEach`` expands over."""

from customs_batch.findings import column_letter
from customs_batch.manifest.spreadsheet.model import Header, Row, RowSource, SheetError
from customs_batch.manifest.spreadsheet.reader import read_rows

__all__ = ["Header", "Row", "RowSource", "SheetError", "column_letter", "read_rows"]
