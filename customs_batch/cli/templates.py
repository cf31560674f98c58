"""``customs-batch templates``: the templates ``template: NAME`` can name (list, show)."""

from __future__ import annotations

from pathlib import Path

import click

from customs_batch.cli._choices import CutGroup
from customs_batch.cli._once import OnceOption
from customs_batch.cli._paths import CutPath
from customs_batch.commands.templates import (
    TemplateOptions,
    TemplatesOptions,
    list_templates,
    show_template,
)
from customs_batch.errors import ExitCode

_PROJECT_HELP = "A folder of the project (default: the current one); its templates/ is searched."


@click.group(cls=CutGroup)
def templates() -> None:
    """The templates a document can name with `template: NAME`.

    A project's templates/NAME.yaml.j2 comes first, then the built-in templates; a
    project template with a built-in's name hides the built-in (validate warns).

    \b
    Examples:
      customs-batch templates list
      customs-batch templates show t1-road
    """


@templates.command("list")
@click.option(
    "--project",
    cls=OnceOption,
    noun="folder",
    type=CutPath(exists=True, file_okay=False, path_type=Path),
    default=".",
    help=_PROJECT_HELP,
)
def list_(project: Path) -> int:
    """List the project's and the built-in templates, with the first line of their comment.

    A template that `template: NAME` cannot read (a link out of the template folders, not
    UTF-8 text, too large) is marked refused, with why.
    """
    infos = list_templates(TemplatesOptions(project))
    if not infos:
        click.echo("no templates")
        return int(ExitCode.OK)
    width = max(len(info.name) for info in infos)
    for info in infos:
        origin = info.origin if info.hidden_by is None else f"{info.origin}, hidden"
        if info.refused is not None:
            origin += ", refused"
        click.echo(f"{info.name:<{width}}  {origin:<16}  {info.summary}".rstrip())
        if info.hides is not None:
            click.echo(f"{'':<{width}}  warning: hides the built-in template {info.name}")
        if info.refused is not None:
            click.echo(f"{'':<{width}}  refused: {info.refused}")
    return int(ExitCode.OK)


@templates.command()
@click.argument("name")
@click.option(
    "--project",
    cls=OnceOption,
    noun="folder",
    type=CutPath(exists=True, file_okay=False, path_type=Path),
    default=".",
    help=_PROJECT_HELP,
)
def show(name: str, project: Path) -> int:
    """Print the template NAME that `template: NAME` uses, and say where it is.

    The template's text goes to standard output, where it comes from to standard error,
    so `customs-batch templates show t1-road > templates/my-road.yaml.j2` starts a copy.
    """
    found = show_template(TemplateOptions(project, name))
    origin = f"{found.info.origin} template {found.info.path}"
    if found.info.hides is not None:
        origin += f" (hides the built-in {found.info.hides})"
    click.echo(f"# {origin}", err=True)
    click.echo(found.text, nl=not found.text.endswith("\n"))
    return int(ExitCode.OK)
