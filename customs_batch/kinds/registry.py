"""Every kind's model, by kind: the one place the generic code learns what a kind does.

The models are found, not listed: every module of this package that defines a ``MODEL``
(a ``KindModel``) is a kind's module. They are held in the order of ``Kind``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from customs_batch.kinds import Kind
from customs_batch.kinds.actions import Operation
from customs_batch.kinds.model import KindModel, SendFunction


def _models() -> dict[Kind, KindModel]:
    """The ``MODEL`` of every module of this package that has one, by kind."""
    found: dict[Kind, KindModel] = {}
    for info in pkgutil.iter_modules([str(Path(__file__).resolve().parent)]):
        if info.name == "registry":
            continue
        model = getattr(importlib.import_module(f"{__package__}.{info.name}"), "MODEL", None)
        if not isinstance(model, KindModel):
            continue
        if model.kind in found:
            raise RuntimeError(f"two modules of customs_batch.kinds model {model.kind.value}")
        found[model.kind] = model
    return {kind: found[kind] for kind in Kind if kind in found}


KINDS: Mapping[Kind, KindModel] = MappingProxyType(_models())

SEND: Mapping[Operation, SendFunction] = MappingProxyType(
    {operation: send for model in KINDS.values() for operation, send in model.send.items()}
)
"""The function that sends each operation, whichever kind it belongs to."""


def model_of(kind: Kind) -> KindModel:
    """The model of ``kind``."""
    return KINDS[kind]
