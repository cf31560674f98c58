"""``customs-batch sheet template``: an empty spreadsheet and its manifest, filled and loaded."""

from __future__ import annotations

import csv
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from click.testing import CliRunner

from customs_batch.cli.main import invoke
from customs_batch.kinds import Kind
from customs_batch.manifest import load_file
from customs_batch.manifest.spreadsheet.columns import kind_columns

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MOVEMENT = {
    "shipmentId": "shp_7Hk2Lm",
    "hawbId": "hawb_a1",
    "action": "VAH",
    "quantity": 10,
    "grossWeightKg": 125.5,
    "customsSupervision": "Y",
    "goodsHandlingCode": "N",
    "partyId": "rpty_p1",
    "customsDeclaration": {
        "source": "EXTERNAL",
        "documentType": "X",
        "declarationType": "IM",
        "declarationNumber": "24NLR1234567890120",
    },
}


def _cli(*args: str) -> tuple[int, str, str]:
    with CliRunner().isolation() as (out, err, _):
        code = invoke(list(args))
    return code, out.getvalue().decode(), err.getvalue().decode()


def _cells(kind: Kind, spec: dict[str, Any], name: str = "row-1") -> dict[str, Any]:
    """The row an analyst would type for ``spec`` named ``name``: a value under each
    column's header."""
    row: dict[str, Any] = {"metadata.name": name}
    for column in kind_columns(kind):
        value: Any = spec
        for part in column.path:
            ok = isinstance(value, dict) and part in value
            ok = ok or (isinstance(value, list) and isinstance(part, int) and part < len(value))
            value = value[part] if ok else None
        row[column.header] = value
    return row


def _departure_spec() -> dict[str, Any]:
    loaded = load_file(EXAMPLES / "manifests/departures.yaml", project_root=EXAMPLES)
    document = next(d for d in loaded.documents if d.name == "dep-rtm-ham-0001")
    first = document.spec["DeclarationItems"][0]
    # A row of the sheet holds one item: the total is that item's gross mass.
    return {**document.spec, "DeclarationItems": [first], "totalWeight": first["grossMass"]}


def test_an_xlsx_template_filled_in_validates_clean() -> None:
    Path("data").mkdir()
    code, out, err = _cli("sheet", "template", "Movement", "-o", "data/movements.xlsx")
    assert code == 0, err
    assert out == "wrote data/movements.xlsx (14 columns) and data/movements.manifest.yaml\n"
    book = openpyxl.load_workbook("data/movements.xlsx")
    sheet = book["Movement"]
    notes = [cell.value for cell in sheet[1]]
    headers = [cell.value for cell in sheet[2]]
    assert headers[:5] == ["metadata.name", "shipmentId", "action", "quantity", "grossWeightKg"]
    assert notes[0] == "required"
    assert notes[headers.index("quantity")] == "required"
    # It said "optional", where VAH, VAB, ISL and USL movements need a party.
    assert notes[headers.index("partyId")] == "required for VAH, VAB, ISL, USL"
    assert "customsDeclaration.source" in headers
    cells = _cells(Kind.MOVEMENT, MOVEMENT)
    sheet.append([cells[str(header)] for header in headers])
    book.save("data/movements.xlsx")
    code, out, _ = _cli("validate", "data")
    assert (code, out) == (0, "0 errors, 0 warnings in 1 document (1 file)\n")


def test_the_command_to_run_next_is_quoted_for_a_name_with_spaces() -> None:
    # It printed `customs-batch validate data/my moves.manifest.yaml`, which a shell runs
    # over two files that do not exist.
    Path("data").mkdir()
    code, _, err = _cli("sheet", "template", "Movement", "-o", "data/my moves.xlsx")
    assert code == 0, err
    assert err.splitlines()[-1].endswith("customs-batch validate 'data/my moves.manifest.yaml'")
    code, out, _ = _cli("validate", "data/my moves.manifest.yaml")
    assert "no data rows" in out


