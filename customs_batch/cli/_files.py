"""Where a command's output goes besides standard output: a file named with ``-o``, and the
job summary of a GitHub Actions run. Light on purpose: validate imports it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import click

from customs_batch.cli._choices import CutChoice
from customs_batch.cli._once import OnceOption
from customs_batch.cli._paths import CutPath
from customs_batch.formats import Formats
from customs_batch.output_file import write_named_file
from customs_batch.protected_files import protection

F = TypeVar("F", bound=Callable[..., Any])


def write_output(path: Path, text: str | Iterable[str], *, what: str) -> None:
    """Write ``text`` (a report, a rendered plan, records; whole or in pieces, written as
    they come) to ``path``: a new or replaced file readable by its owner only (it holds
    customs data); a device or a named pipe is written to as it is; another user's file is
    refused (see :mod:`customs_batch.output_file`)."""
    if isinstance(text, str):
        write_named_file(path, text.encode("utf-8"), what=what)
    else:
        write_named_file(path, (piece.encode("utf-8") for piece in text), what=what)


def format_option(formats: Formats[Any], help: str) -> Callable[[F], F]:
    """``--format NAME``: the command's formats, from its table in the one registry."""
    return click.option(
        "--format",
        "format_name",
        cls=OnceOption,
        noun="format",
        type=CutChoice(formats.names()),
        default=formats.default,
        show_default=True,
        help=help,
    )


def output_option(
    formats: Formats[Any] | None, what: str, help: str | None = None
) -> Callable[[F], F]:
    """``-o/--output FILE``: always a file (0600), never a format; ``-o json`` is refused
    with the spelling that chooses the format (``formats``: the command's, if it has any)."""

    def check(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
        if value is not None and str(value) == "-":
            return None  # standard output, as without -o
        named = formats.names() if formats is not None else ()
        if value is not None and str(value) in named and not value.exists():
            raise click.BadParameter(
                f"-o names the file to write the {what} to; to choose the format, write "
                f"--format {value}"
            )
        return value

    return click.option(
        "-o",
        "--output",
        cls=OnceOption,
        noun="file",
        type=CutPath(dir_okay=False, path_type=Path),
        default=None,
        callback=check,
        help=help
        or f"Write the {what} to FILE (readable by you only) instead of stdout (`-`: stdout).",
    )


def append_step_summary(markdown: Callable[[], str]) -> None:
    """Append what ``markdown`` returns to the file ``GITHUB_STEP_SUMMARY`` names, when it is set (in a
    GitHub Actions job), so the job's summary page shows it. A summary that cannot be
    written is a warning: the command's own work and exit code stand. A file an output may
    not replace (the state, ``customs-batch.yaml``, a file the run read: see
    :mod:`customs_batch.protected_files`) is not appended to either: a warning, nothing
    written."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    found = protection(Path(target))
    if found is not None:
        click.echo(
            f"warning: the job summary is not appended to {target} (GITHUB_STEP_SUMMARY): "
            f"{found.what}; nothing was written to it",
            err=True,
        )
        return
    try:
        # Created private when it does not exist yet (it holds customs data); the mode of
        # the runner's own file is left as it is.
        descriptor = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        with open(descriptor, "a", encoding="utf-8") as summary:
            summary.write(markdown().rstrip("\n") + "\n\n")
    except OSError as exc:
        click.echo(
            f"warning: cannot append the job summary to {target} (GITHUB_STEP_SUMMARY): "
            f"{exc.strerror}",
            err=True,
        )
