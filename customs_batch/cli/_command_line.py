"""The command line a command was run with, written back from what click parsed."""

from __future__ import annotations

import shlex
from pathlib import Path

import click
from click.core import ParameterSource

# Not repeated in a command that goes on: the state exists by then.
_NOT_REPEATED = frozenset({"allow_empty_state"})


def command_line(context: click.Context | None = None) -> str:
    """``customs-batch apply manifests/ --auto-approve …``: the current command with every
    argument and option given on its command line (none that came from a default), in the
    command's own order, quoted for a POSIX shell."""
    context = context or click.get_current_context()
    words = context.command_path.split()
    for parameter in context.command.params:
        name = parameter.name
        if name is None or name in _NOT_REPEATED:
            continue
        if context.get_parameter_source(name) is not ParameterSource.COMMANDLINE:
            continue
        words += _words(parameter, context.params.get(name))
    return shlex.join(words)


def _words(parameter: click.Parameter, value: object) -> list[str]:
    values = list(value) if isinstance(value, tuple | list) else [value]
    if isinstance(parameter, click.Argument):
        return [_text(v) for v in values]
    assert isinstance(parameter, click.Option)
    option = parameter.opts[-1]  # the long name, as `--help` shows it
    if parameter.is_flag and isinstance(value, bool):
        if value:
            return [option]
        return [parameter.secondary_opts[-1]] if parameter.secondary_opts else []
    words: list[str] = []
    for one in values:
        words += [option, _text(one)]
    return words


def _text(value: object) -> str:
    if isinstance(value, Path):
        return value.as_posix()
    return str(value)
