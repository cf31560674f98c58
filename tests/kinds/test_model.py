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


def test_a_write_that_reads_its_object_first_counts_the_read_among_its_requests() -> None:
    # apply reads the object an update goes to before sending it (reads_first): the plan's
    # request count, and the time it takes at the rate limit, include that read.
    from customs_batch.kinds.actions import Operation
    from customs_batch.kinds.registry import KINDS

    reading = {operation for model in KINDS.values() for operation in model.reads_first}
    assert reading == {
        Operation.UPDATE_TEMPLATE_GROUP,
        Operation.UPDATE_DEPARTURE_PARTIES,
        Operation.UPDATE_TRANSIT_PARTIES,
        Operation.CANCEL_EXPORT,
        Operation.DEACTIVATE_HAWB,
    }
    assert all(operation.requests == 2 for operation in reading)
    for model in KINDS.values():
        assert model.reads_first <= set(model.send)
        assert not model.reads_first or (model.read_target or model.refresh) is not None
