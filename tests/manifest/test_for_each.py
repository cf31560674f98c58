"""forEach: one document per spreadsheet row, typed values, findings at the cell or row."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from customs_batch.findings import Location
from customs_batch.manifest import LoadResult, RowRange, load_file
from customs_batch.validation.batch import validate_paths
from tests.manifest.helpers import (
    GOOD_ROW,
    SHEET_HEADERS,
    movement_sheet_manifest,
    only,
    rewrite_cells,
    rules,
    write,
    write_xlsx,
)


def _load(rows: list[list[object]], extra: str = "", manifest: str | None = None) -> LoadResult:
    write_xlsx(Path("data/m.xlsx"), rows)
    text = manifest if manifest is not None else movement_sheet_manifest("data/m.xlsx", extra)
    return load_file(write(Path("m.yaml"), text))


def test_one_document_per_row_with_typed_values() -> None:
    second = ["shp_9Xc4Rt", "hawb_b1", "ISL", 6, 60, "rpty_p3"]
    result = _load([GOOD_ROW, [None] * 6, second])
    assert result.findings == []
    assert [doc.name for doc in result.documents] == ["mov-hawb_a2-2", "mov-hawb_b1-4"]
    assert [doc.index for doc in result.documents] == [0, 1]
    first = result.documents[0]
    assert first.spec == {
        "shipmentId": "shp_7Hk2Lm",
        "hawbId": "hawb_a2",
        "action": "ISL",
        "quantity": 4,
        "grossWeightKg": 40.5,
        "customsSupervision": "Y",
        "goodsHandlingCode": "N",
        "partyId": "rpty_p1",
    }
    assert first.row == dict(zip(SHEET_HEADERS, GOOD_ROW, strict=True))
    assert (first.source.file, first.source.line, first.source.sheet) == (
        "data/m.xlsx",
        2,
        "Movements",
    )


def test_a_value_from_one_cell_is_located_at_that_cell() -> None:
    document = _load([GOOD_ROW]).documents[0]
    assert document.locate(("spec", "grossWeightKg")) == Location(
        "data/m.xlsx", 2, 5, ("spec", "grossWeightKg"), "Movements", 2, "Gross weight"
    )
    # A value written in the manifest belongs to the row as a whole.
    assert document.locate(("spec", "goodsHandlingCode")) == Location(
        "data/m.xlsx", 2, 0, ("spec", "goodsHandlingCode"), "Movements", 2, None
    )


def test_an_empty_cell_leaves_its_field_out_and_an_emptied_mapping_too() -> None:
    manifest = movement_sheet_manifest("data/m.xlsx") + (
        "  customsDeclaration:\n"
        '    source: "{{ row.Source }}"\n'
        "    declarationId: \"{{ row['Declaration'] }}\"\n"
    )
    write_xlsx(Path("data/m.xlsx"), [])
    import openpyxl

    book = openpyxl.load_workbook("data/m.xlsx")
    sheet = book["Movements"]
    sheet["G1"], sheet["H1"] = "Source", "Declaration"
    sheet.append(["shp_7Hk2Lm", "hawb_a2", "ISL", 4, 40.5, None, None, None])
    sheet.append(["shp_9Xc4Rt", "hawb_b1", "ISC", 6, 60.0, None, "INTERNAL", "dec_r2"])
    book.save("data/m.xlsx")
    result = load_file(write(Path("m.yaml"), manifest))
    assert result.findings == []
    first, second = result.documents
    assert "partyId" not in first.spec and "customsDeclaration" not in first.spec
    assert second.spec["customsDeclaration"] == {"source": "INTERNAL", "declarationId": "dec_r2"}


def test_xlsx_cells_keep_their_types_in_lone_expressions() -> None:
    manifest = (
        "apiVersion: customs-batch/v1\nkind: HawbDeactivation\n"
        "forEach: {file: data/m.xlsx}\n"
        'metadata: {name: "h-{{ row_number }}"}\n'
        "values:\n"
        '  packages: "{{ row.Packages }}"\n'
        '  when: "{{ row.When }}"\n'
        '  code: "{{ row.Code }}"\n'
        '  text: "{{ row.Packages }} packages"\n'
        'spec: {shipmentId: "{{ row.Shipment }}", hawbId: "{{ row.HAWB }}"}\n'
    )
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["Shipment", "HAWB", "Packages", "When", "Code"])
    sheet.append(["shp_1", "hawb_1", 4, dt.date(2026, 3, 1), "0150"])
    Path("data").mkdir()
    book.save("data/m.xlsx")
    document = load_file(write(Path("m.yaml"), manifest)).documents[0]
    assert document.values == {
        "packages": 4,
        "when": "2026-03-01",
        "code": "0150",
        "text": "4 packages",
    }


def test_a_template_sees_the_row(tmp_path: Path) -> None:
    write(tmp_path / "customs-batch.yaml", "default_environment: local\n")
    write(
        tmp_path / "templates/by-row.yaml.j2",
        "partyId: rpty_{{ row.Party }}\nquantity: {{ row_number }}\n",
    )
    manifest = (
        movement_sheet_manifest("data/m.xlsx")
        .replace('  partyId: "{{ row.Party }}"\n', "")
        .replace('  quantity: "{{ row.Packages }}"\n', "")
        .replace("metadata:", "template: by-row\nmetadata:")
    )
    result = _load([[*GOOD_ROW[:5], "p7"]], manifest=manifest)
    assert result.findings == []
    assert result.documents[0].spec["partyId"] == "rpty_p7"
    assert result.documents[0].spec["quantity"] == 2


def test_rows_limit_the_expansion_from_the_manifest_or_the_command_line() -> None:
    rows = [[*GOOD_ROW[:1], f"hawb_{n}", *GOOD_ROW[2:]] for n in range(2, 12)]
    limited = _load(rows, extra=", rows: 4-6")
    assert [doc.row and doc.row["HAWB"] for doc in limited.documents] == [
        "hawb_4",
        "hawb_5",
        "hawb_6",
    ]
    overridden = load_file(Path("m.yaml"), rows=RowRange(10, None))
    assert [doc.source.line for doc in overridden.documents] == [10, 11]


def test_a_row_whose_name_is_too_long_is_told_the_bound() -> None:
    manifest = movement_sheet_manifest("data/m.xlsx").replace(
        '"mov-{{ row.HAWB }}-{{ row_number }}"', '"{{ row.HAWB }}-' + "n" * 200 + '"'
    )
    result = _load([GOOD_ROW], manifest=manifest)
    found = [f for f in result.findings if f.rule == "row.name"]
    assert [f.message for f in found] == [
        "the name is 208 characters long, more than the 200 a name may have"
    ]


def test_duplicate_names_are_an_error_naming_both_rows() -> None:
    manifest = movement_sheet_manifest("data/m.xlsx").replace(
        '"mov-{{ row.HAWB }}-{{ row_number }}"', '"mov-{{ row.HAWB }}"'
    )
    result = _load([GOOD_ROW, GOOD_ROW, GOOD_ROW], manifest=manifest)
    assert [doc.source.line for doc in result.documents] == [2]
    found = [f for f in result.findings if f.rule == "row.duplicate-name"]
    assert [f.message for f in found] == [
        "rows 2 and 3 both give the name Movement/mov-hawb_a2",
        "rows 2 and 4 both give the name Movement/mov-hawb_a2",
    ]
    assert [(f.location.file, f.location.row) for f in found] == [
        ("data/m.xlsx", 3),
        ("data/m.xlsx", 4),
    ]
    # The way out names a row by its own columns: a name counting rows moves to another
    # row's declaration when one is inserted above it (found by an outside probe).
    assert "from columns of its own" in found[0].hint
    assert "moves to another row's declaration" in found[0].hint


@pytest.mark.parametrize(
    ("cell", "value", "message", "column"),
    [
        (3, "four", "'four' is not a whole number", ("D", "Packages")),
        (4, "12,5", "'12,5' is not a number", ("E", "Gross weight")),
        (4, "n/a", "'n/a' is not a number", ("E", "Gross weight")),
    ],
)
def test_a_cell_that_does_not_convert_is_a_finding_at_the_cell(
    cell: int, value: str, message: str, column: tuple[str, str]
) -> None:
    bad = list(GOOD_ROW)
    bad[cell] = value
    result = _load([GOOD_ROW, bad])
    finding = only(result, "row.cell-type")
    assert finding.message == message
    loc = finding.location
    assert (loc.file, loc.sheet, loc.row, loc.line, loc.column_name) == (
        "data/m.xlsx",
        "Movements",
        3,
        3,
        column[1],
    )
    assert loc.cell() == f"sheet 'Movements', row 3, column {column[0]} {column[1]!r}"
    assert finding.document == "Movement/mov-hawb_a2-3"
    assert [doc.source.line for doc in result.documents] == [2]  # the bad row gives none


def test_a_comma_number_hints_at_decimal_comma_and_converts_with_it() -> None:
    bad = [*GOOD_ROW[:4], "12,5", GOOD_ROW[5]]
    assert "decimalComma: true" in only(_load([bad]), "row.cell-type").hint
    converted = _load([bad], extra=", decimalComma: true")
    assert converted.documents[0].spec["grossWeightKg"] == 12.5


@pytest.mark.parametrize(
    ("written", "read"),
    [("1.234,5", 1234.5), ("12.345", 12345), ("1.000", 1000), ("0,5", 0.5), ("0.500", None)],
)
def test_with_decimal_comma_points_group_thousands_only_after_a_first_group(
    written: str, read: float | None
) -> None:
    """0.500 and 00.123 are decimal points in a sheet that writes decimal commas: never
    the 500 and 123 a thousands separator would make of them."""
    row = [*GOOD_ROW[:4], written, GOOD_ROW[5]]
    result = _load([row], extra=", decimalComma: true")
    if read is None:
        finding = only(result, "row.cell-type")
        assert finding.message == f"{written!r} is not a number"
        assert "decimal point" in finding.hint
        assert result.documents == []
    else:
        assert result.findings == []
        assert result.documents[0].spec["grossWeightKg"] == read
    leading = _load([[*GOOD_ROW[:4], "00.123", GOOD_ROW[5]]], extra=", decimalComma: true")
    assert only(leading, "row.cell-type").message == "'00.123' is not a number"


def test_schema_and_rule_findings_point_at_the_cell_or_the_row() -> None:
    bad = ["shp_7Hk2Lm", "hawb_a2", "XXX", 4, 40.5, "party-1"]
    write_xlsx(Path("data/m.xlsx"), [GOOD_ROW, bad])
    write(
        Path("m.yaml"),
        movement_sheet_manifest("data/m.xlsx").replace(
            "goodsHandlingCode: N", "goodsHandlingCode: Q"
        ),
    )
    result = validate_paths(["m.yaml"])
    by_rule = {(f.rule, f.location.row, f.location.column_name) for f in result.findings}
    assert ("schema.enum", 3, "Action") in by_rule
    assert ("schema.pattern", 3, "Party") in by_rule
    # The manifest wrote goodsHandlingCode for every row: each row is named, no column.
    assert {
        (f.location.row, f.location.column)
        for f in result.findings
        if f.location.path[-1:] == ("goodsHandlingCode",)
    } == {(2, 0), (3, 0)}
    assert all(f.location.file == "data/m.xlsx" for f in result.findings)


def test_a_missing_column_is_one_finding_at_the_manifest() -> None:
    manifest = movement_sheet_manifest("data/m.xlsx").replace("row.Party", "row.Partie")
    result = _load([GOOD_ROW, GOOD_ROW], manifest=manifest)
    finding = only(result, "envelope.for-each")
    assert finding.message == "no column 'Partie' in data/m.xlsx (sheet 'Movements')"
    assert finding.hint.startswith("Did you mean row['Party']?")
    assert (finding.location.file, finding.location.line) == ("m.yaml", 14)
    assert result.documents == []


def test_an_undefined_name_is_reported_once_at_the_manifest() -> None:
    manifest = movement_sheet_manifest("data/m.xlsx").replace(
        '"{{ row.Shipment }}"', '"{{ row.Shipment ~ suffix }}"'
    )
    result = _load([GOOD_ROW, GOOD_ROW], manifest=manifest)
    assert rules(result) == ["template.undefined"]
    assert result.findings[0].location.file == "m.yaml"
    assert result.documents == []


def test_a_name_without_the_row_is_a_finding() -> None:
    manifest = movement_sheet_manifest("data/m.xlsx").replace(
        '"mov-{{ row.HAWB }}-{{ row_number }}"', "mov-1"
    )
    finding = only(_load([GOOD_ROW], manifest=manifest), "envelope.for-each")
    assert "own name" in finding.message
    assert finding.location.path == ("metadata", "name")


def test_a_missing_file_or_sheet_is_a_finding() -> None:
    missing = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/none.xlsx")))
    finding = only(missing, "sheet.unreadable")
    assert (finding.location.file, finding.location.path) == ("m.yaml", ("forEach", "file"))
    no_sheet = _load([GOOD_ROW], extra=", sheet: Export")
    finding = only(no_sheet, "sheet.unreadable")
    assert "has no sheet 'Export'" in finding.message
    # At the sheet: the name is what is wrong (it pointed at forEach.file, at the file).
    assert finding.location.path == ("forEach", "sheet")
    line = Path("m.yaml").read_text(encoding="utf-8").splitlines()[finding.location.line - 1]
    assert line[finding.location.column - 1 :].startswith("Export}")


def test_a_hidden_sheet_is_reachable_by_name() -> None:
    import openpyxl

    write_xlsx(Path("data/m.xlsx"), [])
    book = openpyxl.load_workbook("data/m.xlsx")
    hidden = book.create_sheet("Archive")
    hidden.sheet_state = "hidden"
    hidden.append(SHEET_HEADERS)
    hidden.append(GOOD_ROW)
    book.save("data/m.xlsx")
    text = movement_sheet_manifest("data/m.xlsx", ", sheet: Archive")
    result = load_file(write(Path("m.yaml"), text))
    assert [doc.source.sheet for doc in result.documents] == ["Archive"]


def test_rows_can_refer_to_other_documents_and_are_indexed_in_batch_order() -> None:
    write_xlsx(Path("data/m.xlsx"), [GOOD_ROW, [*GOOD_ROW[:1], "hawb_b", *GOOD_ROW[2:]]])
    update = (
        "apiVersion: customs-batch/v1\nkind: TransitPartyUpdate\n"
        "forEach: {file: data/m.xlsx}\n"
        'metadata: {name: "upd-{{ row.HAWB }}"}\n'
        'spec: {declarationId: "${ref:DepartureDeclaration/dep-{{ row.HAWB }}.declarationId}",'
        " Consignee: {name: X, countryCode: DE}}\n"
    )
    text = update + "---\n" + movement_sheet_manifest("data/m.xlsx")
    result = load_file(write(Path("m.yaml"), text))
    assert result.findings == []
    assert [doc.index for doc in result.documents] == [0, 1, 2, 3]
    targets = [str(ref.target) for doc in result.documents[:2] for ref in doc.references]
    assert targets == ["DepartureDeclaration/dep-hawb_a2", "DepartureDeclaration/dep-hawb_b"]


def test_an_excel_error_is_an_error_at_its_cell_never_an_empty_cell() -> None:
    path = write_xlsx(Path("data/m.xlsx"), [GOOD_ROW, GOOD_ROW, GOOD_ROW])
    rewrite_cells(
        path,
        {
            "B2": '<c r="B2" t="e"><f>VLOOKUP(1,A1:A2,2,0)</f><v>#N/A</v></c>',
            "D3": '<c r="D3" t="e"><f>1/0</f><v>#DIV/0!</v></c>',
            "F4": '<c r="F4"><f>A1</f></c>',
        },
    )
    manifest = write(Path("m.yaml"), movement_sheet_manifest("data/m.xlsx"))
    result = load_file(manifest)
    assert result.documents == []  # nothing to plan: a HAWB, a quantity and a party are unknown
    found = [(f.rule, f.message, f.location.cell(), f.hint.split(":")[0]) for f in result.findings]
    fix, save = (
        "fix the formula in the workbook (or the cells it reads), then save it",
        ("open the workbook in Excel or LibreOffice and save it"),
    )
    assert found == [
        (
            "row.cell-error",
            "cell B2 holds the Excel error #N/A",
            "sheet 'Movements', row 2, column B 'HAWB'",
            fix,
        ),
        (
            "row.cell-error",
            "cell D3 holds the Excel error #DIV/0!",
            "sheet 'Movements', row 3, column D 'Packages'",
            fix,
        ),
        (
            "row.cell-error",
            "cell F4 holds a formula with no saved result",
            "sheet 'Movements', row 4, column F 'Party'",
            save,
        ),
    ]
    # validate checks the rows without the bad values: no "missing required field".
    checked = validate_paths([manifest], jobs=1)
    assert sorted({f.rule for f in checked.findings}) == ["row.cell-error"]
    assert len(checked.findings) == 3


def test_an_excel_error_behind_a_hidden_first_tab_is_an_error_at_its_cell() -> None:
    """Without ``sheet:`` the first visible worksheet is read; its #N/A under HAWB was taken
    for an empty cell (the error was looked for in the hidden tab), and the movement went
    without its hawbId, to the master AWB."""
    import openpyxl

    write_xlsx(Path("data/m.xlsx"), [[*GOOD_ROW[:1], "#N/A", *GOOD_ROW[2:]]])
    book = openpyxl.load_workbook("data/m.xlsx")
    old = book.create_sheet("Movements (old)", 0)
    old.sheet_state = "hidden"
    old.append(["x"])
    book.active = 1
    book.save("data/m.xlsx")
    manifest = write(Path("m.yaml"), movement_sheet_manifest("data/m.xlsx"))
    (finding,) = validate_paths([manifest], jobs=1).findings
    assert finding.rule == "row.cell-error"
    assert finding.message == "cell B2 holds the Excel error #N/A"
    assert finding.location.cell() == "sheet 'Movements', row 2, column B 'HAWB'"


@pytest.mark.parametrize(
    ("extra", "read"),
    [("", None), (", decimalComma: true", (1250, 2000)), (", decimalComma: false", (1.25, 2))],
)
def test_a_text_cell_with_points_every_three_digits_reads_as_the_manifest_says(
    extra: str, read: tuple[float, float] | None
) -> None:
    """Numbers stored as text in a German workbook: 1.250 kg was read as 1.25 kg without a
    word, where the ';'-separated export of the same sheet is an error until decimalComma
    says which (a workbook holds its text whatever its user's locale)."""
    rows = [[*GOOD_ROW[:4], weight, GOOD_ROW[5]] for weight in ("1.250", "2.000")]
    result = _load(rows, extra)
    if read is None:
        assert result.documents == []
        found = [(f.rule, f.location.cell()) for f in result.findings]
        assert found == [
            ("row.cell-type", f"sheet 'Movements', row {row}, column E 'Gross weight'")
            for row in (2, 3)
        ]
        assert all("reads two ways" in f.message for f in result.findings)
        assert all("decimalComma" in f.hint for f in result.findings)
    else:
        assert result.findings == []
        assert tuple(d.spec["grossWeightKg"] for d in result.documents) == read


def test_an_excel_error_in_a_column_the_manifest_does_not_read_is_no_finding() -> None:
    path = write_xlsx(Path("data/m.xlsx"), [[*GOOD_ROW, "note"]])
    rewrite_cells(path, {"G1": '<c r="G1" t="inlineStr"><is><t>Note</t></is></c>'})
    rewrite_cells(path, {"G2": '<c r="G2" t="e"><v>#N/A</v></c>'})
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.xlsx")))
    assert result.findings == []
    assert [d.spec["hawbId"] for d in result.documents] == ["hawb_a2"]


def test_an_excel_error_read_by_an_expression_or_a_template_is_an_error_at_its_cell(
    tmp_path: Path,
) -> None:
    path = write_xlsx(Path("data/m.xlsx"), [GOOD_ROW])
    rewrite_cells(path, {"E2": '<c r="E2" t="e"><v>#VALUE!</v></c>'})
    manifest = movement_sheet_manifest("data/m.xlsx").replace(
        "\"{{ row['Gross weight'] }}\"", "\"{{ row['Gross weight'] * 2 }}\""
    )
    finding = only(load_file(write(Path("m.yaml"), manifest)), "row.cell-error")
    assert finding.message == "cell E2 holds the Excel error #VALUE!"
    assert finding.location.cell() == "sheet 'Movements', row 2, column E 'Gross weight'"
    write(tmp_path / "customs-batch.yaml", "default_environment: local\n")
    write(tmp_path / "templates/by-row.yaml.j2", "grossWeightKg: {{ row['Gross weight'] }}\n")
    templated = (
        movement_sheet_manifest("data/m.xlsx")
        .replace("  grossWeightKg: \"{{ row['Gross weight'] }}\"\n", "")
        .replace("metadata:", "template: by-row\nmetadata:")
    )
    finding = only(load_file(write(Path("m.yaml"), templated)), "row.cell-error")
    assert finding.message.endswith("cell E2 holds the Excel error #VALUE!")
    assert finding.location.cell() == "sheet 'Movements', row 2, column E 'Gross weight'"


def test_a_value_right_of_the_header_is_an_error_at_its_cell() -> None:
    result = _load([GOOD_ROW, [*GOOD_ROW[:5], "rpty_p2", None, "rpty_p3"]])
    finding = only(result, "row.beyond-header")
    assert finding.location.cell() == "sheet 'Movements', row 3, column H"
    assert "cell H3 holds 'rpty_p3', but column H has no name" in finding.message
    assert [d.source.line for d in result.documents] == [2]


@pytest.mark.parametrize("written", ["sheet: null", "sheet: ~", "sheet:"])
def test_a_null_sheet_is_the_first_sheet(written: str) -> None:
    write_xlsx(Path("data/m.xlsx"), [GOOD_ROW])
    manifest = movement_sheet_manifest("data/m.xlsx").replace(
        "forEach: {file: data/m.xlsx}", f"forEach:\n  file: data/m.xlsx\n  {written}"
    )
    result = load_file(write(Path("m.yaml"), manifest))
    assert result.findings == []
    assert [d.source.sheet for d in result.documents] == ["Movements"]


@pytest.mark.parametrize("delimiter", ['"\\""', '"\\n"', "x", '"\\r"', "' '"])
def test_a_delimiter_other_than_those_a_csv_export_uses_is_refused_at_the_key(
    delimiter: str,
) -> None:
    write(Path("data/m.csv"), "Shipment,HAWB\n")
    manifest = movement_sheet_manifest("data/m.csv", f", delimiter: {delimiter}")
    finding = only(load_file(write(Path("m.yaml"), manifest)), "envelope.for-each")
    assert finding.location.path == ("forEach", "delimiter")
    assert finding.message.startswith("forEach.delimiter ")
    assert finding.message.endswith("is not one of ';', ',', tab or '|'")
    assert finding.hint == "Write ';', ',', 'tab' or '|'."


@pytest.mark.parametrize("delimiter", ["';'", "','", "tab", '"\\t"', "'|'", "semicolon"])
def test_the_delimiters_a_csv_export_uses_are_taken(delimiter: str) -> None:
    separator = {"tab": "\t", '"\\t"': "\t", "semicolon": ";"}.get(delimiter, delimiter[1:2])
    write(
        Path("data/m.csv"),
        separator.join(SHEET_HEADERS) + "\n" + separator.join(map(str, GOOD_ROW)) + "\n",
    )
    manifest = movement_sheet_manifest("data/m.csv", f", delimiter: {delimiter}")
    result = load_file(write(Path("m.yaml"), manifest))
    assert result.findings == []
    assert [d.spec["hawbId"] for d in result.documents] == ["hawb_a2"]


@pytest.mark.parametrize("written", ["file: null", "file: ~", "file: [a.csv]"])
def test_a_file_that_is_null_or_not_text_is_a_finding_at_the_key(written: str) -> None:
    manifest = movement_sheet_manifest("data/m.csv").replace("file: data/m.csv", written)
    finding = only(load_file(write(Path("m.yaml"), manifest)), "envelope.for-each")
    assert finding.message == "forEach.file must be a non-empty text"
    assert finding.location.path == ("forEach", "file")


def test_a_true_cell_in_a_text_field_is_the_text_the_sheet_shows_as_from_csv() -> None:
    # Reported: TRUE typed in a free-text column is a boolean in the XLSX, refused there
    # ("got boolean True"), while the same row from the CSV export gave the text TRUE.
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["Code", "Place"])
    sheet.append(["A", True])
    sheet.append(["B", False])
    Path("data").mkdir()
    book.save("data/g.xlsx")
    manifest = (
        "apiVersion: customs-batch/v1\nkind: TemplateGroup\nforEach: {file: data/g.xlsx}\n"
        'metadata: {name: "g-{{ row.Code }}"}\n'
        'spec:\n  name: N\n  code: "{{ row.Code }}"\n  companyId: 1\n'
        '  DeclarationTemplates: [{incotermLocation: "{{ row.Place }}"}]\n'
    )
    result = load_file(write(Path("g.yaml"), manifest))
    assert result.findings == []
    places = [d.spec["DeclarationTemplates"][0]["incotermLocation"] for d in result.documents]
    assert places == ["TRUE", "FALSE"]


