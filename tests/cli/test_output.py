"""Tables written to a pipe keep one record a line."""

from __future__ import annotations

import io

from customs_batch.cli._output import Column, OutputFormat, write_records


def test_a_piped_table_does_not_fold_at_80_columns() -> None:
    out = io.StringIO()  # not a terminal, as a pipe or a file
    long_name = "Export group for the Rotterdam to Hamburg lane " * 4
    records = [{"id": 1, "name": long_name, "code": "R-H"}, {"id": 2, "name": "x", "code": "Y"}]
    columns = [Column("id", "id"), Column("name", "name"), Column("code", "code")]
    write_records(records, OutputFormat.TABLE, columns, out)
    lines = out.getvalue().splitlines()
    rows = [line for line in lines if "R-H" in line or "│ 2 " in line]
    assert len(rows) == 2, out.getvalue()
    assert long_name.strip() in rows[0]
    assert max(len(line) for line in lines) > 80
