"""Small helpers the rule checks share: findings on a spec value, references, field walking."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from customs_batch.findings import Finding, JsonPath, Severity
from customs_batch.manifest.document import Document

REFERENCE_MARK = "${ref:"
SPEC_DIGEST_KEY = "\0digest"
"""The key under which a slim document's spec holds the digest of its whole spec (see
:func:`customs_batch.validation.batch.slim_document`): two slim specs are equal exactly when
their digests are."""
IDENTITY_KEY = "\0identity"
"""The key under which a slim document's spec holds its identity as a declaration, when its
kind's plan refuses two documents of one identity (see
:func:`customs_batch.validation.project.declared_identity`)."""
# dict first: isinstance against an ABC alone is slow, and loaders build dicts.
_MAPPINGS = (dict, Mapping)


def is_reference(value: object) -> bool:
    """Whether a spec value holds a ``${ref:...}``: its value is only known at apply time."""
    return isinstance(value, str) and REFERENCE_MARK in value


def spec_finding(
    document: Document,
    rule: str,
    path: JsonPath,
    message: str,
    hint: str,
    severity: Severity = Severity.ERROR,
) -> Finding:
    """A finding on the spec value at ``path`` (relative to ``spec``) of ``document``."""
    return Finding(
        rule=rule,
        severity=severity,
        message=message,
        location=document.locate(("spec", *path)),
        hint=hint,
        document=str(document.address),
    )


def strings_at(spec: Mapping[str, Any], pattern: tuple[str, ...]) -> list[tuple[JsonPath, str]]:
    """The literal strings at ``pattern`` in ``spec``; ``*`` stands for every array index.

    Values of the wrong type are left to the schema check, references to apply time. This
    runs for every code field of every document, so it avoids generators and ABC checks.
    """
    found: list[tuple[JsonPath, str]] = []
    if "*" in pattern:
        _collect(spec, pattern, 0, (), found)
        return found
    node: Any = spec
    for part in pattern:
        if not isinstance(node, _MAPPINGS) or part not in node:
            return found
        node = node[part]
    if isinstance(node, str) and REFERENCE_MARK not in node:
        found.append((pattern, node))
    return found


def _collect(
    node: Any,
    pattern: tuple[str, ...],
    depth: int,
    path: JsonPath,
    found: list[tuple[JsonPath, str]],
) -> None:
    if depth == len(pattern):
        if isinstance(node, str) and REFERENCE_MARK not in node:
            found.append((path, node))
        return
    part = pattern[depth]
    if part == "*":
        if isinstance(node, list):
            for index, item in enumerate(node):
                _collect(item, pattern, depth + 1, (*path, index), found)
    elif isinstance(node, _MAPPINGS) and part in node:
        _collect(node[part], pattern, depth + 1, (*path, part), found)


def number_at(node: Mapping[str, Any], key: str) -> float | None:
    """The number under ``key``, or None when it is missing, not a number, or a boolean;
    None too for one that is not finite (``.inf``, ``.nan``, ``1e400``: the schema refuses
    it, ``schema.not-finite``, and a rule comparing it would say "inf kg above"), and for
    a whole number beyond any float (``1`` and 400 zeros, refused so too)."""
    value = node.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # was "internal error: OverflowError"
        return None
    return number if math.isfinite(number) else None


def mappings_at(spec: Mapping[str, Any], key: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """The mapping entries of the array ``spec[key]``, with their index."""
    items = spec.get(key)
    if isinstance(items, list):
        for index, item in enumerate(items):
            if isinstance(item, Mapping):
                yield index, item
