"""A reviewer reads what will be declared: every value of a creation, and a change inside a
list at the item that changed."""

from __future__ import annotations

from customs_batch.kinds import Kind
from customs_batch.planning import Action, plan_changes
from customs_batch.planning.diff import field_changes
from customs_batch.reports import render_plan
from customs_batch.state import RecordStatus, ResourceRecord, State
from tests.planning.helpers import doc
from tests.reports.plans import change, view

GROUP = {
    "name": "EU road",
    "code": "EU-ROAD",
    "companyId": 1,
    "DeclarationTemplates": [
        {"additionalDeclarationType": "A", "incoterm": "DAP", "netPrice": 10},
        {"additionalDeclarationType": "B", "incoterm": "FCA", "netPrice": 20},
    ],
}


def test_a_creation_shows_every_value_it_declares() -> None:
    spec = {"shipmentId": "shp_1", "quantity": 3, "packaging": [{"typeOfPackages": "BX"}]}
    created = change(Kind.MOVEMENT, "mov-1", Action.CREATE, spec=spec, unknown=(("partyId",),))
    text = render_plan("text", view(created))
    assert '      shipmentId = "shp_1"' in text
    assert "      quantity = 3" in text
    assert '      packaging[0].typeOfPackages = "BX"' in text
    assert "      partyId = (known after apply)" in text
    markdown = render_plan("markdown", view(created))
    assert "<details><summary>3 values declared</summary>" in markdown
    assert '    - `packaging[0].typeOfPackages`: `"BX"`' in markdown


def test_a_change_inside_a_list_is_shown_at_the_item_that_changed() -> None:
    recorded = ResourceRecord(
        "TemplateGroup/eu", RecordStatus.APPLIED, "create", GROUP, outputs={"id": 1}
    )
    state = State(lineage="l", serial=1, resources={"TemplateGroup/eu": recorded})
    templates = [dict(t) for t in GROUP["DeclarationTemplates"]]  # type: ignore[attr-defined]
    templates[1]["incoterm"] = "CPT"
    edited = doc(Kind.TEMPLATE_GROUP, "eu", {**GROUP, "DeclarationTemplates": templates}, 0)
    plan = plan_changes([edited], state)
    (planned,) = plan.changes
    assert planned.action is Action.UPDATE
    assert planned.changed == ("DeclarationTemplates",)
    text = render_plan("text", view(planned))
    assert '      DeclarationTemplates[1].incoterm: "FCA" -> "CPT"' in text
    assert "DeclarationTemplates[0]" not in text
    markdown = render_plan("markdown", view(planned))
    assert '`DeclarationTemplates[1].incoterm`: `"FCA"` → `"CPT"`' in markdown


def test_an_access_code_is_never_printed() -> None:
    spec = {"DeclarationGuarantees": [{"guaranteeType": "1", "accessCode": "4711"}]}
    created = change(Kind.DEPARTURE_DECLARATION, "dep", Action.CREATE, spec=spec)
    updated = change(
        Kind.DEPARTURE_DECLARATION,
        "dep-2",
        Action.REFUSED,
        values=(("DeclarationGuarantees[0].accessCode", "4711", "4712"),),
    )
    for name in ("text", "markdown"):
        shown = render_plan(name, view(created, updated))
        assert "4711" not in shown and "4712" not in shown
        assert "DeclarationGuarantees[0].accessCode" in shown
        assert "(sensitive)" in shown


def test_a_character_that_prints_as_nothing_is_shown_by_its_escape() -> None:
    # A reference that gained a zero-width space read `"ACME-1" -> "ACME-1"`: a change the
    # reviewer could not see.
    refused = change(
        Kind.DEPARTURE_DECLARATION,
        "dep",
        Action.REFUSED,
        values=(("commercialReference", "ACME-1", "ACME-1\u200b"),),
    )
    for name in ("text", "markdown"):
        shown = render_plan(name, view(refused))
        assert "\u200b" not in shown
        assert '"ACME-1\\u200b"' in shown
    assert '      commercialReference: "ACME-1" -> "ACME-1\\u200b"' in render_plan(
        "text", view(refused)
    )


def test_entries_with_a_sequence_number_are_paired_by_it() -> None:
    def packaging(*numbers: int) -> dict[str, object]:
        entries = [{"sequenceNumber": n, "typeOfPackages": "BX", "quantity": n} for n in numbers]
        return {"DeclarationItems": [{"description": "Bolts", "packaging": entries}]}

    # The second of three entries removed: that one change, not the third shifted onto it.
    changes = field_changes(packaging(1, 2, 3), packaging(1, 3))
    assert [(c.path, c.old, c.new) for c in changes] == [
        (
            "DeclarationItems[0].packaging[1]",
            {"sequenceNumber": 2, "typeOfPackages": "BX", "quantity": 2},
            None,
        )
    ]
    # One added at the front: only it, at its place in the new list.
    (added,) = field_changes(packaging(2, 3), packaging(1, 2, 3))
    assert (added.path, added.old) == ("DeclarationItems[0].packaging[0]", None)
    # Without sequence numbers (the items themselves), by position.
    items = [{"description": "a"}, {"description": "b"}]
    changes = field_changes({"DeclarationItems": items}, {"DeclarationItems": items[1:]})
    assert [c.path for c in changes] == [
        "DeclarationItems[0].description",
        "DeclarationItems[1]",
    ]
