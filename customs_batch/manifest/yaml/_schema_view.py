"""Precomputed lookup tables over a JSON Schema, for typing YAML scalars while loading.

The loader walks every YAML node alongside the schema of the place it is in. Doing the JSON
Schema resolution (``$ref``, ``anyOf``) per node would cost more than the YAML parse, so each
schema is turned once into a tree of :class:`SchemaView` objects: a dict from property name to
the child view, the view of list items, and whether a scalar at that place can only be a string.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from customs_batch.kinds import Kind
from customs_batch.resources import kind_schema, load_schema

_SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean", "null"})
_COMBINATORS = ("anyOf", "oneOf", "allOf")
REFERENCE = "reference"
"""The scalar type of a string that is a ``${ref:...}`` and nothing else."""


class SchemaView:
    """What the loader needs to know about one place in a schema."""

    __slots__ = ("additional", "items", "props", "scalar_types", "string_only")

    def __init__(self) -> None:
        self.props: dict[str, SchemaView] = {}
        self.additional: SchemaView | None = None
        self.items: SchemaView | None = None
        self.string_only = False
        self.scalar_types: frozenset[str] = frozenset()
        """The scalar JSON types allowed here (``integer``, ``number``, ``string``...)."""

    def child(self, key: str) -> SchemaView | None:
        """The view of property ``key`` (or of the additional properties), if the schema says."""
        view = self.props.get(key)
        return self.additional if view is None else view


def build_view(schema: Mapping[str, Any]) -> SchemaView:
    """The view tree of a self-contained schema (local ``$ref`` to ``#/...`` only)."""
    return _Builder(schema).view(schema)


@cache
def envelope_view() -> SchemaView:
    """The view of the envelope schema (``schemas/envelope.schema.json``)."""
    return build_view(load_schema("envelope"))


@cache
def spec_view(kind: Kind) -> SchemaView:
    """The view of a kind's ``spec`` schema."""
    return build_view(kind_schema(kind))


class _Builder:
    """Builds views, sharing one view per schema object so recursive ``$ref`` terminates."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self._root = root
        self._memo: dict[int, SchemaView] = {}

    def view(self, schema: Mapping[str, Any]) -> SchemaView:
        known = self._memo.get(id(schema))
        if known is not None:
            return known
        view = SchemaView()
        self._memo[id(schema)] = view  # before recursing: a cycle of $ref ends here
        parts = self._flatten(schema, set())
        scalar_types: set[str] = set()
        for part in parts:
            scalar_types |= _scalar_types(part)
            self._add_children(view, part)
        view.string_only = bool(scalar_types) and scalar_types <= TEXT_TYPES
        view.scalar_types = frozenset(scalar_types)
        return view

    def _flatten(self, schema: Mapping[str, Any], seen: set[int]) -> list[Mapping[str, Any]]:
        """The schema and every branch it combines, with ``$ref`` followed."""
        if id(schema) in seen:
            return []
        seen.add(id(schema))
        out = [schema]
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = self._resolve(ref)
            if target is not None:
                out += self._flatten(target, seen)
        for word in _COMBINATORS:
            branches = schema.get(word)
            if isinstance(branches, list):
                for branch in branches:
                    if isinstance(branch, Mapping):
                        out += self._flatten(branch, seen)
        return out

    def _resolve(self, ref: str) -> Mapping[str, Any] | None:
        if not ref.startswith("#"):
            return None
        node: Any = self._root
        for raw in ref[1:].split("/")[1:]:
            key = raw.replace("~1", "/").replace("~0", "~")
            node = node.get(key) if isinstance(node, Mapping) else None
        return node if isinstance(node, Mapping) else None

    def _add_children(self, view: SchemaView, part: Mapping[str, Any]) -> None:
        props = part.get("properties")
        if isinstance(props, Mapping):
            for name, sub in props.items():
                if isinstance(sub, Mapping) and name not in view.props:
                    view.props[name] = self.view(sub)
        additional = part.get("additionalProperties")
        if isinstance(additional, Mapping) and view.additional is None:
            view.additional = self.view(additional)
        items = part.get("items")
        if isinstance(items, Mapping) and view.items is None:
            view.items = self.view(items)


TEXT_TYPES = frozenset({"string", REFERENCE})


def _scalar_types(schema: Mapping[str, Any]) -> set[str]:
    """The scalar JSON types one schema object allows by itself (without its branches); a
    string that can only be a ``${ref:...}`` is ``reference``, so that a field taking a
    number or a reference (``declarationId``) converts a cell's ``501`` to the number."""
    declared = schema.get("type")
    if declared == "string" and schema.get("x-kinds") == REFERENCE:
        return {REFERENCE}
    if isinstance(declared, str):
        return {declared} & _SCALAR_TYPES
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)} & _SCALAR_TYPES
    # No explicit type: an enum or const of strings still means "a string".
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list) and values:
        return {_json_type(v) for v in values}
    return set()


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null" if value is None else "object"


@cache
def document_view(kind: Kind | None) -> SchemaView:
    """The view of a whole document: the envelope, with ``spec`` read by the kind's schema
    (an unknown kind's spec is read by the YAML 1.2 core schema alone)."""
    envelope = envelope_view()
    view = SchemaView()
    view.props = {key: sub for key, sub in envelope.props.items() if key != "spec"}
    if kind is not None:
        view.props["spec"] = spec_view(kind)
    return view