def test_a_true_cell_inside_a_text_keeps_the_text_earlier_runs_sent() -> None:
    """Inside a longer text a TRUE cell is Jinja's True, as every earlier release wrote it:
    writing TRUE instead planned departures applied with 'fragile True' as refused (their
    items cannot change) after an upgrade, with nothing changed in the manifest or sheet."""
    Path("data").mkdir()
    Path("data/g.csv").write_text("Code,Fragile\nA,TRUE\nB,false\n", encoding="utf-8")
    for name in ("Fragile {{ row.Fragile }}", "Fragile {{ row.Fragile }} {{ row.Code | lower }}"):
        manifest = (
            "apiVersion: customs-batch/v1\nkind: TemplateGroup\nforEach: {file: data/g.csv}\n"
            'metadata: {name: "g-{{ row.Code }}"}\n'
            f'spec: {{name: "{name}", code: "{{{{ row.Code }}}}", companyId: 1}}\n'
        )
        result = load_file(write(Path("g.yaml"), manifest))
        assert result.findings == []
        names = [d.spec["name"].split()[:2] for d in result.documents]
        assert names == [["Fragile", "True"], ["Fragile", "False"]]


@pytest.mark.parametrize(
    ("option", "key", "said"),
    [
        ("encoding: cp1252", "encoding", "forEach.encoding 'cp1252': data/m.xlsx is a workbook"),
        ("delimiter: ';'", "delimiter", "forEach.delimiter ';': data/m.xlsx is a workbook"),
        ("delimiter: tab", "delimiter", "forEach.delimiter 'tab': data/m.xlsx is a workbook"),
    ],
)
def test_a_csv_option_given_for_a_workbook_is_an_error_at_the_key(
    option: str, key: str, said: str
) -> None:
    # It was silently ignored: the manifest said how the file was to be read, and it was
    # read otherwise.
    result = _load([GOOD_ROW], extra=f", {option}")
    finding = only(result, "envelope.for-each")
    assert finding.message.startswith(said)
    assert finding.location.path == ("forEach", key)
    assert finding.hint is not None and finding.hint.startswith(f"Remove '{key}'")
    assert result.documents == []


