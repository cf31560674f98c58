"""validate --annotate: a copy never holds a guarantee's access code, neither in a cell nor
in a finding (docs/spreadsheets.md)."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from tests.validation.test_sensitive_findings import (
    CASES,
    DEPARTURE,
    GUARANTEE,
    NOT_SHOWN,
    _holding,
    _project,
    _validate,
)


@pytest.mark.parametrize("case", ["csv-cell", "through-values"])
def test_the_annotated_copy_never_holds_the_access_code(tmp_path: Path, case: str) -> None:
    secret = CASES[case](tmp_path)
    code, _, err = _validate("--annotate", "annotated")
    assert code == 1
    assert "annotated/data/g.csv.xlsx" in err
    assert _holding(tmp_path / "annotated", secret) == []
    book = openpyxl.load_workbook(tmp_path / "annotated" / "data" / "g.csv.xlsx")
    sheet = book["g"]
    # The column that gave the access codes is empty below its header, the valid code too.
    assert [sheet.cell(row, 2).value for row in (1, 2, 3)] == ["Access", None, None]
    assert [sheet.cell(row, 1).value for row in (1, 2, 3)] == ["Ref", "R-1", "R-2"]
    messages = [row[5] for row in book["Findings"].iter_rows(min_row=2, values_only=True)]
    assert len(messages) == 1 and NOT_SHOWN in str(messages[0])
    assert sheet["B3"].comment is not None and secret not in sheet["B3"].comment.text


def test_an_annotated_copy_empties_the_access_code_column_of_every_row(tmp_path: Path) -> None:
    """A finding elsewhere in the sheet is enough for a copy: the codes are left out."""
    _project(tmp_path)
    (tmp_path / "data" / "g.csv").write_text(
        "Ref;Access;Amount\nR-1;7741;100\nR-2;7742;abc\n", encoding="utf-8"
    )
    (tmp_path / "manifests" / "departure.yaml").write_text(
        DEPARTURE.format(
            for_each="forEach: {file: ../data/g.csv, columns: {Amount: number}}\n",
            name='"my-departure-{{ row_number }}"',
            values="",
            reference='"{{ row.Ref }}"',
            guarantee=GUARANTEE.format(amount='"{{ row.Amount }}"', code='"{{ row.Access }}"'),
        ),
        encoding="utf-8",
    )
    code, _, _ = _validate("--annotate", "annotated")
    assert code == 1
    book = openpyxl.load_workbook(tmp_path / "annotated" / "data" / "g.csv.xlsx")
    sheet = book["g"]
    assert [[cell.value for cell in row] for row in sheet.iter_rows()] == [
        ["Ref", "Access", "Amount"],
        ["R-1", None, "100"],
        ["R-2", None, "abc"],
    ]
    assert sheet["C3"].comment is not None
    assert _holding(tmp_path / "annotated", "774") == []


@pytest.mark.parametrize(
    ("code", "values"),
    [
        ('"AC{{ row.Access }}"', ""),
        ('"{{ row.Pre }}{{ row.Access }}"', ""),
        ("\"{{ (row.Pre ~ '-' ~ row.Access) | upper }}\"", ""),
        ('"{{ values.code }}"', ', code: "AC{{ row.Access }}"'),
        ('"X{{ values.code }}"', ', code: "{{ row.Pre }}{{ row.Access }}"'),
    ],
)
def test_every_column_read_into_the_access_code_however_composed_is_emptied(
    tmp_path: Path, code: str, values: str
) -> None:
    # A column read into the code with other text kept its cells in the copy: only a cell
    # holding the whole code was found.
    _project(tmp_path)
    (tmp_path / "data" / "g.csv").write_text(
        "Ref;Pre;Access;Amount\nR-1;zq;7741QW;100\nR-2;zq;7742QW;abc\n", encoding="utf-8"
    )
    (tmp_path / "manifests" / "departure.yaml").write_text(
        DEPARTURE.format(
            for_each="forEach: {file: ../data/g.csv, columns: {Amount: number}}\n",
            name='"my-departure-{{ row_number }}"',
            values=values,
            reference='"{{ row.Ref }}"',
            guarantee=GUARANTEE.format(amount='"{{ row.Amount }}"', code=code),
        ),
        encoding="utf-8",
    )
    code_, _, _ = _validate("--annotate", "annotated")
    assert code_ == 1
    sheet = openpyxl.load_workbook(tmp_path / "annotated" / "data" / "g.csv.xlsx")["g"]
    rows = [[cell.value for cell in row] for row in sheet.iter_rows()]
    pre = None if "row.Pre" in code + values else "zq"
    assert rows == [
        ["Ref", "Pre", "Access", "Amount"],
        ["R-1", pre, None, "100"],
        ["R-2", pre, None, "abc"],
    ]
    assert _holding(tmp_path / "annotated", "774") == []


def test_a_column_whose_value_a_template_takes_the_code_from_is_emptied(tmp_path: Path) -> None:
    # Found by an outside probe: `values: {acc: "{{ row.Access }}"}` holding more than the
    # code ("7741-ignored"), which the template cut (`values.acc[:4]`), kept the column in
    # the copy: only a value that was the code, or a part of it, was found.
    _project(tmp_path)
    rotterdam = (tmp_path / "templates" / "rotterdam.yaml.j2").read_text(encoding="utf-8")
    sliced = rotterdam.replace('accessCode: "1234"', 'accessCode: "{{ values.acc[:4] }}"')
    assert sliced != rotterdam
    (tmp_path / "templates" / "sliced.yaml.j2").write_text(sliced, encoding="utf-8")
    (tmp_path / "data" / "g.csv").write_text(
        "Ref;Access;Amount\nR-1;7741-ignored;100\nR-2;7742-ignored;abc\n", encoding="utf-8"
    )
    manifest = DEPARTURE.format(
        for_each="forEach: {file: ../data/g.csv, columns: {Amount: number}}\n",
        name='"my-departure-{{ row_number }}"',
        values=', acc: "{{ row.Access }}"',
        reference='"{{ row.Ref }}"',
        guarantee="",
    ).replace("template: rotterdam", "template: sliced")
    manifest = manifest.replace("  totalWeight: 125.5\n", '  totalWeight: "{{ row.Amount }}"\n')
    (tmp_path / "manifests" / "departure.yaml").write_text(manifest, encoding="utf-8")
    code, _, _ = _validate("--annotate", "annotated")
    assert code == 1
    sheet = openpyxl.load_workbook(tmp_path / "annotated" / "data" / "g.csv.xlsx")["g"]
    assert [[cell.value for cell in row] for row in sheet.iter_rows()] == [
        ["Ref", "Access", "Amount"],
        ["R-1", None, "100"],
        ["R-2", None, "abc"],
    ]
    assert _holding(tmp_path / "annotated", "774") == []


@pytest.mark.parametrize("ref", ["R-1", "Müller-1"])
def test_a_utf16_export_without_a_bom_is_copied_as_its_manifest_reads_it(
    tmp_path: Path, ref: str
) -> None:
    # Found by an outside probe: a UTF-16 CSV without a BOM (`encoding: utf-16-le` in
    # forEach) was copied as UTF-8 or Windows-1252, every character with a NUL beside it
    # and every line end making two rows: the copy's column names were not the sheet's, so
    # the access code column was not emptied ("\x007\x007\x004\x001" in the copy), and each
    # finding was put on another row.
    _project(tmp_path)
    (tmp_path / "data" / "g.csv").write_bytes(
        f"Ref;Access;Amount\r\n{ref};7741;100\r\nR-2;7742;abc\r\n".encode("utf-16-le")
    )
    (tmp_path / "manifests" / "departure.yaml").write_text(
        DEPARTURE.format(
            for_each="forEach: {file: ../data/g.csv, encoding: utf-16-le, "
            "columns: {Amount: number}}\n",
            name='"my-departure-{{ row_number }}"',
            values="",
            reference='"{{ row.Ref }}"',
            guarantee=GUARANTEE.format(amount='"{{ row.Amount }}"', code='"{{ row.Access }}"'),
        ),
        encoding="utf-8",
    )
    code, _, _ = _validate("--annotate", "annotated")
    assert code == 1
    sheet = openpyxl.load_workbook(tmp_path / "annotated" / "data" / "g.csv.xlsx")["g"]
    assert [[cell.value for cell in row] for row in sheet.iter_rows()] == [
        ["Ref", "Access", "Amount"],
        [ref, None, "100"],
        ["R-2", None, "abc"],
    ]
    assert sheet["C3"].comment is not None


@pytest.mark.parametrize("header", ['"Access\ncode"', "Access\xa0code"])
def test_the_access_code_column_is_emptied_whatever_its_header_cell_holds(
    tmp_path: Path, header: str
) -> None:
    # A header cell wrapped on two lines, or with a no-break space, names its column
    # 'Access code'; the copy looked for that name among the header cells as written, found
    # none, and kept every access code.
    _project(tmp_path)
    (tmp_path / "data" / "g.csv").write_text(
        f"Ref;{header};Amount\nR-1;7741;100\nR-2;7742;abc\n", encoding="utf-8"
    )
    (tmp_path / "manifests" / "departure.yaml").write_text(
        DEPARTURE.format(
            for_each="forEach: {file: ../data/g.csv, columns: {Amount: number}}\n",
            name='"my-departure-{{ row_number }}"',
            values="",
            reference='"{{ row.Ref }}"',
            guarantee=GUARANTEE.format(
                amount='"{{ row.Amount }}"', code="\"{{ row['Access code'] }}\""
            ),
        ),
        encoding="utf-8",
    )
    code, _, _ = _validate("--annotate", "annotated")
    assert code == 1
    book = openpyxl.load_workbook(tmp_path / "annotated" / "data" / "g.csv.xlsx")
    sheet = book["g"]
    assert [sheet.cell(row, 2).value for row in (2, 3)] == [None, None]
    assert _holding(tmp_path / "annotated", "774") == []
