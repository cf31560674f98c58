"""Whether a service the environment names anew holds a state's records as recorded: read
back from the emulator (its seed has template group 1, "Default", code DEFAULT)."""

from __future__ import annotations

import json
from typing import Any

from customs_batch.client import CustomsClient
from customs_batch.execution.reconcile import differs_from_the_recorded_service
from customs_batch.state import RecordStatus, ResourceRecord, State
from customs_batch.state.records import Records

DEFAULT = {"name": "Default", "code": "DEFAULT", "isDefault": True, "companyId": 1}


def _state(group: dict[str, Any] | None, group_id: int = 1, movements: int = 0) -> State:
    records = [
        ResourceRecord(
            f"Movement/m{number:05d}",
            RecordStatus.APPLIED,
            "create-movement",
            {"shipmentId": "shp_7Hk2Lm", "hawbId": "hawb_a1", "action": "VAH"},
            outputs={"movementId": f"mov_{number:08d}", "shipmentId": "shp_7Hk2Lm"},
        )
        for number in range(movements)
    ]
    if group is not None:
        records.append(
            ResourceRecord(
                "TemplateGroup/default",
                RecordStatus.APPLIED,
                "import",
                group,
                outputs={"id": group_id, **{k: group[k] for k in ("name", "code")}},
            )
        )
    texts = {record.address: json.dumps(record.to_json()) for record in records}
    return State(lineage="l", serial=1, resources=Records.from_texts(texts, "test"))


def test_the_same_service_holds_the_records_as_recorded(client: CustomsClient) -> None:
    assert differs_from_the_recorded_service(client, _state(DEFAULT)) is None


def test_another_object_at_the_recorded_id_is_named_with_what_differs(
    client: CustomsClient,
) -> None:
    mine = {**DEFAULT, "name": "My road imports", "code": "MY-ROAD", "isDefault": False}
    why = differs_from_the_recorded_service(client, _state(mine))
    assert why is not None
    assert why.startswith("TemplateGroup/default is recorded as 1, and this service's 1 differs")
    assert "code, isDefault, name" in why


def test_no_object_at_the_recorded_id_is_named(client: CustomsClient) -> None:
    why = differs_from_the_recorded_service(client, _state(DEFAULT, group_id=999))
    assert why is not None and "no template group 999" in why


def test_movements_give_no_evidence_and_are_passed_over_unparsed(client: CustomsClient) -> None:
    """The API reads no movement back: the first one tells, the others are not parsed, and
    the group after 2,000 of them is still read back."""
    state = _state({**DEFAULT, "code": "OTHER"}, movements=2_000)
    why = differs_from_the_recorded_service(client, state)
    assert why is not None and "differs in code" in why
    resources = state.resources
    assert isinstance(resources, Records)
    parsed = [a for a in resources if resources.text_of(a) is None]
    assert parsed == [], "looked through without keeping records parsed"
    assert differs_from_the_recorded_service(client, _state(None, movements=10)) is None
