"""Every operation the emulator serves, from the modules that register them.

The modules are those of the service's resources that no kind makes (``declarations.py``:
shipments, declarations, items; ``rto.py``: the emulator's inspection endpoints too) and
the module each kind's model names (``KindModel.emulator``). Each lists its
``OPERATIONS`` (see ``operations.py``); the routes (``app.py``), ``/openapi.json``
(``openapi.py``) and the request-body validators are made from them.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

from customs_batch.kinds.registry import KINDS
from customs_batch.sandbox.operations import ApiOperation, Body

BASE_MODULES = ("declarations", "rto")
"""The modules served whatever the kinds: the lists of shipments, declarations and items,
and the emulator's inspection endpoints."""


def endpoint_modules() -> tuple[ModuleType, ...]:
    """The modules of ``customs_batch.sandbox`` whose operations are served, each once."""
    names = [*BASE_MODULES, *(model.emulator for model in KINDS.values() if model.emulator)]
    return tuple(
        importlib.import_module(f"customs_batch.sandbox.{name}") for name in dict.fromkeys(names)
    )


@cache
def operations() -> tuple[ApiOperation, ...]:
    """Every operation served, module by module in their order."""
    found: list[ApiOperation] = []
    for module in endpoint_modules():
        found.extend(module.OPERATIONS)
    return tuple(found)


def bodies() -> tuple[Body, ...]:
    """The request bodies with a schema, each once, in the order the operations name them."""
    return tuple(
        dict.fromkeys(operation.body for operation in operations() if operation.body is not None)
    )
