"""Seed files: the data the emulator starts with (docs/sandbox.md), validated on load."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from customs_batch.errors import ConfigError
from customs_batch.line_bound import long_line_refusal
from customs_batch.sandbox import contract, strictjson
from customs_batch.sandbox.records import JsonObject, parse_timestamp
from customs_batch.sandbox.seed_file_schema import SEED_SCHEMA
from customs_batch.userfiles import FileRefused, not_utf8, read_user_file
from customs_batch.yaml_bounds import SAFE_LOADER, refuse_deep_nesting, refuse_many_values

BUILTIN_SEED_PATH = Path(__file__).with_name("builtin-seed.yaml")

# collection -> the field that must be unique within it
_UNIQUE = {
    "apiKeys": "key",
    "shipments": "id",
    "declarations": "declarationId",
    "declarationItems": "id",
    "templateGroups": "id",
    "transitDeclarations": "declarationId",
}


@dataclass(frozen=True)
class ApiKey:
    """An API key of the emulator and the company it acts for."""

    key: str
    company_id: int
    active: bool = True


@dataclass(frozen=True)
class Seed:
    """The validated content of a seed file; records keep their wire field names."""

    api_keys: tuple[ApiKey, ...] = ()
    shipments: tuple[JsonObject, ...] = ()
    declarations: tuple[JsonObject, ...] = ()
    declaration_items: tuple[JsonObject, ...] = ()
    template_groups: tuple[JsonObject, ...] = ()
    transit_declarations: tuple[JsonObject, ...] = ()


def load_seed(path: Path) -> Seed:
    """Read and validate a seed file; errors name the file, the line and what is wrong."""
    # Read as every file the tool reads: `--seed FIFO` waited for a writer for ever,
    # `--seed /dev/zero` read until memory ran out, a byte not UTF-8 was "internal error".
    try:
        data = read_user_file(path)
        long_line = long_line_refusal(data, "a seed file")
        if long_line is not None:
            line, message, hint = long_line
            raise ConfigError(f"{path}:{line}: {message}", hint=hint)
        text = data.decode("utf-8")
    except FileRefused as refused:
        raise ConfigError(refused.message, hint=refused.hint) from None
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot read the seed file: {exc.strerror}",
            hint="pass an existing YAML file to --seed, or leave it out for the built-in seed",
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(not_utf8(path, data, exc), hint="save the seed file as UTF-8") from None
    return parse_seed(text, str(path))


_HINT = (
    "write the records out without deep nesting or aliases standing for many values; see "
    "docs/sandbox.md for the seed format, or `customs-batch sandbox seed-example`"
)


def parse_seed(text: str, source: str) -> Seed:
    """Validate the YAML ``text`` of a seed file named ``source``."""
    try:
        refuse_deep_nesting(text, source, "seed's records", _HINT, loader=SAFE_LOADER)
        root = yaml.compose(text, Loader=SAFE_LOADER)
        refuse_many_values(root, source, "seed's records", _HINT)
        data = yaml.load(text, Loader=SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{source}{line}: not valid YAML: {exc}") from None
    data = {} if data is None else data
    problems = [
        (_line(root, list(error.absolute_path)), f"{_where(error.absolute_path)}{error.message}")
        for error in Draft202012Validator(SEED_SCHEMA).iter_errors(data)
        if not isinstance(error.instance, date)  # said below, with what to write
    ]
    problems.extend(_duplicate_keys(root))
    if isinstance(data, dict):
        problems.extend(_impossible_times(data, root))
        problems.extend(_duplicates(data, root))
    problems.extend(_unanswerable_values(data, root, []))
    if problems:
        lines = [f"{source}:{line}: {what}" for line, what in sorted(problems)]
        raise ConfigError(
            "invalid seed file:\n  " + "\n  ".join(lines),
            hint="see docs/sandbox.md for the seed format, or `customs-batch sandbox seed-example`",
        )
    return _build(data)


def _where(path: Any) -> str:
    parts = [f"[{p}]" if isinstance(p, int) else f".{p}" for p in path]
    return f"at {''.join(parts).lstrip('.')}: " if parts else ""


def _line(node: yaml.Node | None, path: list[Any]) -> int:
    """The 1-based line of the value at ``path`` (or its nearest existing parent)."""
    found = _node(node, path)
    return found.start_mark.line + 1 if found is not None else 1


def _node(node: yaml.Node | None, path: list[Any]) -> yaml.Node | None:
    """The node of the value at ``path`` (or of its nearest existing parent)."""
    for step in path:
        child = _child(node, step)
        if child is None:
            break
        node = child
    return node


def _duplicate_keys(root: yaml.Node | None) -> Iterator[tuple[int, str]]:
    """A key given twice in one mapping: YAML keeps the last silently, the seed refuses it
    (as manifests do). A loop over the nodes, not a recursion."""
    pending = [root] if root is not None else []
    while pending:
        node = pending.pop()
        if isinstance(node, yaml.MappingNode):
            first: dict[str, yaml.Node] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in first:
                        earlier = first[key.value].start_mark.line + 1
                        yield (
                            key.start_mark.line + 1,
                            f"duplicate key {key.value!r} (first at line {earlier}): "
                            "give each key once",
                        )
                    else:
                        first[key.value] = key
                pending.append(value)
        elif isinstance(node, yaml.SequenceNode):
            pending.extend(node.value)


def _child(node: yaml.Node | None, step: Any) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        return next((value for key, value in node.value if key.value == step), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
        child: yaml.Node = node.value[step]
        return child
    return None


def _duplicates(data: JsonObject, root: yaml.Node | None) -> Iterator[tuple[int, str]]:
    """A value given twice where the emulator keeps one record per value: the later record
    would replace the earlier silently (a HAWB taken from its first shipment, say)."""
    first: dict[tuple[str, Any], list[Any]] = {}
    for space, path, value in _identities(data):
        if value is None:
            continue
        try:
            earlier = first.setdefault((space, value), path)
        except TypeError:  # a list or a mapping where a value belongs: the schema says so
            continue
        if earlier is not path:
            shown = value[-1] if isinstance(value, tuple) else value
            yield (
                _line(root, path),
                f"{_where(path)}duplicate {shown!r} (first at {_where(earlier)[3:-2]})",
            )


def _identities(data: JsonObject) -> Iterator[tuple[str, list[Any], Any]]:
    """(what it identifies, where, the value) of every value that must be unique."""
    for collection, field in _UNIQUE.items():
        for index, record in _records(data, [collection]):
            yield collection, [*index, field], record.get(field)
    for index, shipment in _records(data, ["shipments"]):
        yield "publicId", [*index, "publicId"], shipment.get("publicId")
        for path, hawb in _records(shipment, [*index, "hawbs"]):
            yield "hawbId", [*path, "hawbId"], hawb.get("hawbId")
        for path, allocation in _records(shipment, [*index, "allocations"]):
            yield "allocationId", [*path, "allocationId"], allocation.get("allocationId")
    for index, declaration in _records(data, ["declarations"]):
        for path, item in _records(declaration, [*index, "items"]):
            yield "declarationItems", [*path, "id"], item.get("id")
    for index, group in _records(data, ["templateGroups"]):
        code = (group.get("companyId"), group.get("code"))  # unique per company (409)
        yield "code", [*index, "code"], code if code[1] is not None else None


_DATED = ("shipments", "declarations", "templateGroups", "transitDeclarations")


def _impossible_times(data: JsonObject, root: yaml.Node | None) -> Iterator[tuple[int, str]]:
    """A ``createdAt`` of the timestamp's form that is no time (``2026-02-30T25:61:99Z``)."""
    for collection in _DATED:
        for path, record in _records(data, [collection]):
            text = record.get("createdAt")
            if isinstance(text, str) and _TIMESTAMP.fullmatch(text):
                try:
                    parse_timestamp(text)
                except ValueError:
                    where = [*path, "createdAt"]
                    yield _line(root, where), f"{_where(where)}{text} is no date and time"


