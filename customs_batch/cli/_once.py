"""Options a command takes once: given twice, click keeps the last silently, so a wrapper's
``-out plan.bin`` in front of the user's ``-out other.bin`` (or a script's ``--env`` and the
user's) decided unseen which file was written or which environment was used. Given twice
with different values, such an option is a usage error naming each (exit 64); the same value
twice is one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
