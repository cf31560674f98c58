"""``get`` as functions, against the built-in local environment (the emulator in-process):
typed options in, the service's records out, no click involved."""

from __future__ import annotations

import pytest

from customs_batch.client import (
    DeclarationFilter,
    ItemFilter,
    NotFoundError,
    Order,
    ShipmentFilter,
    TemplateGroupFilter,
    TransitFilter,
)
from customs_batch.commands.get import (
    AllocationQuery,
    HawbQuery,
    ListOptions,
    Paging,
    RecordKind,
    RecordOptions,
    list_records,
    read_record,
)
from customs_batch.errors import ExitCode, UsageError


def _ids(options: ListOptions, field: str) -> list[object]:
    return [record.raw[field] for record in list_records(options).records]


def test_one_page_comes_with_what_the_service_said_of_the_rest() -> None:
    result = list_records(ListOptions(ShipmentFilter(), Paging(page=2, limit=2)))
    assert [r.raw["shipmentId"] for r in result.records] == [1001]
    assert result.page is not None
    assert (result.page.page, result.page.page_size, result.page.is_last()) == (2, 2, True)


def test_every_page_has_no_page() -> None:
    result = list_records(ListOptions(ShipmentFilter(), Paging(limit=1, every=True)))
    assert [r.raw["shipmentId"] for r in result.records] == [1003, 1002, 1001]
    assert result.page is None


def test_a_page_and_every_page_exclude_each_other() -> None:
    with pytest.raises(UsageError, match="--all and --page exclude each other") as raised:
        list_records(ListOptions(ShipmentFilter(), Paging(page=2, every=True)))
    assert raised.value.exit_code is ExitCode.USAGE


def test_each_query_names_its_list_and_filters_it() -> None:
    every = Paging(every=True)
    assert _ids(ListOptions(ShipmentFilter(status="completed"), every), "referenceNumber") == [
        "REF-1003"
    ]
    # A declaration filter is a shipment filter too: it still lists declarations.
    export = DeclarationFilter(order=Order.ASC, type="EXPORT")
    assert _ids(ListOptions(export, every), "declarationId") == [501, 502]
    assert _ids(ListOptions(TransitFilter(status="READY_TO_DECLARE"), every), "declarationId") == [
        7001
    ]
    assert 9001 in _ids(ListOptions(ItemFilter(), every), "id")
    assert _ids(ListOptions(TemplateGroupFilter(), every), "id")
    assert _ids(ListOptions(HawbQuery("shp_7Hk2Lm"), every), "hawbId") == [
        "hawb_a1",
        "hawb_a2",
        "hawb_a3",
    ]
    assert "alc_1" in _ids(ListOptions(AllocationQuery("shp_7Hk2Lm"), every), "allocationId")


def test_one_record_of_each_kind() -> None:
    declaration = read_record(RecordOptions(RecordKind.DECLARATION, 501))
    assert declaration.raw["exporter"]["name"] == "Acme Export BV"
    assert read_record(RecordOptions(RecordKind.TRANSIT, 7002)).raw["status"] == "processing"
    assert read_record(RecordOptions(RecordKind.ITEM, 9001)).raw["id"] == 9001


def test_a_record_the_service_does_not_hold_is_a_service_error() -> None:
    with pytest.raises(NotFoundError) as raised:
        read_record(RecordOptions(RecordKind.DECLARATION, 999))
    assert raised.value.exit_code is ExitCode.ERROR


def test_an_unknown_environment_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="nowhere"):  # named on the command line
        list_records(ListOptions(ShipmentFilter(), environment="nowhere"))
