"""What import and adopt record, from what the service gives back."""

from __future__ import annotations

from customs_batch.kinds.readback import Found, compare

SPEC = {"totalWeight": 60.0, "departureOffice": "NL000396", "Consignee": {"name": "A"}}
MUTABLE = frozenset({"Consignee"})


def test_an_immutable_difference_is_fixed_and_the_service_value_recorded() -> None:
    found = Found(outputs={"declarationId": 7002}, remote_spec={"totalWeight": 800.0})
    comparison = compare(found, SPEC, MUTABLE, sent=False)
    (difference,) = comparison.fixed
    assert (difference.field, difference.manifest, difference.service) == (
        "totalWeight",
        60.0,
        800.0,
    )
    assert comparison.spec["totalWeight"] == 800.0
    assert comparison.checked == ("totalWeight",)


def test_what_the_service_does_not_give_back_is_sent_after_import_and_trusted_after_adopt() -> None:
    found = Found(outputs={}, remote_spec={"totalWeight": 60.0, "departureOffice": "NL000396"})
    imported = compare(found, SPEC, MUTABLE, sent=False)
    assert imported.resent == ("Consignee",) and "Consignee" not in imported.spec
    assert not imported.differences
    adopted = compare(found, SPEC, MUTABLE, sent=True)
    assert adopted.trusted == ("Consignee",) and adopted.spec["Consignee"] == {"name": "A"}
