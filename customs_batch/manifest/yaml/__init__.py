"""Loading's YAML stage: bytes to typed values with their places.

The raw bytes measured against the line and value bounds, the text composed into node trees
(libyaml when available), scalars typed by the kind's JSON Schema (YAML 1.2 core rules) and
every value's line and column kept in a source map. Nothing here imports Jinja.
"""

from customs_batch.manifest.yaml._scalars import number_too_long

__all__ = ["number_too_long"]
