"""Every operation the emulator serves, from the modules that register them.

Each kind has one module here, named for the kind (``movements.py`` for Movement,
``template_groups.py`` for TemplateGroup, ...), which says which kind it serves (``KIND``,
the kind's name) and holds that kind's write endpoints; the reads no kind owns
are in a module named for the resource they read (``shipments.py`` shipments, HAWBs and
allocations, ``transit.py`` transit declarations, ``declarations.py`` import/export
declarations and items, ``inspection.py`` the emulator's own ``/_sandbox`` views). Each
lists its endpoints as ``OPERATIONS`` (see ``operations.py``). The routes (``app.py``),
``/openapi.json`` (``openapi.py``) and the request-body validators are made from those
lists, and from the emulator's controls (``controls()``: ``clock.py``, ``gate.py`` and
``keys.py`` list theirs as ``CONTROLS``); nothing else lists the endpoints. The emulator
knows no kind's model: the modules are found in this package, by the ``OPERATIONS`` each
defines at the start of a line (the others, the server's included, are not imported for it).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache
from pathlib import Path
from types import ModuleType

from customs_batch.sandbox import clock, gate, keys
from customs_batch.sandbox.operations import ApiOperation, Body

_PACKAGE = "customs_batch.sandbox"
_REGISTERS = re.compile(r"^OPERATIONS\b", re.MULTILINE)


@cache
def endpoint_modules() -> tuple[ModuleType, ...]:
    """The modules of this package that register operations, by name."""
    folder = Path(__file__).resolve().parent
    names = sorted(
        info.name
        for info in pkgutil.iter_modules([str(folder)])
        if _REGISTERS.search((folder / f"{info.name}.py").read_text(encoding="utf-8"))
    )
    return tuple(importlib.import_module(f"{_PACKAGE}.{name}") for name in names)


@cache
def operations() -> tuple[ApiOperation, ...]:
    """Every operation served, module by module."""
    found: list[ApiOperation] = []
    for module in endpoint_modules():
        found.extend(module.OPERATIONS)
    return tuple(found)


@cache
def controls() -> tuple[ApiOperation, ...]:
    """The emulator's own controls (``/_sandbox/clock``, ``gate``, ``keys/rotate``): no
    endpoints of the service, so neither counted nor rate limited, but served and documented
    in ``/openapi.json`` as the operations are."""
    return (*clock.CONTROLS, *gate.CONTROLS, *keys.CONTROLS)


def bodies() -> tuple[Body, ...]:
    """The request bodies with a schema, each once, in the order the operations and then
    the controls name them."""
    return tuple(
        dict.fromkeys(
            operation.body
            for operation in (*operations(), *controls())
            if operation.body is not None
        )
    )
