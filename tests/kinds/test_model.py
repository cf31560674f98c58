from __future__ import annotations

from customs_batch.kinds import Kind
from customs_batch.kinds.model import identity_of


def test_an_identity_is_each_field_named_with_its_value_as_compact_json() -> None:
    identity = identity_of("text", "number", "null", "missing", "object", "kind")
    spec = {
        "text": "shp_7Hk2Lm",
        "number": 1.5,
        "null": None,
        "object": {"z": [1, "é"], "a": True},
        "kind": Kind.MOVEMENT,  # a text of a str subclass: as the f-string shows it
    }
    assert identity(spec) == (
        "text=shp_7Hk2Lm",
        "number=1.5",
        "null=null",
        "missing=null",
        'object={"a":true,"z":[1,"\\u00e9"]}',
        "kind=Movement",
    )
