"""The JSON types: the one definition of a value parsed from JSON or YAML.

``JSON`` is the boundary type: what a manifest, a state file, a plan file or the service's
answer holds before it is checked (a dict, list, str, int, float, bool or None). It is
``Any`` so that a value read from a file can be handed on before it is checked; past the
check a value has a precise type: each kind's spec its ``TypedDict`` (``kinds/<kind>.py``,
narrowed by the kind's ``spec_of`` once the schema has validated it), a record of the
service's answer its dataclass (``client/``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

JSON: TypeAlias = Any
"""A value parsed from JSON or YAML, not checked yet (see the module's note)."""

JSONObject: TypeAlias = Mapping[str, JSON]
"""A JSON object, read-only: a document's spec before its kind narrows it, a request body."""
