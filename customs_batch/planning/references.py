"""Resolving ``${ref:Kind/name.field}`` against recorded outcomes."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from customs_batch.findings import JsonPath
from customs_batch.jsontypes import JSON
from customs_batch.kinds import Address

# Values that hold no reference and are given back as they are: skipped without a call (a
# plan of 100,000 documents made 1.4 million calls, most for these).
_PLAIN = frozenset({int, float, bool, type(None)})
REF = re.compile(r"\$\{ref:([A-Za-z]+/[A-Za-z0-9][A-Za-z0-9._-]*?)\.([A-Za-z]+)\}")

Lookup = Callable[[Address, str], JSON]
"""Gives the recorded output ``field`` of an address, or raises KeyError when not known."""


def resolve(value: JSON, lookup: Lookup, path: JsonPath = ()) -> tuple[JSON, list[JsonPath]]:
    """``value`` with every reference whose outcome is known replaced by it, and the paths of
    the references still unknown. A string that is exactly one reference takes the type of the
    outcome (an integer ID stays an integer); a reference inside text is put in as text.
    """
    unknown: list[JsonPath] = []
    resolved = _resolve(value, lookup, list(path), unknown)
    return resolved, unknown


def _resolve(value: JSON, lookup: Lookup, path: list[str | int], unknown: list[JsonPath]) -> JSON:
    # ``path`` is one list pushed and popped on the way down, made a tuple only for a
    # reference: a tuple per value cost most of an unchanged re-plan's diff (measured).
    if isinstance(value, str):
        return _resolve_text(value, lookup, tuple(path), unknown) if "${ref:" in value else value
    if type(value) is dict:
        # Copied only when a reference inside it was replaced: a plan of 10,000 documents
        # without references kept a second copy of every spec (measured).
        changed: dict[str, JSON] | None = None
        for key, item in value.items():
            kind = type(item)
            if kind in _PLAIN or (kind is str and "${ref:" not in item):
                continue  # what the call below would give back as it is, without the call
            path.append(key)
            new = _resolve(item, lookup, path, unknown)
            path.pop()
            if new is not item:
                if changed is None:
                    changed = dict(value)
                changed[key] = new
        return value if changed is None else changed
    if isinstance(value, Mapping):
        copied: dict[str, JSON] = {}
        for key, item in value.items():
            path.append(key)
            copied[key] = _resolve(item, lookup, path, unknown)
            path.pop()
        return copied
    if isinstance(value, list):
        items: list[JSON] = []
        for index, item in enumerate(value):
            path.append(index)
            items.append(_resolve(item, lookup, path, unknown))
            path.pop()
        same = type(value) is list and all(a is b for a, b in zip(items, value, strict=True))
        return value if same else items
    return value


def _resolve_text(text: str, lookup: Lookup, path: JsonPath, unknown: list[JsonPath]) -> JSON:
    whole = REF.fullmatch(text)
    if whole:
        found = _lookup(whole, lookup)
        if found is _MISSING:
            unknown.append(path)
            return text
        return found
    missing = False

    def substitute(match: re.Match[str]) -> str:
        nonlocal missing
        found = _lookup(match, lookup)
        if found is _MISSING:
            missing = True
            return match.group(0)
        return str(found)

    result = REF.sub(substitute, text)
    if missing:
        unknown.append(path)
        return text
    return result


_MISSING = object()


def _lookup(match: re.Match[str], lookup: Lookup) -> JSON:
    address = Address.parse(match.group(1))
    if address is None:
        return _MISSING
    try:
        return lookup(address, match.group(2))
    except KeyError:
        return _MISSING
