"""The command core: each command that reads manifests and a state as one function, from a
typed options object to a typed result.

The CLI (``customs_batch.cli``) parses options into these objects, calls one function and
renders the result; everything between (choosing the environment and its state backend,
loading and selecting the documents, planning, locking, applying, the exit code) lives here,
so a script or a test can run a plan or an apply without click.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from customs_batch.commands._inputs import Inputs, InvalidManifests
from customs_batch.commands.plan import PlanOptions, PlanResult, make_plan

if TYPE_CHECKING:
    from customs_batch.commands.apply import (
        ApplyOptions,
        ApplyPresenter,
        ApplyResult,
        ApplyStatus,
        apply_changes,
    )

_APPLY = ("ApplyOptions", "ApplyPresenter", "ApplyResult", "ApplyStatus", "apply_changes")


def __getattr__(name: str) -> Any:
    # apply brings the client and httpx: imported when asked for, so that `plan` (which
    # sends nothing) starts without them.
    if name not in _APPLY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from customs_batch.commands import apply

    value = getattr(apply, name)
    globals()[name] = value
    return value


__all__ = [
    "ApplyOptions",
    "ApplyPresenter",
    "ApplyResult",
    "ApplyStatus",
    "Inputs",
    "InvalidManifests",
    "PlanOptions",
    "PlanResult",
    "apply_changes",
    "make_plan",
]
