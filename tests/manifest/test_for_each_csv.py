"""forEach over CSV files as spreadsheet programs write them: text converted by the schema."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from customs_batch.findings import Severity
from customs_batch.manifest import load_file
from customs_batch.validation.batch import validate_paths
from tests.manifest.helpers import movement_sheet_manifest, only, write

HEADER = ["Shipment", "HAWB", "Action", "Packages", "Gross weight", "Party"]
ROWS = [
    ["shp_7Hk2Lm", "hawb_a1", "ISL", "4", "40.5", "rpty_p1"],
    ["shp_7Hk2Lm", "hawb_a2", "ISL", "10", "125", "rpty_p2"],
]


def _csv(delimiter: str, rows: list[list[str]], *, decimal_comma: bool = False) -> str:
    lines = [delimiter.join(HEADER)]
    for row in rows:
        cells = list(row)
        if decimal_comma:
            cells[4] = cells[4].replace(".", ",")
        lines.append(delimiter.join(f'"{c}"' if delimiter in c or "\n" in c else c for c in cells))
    return "\r\n".join(lines) + "\r\n"


@pytest.mark.parametrize(
    ("encoding", "delimiter", "decimal_comma"),
    [
        ("utf-8-sig", ";", True),  # Excel "CSV UTF-8" in a German locale
        ("cp1252", ";", True),  # Excel "CSV" in a German locale
        ("utf-8", ",", False),  # LibreOffice, English locale
        ("utf-8", "\t", False),  # "Text (tab delimited)"
    ],
)
def test_real_exports_give_the_same_documents(
    encoding: str, delimiter: str, decimal_comma: bool
) -> None:
    data = _csv(delimiter, ROWS, decimal_comma=decimal_comma).encode(encoding)
    Path("data").mkdir()
    Path("data/m.csv").write_bytes(data)
    extra = ", decimalComma: true" if decimal_comma else ""
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv", extra)))
    assert result.findings == []
    specs = [
        (d.spec["hawbId"], d.spec["quantity"], d.spec["grossWeightKg"]) for d in result.documents
    ]
    assert specs == [("hawb_a1", 4, 40.5), ("hawb_a2", 10, 125)]
    assert result.documents[0].source.sheet == "m"  # a CSV's one sheet, as Excel names it


def test_windows_1252_text_and_quoted_newlines_survive() -> None:
    manifest = movement_sheet_manifest("data/m.csv", ", decimalComma: true").replace(
        "metadata:",
        "values:\n  note: \"{{ row['Gross weight'] }} kg, {{ row.Remark }}\"\nmetadata:",
    )
    text = (
        "Shipment;HAWB;Action;Packages;Gross weight;Party;Remark\r\n"
        'shp_7Hk2Lm;hawb_a1;ISL;4;40,5;rpty_p1;"Gewürze\r\nin Säcken"\r\n'
        ";;;;;;\r\n"
    )
    Path("data").mkdir()
    Path("data/m.csv").write_bytes(text.encode("cp1252"))
    result = load_file(write(Path("m.yaml"), manifest))
    assert result.findings == []
    (document,) = result.documents
    # The cell is the number 40.5, as an XLSX export of the row would give it.
    # The line break is \n, as the XLSX export's cell holds it.
    assert document.values["note"] == "40.5 kg, Gewürze\nin Säcken"


@pytest.mark.parametrize(
    ("packages", "weight", "message", "column"),
    [
        ("vier", "40,5", "'vier' is not a whole number", "D"),
        ("4,5", "40,5", "'4,5' is not a whole number", "D"),
        ("4", "40,5,1", "'40,5,1' is not a number", "E"),
        ("4", "4O,5", "'4O,5' is not a number", "E"),
    ],
)
def test_a_cell_that_does_not_convert_names_its_row_and_column(
    packages: str, weight: str, message: str, column: str
) -> None:
    rows = [ROWS[0], [*ROWS[1][:3], packages, weight, ROWS[1][5]]]
    Path("data").mkdir()
    Path("data/m.csv").write_bytes(_csv(";", rows, decimal_comma=True).encode("utf-8-sig"))
    result = load_file(
        write(Path("m.yaml"), movement_sheet_manifest("data/m.csv", ", decimalComma: true"))
    )
    finding = only(result, "row.cell-type")
    assert finding.message == message
    assert finding.location.file == "data/m.csv"
    assert finding.location.cell() is not None
    assert finding.location.cell().startswith(f"sheet 'm', row 3, column {column} ")  # type: ignore[union-attr]


def test_a_boolean_column_converts_yes_and_no() -> None:
    manifest = (
        "apiVersion: customs-batch/v1\nkind: TemplateGroup\n"
        "forEach: {file: data/g.csv}\n"
        'metadata: {name: "g-{{ row.Code | lower }}"}\n'
        'spec: {name: "{{ row.Name }}", code: "{{ row.Code }}", companyId: "{{ row.Company }}",'
        ' isDefault: "{{ row.Default }}"}\n'
    )
    Path("data").mkdir()
    Path("data/g.csv").write_text(
        "Name,Code,Company,Default\nA,A1,1,yes\nB,B1,1,no\nC,C1,1,maybe\n"
    )
    result = load_file(write(Path("m.yaml"), manifest))
    assert [d.spec["isDefault"] for d in result.documents] == [True, False]
    finding = only(result, "row.cell-type")
    assert (finding.message, finding.location.row, finding.location.column_number) == (
        "'maybe' is not yes or no",
        4,
        4,
    )
    # In the text: line 4, where 'maybe' starts (C,C1,1,maybe).
    assert (finding.location.line, finding.location.column) == (4, 8)


def test_every_for_each_option_is_honoured() -> None:
    text = "Export of 2026-03-02\r\n" + _csv("\t", [*ROWS, ROWS[0]], decimal_comma=True)
    Path("data").mkdir()
    Path("data/m.txt").write_bytes(text.encode("cp1252"))
    options = ", header: 2, rows: 4-5, encoding: cp1252, delimiter: tab, decimalComma: true"
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.txt", options)))
    assert result.findings == []
    assert [(d.source.line, d.spec["grossWeightKg"]) for d in result.documents] == [
        (4, 125),
        (5, 40.5),
    ]


def test_labels_are_rendered_per_row() -> None:
    manifest = movement_sheet_manifest("data/m.csv").replace(
        '  name: "mov-{{ row.HAWB }}-{{ row_number }}"\n',
        '  name: "mov-{{ row.HAWB }}-{{ row_number }}"\n'
        '  labels: {lane: "{{ row.Shipment }}", packages: "{{ row.Packages }}", team: rtm}\n',
    )
    write(Path("data/m.csv"), _csv(",", ROWS))
    result = load_file(write(Path("m.yaml"), manifest))
    assert result.findings == []
    assert [dict(d.labels) for d in result.documents] == [
        {"lane": "shp_7Hk2Lm", "packages": "4", "team": "rtm"},
        {"lane": "shp_7Hk2Lm", "packages": "10", "team": "rtm"},
    ]


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (
            "",
            "'9999999999999999999999999999999999999999'... (5,000 characters) has too many digits",
        ),
        (", columns: {Packages: integer}", "column 'Packages' is declared integer"),
    ],
)
def test_a_cell_of_more_digits_than_python_prints_is_a_finding(columns: str, message: str) -> None:
    rows = [[*ROWS[0][:3], "9" * 5_000, *ROWS[0][4:]]]
    Path("data").mkdir()
    Path("data/m.csv").write_text(_csv(",", rows), encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv", columns)))
    assert only(result, "row.cell-type").message.startswith(message)


WIDE_HEADER = "Shipment,HAWB,Action,Packages,Gross weight,Supervision,Party,Comment"


def _wide_rows(count: int) -> list[str]:
    return [f"shp_7Hk2Lm,hawb_a{n},ISL,4,40.5,Y,rpty_p1,ok" for n in range(1, count + 1)]


def test_a_quote_left_open_is_an_error_not_rows_swallowed_into_a_cell() -> None:
    lines = _wide_rows(10)
    lines[2] = lines[2].replace(",ok", ',"fragile')  # row 4; rows 5 to 11 follow it
    write(Path("data/m.csv"), "\n".join([WIDE_HEADER, *lines]) + "\n")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    finding = only(result, "sheet.unreadable")
    assert finding.message == (
        "data/m.csv, line 4: the quote that opens column H of row 4 is never closed: "
        "the 7 more lines after it would be read into that cell"
    )
    assert (finding.location.file, finding.location.row) == ("data/m.csv", 4)
    assert '"""fragile"' in finding.hint
    assert [d.source.line for d in result.documents] == [2, 3]  # none from the cell's rows


