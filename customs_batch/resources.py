"""Where the shipped JSON Schemas and built-in templates are, and the schemas as loaded.

In a wheel they live inside the package (``customs_batch/_data/``); in a source checkout or
an editable install they are the repository's top-level ``schemas/`` and ``templates/``.

No schema file lists the kinds: a place that does is marked ``"x-kinds"`` and filled in from
the kind registry (``customs_batch.kinds``) when the schema is loaded — the envelope's
``kind`` enum (``"enum"``), the pattern of an address ``Kind/name`` (``"address"``) and of a
reference ``${ref:Kind/name.field}`` (``"reference"``).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, cast

from customs_batch.kinds import Kind, address_pattern, kind_names, reference_pattern

_PACKAGE_DIR = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    packaged = _PACKAGE_DIR / "_data" / name
    if packaged.is_dir():
        return packaged
    return _PACKAGE_DIR.parent / name


def schemas_dir() -> Path:
    """The folder holding ``envelope.schema.json`` and one ``<kind>.schema.json`` per kind."""
    return _data_dir("schemas")


def builtin_templates_dir() -> Path:
    """The folder of built-in Jinja templates (``<name>.yaml.j2``)."""
    return _data_dir("templates")


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema ``schemas/<name>.schema.json`` (``envelope`` or a kind's schema name)."""
    path = schemas_dir() / f"{name}.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    _fill_kind_lists(schema)
    return cast(dict[str, Any], schema)


KIND_LISTS = ("enum", "address", "reference")
"""The values of an ``"x-kinds"`` mark: what is made from the kind registry there."""


def _fill_kind_lists(node: Any) -> None:
    """Fill every place marked ``"x-kinds"`` with the registry's kinds, in place."""
    if isinstance(node, dict):
        mark = node.get("x-kinds")
        if mark == "enum":
            node["enum"] = list(kind_names())
        elif mark in KIND_LISTS:
            node["pattern"] = _kind_pattern(mark)
        for value in node.values():
            _fill_kind_lists(value)
    elif isinstance(node, list):
        for value in node:
            _fill_kind_lists(value)


def _kind_pattern(mark: str) -> str:
    return address_pattern() if mark == "address" else reference_pattern()


def kind_schema(kind: Kind) -> dict[str, Any]:
    """The JSON Schema of a kind's ``spec``."""
    return load_schema(kind.schema_name)


@cache
def load_pattern_hints() -> dict[str, dict[str, str]]:
    """What a value of each schema pattern looks like (``schemas/patterns.json``): for each
    pattern, ``is`` (what the value is), ``form`` (its shape in words) and an ``example``."""
    path = schemas_dir() / "patterns.json"
    table: dict[str, dict[str, str]] = json.loads(path.read_text(encoding="utf-8"))["patterns"]
    # The patterns made from the kind registry are named by their mark ("x-kinds: address").
    return {
        _kind_pattern(key.removeprefix("x-kinds: ")) if key.startswith("x-kinds: ") else key: hint
        for key, hint in table.items()
    }
