"""The JSON types: the one definition of a value parsed from JSON or YAML.

``JSON`` is the boundary type: what a manifest, a state file, a plan file or the service's
answer holds before it is checked (a dict, list, str, int, float, bool or None). It is
``Any`` so that a value read from a file can be handed on before it is checked; past the
check a value has a precise type: each kind's spec its ``TypedDict`` (``kinds/<kind>.py``,
narrowed by the kind's ``spec_of`` once the schema has validated it), a record of the
service's answer its dataclass (``client/``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeAlias

JSON: TypeAlias = Any
"""A value parsed from JSON or YAML, not checked yet (see the module's note)."""

JSONObject: TypeAlias = Mapping[str, JSON]
"""A JSON object, read-only: a document's spec before its kind narrows it, a request body."""


TOO_DEEP = "nested too deeply to be read"


def loads(text: str | bytes) -> JSON:
    """``json.loads(text)`` for a file customs-batch keeps or is given (a state, its
    journal, its history, a plan): JSON nested deeper than the parser's stack (a damaged or
    hostile file, ``[[[[...]]]]``) is a ValueError as any malformed JSON is, which its reader
    reports naming the file, never a RecursionError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(TOO_DEEP) from None


_INTEGRAL_FLOAT = re.compile(r"[0-9]\.0(?![0-9])|[0-9]e[-+]?[0-9]")
"""Where compact JSON may show a whole number as a float (``1.0``, ``1e+16``); also
matched inside strings, where the walk of :func:`compact_by_value` then finds nothing."""


def by_value(value: JSON) -> JSON:
    """``value`` with each whole float as its int (``1.0`` -> ``1``), everything else as it
    is: the service reads JSON numbers by value, so ``companyId: 1`` and ``1.0`` are one."""
    kind = type(value)
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is dict:
        return {key: by_value(item) for key, item in value.items()}
    if kind is list:
        return [by_value(item) for item in value]
    return value


def compact_by_value(value: JSON) -> str:
    """Compact JSON with sorted keys and numbers by value (:func:`by_value`): the same text
    for two values the service reads as the same. The walk is made only when the first text
    may hold a whole float, so a value without one costs a single ``json.dumps``."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    if _INTEGRAL_FLOAT.search(text) is None:
        return text
    return json.dumps(by_value(value), sort_keys=True, separators=(",", ":"), default=str)


def entries_of(value: JSON) -> tuple[JSON, ...]:
    """The entries of a list the service answers whose entries' shape the API document does
    not show (a declaration's ``errors``): a list's entries; nothing for an absent, null or
    empty value; any other value (a text, an object) one entry, whole, never split into its
    characters or keys."""
    if value is None or value == "" or value == {}:
        return ()
    if isinstance(value, list | tuple):
        return tuple(value)
    return (value,)
