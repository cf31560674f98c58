from __future__ import annotations

import json

import pytest

from customs_batch.errors import StateError
from customs_batch.jsontypes import JSON
from customs_batch.state.model import RecordStatus, ResourceRecord, ServiceFailure


def _full_record() -> ResourceRecord:
    """A record with every field set to something other than its default."""
    return ResourceRecord(
        address="DepartureDeclaration/dep-1",
        status=RecordStatus.FORGOTTEN,
        operation="create-departure",
        spec={"totalWeight": 12.5, "Consignee": {"name": "Globex"}},
        outputs={"declarationId": 7004},
        idempotency_key="8c7f",
        error=ServiceFailure(400, "totalWeight is wrong", {"statusCode": 400}),
        remote_status="invalid",
        remote_errors=({"code": "E1"},),
        updated_at="2026-11-21T10:00:00.000Z",
        superseded=({"outputs": {"declarationId": 7003}},),
        identity=("commercialReference=CR-1",),
        forgotten_from="applied",
        done_at="2026-11-20T10:00:00.000Z",
    )


@pytest.mark.parametrize("status", list(RecordStatus))
def test_a_parsed_record_is_the_one_its_class_makes(status: RecordStatus) -> None:
    """from_json builds the record without the dataclass's __init__: every field, in the
    same order, with the same types, as the constructor would set them."""
    made = _full_record().with_changes(status=status)
    parsed = ResourceRecord.from_json(made.address, json.loads(json.dumps(made.to_json())))
    assert parsed == made
    assert list(vars(parsed).items()) == list(vars(made).items())
    assert type(parsed.status) is RecordStatus and type(parsed.error) is ServiceFailure
    minimal = ResourceRecord.from_json("Movement/m", {"status": "applied", "operation": "c"})
    assert list(vars(minimal).items()) == list(
        vars(ResourceRecord("Movement/m", RecordStatus.APPLIED, "c", {})).items()
    )


STATUSES = "pending, unknown, applied, failed, forgotten"


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({"status": "odd", "operation": "c"}, f'its status is "odd", not one of {STATUSES}'),
        (
            {"status": ["applied"], "operation": "c"},
            f'its status is ["applied"], not one of {STATUSES}',
        ),
        ({"operation": "c"}, "its status is missing"),
        ({"status": "applied"}, "its operation is missing"),
        ({"status": "applied", "operation": "c", "identity": 3}, "its identity is 3, not a list"),
        (
            {"status": "applied", "operation": "c", "outputs": "x"},
            'its outputs are "x", not an object',
        ),
        ({"status": "applied", "operation": "c", "outputs": 5}, "its outputs are 5, not an object"),
        ({"status": "applied", "operation": "c", "spec": [1]}, "its spec is [1], not an object"),
        ({"status": "applied", "operation": "c", "error": 1}, "its error is 1, not an object"),
        (5, "it is 5, not an object"),
        ("applied", 'it is "applied", not an object'),
        ([], "it is [], not an object"),
    ],
)
def test_a_malformed_record_is_an_error_naming_its_address_and_what_is_wrong(
    data: dict[str, JSON], why: str
) -> None:
    with pytest.raises(StateError) as caught:
        ResourceRecord.from_json("Movement/m", data)
    assert str(caught.value) == f"the state record of Movement/m is malformed ({why})"
