"""``customs-batch init DIR``: scaffold a project that validates clean."""

from __future__ import annotations

from pathlib import Path

import click

from customs_batch.errors import CustomsBatchError, ExitCode, UsageError


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
    from customs_batch.cli._scaffold import FILES

    if directory.exists() and any(directory.iterdir()) and not force:
        raise UsageError(
            f"{directory} is not empty",
            hint="choose a new or empty folder, or pass --force to write into it anyway",
        )
    for relative, text in FILES.items():
        target = directory / relative
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CustomsBatchError(
                f"cannot write {target}: {exc.strerror}", hint="choose a folder you can write to"
            ) from exc
        click.echo(f"created {target}")
    click.echo(f"next: cd {directory} && customs-batch validate")
    return int(ExitCode.OK)
