"""``customs-batch init DIR``: scaffold a project that validates clean."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from customs_batch.cli._paths import CutPath
from customs_batch.commands.init import InitOptions, init_project
from customs_batch.errors import ExitCode, UsageError
from customs_batch.escaping import printable


@click.command()
@click.argument("directory", type=CutPath(file_okay=False), default=".")
@click.option("--force", is_flag=True, help="Write into a folder that is not empty.")
def init(directory: str, force: bool) -> int:
    """Create a customs-batch project in DIRECTORY (default: the current folder).

    Writes customs-batch.yaml, one manifest per kind, a user template and data/. The
    manifests use the built-in sandbox's IDs, so they validate, plan and apply as they are.
    A folder that is not empty is refused unless --force is given (files are overwritten).
    `-` (standard input or output elsewhere) is refused: a folder named - is ./-.

    \b
    Example:
      customs-batch init my-project && cd my-project && customs-batch validate
    """
    if directory == "-":
        # `-` stands for standard input or output on every other command; a project is a
        # folder of files, which cannot go there, and a folder named `-` is not what was meant.
        raise UsageError(
            "init writes a project's files into a folder, not to standard output (-)",
            hint="name the folder, like `customs-batch init customs` (a folder really named "
            "- is ./-)",
        )
    folder = Path(directory)
    init_project(
        InitOptions(folder, force),
        created=lambda target: click.echo(f"created {printable(str(target))}"),
    )
    here = folder.resolve() == Path.cwd().resolve()
    # As typed: `cd -` (Path drops the ./ of ./-) would go back to the previous folder.
    change = "" if here else f"cd {shlex.quote(directory)} && "
    click.echo(f"next: {change}customs-batch validate")
    return int(ExitCode.OK)
