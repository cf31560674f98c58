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
    (FILE.xlsx or FILE.csv; the manifest goes beside it, or in the project's manifests
    folder: :func:`manifest_folder`); ``force``: overwrite the files if they exist."""

    kind: Kind
    output: Path
    force: bool = False


def write_sheet_template(options: SheetTemplateOptions) -> TemplateFiles:
    """Write the spreadsheet and its manifest; the files written and the column count."""
    from customs_batch.manifest.spreadsheet.template_file import write_template

    folder = manifest_folder(options.output)
    return write_template(options.kind, options.output, force=options.force, manifest_folder=folder)


def manifest_folder(sheet: Path) -> Path | None:
    """Where the sheet's manifest goes: None for beside the sheet, unless the project around
    it lists its manifests (``manifests:`` in customs-batch.yaml) and that folder is not
    under one of them; then the list's first folder. validate, plan and apply given no
    paths read only that list: a manifest beside a sheet in data/ would never be read, and
    the rows an analyst fills never checked nor sent."""
    from customs_batch.environments import load_project

    folder = sheet.parent.resolve()
    listed = [entry.resolve() for entry in load_project(folder).manifests]
    if not listed or any(entry == folder or entry in folder.parents for entry in listed):
        return None
    target = next((entry for entry in listed if entry.is_dir()), None)
    if target is None:  # a list of files only: the user names each manifest there
        return None
    cwd = Path.cwd().resolve()
    return target.relative_to(cwd) if target.is_relative_to(cwd) else target
