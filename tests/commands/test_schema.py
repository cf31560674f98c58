"""``schema export`` as a function: the files written, in order."""

from __future__ import annotations

import json
from pathlib import Path

from customs_batch.commands.schema import SchemaExportOptions, export_schemas


def test_the_schemas_are_written_and_named(tmp_path: Path) -> None:
    written = export_schemas(SchemaExportOptions(tmp_path / "schemas"))
    assert written and all(path.parent == tmp_path / "schemas" for path in written)
    assert sorted(written) == sorted((tmp_path / "schemas").iterdir())
    assert written[-1].name == "document.schema.json"
    for path in written:
        assert isinstance(json.loads(path.read_text(encoding="utf-8")), dict)
