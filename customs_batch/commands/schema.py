"""``schema export`` as a function: the JSON Schemas, for editors and other tools."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SchemaExportOptions:
    """``directory``: where the schemas go (created when missing)."""

    directory: Path


def export_schemas(options: SchemaExportOptions) -> tuple[Path, ...]:
    """Write the envelope schema, one schema per kind and document.schema.json; the files
    written, in order."""
    from customs_batch.validation import schema_export

    return tuple(schema_export.export_schemas(options.directory))
