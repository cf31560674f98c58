"""The choices an option or argument takes (``--format``, ``--status``, a kind), and the
commands of a group: a value that is none of them is refused quoting it cut when long."""

from __future__ import annotations

from typing import Any

import click

from customs_batch.cli._once import take_once
from customs_batch.escaping import quoted_head

WHOLE_ARGUMENT = 512
"""The longest word (a choice, a command, a path: ``_paths.CutPath``) a refusal quotes whole:
longer than the paths people type and scripts build, so that the message still says where;
a longer one is quoted cut."""


def cut_in(message: str, word: str) -> str | None:
    """``message`` (a refusal of click's that quotes ``word`` as ``repr`` does) with ``word``
    quoted cut (:func:`quoted_head`) when it is longer than :data:`WHOLE_ARGUMENT`; None when
    it is short enough to stand whole, the message left as click wrote it."""
    if len(word) <= WHOLE_ARGUMENT:
        return None
    return message.replace(repr(word), quoted_head(word))


class CutChoice(click.Choice[Any]):
    """``click.Choice`` whose refusal (``'…' is not one of …``) quotes a value longer than
    :data:`WHOLE_ARGUMENT` cut (:func:`quoted_head`): click echoed
    a 100 KB value whole. Every choice a command takes is one of these (exit 64 as click's
    own)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as refused:
            cut = cut_in(refused.message, value) if isinstance(value, str) else None
            if cut is None:
                raise
            self.fail(cut, param, ctx)


class CutGroup(click.Group):
    """``click.Group`` whose refusal of a command it does not have (``No such command
    '…'.``) quotes a name longer than :data:`WHOLE_ARGUMENT` cut:
    click echoed a 100 KB word whole. Every group of commands is one of these."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as refused:
            cut = cut_in(refused.message, args[0]) if args else None
            if cut is None:
                raise
            raise click.UsageError(cut, ctx=ctx) from None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        return None if command is None else take_once(command)


class Given(click.ParamType[str]):
    """Text that must say something: an empty or blank value (``--since "$SINCE"``,
    ``force-unlock "$ID"`` with the variable unset) is refused (exit 64), where it was taken
    for no value at all (``history --since ''`` listed everything) or for an id matching
    nothing. ``what`` names what to give (``"a date"``, ``"the lock id"``)."""

    name = "text"

    def __init__(self, what: str) -> None:
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail(f"{value!r} is empty: give {self.what}", param, ctx)
        return value
