"""The emulator's endpoints come from the modules that register them (``OPERATIONS``):
every such module is served, each operation once, and nothing else is."""

from __future__ import annotations

import importlib
import pkgutil

import customs_batch.sandbox
from customs_batch.sandbox.app import ROUTES
from customs_batch.sandbox.endpoints import bodies, endpoint_modules, operations
from customs_batch.sandbox.routing import template


def test_every_module_that_registers_operations_is_served() -> None:
    registering = {
        info.name
        for info in pkgutil.iter_modules(customs_batch.sandbox.__path__)
        if hasattr(importlib.import_module(f"customs_batch.sandbox.{info.name}"), "OPERATIONS")
    }
    served = {module.__name__.rsplit(".", 1)[1] for module in endpoint_modules()}
    assert served == registering
    assert {"declarations", "movements", "template_groups", "transit"} <= served


def test_the_routes_are_the_registered_operations_each_once() -> None:
    registered = [(operation.method, template(operation.path)) for operation in operations()]
    assert len(set(registered)) == len(registered)
    assert [route.name for route in ROUTES] == [f"{m} {p}" for m, p in registered]


def test_every_request_body_is_named_once() -> None:
    names = [body.name for body in bodies()]
    assert len(set(names)) == len(names)
    assert {"MovementBody", "DepartureDeclaration", "PartiesBody"} <= set(names)
