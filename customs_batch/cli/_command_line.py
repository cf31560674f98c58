"""The command line a command was run with, written back from what click parsed."""

from __future__ import annotations

import functools
import re
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


class _TypedEnv:
    """The environment ``--env`` named on the current command line (None: not given): one
    for the process, read by every thread (apply's workers print outcome lines; a context
    variable would be empty in them)."""

    name: str | None = None


_TYPED_ENV = _TypedEnv()

_COMMAND = re.compile(r"`(customs-batch [^`\n]*)`")


def remember_env(
    _context: click.Context, _parameter: click.Parameter, value: str | None
) -> str | None:
    """``--env``'s callback: keeps the name, for the commands the run prints to go on (two
    different names are refused before, by :class:`~customs_batch.cli._once.OnceOption`)."""
    _TYPED_ENV.name = value
    return value


def forget_env() -> None:
    """Start a command line with no ``--env`` remembered (tests run many in one process)."""
    _TYPED_ENV.name = None


def with_env(text: str) -> str:
    """``text`` with ``--env NAME`` added to every command it quotes (`` `customs-batch …` ``)
    that takes the option and does not give it, when this command line gave ``--env NAME``:
    printed to go on, such a command must act on the same environment, not the default."""
    name = _TYPED_ENV.name
    if not name or "`customs-batch " not in text:
        return text
    return _COMMAND.sub(lambda found: f"`{_with_env(found.group(1), name)}`", text)


def _with_env(command: str, name: str) -> str:
    words = command.split()
    if any(word == "--env" or word.startswith("--env=") for word in words):
        return command
    # Subcommands are at most two deep (`state rm`): a plan of many refusals asks once.
    if not _takes_env(tuple(words[1:3])):
        return command
    return f"{command} --env {shlex.quote(name)}"


@functools.cache
def _takes_env(words: tuple[str, ...]) -> bool:
    """Whether the command that ``words`` start (``("state", "rm")``) takes ``--env``."""
    from customs_batch.cli.main import main  # (main imports the commands, which import this)

    chosen: click.Command = main
    for word in words:
        if not isinstance(chosen, click.Group):
            break
        found = chosen.get_command(click.Context(chosen), word)
        if found is None:
            break
        chosen = found
    if isinstance(chosen, click.Group):
        return False
    return any(parameter.name == "env_name" for parameter in chosen.params)
