"""``customs-batch init DIR``: scaffold a project that validates clean."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from customs_batch.commands.init import InitOptions, init_project
from customs_batch.errors import ExitCode
from customs_batch.escaping import printable


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--force", is_flag=True, help="Write into a folder that is not empty.")
def init(directory: Path, force: bool) -> int:
    """Create a customs-batch project in DIRECTORY (default: the current folder).

    Writes customs-batch.yaml, one manifest per kind, a user template and data/. The
    manifests use the built-in sandbox's IDs, so they validate, plan and apply as they are.
    A folder that is not empty is refused unless --force is given (files are overwritten).

    \b
    Example:
      customs-batch init my-project && cd my-project && customs-batch validate
    """
    init_project(
        InitOptions(directory, force),
        created=lambda target: click.echo(f"created {printable(str(target))}"),
    )
    here = directory.resolve() == Path.cwd().resolve()
    change = "" if here else f"cd {shlex.quote(str(directory))} && "
    click.echo(f"next: {change}customs-batch validate")
    return int(ExitCode.OK)
