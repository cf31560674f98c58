"""The manifest paths a command takes: they must exist, except a loop of symbolic links,
which loading reports (``file.symlink-loop``) like any link loop among the manifests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from customs_batch.errors import UsageError
from customs_batch.kinds import Address
from customs_batch.userfiles import is_link_loop


class ManifestPath(click.Path):
    """``click.Path(exists=True, path_type=Path)`` that lets a symbolic-link loop through:
    click would call it a path that does not exist (exit 64), where it is a manifest
    whose link is broken, a finding naming it."""

    def __init__(self, *, readable: bool = False) -> None:
        super().__init__(exists=True, readable=readable, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str | Path) and is_link_loop(Path(value)):
            return Path(value)
        return super().convert(value, param, ctx)


def parse_address(text: str) -> Address:
    """``Kind/name`` given on the command line; a UsageError (exit 64) otherwise."""
    address = Address.parse(text)
    if address is None:
        raise UsageError(
            f"{text!r} is not an address", hint="write it as Kind/name, e.g. Movement/mov-1"
        )
    return address
