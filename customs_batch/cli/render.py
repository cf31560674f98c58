"""``customs-batch render``: print documents as they will be sent, templates expanded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from customs_batch.cli._files import format_option
from customs_batch.cli._paths import ManifestPath
from customs_batch.cli._rows import rows_option
from customs_batch.commands.render import RenderOptions, render_documents
from customs_batch.errors import ExitCode
from customs_batch.escaping import json_document, yaml_documents
from customs_batch.formats import Formats
from customs_batch.manifest import RowRange
from customs_batch.validation.reporters import make_reporter

DOCUMENT_FORMATS: Formats[Callable[[list[dict[str, Any]]], str]] = Formats(
    "documents", ("yaml", "json")
)
"""``render --format``: the expanded documents as YAML (as written) or a JSON array."""


@DOCUMENT_FORMATS.register("json")
def _json(documents: list[dict[str, Any]]) -> str:
    return json_document(json.dumps(documents, indent=2, ensure_ascii=False, default=str)) + "\n"


@DOCUMENT_FORMATS.register("yaml")
def _yaml(documents: list[dict[str, Any]]) -> str:
    return yaml_documents(
        documents,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        explicit_start=True,
    )


@click.command()
@click.argument("paths", nargs=-1, type=ManifestPath(readable=True))
@format_option(DOCUMENT_FORMATS, "yaml: one document per --- section; json: one array.")
@rows_option
@click.option(
    "--show-sensitive",
    is_flag=True,
    help="Print sensitive values (a guarantee's accessCode) in clear instead of (sensitive).",
)
def render(
    paths: tuple[Path, ...], format_name: str, rows: RowRange | None, show_sensitive: bool
) -> int:
    """Print the fully expanded documents: envelope and spec with the template merged in.

    PATHS are manifest files or folders (default: the manifests list of customs-batch.yaml,
    else the current folder), as for validate, plan and apply.
    Rows of forEach documents are expanded and Jinja expressions rendered; ${ref:...}
    references are left as written (their values exist only after apply). Sensitive values
    (a guarantee's accessCode) print as (sensitive) unless --show-sensitive is given. When
    the input has errors, nothing is printed and the exit code is 1; findings always go to
    stderr.

    \b
    Examples:
      customs-batch render
      customs-batch render manifests/
      customs-batch render manifests/departures.yaml --format json
      customs-batch render manifests/movements-sheet.yaml --rows 3-4
    """
    rendered = render_documents(RenderOptions(paths, rows, show_sensitive))
    if rendered.validation.findings:
        click.echo(make_reporter("text").render(rendered.validation), nl=False, err=True)
    if rendered.exit_code is not ExitCode.OK:
        return int(rendered.exit_code)
    click.echo(DOCUMENT_FORMATS.get(format_name)(list(rendered.documents)), nl=False)
    return int(ExitCode.OK)
