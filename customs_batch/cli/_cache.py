"""``--no-cache``, which validate, plan and apply share (its own module: validate imports
nothing of the state or the environments)."""

from __future__ import annotations

import click

no_cache_option = click.option(
    "--no-cache",
    is_flag=True,
    help="Load and check every manifest file again, without reading or writing the load "
    "cache (.customs-batch/cache/; see docs/validation.md).",
)
