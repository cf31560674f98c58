"""Options a command takes once: given twice, click keeps the last silently, so a wrapper's
``-out plan.bin`` in front of the user's ``-out other.bin`` (or a script's ``--env`` and the
user's) decided unseen which file was written or which environment was used. Given twice
with different values, such an option is a usage error naming each (exit 64); the same value
twice is one. Every option that takes one value is such an option: those declared with
``cls=OnceOption`` name what a value is, and :func:`take_once` makes the others of a command
so when its group hands it out (``--mrn-check-digit off --mrn-check-digit error`` checked
at ``error`` unseen, ``--rows 3-4 --rows 3-9`` read rows 3-9)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import click
from click.core import ParameterSource

from customs_batch.escaping import quoted_head


class OnceOption(click.Option):
    """``click.Option`` (``cls=OnceOption``) refusing two different values: ``noun`` names
    what one value is (``"file"``, ``"folder"``, ``"environment"``) in the refusal."""

    def __init__(self, *args: Any, noun: str = "value", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.noun = noun

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        if self.is_flag or self.multiple or self.count or self.nargs != 1:
            super().add_to_parser(parser, ctx)
            return
        # Every occurrence collected (click's "store" keeps the last), for consume_value.
        parser.add_option(obj=self, opts=self.opts, dest=self.name, action="append", nargs=1)

    def consume_value(
        self, ctx: click.Context, opts: Mapping[str, Any]
    ) -> tuple[Any, ParameterSource]:
        value, source = super().consume_value(ctx, opts)
        if source != ParameterSource.COMMANDLINE or not isinstance(value, list):
            return value, source
        different = list(dict.fromkeys(value))
        if len(different) > 1:
            raise click.BadParameter(
                f"given {len(value)} times, naming "
                f"{', '.join(quoted_head(text) for text in different)}: "
                f"name one {self.noun}, once",
                ctx=ctx,
                param=self,
            )
        return different[0], source


def take_once(command: click.Command) -> click.Command:
    """``command`` with each of its options that takes one value refusing two different
    values, as :class:`OnceOption` does (flags, counts and repeatable options are left as
    they are). Every group calls it on the command it hands out."""
    for param in command.params:
        if type(param) is not click.Option:  # OnceOption already, or an argument
            continue
        if param.is_flag or param.multiple or param.count or param.nargs != 1:
            continue
        param.__class__ = OnceOption
        numeric = isinstance(param.type, (click.types.IntParamType, click.types.FloatParamType))
        cast(OnceOption, param).noun = "number" if numeric else "value"
    return command