def test_a_csv_template_of_departures_filled_in_validates_clean() -> None:
    code, _, err = _cli("sheet", "template", "DepartureDeclaration", "-o", "departures.csv")
    assert code == 0, err
    with open("departures.csv", encoding="utf-8-sig", newline="") as text:
        notes, headers = list(csv.reader(text))
    assert "DeclarationItems.packaging.typeOfPackages" in headers
    assert notes[headers.index("companyId")] == "required"
    spec = _departure_spec()
    # A row holds one item: the total is its gross mass, as the mass check wants it.
    spec["totalWeight"] = spec["DeclarationItems"][0]["grossMass"]
    cells = _cells(Kind.DEPARTURE_DECLARATION, spec)
    with open("departures.csv", "a", encoding="utf-8", newline="") as text:
        csv.writer(text, lineterminator="\r\n").writerow(
            ["" if cells[h] is None else cells[h] for h in headers]
        )
    code, out, _ = _cli("validate", "departures.manifest.yaml")
    assert (code, out) == (0, "0 errors, 0 warnings in 1 document (1 file)\n")


def test_a_row_filled_where_row_1_asks_has_every_part_its_kind_requires() -> None:
    # Row 1 said "optional" above every column of the parties, the goods location's address,
    # the item and the guarantee, which a departure requires: a row filled in every column
    # marked required failed with `missing required field "Consignor"` (and the others).
    code, _, err = _cli("sheet", "template", "DepartureDeclaration", "-o", "departures.csv")
    assert code == 0, err
    with open("departures.csv", encoding="utf-8-sig", newline="") as text:
        notes, headers = list(csv.reader(text))
    assert notes[headers.index("companyId")] == "required"
    assert notes[headers.index("Consignor.name")] == "one of Consignor.*"
    assert (
        notes[headers.index("DeclarationItems.packaging.quantity")] == "one of DeclarationItems.*"
    )
    assert notes[headers.index("TransportMeans.mode")] == "optional"
    full = _cells(Kind.DEPARTURE_DECLARATION, _departure_spec())
    groups: set[str] = set()
    cells: dict[str, Any] = {"metadata.name": "row-1"}
    for note, header in zip(notes, headers, strict=True):
        if note == "required":
            cells[header] = full[header]
        elif note.startswith("one of ") and note not in groups and full[header] is not None:
            groups.add(note)  # the first filled column of each part, and no other
            cells[header] = full[header]
    assert len(groups) == 6
    _row("departures.csv", cells)
    code, out, _ = _cli("validate", "--format", "json", "departures.manifest.yaml")
    report = json.loads(out)
    assert [f["message"] for f in report["findings"] if f["rule"] == "schema.required"] == []


def test_the_party_update_template_says_a_row_needs_one_of_its_parties() -> None:
    # Row 1 said "optional" above every party column of a TransitPartyUpdate: a row filled
    # in the columns marked required (its name and declarationId) failed with "the party
    # update carries no party". The parties' columns now say so, and are shaded.
    code, _, err = _cli("sheet", "template", "TransitPartyUpdate", "-o", "parties.csv")
    assert code == 0, err
    with open("parties.csv", encoding="utf-8-sig", newline="") as text:
        notes, headers = list(csv.reader(text))
    marked = dict(zip(headers, notes, strict=True))
    group = "one of Principal.*, Consignor.*, Consignee.*"
    assert marked["declarationId"] == "required"
    assert marked["variant"] == "optional"
    assert {
        marked[h] for h in headers if h.split(".")[0] in ("Principal", "Consignor", "Consignee")
    } == {group}
    _row("parties.csv", {"metadata.name": "upd-1", "declarationId": 501})
    code, out, _ = _cli("validate", "--format", "json", "parties.manifest.yaml")
    assert "party-update.no-party" in [f["rule"] for f in json.loads(out)["findings"]]
    _row(
        "parties.csv",
        {"metadata.name": "upd-2", "declarationId": 502, "Consignee.eoriNo": "DE123456789012345"},
    )
    code, out, _ = _cli("validate", "--format", "json", "--rows", "4", "parties.manifest.yaml")
    assert (code, json.loads(out)["findings"]) == (0, [])
    assert _cli("sheet", "template", "TransitPartyUpdate", "-o", "book.xlsx")[0] == 0
    sheet = openpyxl.load_workbook("book.xlsx")["TransitPartyUpdate"]
    shaded = {c.value: c.fill.fgColor.rgb for c in sheet[2]}
    assert shaded["Consignee.eoriNo"] == shaded["declarationId"] != shaded["variant"]


