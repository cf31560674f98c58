"""Resolving ``${ref:...}`` in a spec: values without a reference are given back as they are."""

from __future__ import annotations

from typing import Any

import pytest

from customs_batch.kinds import Address
from customs_batch.planning.references import resolve

OUTPUTS = {("TemplateGroup/eu", "id"): 7, ("Movement/m1", "movementId"): "mov_1"}


def _lookup(address: Address, field: str) -> Any:
    return OUTPUTS[(str(address), field)]


class Text(str):
    """A string of another type than str: taken through the whole resolving path."""


def test_plain_values_are_kept_and_the_spec_is_not_copied() -> None:
    spec = {"a": 1, "b": 2.5, "c": True, "d": None, "e": "text", "f": {"g": [1, "x", None]}}
    resolved, unknown = resolve(spec, _lookup)
    assert resolved is spec and unknown == []


@pytest.mark.parametrize("wrap", [str, Text])
def test_references_beside_plain_values_are_replaced_with_their_paths(wrap: type[str]) -> None:
    spec = {
        "n": 3,
        "flag": False,
        "none": None,
        "group": wrap("${ref:TemplateGroup/eu.id}"),
        "nested": {"weight": 1.5, "note": wrap("after ${ref:Movement/m1.movementId}")},
        "items": [0, wrap("${ref:Movement/missing.movementId}"), {"x": wrap("${ref:x")}],
    }
    resolved, unknown = resolve(spec, _lookup)
    assert resolved == {
        "n": 3,
        "flag": False,
        "none": None,
        "group": 7,
        "nested": {"weight": 1.5, "note": "after mov_1"},
        "items": [0, "${ref:Movement/missing.movementId}", {"x": "${ref:x"}],
    }
    assert unknown == [("items", 1)]
    assert spec["group"] == "${ref:TemplateGroup/eu.id}"  # the input is left as it was