def test_decimal_comma_and_null_csv_options_are_taken_for_a_workbook() -> None:
    # decimalComma reads a workbook's text cells; a key written null is not given.
    extra = ", decimalComma: true, encoding: null, delimiter: null"
    result = _load([GOOD_ROW], extra=extra)
    assert result.findings == [] and len(result.documents) == 1


def test_hidden_rows_and_columns_read_are_a_warning_naming_them() -> None:
    # Rows hidden by hand or by a filter were read and sent without a word.
    import openpyxl

    rows = [[*GOOD_ROW[:1], f"hawb_{i}", *GOOD_ROW[2:]] for i in range(7)]
    write_xlsx(Path("data/m.xlsx"), rows)
    book = openpyxl.load_workbook("data/m.xlsx")
    sheet = book.active
    assert sheet is not None
    for number in (3, 4, 5, 6, 7, 8):
        sheet.row_dimensions[number].hidden = True
    sheet.column_dimensions["B"].hidden = True
    book.save("data/m.xlsx")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.xlsx")))
    assert len(result.documents) == 7
    said = [(f.message, f.severity.value, f.location.path) for f in result.findings]
    assert said == [
        (
            "data/m.xlsx: sheet 'Movements' hides 6 of the rows read (rows 3, 4, 5, 6, 7, …); "
            "each is read as any other and gives a document",
            "warning",
            ("forEach",),
        ),
        (
            "data/m.xlsx: sheet 'Movements' hides column B 'HAWB'; read as any other",
            "warning",
            ("forEach",),
        ),
    ]
    assert rules(result) == ["sheet.hidden", "sheet.hidden"]


