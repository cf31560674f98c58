"""Every list of kinds outside the registry is the registry's: the envelope's enum, every
reference and address pattern of the schemas, and the patterns' words."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from customs_batch.kinds import Kind
from customs_batch.kinds.registry import KINDS
from customs_batch.resources import schemas_dir

KIND_NAMES = {kind.value for kind in Kind}
ALTERNATION = re.compile(r"\(((?:[A-Z][A-Za-z]+\|)+[A-Z][A-Za-z]+)\)/")


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)
    elif isinstance(node, str):
        yield node


def _schemas() -> list[Path]:
    return sorted(schemas_dir().glob("*.json"))


def test_every_kind_has_a_model_and_a_schema() -> None:
    assert set(KINDS) == set(Kind)
    for kind in Kind:
        assert (schemas_dir() / f"{kind.schema_name}.schema.json").is_file(), kind


def test_the_envelope_names_exactly_the_registrys_kinds() -> None:
    envelope = json.loads((schemas_dir() / "envelope.schema.json").read_text())
    assert set(envelope["properties"]["kind"]["enum"]) == KIND_NAMES


def test_every_pattern_that_lists_kinds_lists_exactly_the_registrys() -> None:
    found = 0
    for path in _schemas():
        for text in _strings(json.loads(path.read_text())):
            for match in ALTERNATION.finditer(text):
                found += 1
                assert set(match.group(1).split("|")) == KIND_NAMES, f"{path.name}: {text}"
    assert found >= 8  # the envelope's, patterns.json's and each kind's reference pattern