def _row(path: str, cells: dict[str, Any], at: int | None = None) -> None:
    """Write ``cells`` as a row of the CSV template ``path``: at its end, or as data row
    ``at`` (1 for the first, row 3 of the sheet), above the rows there."""
    with open(path, encoding="utf-8-sig", newline="") as text:
        rows = list(csv.reader(text))
    line = ["" if cells.get(header) is None else cells[header] for header in rows[1]]
    rows.insert(len(rows) if at is None else at + 1, line)
    with open(path, "w", encoding="utf-8-sig", newline="") as text:
        csv.writer(text, lineterminator="\r\n").writerows(rows)


def test_each_row_keeps_its_name_when_a_row_is_inserted_above_it() -> None:
    # The manifest named rows by their number (movement-{{ row_number }}): a row inserted
    # above gave each sent row's name to the row after it, and the plan refused them all.
    assert _cli("sheet", "template", "Movement", "-o", "moves.csv")[0] == 0
    manifest = Path("moves.manifest.yaml").read_text(encoding="utf-8")
    assert "row_number" not in manifest
    assert "name: \"{{ row['metadata.name'] }}\"" in manifest
    _row("moves.csv", _cells(Kind.MOVEMENT, MOVEMENT, "mov-a1-vah"))
    _row("moves.csv", _cells(Kind.MOVEMENT, {**MOVEMENT, "hawbId": "hawb_a2"}, "mov-a2-vah"))
    code, out, err = _cli("apply", "--auto-approve", "moves.manifest.yaml")
    assert code == 0, out + err
    other = {**MOVEMENT, "shipmentId": "shp_9Xc4Rt", "hawbId": "hawb_b1"}
    _row("moves.csv", _cells(Kind.MOVEMENT, other, "mov-b1-vah"), at=1)
    code, out, err = _cli("plan", "moves.manifest.yaml")
    assert code == 0, out + err
    assert "+ create         Movement/mov-b1-vah" in out
    assert "Plan: 1 to create, 0 to update, 2 unchanged, 0 refused" in out


def test_a_row_without_a_name_is_an_error_at_its_empty_cell() -> None:
    assert _cli("sheet", "template", "Movement", "-o", "moves.csv")[0] == 0
    _row("moves.csv", _cells(Kind.MOVEMENT, MOVEMENT, ""))
    code, out, _ = _cli("validate", "moves.manifest.yaml")
    assert code == 1
    assert out.startswith(
        "moves.csv:3:1: error[row.empty-cell]: the cell is empty, and the document's name is "
        "taken from it (\"{{ row['metadata.name'] }}\")\n"
        "  cell: sheet 'moves', row 3, column A 'metadata.name'\n"
    )  # it said "None is not a document name"


def test_the_manifest_names_every_column_exactly() -> None:
    _cli("sheet", "template", "TransitPartyUpdate", "-o", "updates.csv")
    manifest = Path("updates.manifest.yaml").read_text(encoding="utf-8")
    for column in kind_columns(Kind.TRANSIT_PARTY_UPDATE):
        plain = "." not in column.header
        reference = f"row.{column.header}" if plain else f"row['{column.header}']"
        assert f'"{{{{ {reference} }}}}"' in manifest


