"""``sheet template`` as a function: the spreadsheet and its manifest written."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.commands.sheet import SheetTemplateOptions, write_sheet_template
from customs_batch.errors import CustomsBatchError
from customs_batch.kinds import Kind


def test_a_csv_and_its_manifest_are_written_and_kept_unless_forced(tmp_path: Path) -> None:
    sheet = tmp_path / "movements.csv"
    written = write_sheet_template(SheetTemplateOptions(Kind.MOVEMENT, sheet))
    assert written.sheet == sheet and sheet.is_file()
    assert written.manifest.is_file() and written.manifest.parent == tmp_path
    assert written.columns == len(sheet.read_text(encoding="utf-8").splitlines()[1].split(","))
    with pytest.raises(CustomsBatchError):
        write_sheet_template(SheetTemplateOptions(Kind.MOVEMENT, sheet))
    again = write_sheet_template(SheetTemplateOptions(Kind.MOVEMENT, sheet, force=True))
    assert again == written