def test_a_row_with_more_values_than_the_header_is_an_error_at_that_row() -> None:
    lines = _wide_rows(3)
    lines[1] = lines[1].replace(",40.5,", ",60,5,")  # row 3: 60,5 not quoted
    lines.append("shp_7Hk2Lm,hawb_a9,ISL,4,40.5,Y,rpty_p1,ok,,")  # empty trailing fields
    write(Path("data/m.csv"), "\n".join([WIDE_HEADER, *lines]) + "\n")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    finding = only(result, "row.beyond-header")
    assert finding.message == (
        "row 3 has 9 values where the header (row 1) names 8 columns: 'ok' in column I "
        "has no column name"
    )
    assert finding.location.cell() == "sheet 'm', row 3, column I"
    assert [d.source.line for d in result.documents] == [2, 4, 5]
    assert len(result.findings) == 1


def test_excel_unicode_text_is_read_with_or_without_a_declared_encoding() -> None:
    text = "\r\n".join(["\t".join(HEADER), *("\t".join(row) for row in ROWS)]) + "\r\n"
    write(Path("data/u.txt"), "")
    Path("data/u.txt").write_bytes(text.encode("utf-16"))  # with a BOM, as Excel writes it
    Path("data/le.txt").write_bytes(text.encode("utf-16-le"))  # no BOM
    for file, extra in (
        ("u.txt", ""),
        ("u.txt", ", encoding: utf-16"),
        ("le.txt", ", encoding: utf-16-le"),
    ):
        result = load_file(write(Path("m.yaml"), movement_sheet_manifest(f"data/{file}", extra)))
        assert result.findings == [], (file, extra)
        assert [d.spec["hawbId"] for d in result.documents] == ["hawb_a1", "hawb_a2"]
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/le.txt")))
    assert "encoding: utf-16-le" in only(result, "sheet.unreadable").hint


