"""The emulator's endpoints come from the modules that register them (``OPERATIONS``):
every such module is served, each operation once, and nothing else is. Each kind has one
emulator module, which says so (``KIND``), and every endpoint that writes is a kind's."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import customs_batch.sandbox
from customs_batch.kinds import Kind
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
    assert {"declarations", "movements", "shipments", "template_groups", "transit"} <= served


def test_the_routes_are_the_registered_operations_each_once() -> None:
    registered = [(operation.method, template(operation.path)) for operation in operations()]
    assert len(set(registered)) == len(registered)
    assert [route.name for route in ROUTES] == [f"{m} {p}" for m, p in registered]


def test_every_request_body_is_named_once() -> None:
    names = [body.name for body in bodies()]
    assert len(set(names)) == len(names)
    assert {"MovementBody", "DepartureDeclaration", "PartiesBody"} <= set(names)


READS = frozenset({"GET", "HEAD"})


def _kind_of(module: ModuleType) -> str | None:
    kind = getattr(module, "KIND", None)
    assert kind is None or isinstance(kind, str), f"{module.__name__}.KIND is not a kind's name"
    return kind


def test_every_kind_has_exactly_one_emulator_module() -> None:
    serving: dict[str, list[str]] = {}
    for module in endpoint_modules():
        kind = _kind_of(module)
        if kind is not None:
            serving.setdefault(kind, []).append(module.__name__.rsplit(".", 1)[1])
    unknown = sorted(set(serving) - {kind.value for kind in Kind})
    assert unknown == [], f"emulator modules name kinds that do not exist: {unknown}"
    assert {kind.value: len(serving.get(kind.value, [])) for kind in Kind} == dict.fromkeys(
        (kind.value for kind in Kind), 1
    ), f"each kind needs one emulator module with its KIND: {serving}"


def test_every_write_endpoint_is_a_kinds() -> None:
    strays = [
        f"{module.__name__}: {operation.method} {operation.path}"
        for module in endpoint_modules()
        if _kind_of(module) is None
        for operation in module.OPERATIONS
        if operation.method not in READS
    ]
    assert strays == [], "a write endpoint goes in the module of the kind that sends it"
