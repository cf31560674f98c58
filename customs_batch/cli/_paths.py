"""The manifest paths a command takes: they must exist, except a loop of symbolic links,
which loading reports (``file.symlink-loop``) like any link loop among the manifests."""

from __future__ import annotations

import errno
import os
import stat
from os import PathLike
from pathlib import Path
from typing import Any

import click
from click.utils import format_filename

from customs_batch.cli._choices import WHOLE_ARGUMENT, cut_in
from customs_batch.errors import UsageError
from customs_batch.escaping import quoted_head
from customs_batch.kinds import MAX_NAME, Address
from customs_batch.userfiles import is_link_loop

_MAX_PATH = 4096
"""Linux's PATH_MAX: no longer path can be opened."""


class CutPath(click.Path):
    """``click.Path`` whose refusals (``Path '…' does not exist.``, ``… is a directory.``)
    quote a path longer than :data:`WHOLE_ARGUMENT` cut (:func:`quoted_head`): click echoed a
    100 KB argument whole. Every path a command takes is one of these (exit 64 as click's
    own)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str | bytes) and not value:
            # "$DIR" with the variable unset: `-o ''` was "internal error: IndexError",
            # `schema export ''` wrote into the current folder, `init ''` spoke of ".".
            what = "folder" if not self.file_okay else "file" if not self.dir_okay else "path"
            self.fail(f"'' is empty: name a {what}", param, ctx)
        if not self.dir_okay and isinstance(value, str) and value.endswith(os.sep):
            # Path("out/") is "out": `plan -out out/` saved the plan as a file named out.
            self.fail(
                f"{_quoted(value)} ends in {os.sep}, naming a folder: name a file", param, ctx
            )
        if not self.file_okay and isinstance(value, str | PathLike):
            # click refuses a regular file where a folder belongs, not a named pipe or a
            # device: `policy test FIFO` found no policies there and passed, exit 0.
            self._refuse_other_than_folder(os.fspath(value), param, ctx)
        try:
            converted = super().convert(value, param, ctx)
        except click.BadParameter as refused:
            if not isinstance(value, str | bytes | PathLike):
                raise
            cut = cut_in(refused.message, format_filename(value))
            if cut is None:
                raise
            self.fail(cut, param, ctx)
        return converted

    def _refuse_other_than_folder(
        self, path: str, param: click.Parameter | None, ctx: click.Context | None
    ) -> None:
        try:
            mode = os.stat(path).st_mode
        except OSError as error:
            if error.errno == errno.ELOOP:  # `init LOOP` was "internal error: RuntimeError"
                self.fail(f"{_quoted(path)} is a loop of symbolic links", param, ctx)
            return  # missing (created, or refused by exists=True): click's to say
        if not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):  # a file: click says so
            self.fail(f"{_quoted(path)} is not a folder (it is {_kind(mode)})", param, ctx)


class FolderToWrite(CutPath):
    """A folder a command writes files of its own into (``schema export DIR``, ``--annotate
    DIR``): ``-``, standard output wherever a command takes a file, is refused (exit 64), as
    ``init -`` is: several files cannot go there, and a folder named ``-`` made in the
    current one (``schema export -`` did that) is not what was meant; ``./-`` names one."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value == "-":
            self.fail(
                "- stands for standard output, which cannot hold the files this writes into "
                "a folder: name the folder (a folder really named - is ./-)",
                param,
                ctx,
            )
        return super().convert(value, param, ctx)


class ManifestPath(CutPath):
    """``click.Path(exists=True, path_type=Path)`` that lets a symbolic-link loop through:
    click would call it a path that does not exist (exit 64), where it is a manifest
    whose link is broken, a finding naming it."""

    def __init__(self, *, readable: bool = False) -> None:
        super().__init__(exists=True, readable=readable, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and len(value) > _MAX_PATH:
            # click would echo it whole ("Path '…' does not exist"): 100 KB on the terminal.
            self.fail(
                f"{quoted_head(value)} is not a path: longer than any the system opens "
                f"({_MAX_PATH:,} characters)",
                param,
                ctx,
            )
        if isinstance(value, str | Path) and is_link_loop(Path(value)):
            return Path(value)
        return super().convert(value, param, ctx)


def _quoted(path: str) -> str:
    """A path for a refusal: whole up to :data:`WHOLE_ARGUMENT`, as click quotes its own."""
    return repr(path) if len(path) <= WHOLE_ARGUMENT else quoted_head(path)


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a folder nor a file")


def parse_address(text: str) -> Address:
    """``Kind/name`` given on the command line; a UsageError (exit 64) otherwise, and for a
    name longer than any document's (``MAX_NAME``), which nothing records. The text is
    echoed cut (:func:`quoted_head`): an argument of 100 KB is not printed back whole."""
    address = Address.parse(text)
    if address is None:
        raise UsageError(
            f"{quoted_head(text)} is not an address",
            hint="write it as Kind/name, e.g. Movement/mov-1",
        )
    if len(address.name) > MAX_NAME:
        raise UsageError(
            f"{quoted_head(text)} is not the address of a document: a name is at most "
            f"{MAX_NAME} characters long",
            hint="write the name as the document's metadata.name says",
        )
    return address
