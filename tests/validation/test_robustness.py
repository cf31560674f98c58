"""Odd values anywhere in a spec give findings, never exceptions."""

from __future__ import annotations

from typing import Any

import pytest

from customs_batch.kinds import Kind
from customs_batch.validation import validate_documents
from tests.validation._documents import make_document
from tests.validation.samples import SAMPLES, sample

ODD_VALUES: list[Any] = [
    None,
    True,
    1.5,
    -3,
    "",
    "${ref:Movement/m.status}",
    [1, {"a": None}],
    {"x": [None]},
]


def _leaf_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [path] + [p for k, v in value.items() for p in _leaf_paths(v, (*path, k))]
    if isinstance(value, list):
        return [path] + [p for i, v in enumerate(value) for p in _leaf_paths(v, (*path, i))]
    return [path]


@pytest.mark.parametrize("kind", list(Kind))
def test_every_field_replaced_by_odd_values(kind: Kind) -> None:
    for path in _leaf_paths(SAMPLES[kind])[1:]:
        for odd in ODD_VALUES:
            spec = sample(kind)
            node: Any = spec
            for part in path[:-1]:
                node = node[part]
            node[path[-1]] = odd
            document = make_document(kind, spec)
            for finding in validate_documents([document]):
                assert finding.message and finding.hint and finding.location.line > 0