@pytest.mark.parametrize("order", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("declared", ["", ", encoding: utf-16"])
def test_utf16_without_a_bom_gets_the_hint_of_its_own_byte_order(order: str, declared: str) -> None:
    # A big-endian file was told `encoding: utf-16-le`, which read it as one line of CJK
    # characters: "has no data rows".
    Path("data").mkdir()
    Path("data/m.csv").write_bytes(_csv(",", ROWS).encode(order))
    manifest = movement_sheet_manifest("data/m.csv", declared)
    finding = only(load_file(write(Path("m.yaml"), manifest)), "sheet.unreadable")
    other = "utf-16-be" if order == "utf-16-le" else "utf-16-le"
    assert finding.hint is not None
    assert f"`encoding: {order}`" in finding.hint and other not in finding.hint
    result = load_file(
        write(Path("m.yaml"), movement_sheet_manifest("data/m.csv", f", encoding: {order}"))
    )
    assert result.findings == []


def test_utf32_without_a_bom_is_given_no_wrong_byte_order() -> None:
    Path("data").mkdir()
    Path("data/m.csv").write_bytes(_csv(",", ROWS).encode("utf-32-le"))
    manifest = movement_sheet_manifest("data/m.csv")
    finding = only(load_file(write(Path("m.yaml"), manifest)), "sheet.unreadable")
    assert finding.hint is not None and "looks like" not in finding.hint


@pytest.mark.parametrize("encoding", ["rot13", "hex", "base64", "undefined"])
def test_an_encoding_that_is_not_a_text_encoding_is_an_error_at_the_key(encoding: str) -> None:
    # rot13 and its kind were "unknown encoding 'rot13' for m.csv"; undefined was an
    # internal error.
    write(Path("data/m.csv"), _csv(",", ROWS))
    manifest = movement_sheet_manifest("data/m.csv", f", encoding: {encoding}")
    finding = only(load_file(write(Path("m.yaml"), manifest)), "envelope.for-each")
    assert finding.message == f"{encoding!r} is not a text encoding"
    assert finding.location.path == ("forEach", "encoding")


@pytest.mark.parametrize(
    ("encoding", "said"),
    [
        ("punycode", "is not valid punycode (Invalid extended code point"),
        ("utf-16", "is not valid utf-16 (UTF-16 stream does not start with BOM)"),
    ],
)
def test_a_codec_s_own_error_is_a_finding_not_an_internal_error(encoding: str, said: str) -> None:
    Path("data").mkdir()
    Path("data/m.csv").write_bytes(
        _csv(",", ROWS).encode("utf-16-le" if encoding == "utf-16" else "utf-8")
    )
    manifest = movement_sheet_manifest("data/m.csv", f", encoding: {encoding}")
    finding = only(load_file(write(Path("m.yaml"), manifest)), "sheet.unreadable")
    assert said in finding.message
    if encoding == "utf-16":
        assert "encoding: utf-16-le" in finding.hint


@pytest.mark.parametrize("kind", ["ExportCancellation", "TransitPartyUpdate"])
def test_a_declaration_number_from_a_csv_cell_is_converted_like_an_xlsx_number(
    kind: str,
) -> None:
    # declarationId takes a number or a ${ref:...}: '501' from a CSV cell is the number.
    extra = (
        "  partyRole: departure\n  name: Acme Export BV\n" if kind != "ExportCancellation" else ""
    )
    write(Path("data/c.csv"), "Id\n501\n${ref:DepartureDeclaration/d-1.declarationId}\nabc\n")
    manifest = (
        f"apiVersion: customs-batch/v1\nkind: {kind}\nforEach: {{file: data/c.csv}}\n"
        'metadata: {name: "c-{{ row_number }}"}\n'
        f'spec:\n  declarationId: "{{{{ row.Id }}}}"\n{extra}'
    )
    result = load_file(write(Path("m.yaml"), manifest))
    assert [d.spec["declarationId"] for d in result.documents] == [
        501,
        "${ref:DepartureDeclaration/d-1.declarationId}",
    ]
    assert [str(r.target) for r in result.documents[1].references] == ["DepartureDeclaration/d-1"]
    wrong = only(result, "row.cell-type")
    assert (wrong.location.line, wrong.message) == (4, "'abc' is not a whole number")
    assert "${ref:" in wrong.hint


@pytest.mark.parametrize(
    ("delimiter", "extra", "read"),
    [
        (";", "", None),  # a decimal-comma export, and the manifest does not say: an error
        (";", ", decimalComma: true", (1250, 2000)),
        (";", ", decimalComma: false", (1.25, 2)),
        (",", "", (1.25, 2)),  # a point is the decimal mark where commas separate cells
        # Excel's "Unicode Text" export is tab-separated whatever the locale: a German one
        # wrote 1.250 kg, which was read as 1.25 kg without a word.
        ("\t", "", None),
        ("\t", ", decimalComma: true", (1250, 2000)),
        ("|", "", None),
    ],
)
def test_a_number_with_points_every_three_digits_reads_as_the_sheet_says(
    delimiter: str, extra: str, read: tuple[float, float] | None
) -> None:
    # Reported: a German Excel export (';') of a weight column grouped in thousands wrote
    # 1250 kg as 1.250, which was read as 1.25 kg without a word; the XLSX gives 1250.
    rows = [
        [*row[:4], weight, row[5]] for row, weight in zip(ROWS, ("1.250", "2.000"), strict=True)
    ]
    Path("data").mkdir()
    Path("data/m.csv").write_bytes(_csv(delimiter, rows).encode("utf-8-sig"))
    manifest = movement_sheet_manifest("data/m.csv", extra).replace(
        "metadata:", "values:\n  note: \"{{ row['Gross weight'] }} kg\"\nmetadata:"
    )
    result = load_file(write(Path("m.yaml"), manifest))
    if read is None:
        assert result.documents == []
        findings = [f for f in result.findings if f.rule == "row.cell-type"]
        assert {f.location.row for f in findings} == {2, 3}
        assert all("reads two ways" in f.message and "decimalComma" in f.hint for f in findings)
        assert {f.location.column_name for f in findings} == {"Gross weight"}
    else:
        assert result.findings == []
        assert tuple(d.spec["grossWeightKg"] for d in result.documents) == read
        assert [d.values["note"] for d in result.documents] == [f"{w} kg" for w in read]


def test_a_column_declared_text_keeps_points_every_three_digits_as_written() -> None:
    manifest = (
        "apiVersion: customs-batch/v1\nkind: TemplateGroup\n"
        "forEach: {file: data/g.csv, columns: {Code: text}}\n"
        'metadata: {name: "g-{{ row_number }}"}\n'
        'spec: {name: "Version {{ row.Code }}", code: "{{ row.Code }}", companyId: 1}\n'
    )
    Path("data").mkdir()
    Path("data/g.csv").write_text("Code;Other\r\n1.250;x\r\n", encoding="utf-8")
    result = load_file(write(Path("g.yaml"), manifest))
    assert [f for f in result.findings if f.severity.value == "error"] == []
    assert result.documents[0].spec["name"] == "Version 1.250"


@pytest.mark.parametrize("count", [2, 4000], ids=["in the first bytes", "far into the file"])
def test_a_utf8_file_with_a_line_in_another_encoding_is_refused_at_that_line(count: int) -> None:
    # Reported: UTF-8 rows and one Windows-1252 byte made the whole file Windows-1252, and
    # every other row's "Müller" became "MÃ¼ller" without a word.
    text = "Shipment,HAWB,Action,Packages,Gross weight,Party\n"
    rows = "".join(f"shp_7Hk2Lm,hawb_ü{n},ISL,{n},1.5,rpty_p1\n" for n in range(count))
    data = (text + rows).encode("utf-8") + b"shp_7Hk2Lm,hawb_caf\xe9,ISL,1,1.5,rpty_p1\n"
    Path("data").mkdir()
    Path("data/m.csv").write_bytes(data)
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    finding = only(result, "sheet.unreadable")
    at = len(data) - len(b"\xe9,ISL,1,1.5,rpty_p1\n")
    assert finding.message == (
        f"data/m.csv, line {count + 2:,}: the byte e9 is not valid utf-8 (byte {at:,} of the file)"
    )
    assert "UTF-8 elsewhere" in finding.hint and "encoding: cp1252" in finding.hint
    assert result.documents == []
    # Said to be Windows-1252, the file is read as such: the user's word is taken.
    stated = load_file(
        write(Path("m.yaml"), movement_sheet_manifest("data/m.csv", ", encoding: cp1252"))
    )
    assert not [f for f in stated.findings if f.rule == "sheet.unreadable"]


def test_a_row_whose_hawb_cell_is_empty_where_other_rows_give_one_is_a_warning() -> None:
    # Reported: a row whose HAWB cell was forgotten became a movement of the shipment's
    # master AWB, and validate --strict said nothing.
    rows = [ROWS[0], [ROWS[1][0], "", *ROWS[1][2:]], [*ROWS[1][:3], "5", *ROWS[1][4:]]]
    Path("data").mkdir()
    Path("data/m.csv").write_bytes(_csv(",", rows).encode("utf-8"))
    manifest = movement_sheet_manifest("data/m.csv").replace("{{ row.HAWB }}-", "")
    write(Path("m.yaml"), manifest)
    result = validate_paths(["m.yaml"])
    [finding] = [f for f in result.findings if f.rule == "project.lane-left-out"]
    assert finding.severity is Severity.WARNING and finding.location.row == 3
    assert "gives no hawbId, where 2 other row(s) of data/m.csv give one" in finding.message
    assert "master AWB" in finding.message
    # A sheet whose rows are all of the master AWB says nothing.
    bare = [[row[0], "", *row[2:]] for row in ROWS]
    Path("data/m.csv").write_bytes(_csv(",", bare).encode("utf-8"))
    assert not [f for f in validate_paths(["m.yaml"]).findings if f.rule == "project.lane-left-out"]


def test_a_signed_number_with_points_every_three_digits_reads_two_ways_too() -> None:
    rows = [[*ROWS[0][:4], "+1.250", ROWS[0][5]]]
    Path("data").mkdir()
    Path("data/m.csv").write_bytes(_csv(";", rows).encode("utf-8"))
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    assert "reads two ways" in only(result, "row.cell-type").message


def test_a_windows_1252_export_holding_a_utf8_lookalike_is_still_windows_1252() -> None:
    # Found in review: “PERÚ” in Windows-1252 holds the bytes DA 94, a valid UTF-8
    # character: the file was taken for UTF-8 with a bad line, and refused.
    text = (
        "Shipment;HAWB;Action;Packages;Gross weight;Party;Remark\r\n"
        "shp_7Hk2Lm;hawb_a1;ISL;4;40,5;rpty_p1;“PERÚ” über Köln\r\n"
    )
    Path("data").mkdir()
    Path("data/m.csv").write_bytes(text.encode("cp1252"))
    manifest = movement_sheet_manifest("data/m.csv", ", decimalComma: true").replace(
        "metadata:", 'values:\n  note: "{{ row.Remark }}"\nmetadata:'
    )
    result = load_file(write(Path("m.yaml"), manifest))
    assert result.findings == []
    assert result.documents[0].values["note"] == "“PERÚ” über Köln"
    # The annotated copy reads it alike (it cannot know the manifest's encoding).
    from customs_batch.manifest.spreadsheet.copy import open_copy

    sheet = open_copy(Path("data/m.csv"), "m")["m"]
    assert sheet["G2"].value == "“PERÚ” über Köln"


def test_the_annotated_copy_of_a_csv_not_all_utf8_is_still_made() -> None:
    # Found in review: with `encoding: cp1252` in forEach the file was read, but its
    # annotated copy guessed UTF-8 again and could not be made.
    from customs_batch.manifest.spreadsheet.copy import open_copy

    Path("data").mkdir()
    data = "A;B\r\nMüller;Düsseldorf\r\n".encode() + b"Caf\xe9;x\r\n"
    Path("data/m.csv").write_bytes(data)
    sheet = open_copy(Path("data/m.csv"), "m")["m"]
    assert sheet["A3"].value == "Café"


def test_an_mrn_cell_with_a_trailing_space_is_checked_and_refused_at_its_cell() -> None:
    # Reported: a cell copied from a customs letter with a space after the MRN skipped
    # every MRN check, and the movement was sent with the space.
    Path("data").mkdir()
    Path("data/x.csv").write_text("Ref,MRN\na1,26NLR0000000042029 \n", encoding="utf-8")
    manifest = (
        "apiVersion: customs-batch/v1\nkind: Movement\nforEach: {file: data/x.csv}\n"
        'metadata: {name: "mv-{{ row.Ref }}"}\n'
        'spec: {shipmentId: shp_7Hk2Lm, hawbId: "hawb_{{ row.Ref }}", action: VAB, quantity: 1,'
        " grossWeightKg: 1, customsSupervision: N, goodsHandlingCode: N, partyId: rpty_p1,"
        " customsDeclaration: {source: EXTERNAL, documentType: X, declarationType: IM,"
        ' declarationNumber: "{{ row.MRN }}"}}\n'
    )
    write(Path("m.yaml"), manifest)
    found = sorted((f.rule, f.location.cell()) for f in validate_paths(["m.yaml"], jobs=1).findings)
    at = "sheet 'x', row 2, column B 'MRN'"
    assert found == [("mrn.check-digit", at), ("mrn.format", at)]


def test_a_whole_number_written_with_a_point_fills_a_whole_number_field_as_from_xlsx() -> None:
    # Reported: '2.0' (as pandas writes a whole number) was "not a whole number" in
    # quantity, where the XLSX cell 2.0 and {{ row.Packages * 1 }} gave 2.
    rows = [[*ROWS[0][:3], "2.0", *ROWS[0][4:]], [*ROWS[1][:3], "2.5", *ROWS[1][4:]]]
    Path("data").mkdir()
    Path("data/m.csv").write_text(_csv(",", rows), encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    assert [d.spec["quantity"] for d in result.documents] == [2]
    assert only(result, "row.cell-type").message == "'2.5' is not a whole number"


def test_a_spreadsheet_linked_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    # A manifest in a pull request with data/m.csv -> a file of the runner (a .env of keys)
    # printed that file's lines in findings ("column A 'API_KEY=...'") in the CI log.
    outside = tmp_path.parent / f"{tmp_path.name}-outside.env"
    outside.write_text("CUSTOMS_API_KEY=topsecret123\nOTHER=x\n", encoding="utf-8")
    Path("data").mkdir()
    Path("data/m.csv").symlink_to(outside)
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv", "")))
    finding = only(result, "sheet.unreadable")
    assert finding.message == (
        f"data/m.csv resolves to {outside.resolve()}, outside the project "
        f"({tmp_path.resolve()}): a spreadsheet linked out of the project is not read"
    )
    assert result.documents == []
    assert "topsecret" not in str(result.findings)


def test_a_spreadsheet_named_by_its_own_path_outside_the_project_is_read(
    tmp_path: Path,
) -> None:
    # The manifest's own word, seen in review: a shared export folder beside the project.
    outside = tmp_path.parent / f"{tmp_path.name}-exports"
    outside.mkdir()
    (outside / "m.csv").write_text(_csv(",", ROWS), encoding="utf-8")
    Path("data").mkdir()
    Path("data/inside.csv").symlink_to(Path("m-inside.csv").resolve())
    Path("m-inside.csv").write_text(_csv(",", ROWS), encoding="utf-8")
    text = movement_sheet_manifest(f"../{outside.name}/m.csv", "")
    assert load_file(write(Path("m.yaml"), text)).findings == []
    linked = load_file(write(Path("n.yaml"), movement_sheet_manifest("data/inside.csv", "")))
    assert linked.findings == []  # a link within the project is read as usual
    assert len(linked.documents) == 2


def test_a_spreadsheet_linked_out_is_not_read_when_the_project_is_named_through_a_link(
    tmp_path: Path,
) -> None:
    # Found by a regression probe: the manifest named through a link to the project folder
    # (/tmp/link/m.yaml; macOS's /tmp is one) was taken for outside the project, and
    # data/m.csv -> a .env printed its lines in findings.
    outside = tmp_path.parent / f"{tmp_path.name}-outside.env"
    outside.write_text("CUSTOMS_API_KEY=topsecret123\nOTHER=x\n", encoding="utf-8")
    link = tmp_path.parent / f"{tmp_path.name}-link"
    link.symlink_to(tmp_path)
    Path("data").mkdir()
    Path("data/m.csv").symlink_to(outside)
    write(Path("m.yaml"), movement_sheet_manifest("data/m.csv", ""))
    result = load_file(link / "m.yaml")
    finding = only(result, "sheet.unreadable")
    assert finding.message == (
        f"{link / 'data/m.csv'} resolves to {outside.resolve()}, outside the project "
        f"({tmp_path.resolve()}): a spreadsheet linked out of the project is not read"
    )
    assert result.documents == []
    assert "topsecret" not in str(result.findings)
    # A spreadsheet within the project, named through the link, is read as usual.
    Path("data/inside.csv").write_text(_csv(",", ROWS), encoding="utf-8")
    write(Path("n.yaml"), movement_sheet_manifest("data/inside.csv", ""))
    inside = load_file(link / "n.yaml")
    assert inside.findings == []
    assert len(inside.documents) == 2


@pytest.mark.parametrize(
    ("packages", "weight", "message", "column"),
    [
        ("\u0663", "40.5", "'\u0663' is not a whole number", "D"),  # Arabic-Indic 3
        ("4", "\u0664\u0660.5", "'\u0664\u0660.5' is not a number", "E"),
        ("\uff14", "40.5", "'\uff14' is not a whole number", "D"),  # fullwidth 4
    ],
)
def test_digits_of_another_script_are_no_number_as_in_a_yaml_manifest(
    packages: str, weight: str, message: str, column: str
) -> None:
    # A cell '٣' was read as 3 where a manifest's `quantity: ٣` is a schema error.
    rows = [ROWS[0], [*ROWS[1][:3], packages, weight, ROWS[1][5]]]
    Path("data").mkdir()
    Path("data/m.csv").write_text(_csv(",", rows), encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    finding = only(result, "row.cell-type")
    assert finding.message == message
    assert finding.hint is not None and "digits 0-9" in finding.hint
    assert finding.location.cell() is not None
    assert finding.location.cell().startswith(f"sheet 'm', row 3, column {column} ")  # type: ignore[union-attr]


@pytest.mark.parametrize("sheet", ["'../../etc'", "Movements"])
def test_a_sheet_named_for_a_csv_file_is_an_error_at_the_key(sheet: str) -> None:
    # It was silently ignored: the CSV's rows were read as the rows of the sheet named.
    write(Path("data/m.csv"), _csv(",", ROWS))
    manifest = movement_sheet_manifest("data/m.csv", f", sheet: {sheet}")
    result = load_file(write(Path("m.yaml"), manifest))
    finding = only(result, "envelope.for-each")
    assert finding.message.endswith("data/m.csv is a CSV file, which has no sheets")
    assert finding.location.path == ("forEach", "sheet")
    assert finding.hint is not None and finding.hint.startswith("Remove 'sheet'")
    assert result.documents == []


def test_sheet_null_on_a_csv_file_is_no_sheet_named() -> None:
    write(Path("data/m.csv"), _csv(",", ROWS))
    manifest = movement_sheet_manifest("data/m.csv", ", sheet: null")
    assert load_file(write(Path("m.yaml"), manifest)).findings == []


@pytest.mark.parametrize("cells", [100, 10_000_000])
def test_max_cells_given_for_a_csv_file_is_an_error_at_the_key(cells: int) -> None:
    # It was silently ignored: a CSV file is read row by row, bounded by maxRows and
    # maxMegabytes, and the bound the manifest asked for was not kept.
    write(Path("data/m.csv"), _csv(",", ROWS))
    manifest = movement_sheet_manifest("data/m.csv", f", maxCells: {cells}")
    result = load_file(write(Path("m.yaml"), manifest))
    finding = only(result, "envelope.for-each")
    assert finding.message == (
        f"forEach.maxCells {cells}: data/m.csv is a CSV file, which maxCells does not bound "
        "(it is read row by row)"
    )
    assert finding.location.path == ("forEach", "maxCells")
    assert finding.hint is not None and "maxRows and maxMegabytes" in finding.hint
    assert result.documents == []


def test_max_cells_that_is_no_number_is_said_once_for_a_csv_file() -> None:
    write(Path("data/m.csv"), _csv(",", ROWS))
    manifest = movement_sheet_manifest("data/m.csv", ", maxCells: 1.5")
    finding = only(load_file(write(Path("m.yaml"), manifest)), "envelope.for-each")
    assert finding.message == "forEach.maxCells must be a whole number (1 or more)"


@pytest.mark.parametrize("bom", [True, False])
@pytest.mark.parametrize(("order", "declared"), [("be", "le"), ("le", "be")])
def test_utf16_read_in_the_other_byte_order_names_the_one_that_fits(
    order: str, declared: str, bom: bool
) -> None:
    # A big-endian file read with `encoding: utf-16-le` was one line of garbled characters:
    # only a warning that it had no data rows, and validate exited 0.
    Path("data").mkdir()
    text = _csv(",", ROWS).encode(f"utf-16-{order}")
    mark = codecs.BOM_UTF16_BE if order == "be" else codecs.BOM_UTF16_LE
    Path("data/m.csv").write_bytes(mark + text if bom else text)
    manifest = movement_sheet_manifest("data/m.csv", f", encoding: utf-16-{declared}")
    result = load_file(write(Path("m.yaml"), manifest))
    finding = only(result, "sheet.unreadable")
    endian = {"be": "big-endian", "le": "little-endian"}[order]
    told = "its BOM" if bom else "where its NUL bytes are"
    assert finding.message == (
        f"data/m.csv is {endian} UTF-16 text (told by {told}), not utf-16-{declared}"
    )
    assert finding.hint is not None and f"`encoding: utf-16-{order}`" in finding.hint
    assert ("leave `encoding` out" in finding.hint) is bom
    assert result.documents == []


def test_a_file_of_one_byte_characters_declared_utf16_names_what_it_reads_as() -> None:
    write(Path("data/m.csv"), _csv(",", ROWS))
    manifest = movement_sheet_manifest("data/m.csv", ", encoding: utf-16-le")
    finding = only(load_file(write(Path("m.yaml"), manifest)), "sheet.unreadable")
    assert finding.message.startswith("data/m.csv is not utf-16-le text: it holds no NUL byte")
    assert finding.hint is not None and "`encoding: utf-8`" in finding.hint


def test_utf16_with_a_bom_declared_one_byte_is_told_the_bom_names_it() -> None:
    Path("data").mkdir()
    Path("data/m.csv").write_bytes(_csv(",", ROWS).encode("utf-16"))
    manifest = movement_sheet_manifest("data/m.csv", ", encoding: cp1252")
    finding = only(load_file(write(Path("m.yaml"), manifest)), "sheet.unreadable")
    assert finding.hint is not None and "starts with the BOM of" in finding.hint
    assert "without a BOM" not in finding.hint


@pytest.mark.parametrize("word", ["Total", "TOTAL", "Sum", "Summe", "Totaal", "Total:"])
def test_a_total_row_at_the_end_is_named_as_one(word: str) -> None:
    """A sum typed below the data and exported with it read as a row whose cells are
    empty (``row.empty-cell``, a HAWB left out): it is one finding saying it looks like a
    total row and how to leave it out, and the row gives no document; never skipped
    without a word."""
    data = _csv(";", [*ROWS, [word, "", "", "14", "165.5", ""]])
    Path("data").mkdir()
    Path("data/m.csv").write_text(data, encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    finding = only(result, "row.totals-row")
    assert [f.rule for f in result.findings] == ["row.totals-row"]
    assert finding.severity is Severity.ERROR
    assert finding.message.startswith(
        f"row 4 looks like a total row, not data: its first cell (A4, 'Shipment') says "
        f"{word!r} and 'HAWB', 'Action', 'Party' are empty"
    )
    assert finding.hint.startswith(
        "Leave it out with 'rows' in forEach ('rows: 2-3' reads the rows above it); "
    )
    assert (finding.location.row, finding.location.column_name) == (4, "Shipment")
    assert len(result.documents) == 2


def test_a_row_whose_first_cell_says_total_but_that_is_full_is_data() -> None:
    data = _csv(",", [[*ROWS[0][:1], *ROWS[0][1:]], ["Total", *ROWS[1][1:]]])
    Path("data").mkdir()
    Path("data/m.csv").write_text(data, encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    assert [f.rule for f in result.findings if f.rule.startswith("row.")] == []
    assert len(result.documents) == 2


def test_a_row_whose_first_cell_says_total_beside_words_is_data() -> None:
    # A consignee named TOTAL, an optional cell left empty: data, not a total row (the
    # check refused it, with no way to keep the name).
    data = _csv(",", [ROWS[0], ["TOTAL", "hawb_a2", "ISL", "10", "125", ""]])
    Path("data").mkdir()
    Path("data/m.csv").write_text(data, encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    assert "row.totals-row" not in [f.rule for f in result.findings]


@pytest.mark.parametrize("shown", ["#N/A", "#REF!", "#DIV/0!", "#VALUE!", "Err:502", "#ERROR!"])
def test_an_exported_error_cell_is_an_error_at_the_cell_not_its_text(shown: str) -> None:
    """A CSV export writes a cell that shows an error as its text: ``#N/A`` was read as
    the value (sent as a party or a mark) where the same cell of the XLSX is an error at
    the cell. It is now that error, with what to do; a column the manifest declares text
    keeps it as written."""
    data = _csv(",", [ROWS[0], [*ROWS[1][:5], shown]])
    Path("data").mkdir()
    Path("data/m.csv").write_text(data, encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    finding = only(result, "row.cell-error")
    assert finding.message == (
        f"cell F3 holds {shown}, the text a spreadsheet program exports for a cell that "
        "shows an error (a formula that failed), not a value"
    )
    assert "columns: {Party: text}" in finding.hint
    assert (finding.location.row, finding.location.column_name) == (3, "Party")
    assert [doc.spec.get("partyId") for doc in result.documents] == ["rpty_p1"]
    declared = movement_sheet_manifest("data/m.csv", ", columns: {Party: text}")
    result = load_file(write(Path("m.yaml"), declared))
    assert [f.rule for f in result.findings if f.rule.startswith("row.")] == []
    assert [doc.spec.get("partyId") for doc in result.documents] == ["rpty_p1", shown]


def test_text_that_only_starts_like_an_error_is_text() -> None:
    data = _csv(",", [[*ROWS[0][:5], "#N/A in stock"], [*ROWS[1][:5], "#n/a"]])
    Path("data").mkdir()
    Path("data/m.csv").write_text(data, encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    assert not [f for f in result.findings if f.rule == "row.cell-error"]


def test_a_total_row_with_no_data_above_it_names_no_rows_range() -> None:
    data = _csv(";", [["Total", "", "", "14", "165.5", ""]])
    Path("data").mkdir()
    Path("data/m.csv").write_text(data, encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    finding = only(result, "row.totals-row")
    assert finding.hint.startswith("No data row is above it: check forEach.header; ")
    assert "rows:" not in finding.hint


def test_a_total_row_labelled_left_of_its_sums_is_named_as_one() -> None:
    data = _csv(",", [*ROWS, ["", "", "Total", "14", "165.5", ""]])
    Path("data").mkdir()
    Path("data/m.csv").write_text(data, encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    finding = only(result, "row.totals-row")
    assert [f.rule for f in result.findings] == ["row.totals-row"]
    assert finding.message.startswith(
        "row 4 looks like a total row, not data: its first cell with a value (C4, 'Action') "
        "says 'Total' and 'Shipment', 'HAWB', 'Party' are empty"
    )
    assert finding.location.column_name == "Action"


@pytest.mark.parametrize("suffix", ["csv", "xlsx"])
def test_a_title_above_the_header_says_which_row_to_name_as_the_header(suffix: str) -> None:
    # A title row above the header, read as the header with `header:` left at 1: every
    # column the manifest reads was "missing" (The columns are: 'Export of moves'), with no
    # word that the header is further down.
    Path("data").mkdir()
    if suffix == "csv":
        text = "Export of moves 2026\r\n\r\n" + _csv(",", ROWS)
        Path("data/m.csv").write_text(text, encoding="utf-8")
    else:
        import openpyxl

        book = openpyxl.Workbook()
        sheet = book.active
        assert sheet is not None
        for row in [["Export of moves 2026"], [], HEADER, *ROWS]:
            sheet.append(row)
        book.save("data/m.xlsx")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest(f"data/m.{suffix}")))
    missing = [f for f in result.findings if f.rule == "envelope.for-each"]
    assert missing and all("`header: 3`" in (f.hint or "") for f in missing)
    assert (missing[0].hint or "").startswith("Row 3 names the column 'HAWB': if the header is")
    fixed = movement_sheet_manifest(f"data/m.{suffix}", ", header: 3")
    result = load_file(write(Path("m.yaml"), fixed))
    assert result.findings == [] and len(result.documents) == 2


@pytest.mark.parametrize(
    ("written", "meant", "iso"),
    [
        (
            "3/4/2026",
            "3 April 2026 or March 4, 2026, as the locale read it",
            "2026-04-03 or 2026-03-04",
        ),
        ("04.03.2026", "4 March 2026", "2026-03-04"),
        ("4-3-2026", "4 March 2026", "2026-03-04"),
        (
            "2026-03-04 00:00:00",
            "4 March 2026, 00:00:00",
            "2026-03-04, or 2026-03-04T00:00:00 with its time",
        ),
    ],
)
def test_a_date_exported_in_a_locales_format_is_an_error_at_its_cell(
    written: str, meant: str, iso: str
) -> None:
    """A date column typed 2026-03-04 and saved again by Excel is exported in the locale's
    format: the name was mov-hawb_a2-04.03.2026 (or 3/4/2026, which reads two ways) where
    the XLSX export gives 2026-03-04, a different request by the computer that saved it.
    It is now an error at the cell naming the format to write; a column declared text keeps
    it as written, and an ISO 8601 date is text as before."""
    header = [*HEADER, "Date"]
    rows = [[*ROWS[0], "2026-03-04"], [*ROWS[1], written]]
    lines = [",".join(header), *(",".join(row) for row in rows)]
    Path("data").mkdir()
    Path("data/m.csv").write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    manifest = movement_sheet_manifest("data/m.csv").replace("{{ row_number }}", "{{ row.Date }}")
    result = load_file(write(Path("m.yaml"), manifest))
    finding = only(result, "row.cell-type")
    assert finding.message == (
        f"cell G3 holds {written!r}, a date as a spreadsheet program writes it in a CSV export "
        f"in its locale's format ({meant}), not as the XLSX export gives it"
    )
    assert finding.hint.startswith(f"write dates as YYYY-MM-DD ({iso}): ")
    assert "columns: {Date: text}" in finding.hint
    assert (finding.location.row, finding.location.column_name) == (3, "Date")
    assert [doc.name for doc in result.documents] == ["mov-hawb_a1-2026-03-04"]
    declared = movement_sheet_manifest("data/m.csv", ", columns: {Date: text}").replace(
        "{{ row_number }}",
        "{{ row.Date | replace('/', '.') | replace(' ', 'T') | replace(':', '') }}",
    )
    result = load_file(write(Path("m.yaml"), declared))
    assert [f.rule for f in result.findings if f.rule.startswith("row.")] == []
    assert len(result.documents) == 2


@pytest.mark.parametrize("text", ["2026-03-04", "12-05-26", "1.250.000", "31.13.2026", "10.5.1"])
def test_text_that_is_no_locale_date_stays_text(text: str) -> None:
    data = _csv(",", [ROWS[0], [*ROWS[1][:5], text]])
    Path("data").mkdir()
    Path("data/m.csv").write_text(data, encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    assert "row.cell-type" not in [f.rule for f in result.findings]


@pytest.mark.parametrize(
    ("line_end", "inside"),
    [("\r\n", "\n"), ("\n", "\r\n"), ("\r", "\r"), ("\r\n", "\r"), ("\r", "\n")],
)
def test_a_line_break_in_a_quoted_cell_is_the_same_whatever_the_files_line_ends(
    line_end: str, inside: str
) -> None:
    """A quoted cell's line break was sent as the file wrote it: a CSV whose line ends git
    (autocrlf) or an editor made CRLF on Windows, inside its cells too, sent "Gewürze\r\nin
    Säcken" where the same file on Linux, and the XLSX export, sent "Gewürze\nin Säcken":
    another request by the computer that ran it. The rows, the lines findings name and
    the values are the same for every line end now."""
    manifest = movement_sheet_manifest("data/m.csv").replace(
        "metadata:", 'values:\n  note: "{{ row.Remark }}"\nmetadata:'
    )
    lines = [
        "Shipment;HAWB;Action;Packages;Gross weight;Party;Remark",
        f'shp_7Hk2Lm;hawb_a1;ISL;4;40;rpty_p1;"Gewürze{inside}in Säcken"',
        "shp_7Hk2Lm;hawb_a2;ISL;vier;40;rpty_p2;x",
    ]
    Path("data").mkdir()
    Path("data/m.csv").write_bytes((line_end.join(lines) + line_end).encode("utf-8"))
    result = load_file(write(Path("m.yaml"), manifest))
    finding = only(result, "row.cell-type")
    assert (finding.location.row, finding.location.line, finding.location.column) == (3, 4, 24)
    (document,) = result.documents
    assert document.values["note"] == "Gewürze\nin Säcken"


def test_a_text_formula_an_erp_export_writes_gives_the_text_excel_shows() -> None:
    """ERP exports write a code as ``="05067"`` so that Excel keeps its leading zero: Excel
    shows 05067 (and an XLSX saved from it holds 05067), but the cell was sent as the text
    ``="05067"``."""
    manifest = movement_sheet_manifest("data/m.csv").replace(
        "metadata:", 'values:\n  note: "{{ row.Remark }}"\nmetadata:'
    )
    lines = [
        "Shipment;HAWB;Action;Packages;Gross weight;Party;Remark",
        'shp_7Hk2Lm;="hawb_a1";ISL;="4";40;rpty_p1;"=""05067"""',
        'shp_7Hk2Lm;hawb_a2;ISL;4;40;rpty_p2;"=""say """"hi"""""""',
        'shp_7Hk2Lm;hawb_a3;ISL;4;40;rpty_p2;="05067" kg',
    ]
    Path("data").mkdir()
    Path("data/m.csv").write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    result = load_file(write(Path("m.yaml"), manifest))
    assert result.findings == []
    assert [(d.spec["hawbId"], d.spec["quantity"], d.values["note"]) for d in result.documents] == [
        ("hawb_a1", 4, "05067"),
        ("hawb_a2", 4, 'say "hi"'),
        ("hawb_a3", 4, '="05067" kg'),  # not a formula of a text alone: as written
    ]


@pytest.mark.parametrize(("written", "digits"), [("2.60E+17", 18), ("1E+20", 21), ("2,6E+17", 18)])
def test_a_long_number_a_csv_export_wrote_in_scientific_notation_is_an_error_at_its_cell(
    written: str, digits: int
) -> None:
    """An MRN typed as a number, exported as CSV, is 2.60E+17: its last digits are gone,
    and the text was sent as the declaration number (1E+20 as a weight), where the XLSX
    cell is an error. It is now an error at the cell; a column declared text keeps it."""
    rows = [ROWS[0], [*ROWS[1][:5], written]]
    lines = [";".join(HEADER), *(";".join(row) for row in rows)]
    Path("data").mkdir()
    Path("data/m.csv").write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    finding = only(result, "row.cell-type")
    assert finding.message == (
        f"cell F3 holds {written!r}, a number as a spreadsheet program writes one of {digits} "
        "digits in a CSV export: only its first digits are kept (a reference, an MRN or a code "
        "typed as a number)"
    )
    assert (finding.location.row, finding.location.column_name) == (3, "Party")
    declared = movement_sheet_manifest("data/m.csv", ", columns: {Party: text}")
    result = load_file(write(Path("m.yaml"), declared))
    assert [d.spec["partyId"] for d in result.documents] == ["rpty_p1", written]


@pytest.mark.parametrize("text", ["12E45", "1.5E+03", "2E+10", "1.5E-20"])
def test_a_number_in_scientific_notation_of_fewer_than_12_digits_is_read_as_before(
    text: str,
) -> None:
    rows = [ROWS[0], [*ROWS[1][:5], text]]
    lines = [";".join(HEADER), *(";".join(row) for row in rows)]
    Path("data").mkdir()
    Path("data/m.csv").write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    assert "row.cell-type" not in [f.rule for f in result.findings]


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        ("310,50 €", "A currency, a unit or a percent sign was exported with the number"),
        ("48,5 kg", "A currency, a unit or a percent sign was exported with the number"),
        ("123,45-", "It is a negative number as an accounting format writes it"),
        ("(123,45)", "It is a negative number as an accounting format writes it"),
        ("1 250,00", "Spaces group its thousands"),
    ],
)
def test_a_number_exported_with_its_format_says_what_the_format_added(
    written: str, hint: str
) -> None:
    # The hint said only "This document reads numbers with a decimal comma: 12,5", which
    # the cell already does: nothing said what to take out of it.
    rows = [ROWS[0], [*ROWS[1][:4], written, ROWS[1][5]]]
    Path("data").mkdir()
    data = _csv(";", rows, decimal_comma=True).encode("cp1252")
    Path("data/m.csv").write_bytes(data)
    manifest = movement_sheet_manifest("data/m.csv", ", decimalComma: true")
    result = load_file(write(Path("m.yaml"), manifest))
    finding = only(result, "row.cell-type")
    assert finding.message == f"{written!r} is not a number"
    assert finding.hint.startswith(hint)
    assert finding.location.column_name == "Gross weight"


def test_a_quote_escaped_with_a_backslash_is_an_error_at_its_cell() -> None:
    # "Müller \"Stahl\" GmbH" (a database export's escaping) was read as the text
    # Müller \Stahl\" GmbH" and sent so: CSV doubles a quote inside a quoted cell.
    lines = [
        ";".join(HEADER),
        ";".join(ROWS[0]),
        'shp_7Hk2Lm;hawb_a2;ISL;10;125;"rpty_\\"p2\\""',
        'shp_7Hk2Lm;hawb_a3;ISL;10;125;"C:\\\\temp\\\\"',
    ]
    Path("data").mkdir()
    Path("data/m.csv").write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    cell_errors = [f for f in result.findings if f.rule == "row.cell-type"]
    assert [f.location.row for f in cell_errors] == [3]
    assert cell_errors[0].message == (
        "cell F3 holds 'rpty_\\p2\\\"\"': the file escapes a quote inside a quoted cell with a "
        'backslash (\\"), where CSV doubles it (""), so the cell does not read as written'
    )


def test_a_long_number_a_csv_export_cut_to_15_digits_is_an_error_at_its_cell() -> None:
    # A reference of 18 digits typed as a number is exported 260000000000000000 from a
    # wide column: its last 3 digits were lost and it was sent so, where the same XLSX cell
    # is an error. A number with a digit after the 15th is read as before.
    rows = [[*ROWS[0][:5], "260000000000000000"], [*ROWS[1][:5], "2600000000000000001"]]
    lines = [";".join(HEADER), *(";".join(row) for row in rows)]
    Path("data").mkdir()
    Path("data/m.csv").write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    result = load_file(write(Path("m.yaml"), movement_sheet_manifest("data/m.csv")))
    (finding,) = [f for f in result.findings if f.location.column_name == "Party"]
    assert finding.rule == "row.cell-type" and finding.location.row == 2
    assert finding.message.startswith(
        "cell F2 holds '260000000000000000', a whole number of 18 digits whose digits after "
        "the 15th are zeros"
    )


def test_a_decimal_comma_a_template_passed_on_from_a_cell_is_hinted_as_the_cell_s() -> None:
    # The value reached the spec through `values:` and a template, so the schema, not the
    # cell reader, reported it: its hint said to write a decimal point "in YAML", which the
    # cell (sheet, row, column named) has no place for; decimalComma: true reads it.
    write(Path("templates/w.yaml.j2"), "grossWeightKg: {{ values.weight }}\n")
    write(Path("data/m.csv"), _csv(";", ROWS, decimal_comma=True))
    manifest = movement_sheet_manifest("data/m.csv").replace(
        "  grossWeightKg: \"{{ row['Gross weight'] }}\"\n", ""
    )
    manifest = manifest.replace(
        "metadata:\n", "template: w\nvalues: {weight: \"{{ row['Gross weight'] }}\"}\nmetadata:\n"
    )
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("m.yaml"), manifest)
    result = validate_paths([Path("m.yaml")])
    found = [f for f in result.findings if f.rule == "schema.type"]
    assert [f.location.cell() for f in found] == ["sheet 'm', row 2, column E 'Gross weight'"]
    assert found[0].hint is not None and "'decimalComma: true' in forEach" in found[0].hint
    assert "YAML reads a decimal comma" not in found[0].hint
