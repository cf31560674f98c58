"""The spreadsheet columns of a kind: its spec fields flattened to one header each.

A nested object's fields become ``Consignor.name``; a list of objects becomes one element
(``DeclarationItems.description``: one item per row); a list of scalars and a reference-only
field stay one column. A column is required when the field is required and every object
above it is required too. A required object that requires none of its own fields (a party,
the goods location's address, the one item and guarantee of a row) needs one of them all
the same, or the row has no such object at all: each of its columns is then ``one of`` that
object's columns, which the sheet's first row says (``one of Consignor.*``). A kind whose
rule asks for one of several optional objects (a party update: a Principal, a Consignor or
a Consignee) marks the columns of all of them ``one of Principal.*, Consignor.*,
Consignee.*``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from customs_batch.kinds import Kind
from customs_batch.resources import kind_schema


@dataclass(frozen=True)
class Column:
    """One column of a kind's spreadsheet."""

    header: str
    path: tuple[str | int, ...]
    """Where the value goes in ``spec`` (an ``int`` is the element of a list)."""
    required: bool
    type: str
    """The JSON type of the field: string, integer, number or boolean."""
    description: str
    one_of: str | None = None
    """The columns of which at least one must be filled, when the column is not required
    itself (``Consignor.*``: the required object's; ``Principal.*, Consignor.*,
    Consignee.*``: those of the objects one of which the kind requires); else None."""

    condition: str | None = None
    """When the kind's rules require the field in some rows only, which (``VAH, VAB, ISL,
    USL`` for a movement's partyId); else None."""

    @property
    def note(self) -> str:
        """What the sheet's first row says above the column."""
        if self.required:
            return "required"
        if self.condition:
            return f"required for {self.condition}"
        return f"one of {self.one_of}" if self.one_of else "optional"


ONE_OF_OBJECTS: Mapping[Kind, tuple[str, ...]] = {
    # party-update.no-party (validation.transit_rules): "the party update carries no party".
    Kind.TRANSIT_PARTY_UPDATE: ("Principal", "Consignor", "Consignee"),
}
"""The optional objects of a kind one of which its rules require, which its schema does not
say (a row with none of them fails validation)."""


REQUIRED_WHEN: Mapping[Kind, Mapping[str, str]] = {
    # movement.party-required (validation.movement_rules): "ISL movements need partyId".
    Kind.MOVEMENT: {"partyId": "VAH, VAB, ISL, USL"},
}
"""The fields a kind's rules require in some rows only (by the row's action), which its
schema leaves optional: the sheet's first row says for which."""


def kind_columns(kind: Kind) -> list[Column]:
    """The columns of ``kind``, in the order of its schema."""
    schema = kind_schema(kind)
    columns = list(_walk(schema, schema, (), required=True))
    conditions = REQUIRED_WHEN.get(kind, {})
    if conditions:
        columns = [
            replace(column, condition=conditions[column.header])
            if column.header in conditions and not column.required
            else column
            for column in columns
        ]
    alternatives = ONE_OF_OBJECTS.get(kind, ())
    if alternatives:
        group = ", ".join(f"{name}.*" for name in alternatives)
        columns = [
            replace(column, one_of=group)
            if not column.required and column.path[0] in alternatives
            else column
            for column in columns
        ]
    return columns


def _walk(
    root: Mapping[str, Any],
    schema: Mapping[str, Any],
    path: tuple[str | int, ...],
    *,
    required: bool,
    one_of: str | None = None,
) -> Iterator[Column]:
    needed = set(schema.get("required", []))
    if required and not needed and one_of is None and path:
        one_of = f"{_header(path)}.*"  # required, but none of its fields is: one of them is
    for name, raw in schema.get("properties", {}).items():
        sub = _resolve(root, raw)
        here = (*path, name)
        is_required = required and name in needed
        kind = _type(sub)
        if kind == "object":
            yield from _walk(root, sub, here, required=is_required, one_of=one_of)
        elif kind == "array":
            items = _resolve(root, sub.get("items", {}))
            if _type(items) == "object":
                yield from _walk(root, items, (*here, 0), required=is_required, one_of=one_of)
            else:
                yield _column(here, is_required, _type(items) or "string", sub, one_of)
        else:
            yield _column(here, is_required, kind or "string", sub, one_of)


def _header(path: tuple[str | int, ...]) -> str:
    return ".".join(str(part) for part in path if isinstance(part, str))


def _column(
    path: tuple[str | int, ...],
    required: bool,
    kind: str,
    schema: Mapping[str, Any],
    one_of: str | None,
) -> Column:
    description = str(schema.get("description", ""))
    return Column(_header(path), path, required, kind, description, None if required else one_of)


def _resolve(root: Mapping[str, Any], schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """Follow a local ``$ref``; of ``anyOf``/``oneOf`` branches take the first that is not
    the ``${ref:…}`` text form (a spreadsheet holds the value itself)."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, Mapping) else {}
        return _resolve(root, node) if isinstance(node, Mapping) else {}
    for word in ("anyOf", "oneOf"):
        branches = schema.get(word)
        if isinstance(branches, list):
            for branch in branches:
                if isinstance(branch, Mapping) and branch.get("$ref") != "#/$defs/reference":
                    merged = {**schema, **_resolve(root, branch)}
                    merged.pop(word, None)
                    return merged
    return schema


def _type(schema: Mapping[str, Any]) -> str | None:
    declared = schema.get("type")
    if isinstance(declared, list):
        declared = next((t for t in declared if t != "null"), None)
    if isinstance(declared, str):
        return declared
    if "properties" in schema:
        return "object"
    values = schema.get("enum")
    if isinstance(values, list) and values:
        first = values[0]
        return "integer" if isinstance(first, int) and not isinstance(first, bool) else "string"
    return None


__all__ = ["Column", "kind_columns"]
