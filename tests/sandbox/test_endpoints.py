"""The emulator's endpoints come from the modules that register them: each kind's model
names its emulator module, and every module with ``OPERATIONS`` is served."""

from __future__ import annotations

import importlib
import pkgutil

import customs_batch.sandbox
from customs_batch.kinds.registry import KINDS
from customs_batch.sandbox.app import ROUTES
from customs_batch.sandbox.endpoints import BASE_MODULES, bodies, endpoint_modules, operations
from customs_batch.sandbox.routing import template


def test_every_kind_names_an_emulator_module_that_registers_operations() -> None:
    for kind, model in KINDS.items():
        assert model.emulator is not None, kind
        module = importlib.import_module(f"customs_batch.sandbox.{model.emulator}")
        assert module.OPERATIONS, kind


def test_every_module_that_registers_operations_is_served() -> None:
    registering = {
        info.name
        for info in pkgutil.iter_modules(customs_batch.sandbox.__path__)
        if hasattr(importlib.import_module(f"customs_batch.sandbox.{info.name}"), "OPERATIONS")
    }
    served = {module.__name__.rsplit(".", 1)[1] for module in endpoint_modules()}
    assert served == registering
    assert set(BASE_MODULES) <= served


def test_the_routes_are_the_registered_operations_each_once() -> None:
    registered = [(operation.method, template(operation.path)) for operation in operations()]
    assert len(set(registered)) == len(registered)
    assert [route.name for route in ROUTES] == [f"{m} {p}" for m, p in registered]


def test_every_request_body_is_named_once() -> None:
    names = [body.name for body in bodies()]
    assert len(set(names)) == len(names)
    assert {"MovementBody", "DepartureDeclaration", "PartiesBody"} <= set(names)