def test_a_sheet_hiding_nothing_read_says_nothing() -> None:
    assert _load([GOOD_ROW, [*GOOD_ROW[:1], "hawb_b", *GOOD_ROW[2:]]]).findings == []


@pytest.mark.parametrize(
    ("included", "rule", "said"),
    [
        (
            "grossWeightKg: {{ row['Gross weight'] }}\nx: {{ values.nope }}\n",
            "template.undefined",
            "values has no key 'nope'",
        ),
        (
            "grossWeightKg: {{ row['Gross weight'] }}\nx: {{ row.X \n",
            "template.error",
            "syntax error",
        ),
    ],
)
def test_an_error_in_a_template_a_row_template_includes_is_placed_there(
    tmp_path: Path, included: str, rule: str, said: str
) -> None:
    # It was placed in the template including it (a syntax error at its line 1).
    write_xlsx(Path("data/m.xlsx"), [GOOD_ROW, GOOD_ROW])
    write(tmp_path / "customs-batch.yaml", "default_environment: local\n")
    write(tmp_path / "templates/by-row.yaml.j2", "a: 1\n{% include 'part.j2' %}\n")
    write(tmp_path / "templates/part.j2", included)
    templated = (
        movement_sheet_manifest("data/m.xlsx")
        .replace("  grossWeightKg: \"{{ row['Gross weight'] }}\"\n", "")
        .replace("metadata:", "template: by-row\nmetadata:")
    )
    finding = only(load_file(write(Path("m.yaml"), templated)), rule)
    assert finding.location.file == str(Path("templates") / "part.j2")
    assert finding.location.line == 2
    assert said in finding.message


