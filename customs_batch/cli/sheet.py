"""``customs-batch sheet``: spreadsheets for analysts (``sheet template KIND -o FILE``)."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from customs_batch.cli._choices import CutChoice, CutGroup
from customs_batch.cli._once import OnceOption
from customs_batch.cli._paths import CutPath
from customs_batch.commands.sheet import SheetTemplateOptions, write_sheet_template
from customs_batch.errors import ExitCode
from customs_batch.escaping import printable
from customs_batch.kinds import Kind


@click.group(cls=CutGroup)
def sheet() -> None:
    """Spreadsheets that manifests expand over with forEach.

    \b
    Example:
      customs-batch sheet template Movement -o data/movements.xlsx
    """


@sheet.command()
@click.argument("kind", type=CutChoice([kind.value for kind in Kind]), metavar="KIND")
@click.option(
    "-o",
    "--output",
    required=True,
    cls=OnceOption,
    noun="file",
    type=CutPath(dir_okay=False, path_type=Path),
    help="The spreadsheet to write: FILE.xlsx or FILE.csv, in a folder that exists.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite the files if they exist (your own only; a link stays a link to the new file).",
)
def template(kind: str, output: Path, force: bool) -> int:
    """Write an empty spreadsheet for KIND, and a manifest that loads it.

    Row 1 marks each column required, optional, "required for VAH, VAB, ISL, USL" (a
    movement's partyId, which those actions need), or "one of Consignor.*" (a party, an
    address, the row's item or guarantee: at least one of its columns is needed; a party
    update's "one of Principal.*, Consignor.*, Consignee.*": one party at least), row 2
    holds the headers (the spec fields; nested ones as Consignor.name, one list element
    per row), data goes from row 3.
    The first column, metadata.name, is each row's document name: the row's own (a
    reference), so that it stays with the row when rows are inserted or sorted. The
    manifest FILE.manifest.yaml reads every column into its field with forEach;
    delete the lines of columns you do not use. It is written beside the sheet, or, when
    customs-batch.yaml lists the manifests (manifests:) and the sheet's folder is not
    among them, into the first folder listed, so that validate, plan and apply read it.
    Both files are readable by you only (0600).

    \b
    Examples:
      customs-batch sheet template Movement -o data/movements.xlsx
      customs-batch sheet template DepartureDeclaration -o data/departures.csv
    """
    written = write_sheet_template(SheetTemplateOptions(Kind(kind), output, force))
    sheet, manifest = printable(str(written.sheet)), printable(str(written.manifest))
    click.echo(f"wrote {sheet} ({written.columns} columns) and {manifest}")
    click.echo(
        # Quoted: a name with a space or a quote must still run when pasted into a shell.
        f"Fill the rows from row 3, then: customs-batch validate "
        f"{shlex.quote(str(written.manifest))}",
        err=True,
    )
    return int(ExitCode.OK)
