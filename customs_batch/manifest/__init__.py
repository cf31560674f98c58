"""Manifests: loading with source positions, Jinja rendering, row expansion, documents.

The public API is :func:`load_paths` (what the commands call), :func:`load_file` (one file;
the result pickles, so files can be loaded in a process pool), :func:`iter_file` (one file,
streamed: a ``forEach`` over a big spreadsheet never holds all its documents) and
:func:`discover`.
"""

from customs_batch.line_bound import MAX_LINE_MB_VARIABLE
from customs_batch.manifest._load import LoadResult, discover, iter_file, load_file, load_paths
from customs_batch.manifest.discover import find_project_root
from customs_batch.manifest.document import Document, Position, Reference
from customs_batch.manifest.rows._range import NO_ROW_IN_RANGE, RowRange
from customs_batch.manifest.yaml._value_bound import (
    MAX_DOCUMENT_VALUES_VARIABLE,
    max_document_values,
)

__all__ = [
    "MAX_DOCUMENT_VALUES_VARIABLE",
    "MAX_LINE_MB_VARIABLE",
    "NO_ROW_IN_RANGE",
    "Document",
    "LoadResult",
    "Position",
    "Reference",
    "RowRange",
    "discover",
    "find_project_root",
    "iter_file",
    "load_file",
    "load_paths",
    "max_document_values",
]