_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z")


def _records(owner: Any, path: list[Any]) -> Iterator[tuple[list[Any], dict[str, Any]]]:
    """The mappings of the list at the last step of ``path`` in ``owner``, with their paths."""
    records = owner.get(path[-1]) if isinstance(owner, dict) else None
    if isinstance(records, list):
        for index, record in enumerate(records):
            if isinstance(record, dict):
                yield [*path, index], record


def _unanswerable_values(
    value: Any, root: yaml.Node | None, path: list[Any]
) -> Iterator[tuple[int, str]]:
    """Numbers the emulator could not send back as JSON, or the service would not hold, and
    text holding a UTF-16 surrogate (YAML's ``"\\udc00"``), which no UTF-8 answer can carry.

    YAML does not join the escapes of a pair (``"\\ud83d\\ude00"``) into the character
    they spell, so any surrogate is refused, with the way to write the character instead.
    """
    if isinstance(value, dict):
        for key, child in value.items():
            if isinstance(key, str) and strictjson.SURROGATE.search(key):
                yield _line(root, path), f"{_where(path)}a key {_surrogate(key)}"
                continue
            yield from _unanswerable_values(child, root, [*path, key])
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _unanswerable_values(child, root, [*path, index])
    elif isinstance(value, date):  # a datetime too
        node = _node(root, path)
        text = node.value if isinstance(node, yaml.ScalarNode) else str(value)
        yield (
            _line(root, path),
            f"{_where(path)}{text} is read by YAML as a date, not text: quote it, '{text}'",
        )
    elif isinstance(value, str) and strictjson.SURROGATE.search(value):
        yield _line(root, path), f"{_where(path)}the text {_surrogate(value)}"
    elif isinstance(value, float) and not math.isfinite(value):
        yield _line(root, path), f"{_where(path)}{value} is not a finite number"
    elif isinstance(value, int) and not contract.INT_MIN <= value <= contract.INT_MAX:
        yield _line(root, path), f"{_where(path)}{value} is out of the 64-bit integer range"


def _surrogate(text: str) -> str:
    return (
        f"holds {strictjson.shown_surrogate(text)}, a UTF-16 surrogate, which is no character: "
        "write the character itself (or \\U followed by its 8 hex digits)"
    )


def _build(data: JsonObject) -> Seed:
    return Seed(
        api_keys=tuple(
            ApiKey(k["key"], k["companyId"], k.get("active", True)) for k in data.get("apiKeys", [])
        ),
        shipments=tuple(data.get("shipments", [])),
        declarations=tuple(data.get("declarations", [])),
        declaration_items=tuple(data.get("declarationItems", [])),
        template_groups=tuple(data.get("templateGroups", [])),
        transit_declarations=tuple(data.get("transitDeclarations", [])),
    )


def builtin_seed_text() -> str:
    """The YAML of the documented built-in seed."""
    return BUILTIN_SEED_PATH.read_text(encoding="utf-8")


@cache
def builtin_seed() -> Seed:
    """The documented built-in seed, used when no seed file is given."""
    return parse_seed(builtin_seed_text(), "built-in seed")
