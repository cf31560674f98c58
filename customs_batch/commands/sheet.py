"""``sheet template`` as a function: an empty spreadsheet for a kind, and a manifest that
loads it with ``forEach``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from customs_batch.kinds import Kind

if TYPE_CHECKING:
    from customs_batch.manifest.spreadsheet.template_file import TemplateFiles


@dataclass(frozen=True)
class SheetTemplateOptions:
    """``kind``: whose spec fields are the columns; ``output``: the spreadsheet to write
    (FILE.xlsx or FILE.csv; the manifest goes beside it); ``force``: overwrite the files
    if they exist."""

    kind: Kind
    output: Path
    force: bool = False


def write_sheet_template(options: SheetTemplateOptions) -> TemplateFiles:
    """Write the spreadsheet and its manifest; the files written and the column count."""
    from customs_batch.manifest.spreadsheet.template_file import write_template

    return write_template(options.kind, options.output, force=options.force)