def test_existing_files_are_kept_unless_forced() -> None:
    Path("m.csv").write_text("keep")
    code, _, err = _cli("sheet", "template", "Movement", "-o", "m.csv")
    assert code == 64
    assert "m.csv exists already" in err
    assert Path("m.csv").read_text() == "keep"
    assert _cli("sheet", "template", "Movement", "-o", "m.csv", "--force")[0] == 0


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.usefixtures("umask_022")
@pytest.mark.parametrize("suffix", [".xlsx", ".csv"])
def test_both_files_are_readable_by_their_owner_only(suffix: str) -> None:
    # An analyst fills the sheet with customs data: it is private from the start.
    sheet, manifest = f"m{suffix}", "m.manifest.yaml"
    assert _cli("sheet", "template", "Movement", "-o", sheet)[0] == 0
    assert (_mode(sheet), _mode(manifest)) == (0o600, 0o600)
    for path in (sheet, manifest):
        os.chmod(path, 0o644)  # as an older version left them
    assert _cli("sheet", "template", "Movement", "-o", sheet, "--force")[0] == 0
    assert (_mode(sheet), _mode(manifest)) == (0o600, 0o600)
    assert "forEach: {file: m" in Path(manifest).read_text(encoding="utf-8")


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
@pytest.mark.parametrize("theirs", ["m.xlsx", "m.manifest.yaml"])
def test_a_file_of_another_user_is_refused_even_with_force(theirs: str) -> None:
    Path(theirs).write_text("their notes\n")
    os.chown(theirs, 65534, 65534)
    code, out, err = _cli("sheet", "template", "Movement", "-o", "m.xlsx", "--force")
    assert (code, out) == (3, "")
    assert f"{theirs}: the file belongs to another user (uid 65534)" in err
    assert "hint: name a new file, or remove that one first" in err
    assert Path(theirs).read_text() == "their notes\n"
    assert os.stat(theirs).st_uid == 65534
    # Asked of both before either is written: nothing of the pair is left behind.
    assert {"m.xlsx", "m.manifest.yaml"} & set(os.listdir()) == {theirs}


def test_a_link_is_written_through_as_validate_o_writes_it() -> None:
    # As -o of validate: a link named stays a link, to the new private file in its
    # target's place; a link to another user's file or to a record of customs-batch is
    # refused like the file itself.
    Path("old.xlsx").write_text("an older sheet\n")
    os.chmod("old.xlsx", 0o644)
    Path("latest.xlsx").symlink_to("old.xlsx")
    code, _, err = _cli("sheet", "template", "Movement", "-o", "latest.xlsx")
    assert code == 64 and "latest.xlsx exists already" in err
    assert _cli("sheet", "template", "Movement", "-o", "latest.xlsx", "--force")[0] == 0
    assert Path("latest.xlsx").is_symlink() and _mode("old.xlsx") == 0o600
    assert openpyxl.load_workbook("old.xlsx").sheetnames == ["Movement"]
    Path(".customs-batch/local").mkdir(parents=True)
    Path(".customs-batch/local/state.json").write_text("{}\n")
    Path("state.xlsx").symlink_to(".customs-batch/local/state.json")
    code, _, err = _cli("sheet", "template", "Movement", "-o", "state.xlsx", "--force")
    assert code == 64 and "cannot write the spreadsheet to state.xlsx" in err
    assert Path(".customs-batch/local/state.json").read_text() == "{}\n"


def test_a_link_to_nothing_counts_as_a_file_that_exists() -> None:
    # Without --force nothing is written through it, wherever it leads.
    Path("dangling.csv").symlink_to("elsewhere.csv")
    code, _, err = _cli("sheet", "template", "Movement", "-o", "dangling.csv")
    assert code == 64 and "dangling.csv exists already" in err
    assert not Path("elsewhere.csv").exists()


@pytest.mark.parametrize("args", [["Movement", "-o", "m.ods"], ["Nope", "-o", "m.csv"]])
def test_bad_arguments_are_usage_errors(args: list[str]) -> None:
    assert _cli("sheet", "template", *args)[0] == 64


def test_a_missing_folder_is_refused_as_validate_refuses_it() -> None:
    code, out, err = _cli("sheet", "template", "Movement", "-o", "nodir/m.xlsx")
    assert (code, out) == (3, "")
    assert err.startswith(
        "error: cannot write the spreadsheet to nodir/m.xlsx: No such file or directory, ENOENT\n"
    )
    assert "hint: check that the folder exists and is writable" in err
    assert not Path("nodir").exists()
    _, _, validate_err = _cli("validate", "-o", "nodir/x")
    assert "cannot write the report to nodir/x: No such file or directory, ENOENT" in validate_err


