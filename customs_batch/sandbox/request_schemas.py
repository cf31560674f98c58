"""Request-body schemas, derived from the project's JSON Schemas (never copied by hand).

The project's schemas describe manifest specs; a request body is the spec minus the fields
customs-batch uses for addressing (``shipmentId`` of a movement, ``declarationId`` and
``variant`` of a party update). The same derived schemas feed ``/openapi.json``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

import jsonschema_rs
from jsonschema import Draft202012Validator

from customs_batch.resources import load_schema
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.strictjson import clip

if TYPE_CHECKING:
    from customs_batch.sandbox.operations import Body


def _without(schema: JsonObject, *fields: str) -> JsonObject:
    derived = copy.deepcopy(schema)
    for name in fields:
        derived["properties"].pop(name, None)
    derived["required"] = [r for r in derived.get("required", []) if r not in fields]
    derived.pop("minProperties", None)
    return derived


def _no_references(schema: JsonObject) -> JsonObject:
    """Drop the ``${ref:...}`` alternatives: a request body carries resolved values only."""
    resolved: JsonObject = _strip(schema)
    return resolved


def _strip(schema: Any) -> Any:
    if isinstance(schema, dict):
        any_of = schema.get("anyOf")
        if isinstance(any_of, list):
            kept = [s for s in any_of if s != {"$ref": "#/$defs/reference"}]
            if len(kept) == 1:
                rest = {k: v for k, v in schema.items() if k != "anyOf"}
                return _strip({**rest, **kept[0]})
        return {key: _strip(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_strip(value) for value in schema]
    return schema


def spec_body_schema(schema_name: str, *without: str) -> JsonObject:
    """The request body a kind's spec is sent as: its schema (``schemas/<schema_name>``)
    without the fields ``without`` and without the ``${ref:...}`` alternatives."""
    return _no_references(_without(load_schema(schema_name), *without))


def movement_body_schema() -> JsonObject:
    """POST /v1/shipments/{id}/movements: the movement spec without ``shipmentId``."""
    return _no_references(_without(load_schema("movement"), "shipmentId"))


def departure_body_schema() -> JsonObject:
    """POST /v1/declarations/transit: the departure declaration spec."""
    return _no_references(copy.deepcopy(load_schema("departure-declaration")))


def template_group_body_schema() -> JsonObject:
    """POST /v1/declaration-templates/groups."""
    return _no_references(copy.deepcopy(load_schema("template-group")))


def template_group_patch_schema() -> JsonObject:
    """PATCH /v1/declaration-templates/groups/{id}: any of name, code, isDefault, templates."""
    schema = template_group_body_schema()
    schema["properties"].pop("companyId", None)
    schema["required"] = []
    return schema


def parties_body_schema() -> JsonObject:
    """PATCH .../parties: any of Principal, Consignor, Consignee."""
    schema = _without(load_schema("transit-party-update"), "declarationId", "variant")
    schema["minProperties"] = 1
    return _no_references(schema)


MAX_REASONS = 20  # a 400 lists this many reasons at most, then how many more there are
_EXPLAINED = 1_000  # problems of a body looked for at most: beyond, "at least" so many more
_MAX_REASON = 300  # characters of one reason
_SHOWN_VALUE = 60  # characters of a value or a path quoted in a reason


class BodyValidator:
    """Checks a body against a schema: jsonschema-rs says yes fast, jsonschema says why not.

    Measured here: jsonschema-rs answers a movement body in about 1 us, jsonschema lists its
    errors in about 60 us - too slow for the hot path, but its messages are the clearer.
    Format checking is off in both, as the service does not promise formats.
    """

    def __init__(self, schema: JsonObject) -> None:
        self._fast = jsonschema_rs.validator_for(schema, validate_formats=False)
        self._explaining = Draft202012Validator(schema)
        self._integers = _integer_fields(schema, schema, frozenset())

    def with_integers(self, body: JsonObject) -> JsonObject:
        """``body`` with each number in a field the schema types ``integer`` as a Python int.

        JSON has one number type, and JSON Schema counts ``1.0`` an integer (so does
        ``customs-batch validate``): a body may send ``"quantity": 1.0``. The service holds
        the integer 1 and answers ``1``, as a typed service would; a fraction (``1.5``) is
        refused by the schema. ``body`` itself is not changed.
        """
        if self._integers is None:
            return body
        held: JsonObject = _as_integers(body, self._integers)
        return held

    def reasons(self, body: JsonObject) -> list[str]:
        """Why ``body`` does not match, one sentence per problem (at most ``MAX_REASONS``,
        then a count of the rest); empty when it does."""
        if self._fast.is_valid(body):
            return []
        # Each error costs tens of microseconds to find and explain, and a body of 1 MiB
        # holds hundreds of thousands (an array of wrong entries): all of them took seconds
        # in which the emulator answered nobody. Past _EXPLAINED the rest is not looked at.
        errors = list(islice(self._explaining.iter_errors(body), _EXPLAINED + 1))
        reasons = sorted(_reason(error) for error in errors)
        if not errors:
            # The two disagree: in Python's re (jsonschema's) a pattern's `$` also matches
            # before a final line end, so "hawb_a1\n" passes there. The stricter decides.
            errors = list(islice(self._fast.iter_errors(body), _EXPLAINED + 1))
            reasons = sorted(_fast_reason(error) for error in errors)
        if len(reasons) > _EXPLAINED:
            return [
                *reasons[:MAX_REASONS],
                f"... and at least {len(reasons) - MAX_REASONS:,} more problems",
            ]
        return capped(reasons or ["body: does not match the schema"])


@dataclass(frozen=True)
class _Integers:
    """Where a schema types a value ``integer``: here, or below (pruned where none is)."""

    here: bool = False
    properties: Mapping[str, _Integers] = field(default_factory=dict)
    others: _Integers | None = None  # additionalProperties
    items: _Integers | None = None


def _integer_fields(schema: Any, root: JsonObject, refs: frozenset[str]) -> _Integers | None:
    """The integer fields of ``schema`` (``$ref`` into ``root``'s ``$defs``, ``allOf``,
    ``anyOf`` and ``oneOf`` followed), or None when it has none."""
    if not isinstance(schema, dict):
        return None
    found: list[_Integers] = []
    types = schema.get("type")
    types = types if isinstance(types, list) else [types]
    here = "integer" in types and "number" not in types
    properties = {
        name: node
        for name, sub in (schema.get("properties") or {}).items()
        if (node := _integer_fields(sub, root, refs)) is not None
    }
    others = _integer_fields(schema.get("additionalProperties"), root, refs)
    items = _integer_fields(schema.get("items"), root, refs)
    if here or properties or others or items:
        found.append(_Integers(here, properties, others, items))
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/") and reference not in refs:
        target = root.get("$defs", {}).get(reference.removeprefix("#/$defs/"))
        node = _integer_fields(target, root, refs | {reference})
        if node is not None:
            found.append(node)
    for combinator in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(combinator) or ():
            node = _integer_fields(branch, root, refs)
            if node is not None:
                found.append(node)
    return _merged(found)


def _merged(nodes: list[_Integers]) -> _Integers | None:
    """One node with every integer field of ``nodes`` (a value matching any branch)."""
    if len(nodes) <= 1:
        return nodes[0] if nodes else None
    names = {name for node in nodes for name in node.properties}
    return _Integers(
        here=any(node.here for node in nodes),
        properties={
            name: merged
            for name in names
            if (merged := _merged([n.properties[name] for n in nodes if name in n.properties]))
        },
        others=_merged([node.others for node in nodes if node.others is not None]),
        items=_merged([node.items for node in nodes if node.items is not None]),
    )


def _as_integers(value: Any, node: _Integers) -> Any:
    if node.here and isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict) and (node.properties or node.others):
        copy = dict(value)
        for name, child in value.items():
            below = node.properties.get(name, node.others)
            if below is not None:
                copy[name] = _as_integers(child, below)
        return copy
    if isinstance(value, list) and node.items is not None:
        return [_as_integers(child, node.items) for child in value]
    return value


def capped(reasons: list[str]) -> list[str]:
    """``reasons``, or the first ``MAX_REASONS`` of them and how many more there are."""
    if len(reasons) <= MAX_REASONS:
        return reasons
    more = len(reasons) - MAX_REASONS
    return [*reasons[:MAX_REASONS], f"... and {more:,} more problems"]


def _reason(error: Any) -> str:
    """``where: message`` of an error of jsonschema, the value it quotes in JSON's words."""
    if error.validator in _NAMES_NO_VALUE:
        # The message names properties, not the value: the value is the object holding them,
        # the whole body at the top, whose repr (and its JSON words) took 0.1 s a reason
        # for a body of 1 MiB.
        return _said(error.absolute_path, error.message, "")
    shown = repr(error.instance)
    message = error.message
    if isinstance(error.instance, (dict, list, bool)) or error.instance is None:
        # jsonschema quotes the value as Python writes it (None, True, False): a client
        # sent null, true, false.
        words = _json_words(shown)
        if words != shown:
            message = message.replace(shown, words)
            shown = words
    return _said(error.absolute_path, message, shown)