def test_a_name_cell_with_a_space_after_its_text_is_told_so_at_that_cell() -> None:
    # The finding stood at the row, with the hint to use letters and digits: which cell, and
    # that an invisible space was what was wrong, were left to the user to find.
    manifest = movement_sheet_manifest("data/m.xlsx").replace(
        '"mov-{{ row.HAWB }}-{{ row_number }}"', '"{{ row.HAWB }}"'
    )
    row = ["shp_7Hk2Lm", "hawb_a2 ", *GOOD_ROW[2:]]
    finding = only(_load([row], manifest=manifest), "row.name")
    assert finding.message == "'hawb_a2 ' is not a document name"
    assert (finding.location.column_number, finding.location.column_name) == (2, "HAWB")
    assert "space" in finding.hint and "end" in finding.hint


def test_a_name_with_a_space_before_it_in_a_manifest_is_told_so() -> None:
    text = movement_sheet_manifest("data/m.xlsx").replace(
        '"mov-{{ row.HAWB }}-{{ row_number }}"', '" mov-{{ row.HAWB }}"'
    )
    finding = only(_load([GOOD_ROW], manifest=text), "row.name")
    assert "space" in finding.hint and "start" in finding.hint


def test_a_sheet_named_but_for_its_case_or_a_trailing_space_is_told_the_tab_s_name() -> None:
    # The hint listed 'Movements ' among the sheets; that its tab ends in a space (which
    # Excel does not show) was left to be seen in the quotes.
    write_xlsx(Path("data/m.xlsx"), [GOOD_ROW], sheet="Movements ")
    manifest = movement_sheet_manifest("data/m.xlsx", ", sheet: movements")
    finding = only(load_file(write(Path("m.yaml"), manifest)), "sheet.unreadable")
    assert finding.hint.startswith("write sheet: 'Movements ', as the tab names it")


