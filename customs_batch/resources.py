"""Where the shipped JSON Schemas and built-in templates are.

In a wheel they live inside the package (``customs_batch/_data/``); in a source checkout or
an editable install they are the repository's top-level ``schemas/`` and ``templates/``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, cast

from customs_batch.kinds import Kind

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
    return cast(dict[str, Any], json.loads(path.read_text(encoding="utf-8")))


def kind_schema(kind: Kind) -> dict[str, Any]:
    """The JSON Schema of a kind's ``spec``."""
    return load_schema(kind.schema_name)


@cache
def load_pattern_hints() -> dict[str, dict[str, str]]:
    """What a value of each schema pattern looks like (``schemas/patterns.json``): for each
    pattern, ``is`` (what the value is), ``form`` (its shape in words) and an ``example``."""
    path = schemas_dir() / "patterns.json"
    table = json.loads(path.read_text(encoding="utf-8"))
    return cast(dict[str, dict[str, str]], table["patterns"])
