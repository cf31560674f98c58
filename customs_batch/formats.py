"""Every command's output formats, in one registry.

Each command that prints records or results has one :class:`Formats` table, named for
what it prints (``plan``, ``findings``, ``records``, …). A format module registers its
renderer under a name; the command's ``--format`` choices, its default and its help come
from the table, and ``-o/--output FILE`` is always a file. :data:`ALL` lists every table,
so the choices of every command can be checked together, and :data:`FORMAT_VERSION` is
the one version every JSON output customs-batch defines carries, under the one key
``formatVersion``.

Light on purpose (no imports beyond the standard library): the validation and CLI modules
import it at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from customs_batch.errors import UsageError

R = TypeVar("R")

VERSION_KEY = "formatVersion"
"""The key of the version in every JSON output of customs-batch's own design."""


class Formats(Generic[R]):
    """The formats one command can print, by name, in the order ``--help`` lists them."""

    def __init__(self, subject: str, order: tuple[str, ...]) -> None:
        self.subject = subject
        self._order = order
        self._renderers: dict[str, R] = {}
        ALL[subject] = self

    def register(self, name: str) -> Callable[[R], R]:
        """Decorator: make ``renderer`` this command's ``--format name``."""

        def add(renderer: R) -> R:
            self._renderers[name] = renderer
            return renderer

        return add

    def names(self) -> list[str]:
        """The format names: those of ``order`` first, in its order, then the rest."""
        rank = {name: index for index, name in enumerate(self._order)}
        return sorted(self._renderers, key=lambda name: (rank.get(name, len(rank)), name))

    @property
    def default(self) -> str:
        """The first format: the one for people."""
        return self.names()[0]

    def get(self, name: str) -> R:
        """The renderer of format ``name``; a usage error names the formats there are."""
        renderer = self._renderers.get(name)
        if renderer is None:
            raise UsageError(
                f"unknown {self.subject} format {name!r}",
                hint=f"use one of: {', '.join(self.names())}",
            )
        return renderer


ALL: dict[str, Formats[Any]] = {}
"""Every command's formats, by subject (filled as the format modules are imported)."""
