"""``customs-batch schema export DIR``: the JSON Schemas, for editors and other tools."""

from __future__ import annotations

from pathlib import Path

import click

from customs_batch.cli._choices import CutGroup
from customs_batch.cli._paths import FolderToWrite
from customs_batch.commands.schema import SchemaExportOptions, export_schemas
from customs_batch.errors import ExitCode
from customs_batch.escaping import printable


@click.group(cls=CutGroup)
def schema() -> None:
    """Work with the JSON Schemas manifests are checked against.

    \b
    Example:
      customs-batch schema export .schemas/
    """


@schema.command("export")
@click.argument("directory", type=FolderToWrite())
def export(directory: Path) -> int:
    """Write the envelope schema, one schema per kind and document.schema.json to DIRECTORY.

    document.schema.json covers a whole manifest document (envelope and spec by kind); point
    your editor at it, e.g. with a yaml-language-server modeline.

    \b
    Example:
      customs-batch schema export .schemas/
      # then, first line of a manifest:
      # yaml-language-server: $schema=../.schemas/document.schema.json
    """
    for path in export_schemas(SchemaExportOptions(directory)):
        click.echo(printable(str(path)))  # a newline in the folder's name starts no line
    return int(ExitCode.OK)
