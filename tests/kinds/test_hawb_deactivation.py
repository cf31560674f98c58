"""HawbDeactivation: known by its HAWB; safe to repeat; read back in its shipment's list."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from customs_batch.client import CustomsClient
from customs_batch.kinds import Kind
from customs_batch.kinds.actions import Action
from customs_batch.kinds.registry import model_of
from customs_batch.state import RecordStatus, ResourceRecord
from customs_batch.state.model import Scalar
from tests.kinds.helpers import after_unknown, identity

KIND = Kind.HAWB_DEACTIVATION
SPEC = {"shipmentId": "shp_1", "hawbId": "hawb_a1"}


def test_its_identity_is_its_shipment_and_hawb() -> None:
    base = identity(KIND, SPEC)
    assert identity(KIND, {**SPEC, "hawbId": "hawb_a2"}) != base
    assert identity(KIND, {**SPEC, "shipmentId": "shp_2"}) != base


def test_it_is_repeated_after_an_unknown_outcome_and_cannot_change() -> None:
    model = model_of(KIND)
    assert after_unknown(KIND).action is Action.CREATE
    assert model.update is None and not model.mutable and model.id_field == "hawbId"


class _Hawbs:
    """A client whose shipments list ``hawbs`` (inactive ones only when asked for)."""

    def __init__(self, **hawbs: list[dict[str, Any]]) -> None:
        self.hawbs = hawbs
        self.listed: list[tuple[str, bool]] = []

    def iter_hawbs(self, shipment: str, *, include_inactive: bool = False) -> list[Any]:
        self.listed.append((shipment, include_inactive))
        return [
            SimpleNamespace(raw={**hawb, "shipmentId": shipment})
            for hawb in self.hawbs.get(shipment, [])
            if include_inactive or hawb["isActive"]
        ]


def _deactivated(name: str, shipment: str, hawb: str) -> ResourceRecord:
    spec = {"shipmentId": shipment, "hawbId": hawb}
    outputs: dict[str, Scalar] = {**spec, "isActive": False}
    return ResourceRecord(f"HawbDeactivation/{name}", RecordStatus.APPLIED, "x", spec, outputs)


def test_refresh_reads_each_hawb_in_its_shipments_list_with_the_inactive_ones() -> None:
    model = model_of(KIND)
    assert model.refresh is not None
    client = _Hawbs(shp_1=[{"hawbId": "a1", "isActive": False}, {"hawbId": "a2", "isActive": True}])
    records = [
        _deactivated("one", "shp_1", "a1"),
        _deactivated("two", "shp_1", "a2"),
        _deactivated("three", "shp_1", "a3"),
    ]
    found = model.refresh(cast(CustomsClient, client), records)
    assert client.listed == [("shp_1", True)]  # one listing for the shipment
    one, two = found["HawbDeactivation/one"], found["HawbDeactivation/two"]
    assert one is not None and one.service_state == "inactive"
    assert two is not None and two.service_state == "active" and two.outputs["isActive"]
    assert found["HawbDeactivation/three"] is None  # the list no longer holds it
    assert "active" in model.undone_states and "active" in model.ended_states
    assert model.service_words(records[0]) == "inactive"


def test_refresh_reads_a_shipments_list_only_until_each_hawb_is_found() -> None:
    # The list comes 100 a request: a HAWB of the first page needs no second request.
    model = model_of(KIND)
    assert model.refresh is not None
    given: list[str] = []

    class Paged:
        def iter_hawbs(self, shipment: str, *, include_inactive: bool = False) -> Any:
            for n in range(250):
                given.append(f"h{n}")
                yield SimpleNamespace(raw={"hawbId": f"h{n}", "isActive": True})

    records = [_deactivated("one", "shp_1", "h3"), _deactivated("two", "shp_1", "h7")]
    found = model.refresh(cast(CustomsClient, Paged()), records)
    assert found["HawbDeactivation/one"] is not None
    assert found["HawbDeactivation/two"] is not None
    assert given[-1] == "h7"  # not one HAWB asked for after the last one wanted