@pytest.mark.parametrize(
    ("cell", "shown"),
    [
        (dt.datetime(2026, 1, 2), "(2026-01-02) holds a date"),  # typed 1-2: 2 January
        (dt.datetime(2026, 3, 4, 8, 30), "(2026-03-04T08:30:00) holds a date and time"),
        (dt.time(12, 30), "(12:30:00) holds a time"),
    ],
)
@pytest.mark.parametrize("extra", ["", ", columns: {Party: text}"])
def test_a_date_cell_in_a_text_field_is_an_error_at_the_cell(
    cell: object, shown: str, extra: str
) -> None:
    """Excel turns text typed into a cell (``1-2``) into a date; its ISO text was sent into
    a text field (``partyId: 2026-01-02``) without a word. No field takes a date: an error
    at the cell, which says what happened and what to do, as for a long number that lost
    its last digits; the row's document is not planned."""
    result = _load([[*GOOD_ROW[:5], cell], GOOD_ROW], extra=extra)
    finding = only(result, "row.cell-type")
    assert finding.message.startswith(f"cell F2 {shown}, but no field takes one: ")
    assert "turns text typed into a cell (1-2, 3/4, 12:30) into a date" in finding.message
    assert "Format the column as Text and type the values again" in finding.hint
    assert (finding.location.row, finding.location.column_name) == (2, "Party")
    assert finding.location.path == ("spec", "partyId")
    assert [doc.spec.get("partyId") for doc in result.documents] == ["rpty_p1"]  # row 3


