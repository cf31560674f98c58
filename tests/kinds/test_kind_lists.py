"""Every list of kinds outside the registry is the registry's: no schema file lists the kinds
(each place that does is marked ``x-kinds`` and filled in when loaded), so the envelope's
enum, every reference and address pattern and the patterns' words are the registry's, and a
kind added to the registry is in every one of them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import customs_batch.kinds
from customs_batch.kinds import Kind, address_pattern, kind_names, reference_pattern
from customs_batch.kinds.registry import KINDS
from customs_batch.resources import load_pattern_hints, load_schema, schemas_dir
from customs_batch.validation import schemas as compiled_schemas

KIND_NAMES = {kind.value for kind in Kind}
ALTERNATION = re.compile(r"\(((?:[A-Z][A-Za-z]+\|)+[A-Z][A-Za-z]+)\)/")
SCHEMA_NAMES = ["envelope", *(kind.schema_name for kind in Kind)]


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


def _files() -> list[Path]:
    return sorted(schemas_dir().glob("*.json"))


def _clear_caches() -> None:
    load_schema.cache_clear()
    load_pattern_hints.cache_clear()
    compiled_schemas.compiled.cache_clear()


def test_every_kind_has_a_model_and_a_schema() -> None:
    assert set(KINDS) == set(Kind)
    assert set(kind_names()) == KIND_NAMES
    for kind in Kind:
        assert (schemas_dir() / f"{kind.schema_name}.schema.json").is_file(), kind


def test_every_schema_file_belongs_to_a_kind_that_names_it() -> None:
    # The kind's module names its schema (KindModel.schema); nothing else maps kinds to
    # files, so a schema no kind names is a leftover, and two kinds never share one.
    named = [model.schema for model in KINDS.values()]
    assert len(set(named)) == len(named)
    on_disk = {
        path.name.removesuffix(".schema.json") for path in schemas_dir().glob("*.schema.json")
    }
    assert on_disk == {"envelope", *named}
    for kind, model in KINDS.items():
        assert kind.schema_name == model.schema
        assert load_schema(model.schema)["$id"].endswith(f"/{model.schema}.schema.json"), kind


def test_no_schema_file_lists_the_kinds() -> None:
    for path in _files():
        text = path.read_text(encoding="utf-8")
        for name in KIND_NAMES:
            for line in text.splitlines():
                if "description" in line or "example" in line or "form" in line:
                    continue  # words and examples may name a kind
                assert f'"{name}"' not in line, f"{path.name}: {line.strip()}"
        for string in _strings(json.loads(text)):
            assert not ALTERNATION.search(string), f"{path.name}: {string}"


def test_the_loaded_envelope_names_exactly_the_registrys_kinds() -> None:
    envelope = load_schema("envelope")
    assert envelope["properties"]["kind"]["enum"] == list(kind_names())
    assert compiled_schemas.envelope_schema().schema is envelope


def test_every_loaded_pattern_that_lists_kinds_lists_exactly_the_registrys() -> None:
    found = 0
    for name in SCHEMA_NAMES:
        for text in _strings(load_schema(name)):
            for match in ALTERNATION.finditer(text):
                found += 1
                assert set(match.group(1).split("|")) == KIND_NAMES, f"{name}: {text}"
                assert text in (address_pattern(), reference_pattern()), f"{name}: {text}"
    assert found == 8  # the envelope's two and each kind's reference pattern
    hints = load_pattern_hints()
    assert hints[address_pattern()]["form"] == "Kind/name"
    assert hints[reference_pattern()]["form"] == "${ref:Kind/name.field}"


@pytest.fixture
def seal_removal(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The registry with one more kind's name, as the schemas see it when loaded."""
    added = (*kind_names(), "SealRemoval")
    monkeypatch.setattr(customs_batch.kinds, "kind_names", lambda: added)
    monkeypatch.setattr("customs_batch.resources.kind_names", lambda: added)
    _clear_caches()
    try:
        yield "SealRemoval"
    finally:
        monkeypatch.undo()
        _clear_caches()


def test_a_kind_added_to_the_registry_is_in_every_list(seal_removal: str) -> None:
    assert seal_removal in load_schema("envelope")["properties"]["kind"]["enum"]
    envelope = compiled_schemas.envelope_schema()
    document = {
        "apiVersion": "customs-batch/v1",
        "kind": seal_removal,
        "metadata": {"name": "seal-1", "dependsOn": [f"{seal_removal}/seal-0"]},
    }
    assert envelope.violations(document) == []
    # A reference to the new kind's outcome, from a document of another kind.
    cancellation = compiled_schemas.spec_schema(Kind.EXPORT_CANCELLATION)
    reference = f"${{ref:{seal_removal}/seal-1.declarationId}}"
    assert cancellation.violations({"declarationId": reference}) == []
    misspelt = cancellation.violations({"declarationId": "${ref:SealRemovals/seal-1.id}"})
    assert [v.rule for v in misspelt] == ["schema.pattern"]
    assert reference_pattern() in load_pattern_hints()


def test_a_kind_not_in_the_registry_is_refused_by_the_loaded_schemas() -> None:
    document = {"apiVersion": "customs-batch/v1", "kind": "SealRemoval", "metadata": {"name": "a"}}
    (violation,) = compiled_schemas.envelope_schema().violations(document)
    assert violation.rule == "schema.enum"
    assert "DepartureDeclaration" in violation.hint
