"""Write the shipped JSON Schemas to a folder, plus one schema for whole documents.

``document.schema.json`` is what an editor needs for a manifest file: the envelope, and the
spec checked by the kind's schema through ``if``/``then`` on ``kind``. It is self-contained
(the kind schemas sit under ``$defs``) so that editors never fetch anything over the network.

An editor sees the spec as written, before the template is merged under it and before rows
expand: so a document with a ``template`` gets the kind's schema without ``required`` (the
template may give those fields), and a ``forEach`` document only its envelope (its values are
Jinja expressions until a row fills them). ``customs-batch validate`` checks the real thing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from customs_batch.errors import CustomsBatchError
from customs_batch.kinds import Kind
from customs_batch.output_file import check_project_file, write_project_file
from customs_batch.resources import load_schema

DOCUMENT_SCHEMA = "document.schema.json"
_DOCUMENT_ID = "https://customs-batch.dev/schemas/document.schema.json"


def export_schemas(target: Path) -> list[Path]:
    """Write the envelope, every kind schema and ``document.schema.json`` into ``target``.

    Returns the files written, in order. ``target`` is created when missing.
    """
    names = ["envelope", *(kind.schema_name for kind in Kind)]
    for name in [*names, DOCUMENT_SCHEMA.removesuffix(".schema.json")]:
        check_project_file(target / f"{name}.schema.json", what="schema")  # before any folder
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CustomsBatchError(
            f"cannot create {target}: {exc.strerror}",
            hint="choose a folder you can write to",
        ) from exc
    written = []
    for name in names:
        # As loaded: the lists of kinds filled in from the registry (see resources.py).
        text = json.dumps(load_schema(name), indent=2, ensure_ascii=False) + "\n"
        written.append(_write(target / f"{name}.schema.json", text))
    combined = json.dumps(document_schema(), indent=2, ensure_ascii=False) + "\n"
    written.append(_write(target / DOCUMENT_SCHEMA, combined))
    return written


def document_schema() -> dict[str, Any]:
    """The envelope schema with each kind's spec schema applied by ``if kind == K``."""
    envelope = load_schema("envelope")
    schema: dict[str, Any] = {
        key: value for key, value in envelope.items() if key not in {"$id", "$defs"}
    }
    schema["$id"] = _DOCUMENT_ID
    schema["title"] = "customs-batch manifest document"
    defs: dict[str, Any] = dict(envelope.get("$defs", {}))
    rules = []
    for kind in Kind:
        name = kind.schema_name
        defs[name] = _embedded(name, name)
        defs[f"{name}-partial"] = _without_required(_embedded(name, f"{name}-partial"))
        rules.append(
            {
                "if": {"properties": {"kind": {"const": kind.value}}, "required": ["kind"]},
                "then": {
                    "if": {"required": ["forEach"]},
                    "then": {},
                    "else": {
                        "if": {"required": ["template"]},
                        "then": {"properties": {"spec": {"$ref": f"#/$defs/{name}-partial"}}},
                        "else": {"properties": {"spec": {"$ref": f"#/$defs/{name}"}}},
                    },
                },
            }
        )
    schema["$defs"] = defs
    schema["allOf"] = rules
    return schema


def _embedded(name: str, slot: str) -> dict[str, Any]:
    """Kind schema ``name`` without its own ``$id``, its pointers moved under ``$defs/slot``."""
    schema = load_schema(name)
    body = {key: value for key, value in schema.items() if key not in {"$id", "$schema"}}
    return {key: _rebase(value, f"#/$defs/{slot}/$defs/") for key, value in body.items()}


def _without_required(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: _without_required(value)
            for key, value in node.items()
            if key not in {"required", "minProperties"}
        }
    if isinstance(node, list):
        return [_without_required(item) for item in node]
    return node


def _rebase(node: Any, prefix: str) -> Any:
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                out[key] = prefix + value.removeprefix("#/$defs/")
            else:
                out[key] = _rebase(value, prefix)
        return out
    if isinstance(node, list):
        return [_rebase(item, prefix) for item in node]
    return node


def _write(path: Path, text: str) -> Path:
    try:
        write_project_file(path, text, what="schema")
    except OSError as exc:
        raise CustomsBatchError(
            f"cannot write {path}: {exc.strerror}", hint="choose a folder you can write to"
        ) from exc
    return path