def test_a_name_as_long_as_the_file_system_takes_is_written() -> None:
    # The manifest's name is 255 characters, the most a name may have: its temporary file
    # (written first, then renamed) must not be refused for a longer name.
    sheet = "a" * 241 + ".csv"
    code, _, err = _cli("sheet", "template", "Movement", "-o", sheet)
    assert code == 0, err
    assert Path("a" * 241 + ".manifest.yaml").is_file() and Path(sheet).is_file()


@pytest.mark.parametrize("suffix", [".xlsx", ".csv"])
def test_a_name_too_long_for_the_file_system_is_an_error_naming_the_file(suffix: str) -> None:
    # The sheet's name fits (250 characters), the manifest's beside it does not.
    sheet = "a" * 250 + suffix
    code, out, err = _cli("sheet", "template", "Movement", "-o", sheet)
    assert (code, out) == (3, "")
    assert err.startswith(
        f"error: cannot write the manifest to {'a' * 250}.manifest.yaml: File name too long, "
        "ENAMETOOLONG\n"
    )
    assert "hint: the name is too long for the file system: choose a shorter one" in err
    assert "internal error" not in err
    assert not Path(sheet).exists()


def test_in_a_project_that_lists_its_manifests_the_sheets_manifest_is_read_without_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's spreadsheet steps, literally, in a project `init` made (`manifests:
    [manifests]`): `sheet template Movement -o data/movements.csv`, a row filled, then
    `validate`, `plan` with no paths. The manifest goes where the project's manifests are,
    reading ../data/movements.csv, so the row is read: a bad cell fails validate."""
    assert invoke(["init", str(tmp_path / "project")]) == 0
    monkeypatch.chdir(tmp_path / "project")
    code, out, err = _cli("sheet", "template", "Movement", "-o", "data/movements.csv")
    assert code == 0, err
    manifest = Path("manifests/movements.manifest.yaml")
    assert out.strip() == f"wrote data/movements.csv (14 columns) and {manifest}"
    assert f"customs-batch validate {manifest}" in err
    assert not Path("data/movements.manifest.yaml").exists()
    assert "forEach: {file: ../data/movements.csv, header: 2}" in manifest.read_text()
    cells = _cells(Kind.MOVEMENT, {**MOVEMENT, "quantity": "ten"})
    with Path("data/movements.csv").open("a", encoding="utf-8", newline="") as file:
        csv.writer(file, lineterminator="\r\n").writerow(cells.values())
    code, out, _ = _cli("validate")
    assert code == 1 and "data/movements.csv" in out and "'quantity'" in out, out


@pytest.mark.parametrize(
    "name", ["rows, 2026.csv", "#1.csv", "a: b.csv", "%weird.csv", "@a.xlsx", "{x}.csv", "a\nb.csv"]
)
def test_the_manifest_names_the_sheet_whatever_its_name_holds(name: str) -> None:
    # The name was written unquoted into `forEach: {file: NAME, ...}`: a comma, `#`, `: `,
    # a leading `%` or `@` or a newline made a manifest that did not parse, or that read
    # `rows, 2026.csv` as the file `rows` (and a key `2026.csv`).
    code, out, err = _cli("sheet", "template", "ExportCancellation", "-o", name)
    assert code == 0, err
    assert "\n" not in out.rstrip("\n")  # the names are printed on one line, escaped
    manifest = Path(name).with_suffix(".manifest.yaml")
    code, out, _ = _cli("validate", str(manifest))
    assert f"{name.replace(chr(10), chr(92) + 'n')} has no data rows" in out, out
    assert "0 errors" in out


def test_the_actions_a_movement_column_is_required_for_are_those_the_rule_asks() -> None:
    from customs_batch.manifest.spreadsheet.columns import REQUIRED_WHEN
    from customs_batch.validation.movement_rules import _NEEDS_PARTY

    named = REQUIRED_WHEN[Kind.MOVEMENT]["partyId"].split(", ")
    assert sorted(named) == sorted(action.value for action in _NEEDS_PARTY)
