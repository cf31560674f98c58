"""The command core: each command that reads manifests and a state as one function, from a
typed options object to a typed result.

The CLI (``customs_batch.cli``) parses options into these objects, calls one function and
renders the result; everything between (choosing the environment and its state backend,
loading and selecting the documents, planning, locking, applying, the exit code) lives here,
so a script or a test can run a plan or an apply without click.
"""

from __future__ import annotations

from customs_batch.commands._inputs import Inputs, InvalidManifests
from customs_batch.commands.apply import (
    ApplyOptions,
    ApplyPresenter,
    ApplyResult,
    ApplyStatus,
    apply_changes,
)
from customs_batch.commands.plan import PlanOptions, PlanResult, make_plan

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
