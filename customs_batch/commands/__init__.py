"""The command core: every command as one function, from a typed options object to a typed
result (one module per command: ``commands/<name>.py``).

The CLI (``customs_batch.cli``) parses options into these objects, calls one function and
renders the result; everything between (choosing the environment and its state backend,
loading and selecting the documents, connecting, locking, planning, applying, the exit code)
lives here, so a script or a test runs a command without click. Errors are raised as
:class:`customs_batch.errors.CustomsBatchError`, each with its exit code; a result that is
not an error says its exit code itself (``exit_code``).

The names below are imported when first asked for: ``init`` or ``templates`` do not load
the planner, and ``plan`` (which sends nothing) does not load the client and httpx that
apply brings.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from customs_batch.commands._inputs import Inputs, InvalidManifests
    from customs_batch.commands.apply import (
        ApplyOptions,
        ApplyPresenter,
        ApplyResult,
        ApplyStatus,
        apply_changes,
    )
    from customs_batch.commands.plan import PlanOptions, PlanResult, make_plan

_MODULES = {
    "Inputs": "_inputs",
    "InvalidManifests": "_inputs",
    "PlanOptions": "plan",
    "PlanResult": "plan",
    "make_plan": "plan",
    "ApplyOptions": "apply",
    "ApplyPresenter": "apply",
    "ApplyResult": "apply",
    "ApplyStatus": "apply",
    "apply_changes": "apply",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
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