def test_a_date_cell_is_still_text_to_an_expression() -> None:
    """Only a field refuses a date: a name or a longer text may use the date column."""
    manifest = (
        movement_sheet_manifest("data/m.xlsx")
        .replace('  name: "mov-{{ row.HAWB }}-{{ row_number }}"', '  name: "mov-{{ row.Party }}"')
        .replace('  partyId: "{{ row.Party }}"\n', '  partyId: "rpty_{{ row.Party[:4] }}"\n')
    )
    result = _load([[*GOOD_ROW[:5], dt.date(2026, 1, 2)]], manifest=manifest)
    assert result.findings == []
    assert result.documents[0].name == "mov-2026-01-02"
    assert result.documents[0].spec["partyId"] == "rpty_2026"


def test_a_date_cell_in_a_number_field_says_it_is_a_date() -> None:
    """A German Excel turns a weight typed 3.4 into 3 April: said as a date, not only as
    text that is not a number."""
    result = _load([[*GOOD_ROW[:4], dt.date(2026, 4, 3), GOOD_ROW[5]]])
    finding = only(result, "row.cell-type")
    assert finding.message.startswith("cell E2 (2026-04-03) holds a date, but no field takes")
    assert finding.location.path == ("spec", "grossWeightKg")


@pytest.mark.parametrize("written", ["{{ values.party }}", "{{ values.party | tojson }}"])
def test_a_date_cell_a_template_puts_in_a_field_through_values_is_the_same_error(
    written: str,
) -> None:
    """``values: {party: "{{ row.Party }}"}`` and a template writing the value into a field:
    the date's ISO text was sent in the field; it is the date cell's error, at the cell."""
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("templates/by-values.yaml.j2"), f"partyId: {written}\n")
    manifest = (
        movement_sheet_manifest("data/m.xlsx")
        .replace('  partyId: "{{ row.Party }}"\n', "")
        .replace("metadata:", 'template: by-values\nvalues:\n  party: "{{ row.Party }}"\nmetadata:')
    )
    result = _load([[*GOOD_ROW[:5], dt.date(2026, 1, 2)], GOOD_ROW], manifest=manifest)
    finding = only(result, "row.cell-type")
    assert finding.message.startswith("cell F2 (2026-01-02) holds a date, but no field takes")
    assert (finding.location.row, finding.location.column_name) == (2, "Party")
    assert finding.location.path == ("spec", "partyId")
    assert [doc.spec["partyId"] for doc in result.documents] == ["rpty_p1"]


