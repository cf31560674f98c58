"""The same row gives the same documents whichever export it came from (CSV or XLSX)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import xlsxwriter

from customs_batch.manifest import LoadResult, load_file
from customs_batch.manifest.rows._cell_types import CellTypeError, ColumnType, typed
from tests.manifest.helpers import ENVELOPE, only, write

HEADER = ["HAWB", "Code", "Packages", "Gross weight", "Note"]
ROWS: list[list[object]] = [
    ["hawb_a1", "0150", 2, 40.5, None],
    ["hawb_a2", "03054100", 11, 125.0, "fragile"],
    ["hawb_a3", "7318", 3, 1250.25, None],
]


def _write_csv(path: Path) -> None:
    """As Excel writes "CSV UTF-8" in a German locale: BOM, ';', decimal commas, CRLF."""
    lines = [";".join(HEADER)]
    for row in ROWS:
        cells = []
        for value in row:
            if value is None:
                cells.append("")
            elif isinstance(value, float):
                cells.append(f"{value:g}".replace(".", ","))
            else:
                cells.append(str(value))
        lines.append(";".join(cells))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(("\ufeff" + "\r\n".join(lines) + "\r\n").encode("utf-8"))


def _write_xlsx(path: Path) -> None:
    """Numbers as numbers (whole ones written as 2.0), codes as text-formatted strings."""
    path.parent.mkdir(parents=True, exist_ok=True)
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Movements")
    text = book.add_format({"num_format": "@"})
    sheet.write_row(0, 0, HEADER)
    for number, row in enumerate(ROWS, start=1):
        hawb, code, packages, weight, note = row
        sheet.write_string(number, 0, str(hawb))
        sheet.write_string(number, 1, str(code), text)
        sheet.write_number(number, 2, float(packages))  # type: ignore[arg-type]
        sheet.write_number(number, 3, float(weight))  # type: ignore[arg-type]
        if note is not None:
            sheet.write_string(number, 4, str(note))
    book.close()


def _manifest(file: str, *, values: str = "", columns: str = "") -> str:
    return (
        f"{ENVELOPE}kind: Movement\n"
        f"forEach: {{file: {file}, decimalComma: true{columns}}}\n"
        "metadata:\n"
        '  name: "mov-{{ row.HAWB }}-{{ row.Code }}"\n'
        "values:\n"
        '  code: "{{ row.Code }}"\n'
        '  doubled: "{{ row.Packages * 2 }}"\n'
        "  label: \"{{ row.Packages }} x {{ row['Gross weight'] }} kg\"\n"
        '  note: "{{ row.Note }}"\n'
        '  big: "{{ row.Packages > 10 }}"\n'
        f"{values}"
        "spec:\n"
        "  shipmentId: shp_7Hk2Lm\n"
        '  hawbId: "{{ row.HAWB }}"\n'
        "  action: ISL\n"
        '  quantity: "{{ row.Packages + 1 }}"\n'
        "  grossWeightKg: \"{{ row['Gross weight'] * 2 }}\"\n"
        "  customsSupervision: Y\n"
        "  goodsHandlingCode: N\n"
        "  partyId: rpty_p1\n"
    )


def _load(file: str, **options: str) -> LoadResult:
    return load_file(write(Path(f"m-{Path(file).suffix[1:]}.yaml"), _manifest(file, **options)))


def _documents(result: LoadResult) -> list[tuple[object, ...]]:
    return [(d.name, d.spec, d.values) for d in result.documents]


def test_a_csv_and_an_xlsx_export_of_the_same_rows_give_identical_documents() -> None:
    _write_csv(Path("data/rows.csv"))
    _write_xlsx(Path("data/rows.xlsx"))
    from_csv = _load("data/rows.csv")
    from_xlsx = _load("data/rows.xlsx")
    assert from_csv.findings == from_xlsx.findings == []
    assert _documents(from_csv) == _documents(from_xlsx)
    first = from_csv.documents[0]
    assert first.name == "mov-hawb_a1-0150"
    assert first.values == {
        "code": "0150",
        "doubled": 4,
        "label": "2 x 40.5 kg",
        "big": False,
    }  # the empty Note cell leaves its value out
    assert (first.spec["quantity"], first.spec["grossWeightKg"]) == (3, 81.0)
    assert from_csv.documents[1].values["code"] == "03054100"
    assert from_csv.documents[2].spec["grossWeightKg"] == 2500.5


def test_codes_typed_as_numbers_under_a_format_of_zeros_read_as_the_sheet_shows_them() -> None:
    # A column of codes typed as numbers and formatted 0000 shows 0150, and Excel's CSV
    # export writes 0150; the workbook holds 150, which the XLSX reader gave alone.
    _write_csv(Path("data/rows.csv"))
    path = Path("data/typed.xlsx")
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Movements")
    formats = {4: book.add_format({"num_format": "0000"})}
    formats[8] = book.add_format({"num_format": "00000000"})
    sheet.write_row(0, 0, HEADER)
    for number, row in enumerate(ROWS, start=1):
        hawb, code, packages, weight, note = row
        sheet.write_string(number, 0, str(hawb))
        code_format = formats[len(str(code))] if str(code).startswith("0") else None
        sheet.write_number(number, 1, int(str(code)), code_format)
        sheet.write_number(number, 2, float(packages))  # type: ignore[arg-type]
        sheet.write_number(number, 3, float(weight))  # type: ignore[arg-type]
        if note is not None:
            sheet.write_string(number, 4, str(note))
    book.close()
    from_csv = _load("data/rows.csv")
    from_xlsx = _load("data/typed.xlsx")
    assert from_xlsx.findings == []
    assert _documents(from_csv) == _documents(from_xlsx)
    assert [d.values["code"] for d in from_xlsx.documents] == ["0150", "03054100", 7318]


@pytest.mark.parametrize("suffix", ["csv", "xlsx"])
def test_text_mixed_with_a_number_names_the_column_the_row_and_the_remedy(suffix: str) -> None:
    _write_csv(Path("data/rows.csv"))
    _write_xlsx(Path("data/rows.xlsx"))
    result = _load(f"data/rows.{suffix}", values='  twice: "{{ row.Code * 2 }}"\n')
    findings = [f for f in result.findings if f.rule == "row.mixed-types"]
    assert [f.location.line for f in findings] == [2, 3]  # '7318' in row 4 is a number
    first = findings[0]
    assert "column 'Code' holds the text '0150' (a code with a leading zero)" in first.message
    assert "'*'" in first.message
    assert first.location.column_number == 2  # column B, the code
    assert "columns: {Code: number}" in first.hint
    assert result.documents[0].name == "mov-hawb_a3-7318"


def test_a_declared_column_type_wins_over_what_the_cell_looks_like() -> None:
    _write_csv(Path("data/rows.csv"))
    result = _load(
        "data/rows.csv",
        values='  twice: "{{ row.Code * 2 }}"\n  text: "{{ row.Packages ~ \'!\' }}"\n',
        columns=", columns: {Code: number, Packages: text}",
    )
    # Packages is text now, so 'row.Packages + 1' in the spec mixes text and a number.
    # and so does 'row.Packages > 10' in the values.
    assert {f.rule for f in result.findings} == {"row.mixed-types"}
    assert any("'>'" in f.message for f in result.findings)
    result = _load(
        "data/rows.csv",
        values='  twice: "{{ row.Code * 2 }}"\n',
        columns=", columns: {Code: number}",
    )
    assert result.findings == []
    assert [d.values["twice"] for d in result.documents] == [300, 6108200, 14636]


def test_a_declared_type_the_cell_does_not_have_is_an_error_at_the_cell() -> None:
    _write_csv(Path("data/rows.csv"))
    result = _load("data/rows.csv", columns=", columns: {HAWB: integer}")
    finding = result.findings[0]
    assert finding.rule == "row.cell-type"
    assert "column 'HAWB' is declared integer" in finding.message
    assert (finding.location.line, finding.location.column) == (2, 1)


def test_a_declared_column_the_sheet_lacks_is_reported_at_the_manifest() -> None:
    _write_csv(Path("data/rows.csv"))
    result = _load("data/rows.csv", columns=", columns: {Packets: number}")
    finding = only(result, "envelope.for-each")
    assert "'Packets'" in finding.message
    assert "Did you mean 'Packages'?" in finding.hint
    assert result.documents == []


def test_a_decimal_comma_without_decimal_comma_says_so() -> None:
    Path("data").mkdir()
    Path("data/w.csv").write_text("HAWB;Code;Packages;Gross weight;Note\nh1;1;2;40,5;\n")
    manifest = _manifest("data/w.csv").replace(", decimalComma: true", "")
    result = load_file(write(Path("m.yaml"), manifest))
    finding = only(result, "row.mixed-types")
    assert "'40,5' (a decimal comma)" in finding.message
    assert "decimalComma: true" in finding.hint


@pytest.mark.parametrize(
    ("cell", "declared", "decimal_comma", "expected"),
    [
        ("42", None, False, 42),
        ("0150", None, False, "0150"),
        ("0", None, False, 0),
        ("-3.5", None, False, -3.5),
        ("2.0", None, False, 2),
        ("1.250,00", None, True, 1250),
        ("12,5", None, False, "12,5"),
        ("12.5", None, True, "12.5"),
        ("TRUE", None, False, True),
        ("nan", None, False, "nan"),
        ("12E45", None, False, "12E45"),
        ("+4930123", None, False, "+4930123"),
        ("0150", ColumnType.NUMBER, False, 150),
        (150, ColumnType.TEXT, False, "150"),
        (2.5, ColumnType.TEXT, False, "2.5"),
        ("yes", ColumnType.BOOLEAN, False, True),
        ("3,0", ColumnType.INTEGER, True, 3),
    ],
)
def test_cells_are_typed_alike(
    cell: object, declared: ColumnType | None, decimal_comma: bool, expected: object
) -> None:
    assert typed(cell, "C", declared, decimal_comma) == expected
    assert type(typed(cell, "C", declared, decimal_comma)) is type(expected)


def test_a_template_mixing_a_cells_text_with_a_number_is_reported_at_each_cell() -> None:
    _write_csv(Path("data/rows.csv"))
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("templates/codes.yaml.j2"), "# codes\ngoodsHandlingCode: N\nx: {{ row.Code * 2 }}\n")
    manifest = _manifest("data/rows.csv").replace("spec:\n", "template: codes\nspec:\n")
    result = load_file(write(Path("m.yaml"), manifest))
    findings = [f for f in result.findings if f.rule == "row.mixed-types"]
    assert [(f.location.line, f.location.column_number) for f in findings] == [(2, 2), (3, 2)]
    assert findings[0].message.startswith(
        "in the template templates/codes.yaml.j2, line 3: column 'Code' holds the text '0150'"
    )
    assert [d.spec["x"] for d in result.documents] == [14636]  # row 4: the number 7318


def test_a_foreach_document_gets_the_warning_for_a_template_hiding_a_built_in() -> None:
    _write_csv(Path("data/rows.csv"))
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("templates/t1-road.yaml.j2"), "goodsHandlingCode: N\n")
    manifest = _manifest("data/rows.csv").replace("spec:\n", "template: t1-road\nspec:\n")
    result = load_file(write(Path("m.yaml"), manifest))
    finding = only(result, "template.shadows-built-in")
    line = manifest.splitlines().index("template: t1-road") + 1
    assert (finding.location.file, finding.location.line) == ("m.yaml", line)
    assert len(result.documents) == 3


@pytest.mark.parametrize("suffix", ["csv", "xlsx"])
def test_a_cell_s_text_can_be_formatted_like_any_text(suffix: str) -> None:
    # The sandbox made format's result a cell text without its column: every row ended
    # with "CellText.__new__() missing 1 required positional argument: 'column'".
    path = Path(f"data/m.{suffix}")
    (_write_csv if suffix == "csv" else _write_xlsx)(path)
    values = "  formatted: \"{{ (row.HAWB ~ '-{}').format(row.Code) }}\"\n"
    values += '  mapped: "{{ row.HAWB.format_map({}) }}"\n'
    values += '  plain: "{{ row.HAWB.format() }}"\n'
    result = _load(str(path), values=values)
    assert [f for f in result.findings if f.rule.startswith(("row.", "template."))] == []
    firsts = result.documents[0].values
    assert firsts["formatted"] == "hawb_a1-0150"
    assert firsts["mapped"] == firsts["plain"] == "hawb_a1"


def test_a_whole_row_gives_json_text_and_is_no_value_itself() -> None:
    # `row | tojson` was "Object of type RowView is not JSON serializable"; `{{ row }}` was
    # Python's "RowView({...})" as the value.
    _write_csv(Path("data/m.csv"))
    result = _load("data/m.csv", values='  dump: "{{ row | tojson }}"\n')
    dumped = result.documents[0].values["dump"]
    assert isinstance(dumped, str)
    assert json.loads(dumped) == {
        "HAWB": "hawb_a1",
        "Code": "0150",
        "Packages": 2,
        "Gross weight": 40.5,
        "Note": None,
    }
    whole = _load("data/m.csv", values='  whole: "{{ row }}"\n')
    found = [f for f in whole.findings if f.rule == "row.jinja"]
    assert len(found) == 3 and "the whole row, not a value" in found[0].message


def test_digits_of_another_script_stay_text_for_an_expression() -> None:
    # Python's int() and float() read '٣' as 3; a YAML manifest reads it as text.
    assert typed("\u0663", "Packages", None, False) == "\u0663"
    assert typed("\u0661\u0662.5", "Weight", None, False) == "\u0661\u0662.5"
    for declared in (ColumnType.INTEGER, ColumnType.NUMBER):
        with pytest.raises(CellTypeError):
            typed("\u0663", "Packages", declared, False)
    assert typed("3", "Packages", ColumnType.INTEGER, False) == 3
