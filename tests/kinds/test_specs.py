"""Each kind's spec type (the ``TypedDict`` its module writes, ``KindModel.spec_type``) against
its JSON Schema: the same fields at every level, each as required as the schema says, of a
compatible type (an ``enum`` or ``const`` as a ``Literal`` of the same values), so that the
type mypy checks the kind code with cannot drift from the schema that validates documents.
A field added on one side only, a changed requirement or type, fails here."""

from __future__ import annotations

import copy
import types
from collections.abc import Mapping
from typing import (
    Literal,
    NotRequired,
    Required,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

import pytest

from customs_batch.kinds import Kind
from customs_batch.kinds.departure import DepartureSpec
from customs_batch.kinds.hawb_deactivation import HawbDeactivationSpec
from customs_batch.kinds.movement import MovementSpec
from customs_batch.kinds.registry import KINDS, model_of
from customs_batch.resources import kind_schema

Schema = Mapping[str, object]

_JSON_TYPES: Mapping[object, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
}


def differences(typed: object, schema: Schema) -> list[str]:
    """What differs between the spec type ``typed`` and the kind schema ``schema``."""
    return _compare(typed, schema, schema, "spec")


def _resolved(node: Schema, root: Schema) -> Schema:
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return node
    assert ref.startswith("#/"), ref
    target: object = root
    for step in ref[2:].split("/"):
        assert isinstance(target, Mapping), ref
        target = target[step]
    assert isinstance(target, Mapping), ref
    return _resolved(target, root)


def _schema_alternatives(node: Schema, root: Schema) -> dict[str, Schema]:
    """The schema's alternatives for a value, by JSON type."""
    node = _resolved(node, root)
    branches = node.get("anyOf") or node.get("oneOf")
    if isinstance(branches, list):
        found: dict[str, Schema] = {}
        for branch in branches:
            found.update(_schema_alternatives(branch, root))
        return found
    kind = node.get("type")
    assert isinstance(kind, str), f"a schema node without one type: {node}"
    return {kind: node}


def _type_alternatives(typed: object) -> dict[str, object]:
    """The type's alternatives for a value, by JSON type (``?`` for one JSON has not)."""
    if get_origin(typed) in (Union, types.UnionType):
        found: dict[str, object] = {}
        for arg in get_args(typed):
            found.update(_type_alternatives(arg))
        return found
    if get_origin(typed) is Literal:
        kinds = {_JSON_TYPES.get(type(value), "?") for value in get_args(typed)}
        return {kinds.pop() if len(kinds) == 1 else "?": typed}
    if get_origin(typed) is list:
        return {"array": typed}
    if is_typeddict(typed):
        return {"object": typed}
    return {_JSON_TYPES.get(typed, "?"): typed}


def _values(node: Schema) -> list[object] | None:
    """The values an ``enum`` or a ``const`` allows, in order (None: any of its type)."""
    if "const" in node:
        return [node["const"]]
    enum = node.get("enum")
    return sorted(enum, key=repr) if isinstance(enum, list) else None


def _compare(typed: object, node: Schema, root: Schema, where: str) -> list[str]:
    wanted, given = _schema_alternatives(node, root), _type_alternatives(typed)
    if set(wanted) != set(given):
        return [f"{where}: the type is {typed}, the schema says {' or '.join(sorted(wanted))}"]
    problems: list[str] = []
    for kind, sub in wanted.items():
        written = given[kind]
        values = _values(sub)
        literal = sorted(get_args(written), key=repr) if get_origin(written) is Literal else None
        if values != literal:
            problems.append(
                f"{where}: the type allows {literal or kind}, the schema {values or kind}"
            )
        elif kind == "array":
            items = sub.get("items")
            assert isinstance(items, Mapping), where
            problems += _compare(get_args(written)[0], items, root, f"{where}[]")
        elif kind == "object":
            problems += _compare_object(written, sub, root, where)
    return problems


def _compare_object(typed: object, node: Schema, root: Schema, where: str) -> list[str]:
    hints = get_type_hints(typed, include_extras=True)
    properties = node.get("properties")
    assert isinstance(properties, Mapping), f"{where}: an object schema without properties"
    required = node.get("required", [])
    assert isinstance(required, list), where
    total = getattr(typed, "__total__", True)
    problems = [
        f"{where}.{name}: in the type, not in the schema"
        for name in hints
        if name not in properties
    ]
    problems += [
        f"{where}.{name}: in the schema, not in the type"
        for name in properties
        if name not in hints
    ]
    if node.get("additionalProperties") is not False:
        problems.append(f"{where}: the schema allows other fields, a TypedDict does not")
    for name in (name for name in properties if name in hints):
        written = hints[name]
        is_required = total
        if get_origin(written) in (NotRequired, Required):
            is_required = get_origin(written) is Required
            written = get_args(written)[0]
        if is_required != (name in required):
            says = "required" if name in required else "optional"
            problems.append(f"{where}.{name}: the schema says {says}, the type does not")
        sub = properties[name]
        assert isinstance(sub, Mapping), f"{where}.{name}"
        problems += _compare(written, sub, root, f"{where}.{name}")
    return problems


@pytest.mark.parametrize("kind", list(Kind), ids=str)
def test_the_spec_type_of_every_kind_is_its_schema(kind: Kind) -> None:
    spec_type = model_of(kind).spec_type
    assert is_typeddict(spec_type), f"{kind}: its spec_type is not a TypedDict"
    assert differences(spec_type, kind_schema(kind)) == []


def test_every_kind_of_the_registry_is_checked() -> None:
    assert set(KINDS) == set(Kind)


def _paths(typed: object, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every path of field names in a spec type, ``*`` for the items of a list."""
    found: set[tuple[str, ...]] = set()
    for name, hint in get_type_hints(typed).items():
        path = (*prefix, name)
        found.add(path)
        while get_origin(hint) is list:
            path, hint = (*path, "*"), get_args(hint)[0]
            found.add(path)
        if is_typeddict(hint):
            found |= _paths(hint, path)
    return found


@pytest.mark.parametrize("kind", list(Kind), ids=str)
def test_the_fields_a_model_names_are_fields_of_its_spec(kind: Kind) -> None:
    model = model_of(kind)
    fields = _paths(model.spec_type)
    assert {(name,) for name in model.mutable} <= fields
    assert {path for path, _ in model.code_fields} <= fields


# The check itself: a field added on one side only, or changed on one, is a difference.


class _WithANote(HawbDeactivationSpec):
    note: NotRequired[str]


class _WithoutTheHawb(TypedDict):
    shipmentId: str


class _HawbOptional(TypedDict):
    shipmentId: str
    hawbId: NotRequired[str]


class _ShipmentAsNumber(TypedDict):
    shipmentId: int
    hawbId: str


class _FewerActions(TypedDict):
    shipmentId: str
    action: Literal["VAH", "VAB"]
    quantity: int
    grossWeightKg: float
    customsSupervision: Literal["Y", "N"]
    goodsHandlingCode: Literal["N", "A", "H", "B", "G", "C"]
    hawbId: NotRequired[str]
    partyId: NotRequired[str]
    customsDeclaration: NotRequired[Mapping[str, str]]


def _hawb_schema() -> dict[str, object]:
    return copy.deepcopy(kind_schema(Kind.HAWB_DEACTIVATION))


def test_a_field_only_the_type_has_is_a_difference() -> None:
    assert differences(_WithANote, _hawb_schema()) == ["spec.note: in the type, not in the schema"]


def test_a_field_only_the_schema_has_is_a_difference() -> None:
    assert differences(_WithoutTheHawb, _hawb_schema()) == [
        "spec.hawbId: in the schema, not in the type"
    ]
    schema = _hawb_schema()
    properties = schema["properties"]
    assert isinstance(properties, dict)
    properties["note"] = {"type": "string"}
    assert differences(HawbDeactivationSpec, schema) == [
        "spec.note: in the schema, not in the type"
    ]


def test_a_nested_field_only_one_side_has_is_a_difference() -> None:
    schema = copy.deepcopy(kind_schema(Kind.DEPARTURE_DECLARATION))
    schema["$defs"]["party"]["properties"]["phone"] = {"type": "string"}
    assert differences(DepartureSpec, schema) == [
        f"spec.{role}.phone: in the schema, not in the type"
        for role in ("Principal", "Consignor", "Consignee")
    ]
    schema = copy.deepcopy(kind_schema(Kind.DEPARTURE_DECLARATION))
    del schema["$defs"]["packaging"]["properties"]["shippingMarks"]
    assert differences(DepartureSpec, schema) == [
        "spec.DeclarationItems[].packaging[].shippingMarks: in the type, not in the schema"
    ]


def test_a_requirement_or_a_type_that_differs_is_a_difference() -> None:
    assert differences(_HawbOptional, _hawb_schema()) == [
        "spec.hawbId: the schema says required, the type does not"
    ]
    assert differences(_ShipmentAsNumber, _hawb_schema()) == [
        "spec.shipmentId: the type is <class 'int'>, the schema says string"
    ]
    schema = _hawb_schema()
    schema["required"] = ["shipmentId"]
    assert differences(HawbDeactivationSpec, schema) == [
        "spec.hawbId: the schema says optional, the type does not"
    ]


def test_an_enum_is_a_literal_of_its_values() -> None:
    problems = differences(_FewerActions, kind_schema(Kind.MOVEMENT))
    assert len(problems) == 2, problems
    assert problems[0] == (
        "spec.action: the type allows ['VAB', 'VAH'], "
        "the schema ['ISC', 'ISL', 'USC', 'USL', 'VAB', 'VAH']"
    )
    assert problems[1].startswith("spec.customsDeclaration: the type is")
    schema = copy.deepcopy(kind_schema(Kind.MOVEMENT))
    schema["properties"]["customsSupervision"]["enum"].append("M")
    assert differences(MovementSpec, schema) == [
        "spec.customsSupervision: the type allows ['N', 'Y'], the schema ['M', 'N', 'Y']"
    ]
