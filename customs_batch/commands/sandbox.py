"""``customs-batch sandbox``: serve the emulator over HTTP, print its built-in seed.

The emulator itself is ``customs_batch.sandbox``; these are the two commands' functions, so
that ``cli/`` parses, calls one of them and renders, as for every other command.
"""

from __future__ import annotations

from collections.abc import Callable

from customs_batch.sandbox import builtin_seed_text
from customs_batch.sandbox.server import ServeOptions, serve


def serve_sandbox(options: ServeOptions, announce: Callable[[str], None]) -> None:
    """Serve every endpoint of the API over HTTP until SIGTERM or Ctrl-C; ``announce``
    receives the start-up lines (the address listened on, the API keys)."""
    serve(options, announce)


def builtin_seed() -> str:
    """The documented built-in seed, a starting point for ``--seed``."""
    return builtin_seed_text()
