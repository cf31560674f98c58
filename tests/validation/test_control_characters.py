"""Control characters in a text a document sends (a YAML escape, a pasted spreadsheet cell):
an error at the value, whatever the kind, since customs free text cannot carry them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from customs_batch.findings import Finding, Severity
from customs_batch.kinds import Kind
from customs_batch.validation.batch import validate_paths
from customs_batch.validation.control_characters import check_control_characters
from customs_batch.validation.rules import check_rules
from tests.manifest.helpers import (
    GOOD_ROW,
    movement_sheet_manifest,
    rewrite_cells,
    write,
    write_xlsx,
)
from tests.validation._documents import make_document
from tests.validation.samples import sample

RULE = "text.control-character"


def _control(findings: list[Finding]) -> list[Finding]:
    return [finding for finding in findings if finding.rule == RULE]


@pytest.mark.parametrize("kind", list(Kind))
def test_the_valid_samples_have_none(kind: Kind) -> None:
    assert check_control_characters(make_document(kind, sample(kind))) == []


@pytest.mark.parametrize(
    ("character", "named"),
    [
        ("\x00", "U+0000 (null)"),
        ("\x07", "U+0007 (bell)"),
        ("\x0b", "U+000B (vertical tab)"),
        ("\x1b", "U+001B (escape)"),
        ("\x1f", "U+001F"),
        ("\x7f", "U+007F (delete)"),
        ("\x80", "U+0080"),
        ("\x85", "U+0085 (next line)"),
        ("\x9f", "U+009F"),
    ],
)
def test_each_control_character_is_an_error_at_the_text(character: str, named: str) -> None:
    spec = sample(Kind.DEPARTURE_DECLARATION)
    spec["Consignee"]["name"] = f"Rotterdam{character} Trading BV"
    document = make_document(Kind.DEPARTURE_DECLARATION, spec)
    (finding,) = _control(check_rules(document))
    assert finding.severity is Severity.ERROR
    assert finding.location.path == ("spec", "Consignee", "name")
    c1 = WINDOWS_1252 if "\x80" <= character <= "\x9f" else ""
    assert finding.message == (
        f"Consignee.name holds the control character {named} at character 10 of its text{c1}"
    )
    assert "remove the character" in finding.hint
    assert character not in finding.message + finding.hint


@pytest.mark.parametrize("text", ["Bolts\tM8", "Bolts\nM8", "Bolts\r\nM8", "Bolts\xa0M8", "Ä€"])
def test_tab_line_breaks_and_printable_characters_pass(text: str) -> None:
    spec = sample(Kind.DEPARTURE_DECLARATION)
    spec["DeclarationItems"][0]["description"] = text
    assert check_control_characters(make_document(Kind.DEPARTURE_DECLARATION, spec)) == []


@pytest.mark.parametrize("kind", list(Kind))
def test_every_kind_is_checked_in_every_text(kind: Kind) -> None:
    spec: dict[str, Any] = sample(kind)
    for path in _texts(spec, ()):  # an export cancellation's sample has none
        changed = sample(kind)
        node: Any = changed
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] += "\x1b"
        (finding,) = check_control_characters(make_document(kind, changed))
        assert finding.location.path == ("spec", *path)


def _texts(node: Any, path: tuple[str | int, ...]) -> list[tuple[str | int, ...]]:
    if isinstance(node, str):
        return [path]
    if isinstance(node, dict):
        return [p for key, value in node.items() for p in _texts(value, (*path, key))]
    if isinstance(node, list):
        return [p for index, value in enumerate(node) for p in _texts(value, (*path, index))]
    return []


def test_several_in_one_text_are_one_finding_counting_them() -> None:
    spec = sample(Kind.DEPARTURE_DECLARATION)
    spec["DeclarationItems"][1]["description"] = "\x1b[31mNuts\x1b[0m\x07"
    (finding,) = check_control_characters(make_document(Kind.DEPARTURE_DECLARATION, spec))
    assert finding.message == (
        "DeclarationItems[1].description holds the control character U+001B (escape) at "
        "character 1 of its text, and 2 more after it"
    )


def test_a_sensitive_value_is_not_quoted() -> None:
    spec = sample(Kind.DEPARTURE_DECLARATION)
    spec["DeclarationGuarantees"][0]["accessCode"] = "AB\x07CD"
    (finding,) = check_control_characters(make_document(Kind.DEPARTURE_DECLARATION, spec))
    assert finding.sensitive
    assert "AB" not in finding.message and "CD" not in finding.message


def test_a_yaml_escape_is_found_at_its_line_and_column() -> None:
    write(
        Path("m.yaml"),
        "apiVersion: customs-batch/v1\n"
        "kind: TemplateGroup\n"
        "metadata: {name: g}\n"
        "spec:\n"
        "  companyId: 1\n"
        "  code: G1\n"
        '  name: "EU \\e[1mroad\\x07"\n',
    )
    result = validate_paths(["m.yaml"], jobs=1)
    (finding,) = _control(list(result.findings))
    assert (finding.location.file, finding.location.line, finding.location.column) == (
        "m.yaml",
        7,
        9,
    )
    assert finding.message == (
        "name holds the control character U+001B (escape) at character 4 of its text, "
        "and 1 more after it"
    )


def test_a_csv_cell_is_named_by_its_row_and_column() -> None:
    _groups_over_csv("Name,Code\nEU road,A1\nEU\x7f rail,B1\n")
    (finding,) = _control(list(validate_paths(["m.yaml"], jobs=1).findings))
    location = finding.location
    assert (location.file, location.row, location.column_name) == ("data/g.csv", 3, "Name")
    assert (location.line, location.column) == (3, 1)
    assert "U+007F (delete) at character 3" in finding.message


def _groups_over_csv(csv: str) -> None:
    """m.yaml: a template group for each row of data/g.csv (``csv``), named by its Code."""
    write(
        Path("m.yaml"),
        "apiVersion: customs-batch/v1\nkind: TemplateGroup\n"
        "forEach: {file: data/g.csv}\n"
        'metadata: {name: "g-{{ row.Code | lower }}"}\n'
        'spec: {name: "{{ row.Name }}", code: "{{ row.Code }}", companyId: 1}\n',
    )
    write(Path("data/g.csv"), csv)


def test_xlsx_cells_are_named_by_sheet_row_and_column() -> None:
    pasted = ["shp_7Hk2Lm\x7f", "hawb_a3", "ISL", 4, 40.5, "rpty\x85p1"]
    book = write_xlsx(Path("data/m.xlsx"), [GOOD_ROW, pasted])
    # Excel writes a C0 control in a cell as _x001B_ (openpyxl refuses to write one).
    rewrite_cells(book, {"F2": '<c r="F2" t="inlineStr"><is><t>rpty_x001B_p1</t></is></c>'})
    write(Path("m.yaml"), movement_sheet_manifest("data/m.xlsx"))
    found = _control(list(validate_paths(["m.yaml"], jobs=1).findings))
    assert sorted((f.location.file, f.location.sheet, f.location.row, f.location.column_name,
                   f.message) for f in found) == [
        ("data/m.xlsx", "Movements", 2, "Party",
         "partyId holds the control character U+001B (escape) at character 5 of its text"),
        ("data/m.xlsx", "Movements", 3, "Party",
         "partyId holds the control character U+0085 (next line) at character 5 of its text"
         + WINDOWS_1252),
        ("data/m.xlsx", "Movements", 3, "Shipment",
         "shipmentId holds the control character U+007F (delete) at character 11 of its text"),
    ]  # fmt: skip


WINDOWS_1252 = (
    "; in a spreadsheet's text, a character of U+0080-U+009F is most often one of "
    "Windows-1252's (€, „, …) in a file read as Latin-1: say `encoding: cp1252` in forEach"
)


def test_a_windows_1252_sheet_read_as_latin_1_is_told_to_be_read_as_cp1252() -> None:
    write(
        Path("m.yaml"),
        "apiVersion: customs-batch/v1\nkind: TemplateGroup\n"
        "forEach: {file: data/g.csv, encoding: latin-1}\n"
        'metadata: {name: "g-{{ row.Code | lower }}"}\n'
        'spec: {name: "{{ row.Name }}", code: "{{ row.Code }}", companyId: 1}\n',
    )
    Path("data").mkdir(exist_ok=True)
    Path("data/g.csv").write_bytes("Name,Code\nEU road \u2026,A1\n".encode("cp1252"))
    (finding,) = _control(list(validate_paths(["m.yaml"], jobs=1).findings))
    assert finding.message.endswith(WINDOWS_1252)
    assert "U+0085 (next line) at character 9" in finding.message


INVISIBLE_RULE = "text.invisible-character"


@pytest.mark.parametrize(
    ("character", "named"),
    [
        ("\u200b", "U+200B (zero width space)"),
        ("\ufeff", "U+FEFF (a byte-order mark)"),
        ("\u00ad", "U+00AD (a soft hyphen)"),
        ("\u202e", "U+202E (right-to-left override)"),
        ("\u2060", "U+2060 (word joiner)"),
    ],
)
def test_a_character_that_prints_as_nothing_is_a_warning_at_the_text(
    character: str, named: str
) -> None:
    # Found by a probe: a zero-width space pasted before a spreadsheet's reference was sent
    # in the departure's commercialReference without a word; plan compares identities
    # without it, but nothing showed it.
    spec = sample(Kind.DEPARTURE_DECLARATION)
    spec["commercialReference"] = f"{character}ACME-2026-0101"
    document = make_document(Kind.DEPARTURE_DECLARATION, spec)
    (finding,) = [f for f in check_rules(document) if f.rule == INVISIBLE_RULE]
    assert finding.severity is Severity.WARNING
    assert finding.location.path == ("spec", "commercialReference")
    assert finding.message == (
        f"commercialReference holds {named}, which prints as nothing, at character 1 of its text"
    )
    assert "before the document is first applied" in finding.hint
    assert _control(check_rules(document)) == []


def test_a_pasted_zero_width_space_in_a_csv_cell_is_named_by_its_row_and_column() -> None:
    _groups_over_csv("Name,Code\nEU road,A1\nEU\u200b rail\u200b,B1\n")
    result = validate_paths(["m.yaml"], jobs=1)
    (finding,) = [f for f in result.findings if f.rule == INVISIBLE_RULE]
    location = finding.location
    assert (location.file, location.row, location.column_name) == ("data/g.csv", 3, "Name")
    assert finding.message == (
        "name holds U+200B (zero width space), which prints as nothing, at character 3 of its "
        "text, and 1 more after it"
    )
    assert not [f for f in result.findings if f.severity is Severity.ERROR]