def test_a_percentage_cell_is_the_text_the_sheet_shows_and_a_number_field_the_number() -> None:
    # Reported: a cell showing 40% (the number 0.4 under a percentage format) read into a
    # text field was sent 0.4; the sheet, and its CSV export, show 40%.
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["Code", "Place", "Rate", "Plain"])
    sheet.append(["A", 0.4, 0.125, 0.4])
    sheet.append(["B", 0.125, 1, 7])
    for row in (2, 3):
        sheet.cell(row, 2).number_format = "0%"
        sheet.cell(row, 3).number_format = "0.00%"
        sheet.cell(row, 4).number_format = "0.00"  # another format: the number
    sheet.cell(3, 2).number_format = "0.0%"
    Path("data").mkdir()
    book.save("data/g.xlsx")
    manifest = (
        "apiVersion: customs-batch/v1\nkind: TemplateGroup\n"
        "forEach: {file: data/g.xlsx, columns: {Rate: number}}\n"
        'metadata: {name: "g-{{ row.Code }}"}\n'
        "values:\n"
        '  rate: "{{ row.Rate }}"\n'
        '  said: "{{ row.Place }} of it"\n'
        '  plain: "{{ row.Plain }}"\n'
        'spec:\n  name: N\n  code: "{{ row.Code }}"\n  companyId: 1\n'
        '  DeclarationTemplates: [{incotermLocation: "{{ row.Place }}"}]\n'
    )
    result = load_file(write(Path("g.yaml"), manifest))
    assert result.findings == []
    places = [d.spec["DeclarationTemplates"][0]["incotermLocation"] for d in result.documents]
    assert places == ["40%", "12.5%"]
    assert [d.values for d in result.documents] == [
        {"rate": 0.125, "said": "40% of it", "plain": 0.4},
        {"rate": 1, "said": "12.5% of it", "plain": 7},
    ]
    # A number field takes the number the cell holds.
    Path("data/m.xlsx").parent.mkdir(exist_ok=True)
    write_xlsx(Path("data/m.xlsx"), [GOOD_ROW])
    book = openpyxl.load_workbook("data/m.xlsx")
    book.active["E2"].number_format = "0%"  # type: ignore[index]
    book.save("data/m.xlsx")
    (document,) = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.xlsx"))).documents
    assert document.spec["grossWeightKg"] == 40.5
    assert type(document.spec["grossWeightKg"]) is float


def test_a_header_cell_wrapped_on_two_lines_is_named_on_one() -> None:
    # Reported: a header cell wrapped with Alt+Enter ("Gross\nweight") was suggested as
    # row['Gross\nweight'] in the hint, and row['Gross weight'], which the docs write, was
    # no column.
    rows: list[list[object]] = [["Shipment", "HAWB", "Action", "Packages", "Gross\n weight"]]
    rows.append(["shp_7Hk2Lm", "hawb_a2", "ISL", 4, 40.5])
    Path("data").mkdir()
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Movements"
    for row in rows:
        sheet.append(row)
    book.save("data/m.xlsx")
    manifest = movement_sheet_manifest("data/m.xlsx").replace('  partyId: "{{ row.Party }}"\n', "")
    result = load_file(write(Path("m.yaml"), manifest))
    assert result.findings == []
    assert result.documents[0].spec["grossWeightKg"] == 40.5
    assert result.documents[0].locate(("spec", "grossWeightKg")).column_name == "Gross weight"
    # As written before, with the line break, it is the same column.
    for written in ("\"{{ row['Gross\\nweight'] }}\"", "'{{ row[''Gross\\nweight''] }}'"):
        again = manifest.replace("\"{{ row['Gross weight'] }}\"", written)
        again = again.replace("data/m.xlsx}", 'data/m.xlsx, columns: {"Gross\\nweight": text}}')
        assert written in again
        result = load_file(write(Path("m.yaml"), again))
        assert result.findings == []  # forEach.columns names the column too
        assert result.documents[0].spec["grossWeightKg"] == 40.5
    typo = manifest.replace("Gross weight", "Gross wieght")
    finding = only(load_file(write(Path("m.yaml"), typo)), "envelope.for-each")
    assert finding.hint is not None
    assert finding.hint.startswith("Did you mean row['Gross weight']? The columns are: ")
