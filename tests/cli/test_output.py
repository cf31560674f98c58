"""Tables written to a pipe keep one record a line; every records format is registered."""

from __future__ import annotations

import csv
import io
import json

import yaml

from customs_batch.cli._output import RECORD_FORMATS, Column, Records, write_records


def test_a_piped_table_does_not_fold_at_80_columns() -> None:
    out = io.StringIO()  # not a terminal, as a pipe or a file
    long_name = "Export group for the Rotterdam to Hamburg lane " * 4
    records = [{"id": 1, "name": long_name, "code": "R-H"}, {"id": 2, "name": "x", "code": "Y"}]
    columns = [Column("id", "id"), Column("name", "name"), Column("code", "code")]
    write_records(Records(records, columns, footer="2 records"), "table", out)
    lines = out.getvalue().splitlines()
    rows = [line for line in lines if "R-H" in line or "│ 2 " in line]
    assert len(rows) == 2, out.getvalue()
    assert long_name.strip() in rows[0]
    assert max(len(line) for line in lines) > 80
    assert lines[-1] == "2 records"


def _written(format_name: str, records: Records) -> str:
    out = io.StringIO()
    write_records(records, format_name, out)
    return out.getvalue()


def test_the_formats_for_scripts_carry_the_records_and_no_footer() -> None:
    rows: list[dict[str, object]] = [
        {"id": 1, "nested": {"a": [1, 2]}, "flag": True},
        {"id": 2, "extra": None},
    ]
    listed = Records(rows, (Column("id", "id"),), footer="page 1 of 9")
    assert RECORD_FORMATS.names() == ["table", "json", "jsonl", "csv", "yaml"]
    assert json.loads(_written("json", listed)) == rows
    assert [json.loads(line) for line in _written("jsonl", listed).splitlines()] == rows
    assert yaml.safe_load(_written("yaml", listed)) == rows
    table = list(csv.reader(io.StringIO(_written("csv", listed))))
    assert table[0] == ["id", "nested", "flag", "extra"]
    assert table[1] == ["1", '{"a":[1,2]}', "true", ""]
    one = Records([rows[0]], single=True)
    assert json.loads(_written("json", one)) == rows[0]
    assert "page 1 of 9" not in _written("json", listed) + _written("csv", listed)


def test_json_and_jsonl_stay_valid_utf_8_when_the_service_sends_a_lone_surrogate() -> None:
    # json.loads accepts "\udcff" from the service; written as is, it is no UTF-8 at all.
    records = Records([{"id": 1, "name": "bad\udcff"}])
    for format_name in ("json", "jsonl"):
        out = io.StringIO()
        write_records(records, format_name, out)
        text = out.getvalue().encode("utf-8").decode("utf-8")
        assert "bad\\udcff" in text
        first = json.loads(text.splitlines()[0] if format_name == "jsonl" else text)
        assert (first[0] if isinstance(first, list) else first)["name"] == "bad\udcff"


def test_csv_text_from_the_service_is_never_a_formula_and_numbers_stay_numbers() -> None:
    records = Records(
        [{"id": -5, "reference": '=HYPERLINK("http://evil.example","x")', "note": "@x\x1b[2J"}]
    )
    table = list(csv.reader(io.StringIO(_written("csv", records))))
    assert table[1] == ["-5", '\'=HYPERLINK("http://evil.example","x")', "'@x\\x1b[2J"]


def test_a_table_shows_the_services_text_as_written_never_as_markup_or_escapes() -> None:
    # Found by a probe: a template group another client named "a[/x]b" ended `get
    # template-groups` in "internal error: MarkupError", one named "Export [de]" was shown
    # as "Export ", and a terminal escape in a name reached the terminal.
    names = ["a[/x]b", "Export [de] [bold]B[/bold]", "evil\x1b[31mRED\x07\nline2"]
    records = [{"id": at, "name": name} for at, name in enumerate(names)]
    listed = _written("table", Records(records, [Column("id", "id"), Column("name", "name")]))
    assert "a[/x]b" in listed and "Export [de] [bold]B[/bold]" in listed
    assert "evil\\x1b[31mRED\\x07\\nline2" in listed and "\x1b" not in listed
    one = _written("table", Records([{"na[/me]\x1b": "[red]v[/red]"}], single=True))
    assert "na[/me]\\x1b" in one and "[red]v[/red]" in one and "\x1b" not in one


def test_csv_escapes_a_nested_value_as_its_top_level_text_and_reads_back_the_same() -> None:
    # Found by a probe: `get declaration 501 --format csv` wrote a consignee named
    # "-1\u2028x\u202e" inside the consignee column as is, a right-to-left override that
    # reorders the cell on screen (and a C1 terminal escape or a lone surrogate the same way),
    # when the same name at the top level is escaped.
    party = {"name": "-1\u2028x\u202eevil\x9b2J", "city": "bad\udcff", "n": [1, "\x1b"]}
    records = Records([{"id": 501, "consignee": party}])
    out = io.StringIO()
    write_records(records, "csv", out)
    text = out.getvalue().encode("utf-8").decode("utf-8")
    for raw in ("\u2028", "\u202e", "\x9b", "\x1b"):
        assert raw not in text
    table = list(csv.reader(io.StringIO(text)))
    assert json.loads(table[1][1]) == party


def test_yaml_escapes_a_right_to_left_override_and_reads_back_the_same() -> None:
    # Found by a probe: `get declaration 501 --format yaml` printed a consignee's
    # right-to-left override as is (YAML takes it for printable), reordering the line.
    rows: list[dict[str, object]] = [
        {"id": 501, "consignee": {"name": "-1\u202eevil\u2066x\u200f", "city": "Köln"}}
    ]
    text = _written("yaml", Records(rows))
    for raw in ("\u202e", "\u2066", "\u200f"):
        assert raw not in text
    assert '"-1\\u202eevil\\u2066x\\u200f"' in text and "city: Köln" in text
    assert yaml.safe_load(text) == rows
