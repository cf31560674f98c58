"""The choices an option or argument takes (``--format``, ``--status``, a kind), and the
commands of a group: a value that is none of them is refused quoting it cut when long."""

from __future__ import annotations

from typing import Any

import click

from customs_batch.escaping import quoted_head

WHOLE_ARGUMENT = 512
"""The longest word (a choice, a command, a path: ``_paths.CutPath``) a refusal quotes whole:
longer than the paths people type and scripts build, so that the message still says where;
a longer one is quoted cut."""


class CutChoice(click.Choice[Any]):
    """``click.Choice`` whose refusal (``'…' is not one of …``) quotes a value longer than
    :data:`WHOLE_ARGUMENT` cut (:func:`quoted_head`): click echoed
    a 100 KB value whole. Every choice a command takes is one of these (exit 64 as click's
    own)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as refused:
            if not isinstance(value, str) or len(value) <= WHOLE_ARGUMENT:
                raise
            self.fail(refused.message.replace(repr(value), quoted_head(value)), param, ctx)


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
            name = args[0] if args else ""
            if len(name) <= WHOLE_ARGUMENT or repr(name) not in refused.message:
                raise
            message = refused.message.replace(repr(name), quoted_head(name))
            raise click.UsageError(message, ctx=ctx) from None
