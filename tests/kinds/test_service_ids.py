"""What each kind says of its recorded object's IDs and processing states (``results``)."""

from __future__ import annotations

from typing import Any

import pytest

from customs_batch.kinds import Kind
from customs_batch.kinds.model import ServiceId
from customs_batch.kinds.registry import model_of
from customs_batch.state.model import RecordStatus, ResourceRecord, Scalar


def _record(outputs: dict[str, Scalar], spec: dict[str, Any] | None = None) -> ResourceRecord:
    return ResourceRecord("X/x", RecordStatus.APPLIED, "create", spec or {}, outputs=outputs)


@pytest.mark.parametrize(
    ("kind", "outputs", "spec", "ids"),
    [
        (Kind.DEPARTURE_DECLARATION, {"declarationId": 7003}, None, {ServiceId.DECLARATION: 7003}),
        (Kind.TRANSIT_PARTY_UPDATE, {"declarationId": 7001}, None, {ServiceId.DECLARATION: 7001}),
        (Kind.EXPORT_CANCELLATION, {"declarationId": 501}, None, {ServiceId.DECLARATION: 501}),
        (
            Kind.MOVEMENT,
            {"movementId": "mov_1"},
            {"customsDeclaration": {"source": "EXTERNAL", "declarationNumber": "26NLR1"}},
            {ServiceId.MOVEMENT: "mov_1", ServiceId.MRN: "26NLR1"},
        ),
        (Kind.MOVEMENT, {}, {"customsDeclaration": {"declarationId": "dec_q9"}}, {}),
        (Kind.TEMPLATE_GROUP, {"id": 2, "code": "EU"}, None, {ServiceId.OTHER: 2}),
        (Kind.HAWB_DEACTIVATION, {"hawbId": "hawb_a3"}, None, {ServiceId.OTHER: "hawb_a3"}),
        (Kind.DEPARTURE_DECLARATION, {}, None, {}),
    ],
)
def test_each_kind_names_its_ids(
    kind: Kind,
    outputs: dict[str, Scalar],
    spec: dict[str, Any] | None,
    ids: dict[ServiceId, Scalar],
) -> None:
    assert model_of(kind).ids(_record(outputs, spec)) == ids


def test_a_departure_or_a_party_update_processing_is_not_decided_yet() -> None:
    for kind in (Kind.DEPARTURE_DECLARATION, Kind.TRANSIT_PARTY_UPDATE):
        assert set(model_of(kind).processing_states) == {"processing", "new"}
    assert model_of(Kind.MOVEMENT).processing_states == frozenset()


@pytest.mark.parametrize(
    ("kind", "outputs", "superseded", "held"),
    [
        # A departure holds its declaration and the rejected ones it replaced.
        (Kind.DEPARTURE_DECLARATION, {"declarationId": 7005}, [7003], {"7005", "7003"}),
        (Kind.DEPARTURE_DECLARATION, {}, [7003], {"7003"}),
        # A party update writes another's declaration: it holds none of its own.
        (Kind.TRANSIT_PARTY_UPDATE, {"declarationId": 7001}, [], set()),
        (Kind.EXPORT_CANCELLATION, {"declarationId": 501}, [], {"501"}),
        (Kind.MOVEMENT, {"movementId": "mov_1"}, [], {"mov_1"}),
        (Kind.TEMPLATE_GROUP, {"id": 2, "code": "EU"}, [], {"2"}),
        (Kind.HAWB_DEACTIVATION, {"hawbId": "hawb_a3"}, [], {"hawb_a3"}),
        (Kind.TEMPLATE_GROUP, {}, [], set()),
    ],
)
def test_each_kind_names_the_objects_its_records_hold(
    kind: Kind, outputs: dict[str, Scalar], superseded: list[int], held: set[str]
) -> None:
    """What ``import`` and ``state adopt`` refuse to record a second time."""
    record = _record(outputs).with_changes(
        superseded=tuple({"outputs": {"declarationId": ident}} for ident in superseded)
    )
    assert model_of(kind).held(record) == held
