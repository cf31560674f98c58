"""``${ref:Kind/name.field}`` strings in spec become References."""

from __future__ import annotations

from customs_batch.kinds import Address, Kind
from customs_batch.manifest import Reference
from tests.manifest.helpers import load_text, movement, only


def test_whole_and_embedded_references_are_parsed() -> None:
    spec = (
        "  shipmentId: ${ref:DepartureDeclaration/dep-1.declarationId}\n"
        "  note: 'for ${ref:TemplateGroup/eu.id} and ${ref:Movement/m.2.status}'\n"
    )
    doc = load_text(movement(spec)).documents[0]
    assert doc.references == (
        Reference(
            Address(Kind.DEPARTURE_DECLARATION, "dep-1"),
            "declarationId",
            ("spec", "shipmentId"),
            "${ref:DepartureDeclaration/dep-1.declarationId}",
        ),
        Reference(
            Address(Kind.TEMPLATE_GROUP, "eu"), "id", ("spec", "note"), "${ref:TemplateGroup/eu.id}"
        ),
        Reference(
            Address(Kind.MOVEMENT, "m.2"), "status", ("spec", "note"), "${ref:Movement/m.2.status}"
        ),
    )


def test_a_malformed_reference_is_a_finding() -> None:
    result = load_text(movement("  a: ok\n  shipmentId: ${ref:Nope/x.id}\n"))
    finding = only(result, "reference.syntax")
    assert finding.location.line == 7
    assert "Kind/name.field" in finding.hint


def test_an_unclosed_reference_is_a_finding() -> None:
    assert (
        "not closed"
        in only(load_text(movement("  a: '${ref:Movement/m.id'\n")), "reference.syntax").message
    )


def test_references_outside_spec_are_left_alone() -> None:
    doc = load_text(movement("  a: 1\n", extra="values: {r: '${ref:broken'}\n")).documents[0]
    assert doc.references == ()