_NAMES_NO_VALUE = frozenset({"required", "additionalProperties", "dependentRequired"})
"""The keywords of jsonschema whose messages quote property names, never the value."""

_PYTHON_WORDS = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\b(None|True|False)\b""")
_JSON_WORDS = {"None": "null", "True": "true", "False": "false"}


def _json_words(shown: str) -> str:
    """``shown`` (a value as Python's repr writes it) with None, True and False outside its
    strings written null, true and false."""
    return _PYTHON_WORDS.sub(lambda m: _JSON_WORDS[m.group(1)] if m.group(1) else m.group(0), shown)


def _fast_reason(error: Any) -> str:
    """``where: message`` of an error of jsonschema-rs (which quotes values as JSON)."""
    return _said(error.instance_path, error.message, json.dumps(error.instance))


def _said(path: Any, message: str, shown: str) -> str:
    """``where: message``, with the offending value (``shown`` as the message quotes it)
    shortened: a 400 never echoes a body."""
    # Each name of the path is shortened, not the path: a path of the schema's own names
    # (DeclarationTemplates[0].PreviousDocuments[0].documentCategory) is shown whole, so the
    # reason says where the problem is.
    where = "".join(
        f"[{p}]" if isinstance(p, int) else f".{clip(str(p), _SHOWN_VALUE)}" for p in path
    )
    if len(shown) > _SHOWN_VALUE and shown in message:
        message = message.replace(shown, clip(shown, _SHOWN_VALUE))
    return clip(f"{where.lstrip('.') or 'body'}: {message}", _MAX_REASON)


@dataclass(frozen=True)
class BodySchemas:
    """A validator per request body that has a schema, by its name."""

    validators: Mapping[str, BodyValidator]

    def __getitem__(self, body: Body) -> BodyValidator:
        return self.validators[body.name]

    @classmethod
    def load(cls, bodies: Iterable[Body]) -> BodySchemas:
        """Build the validators of ``bodies`` (those of the operations served)."""
        return cls({body.name: BodyValidator(body.schema()) for body in bodies})
