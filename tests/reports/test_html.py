"""plan --format html: the changes in review order with their old and new values (secrets
kept secret), and the dependency graph drawn in the page."""

from __future__ import annotations

from customs_batch.kinds import Kind
from customs_batch.planning.graph import Edge, EdgeReason
from customs_batch.planning.model import Action
from customs_batch.reports import render_plan
from customs_batch.sensitive import SENSITIVE
from tests.html_page import read_page

from .plans import address, big_view, change, view

GUARANTEE = {
    "DeclarationGuarantees": [{"guaranteeType": "1", "accessCode": "7Q4Z"}],
    "Principal": {"name": "Acme <Export> & Co"},
}


def _plan() -> str:
    first = address(Kind.DEPARTURE_DECLARATION, "dep-1")
    return render_plan(
        "html",
        view(
            change(Kind.DEPARTURE_DECLARATION, "dep-1", Action.CREATE, spec=GUARANTEE),
            change(
                Kind.TRANSIT_PARTY_UPDATE,
                "dep-1-consignee",
                Action.CREATE,
                spec={"declarationId": None, "Consignee": {"eoriNo": "DE1"}},
                unknown=(("declarationId",),),
                depends_on=(first,),
            ),
            change(
                Kind.TEMPLATE_GROUP,
                "eu-road",
                Action.UPDATE,
                reason="changes name",
                values=(
                    ("name", "EU road", "EU road <b>imports</b>"),
                    ("DeclarationGuarantees[0].accessCode", "OLD1", "NEW2"),
                ),
            ),
            change(Kind.MOVEMENT, "mov-1", Action.NO_CHANGE),
            edges={
                address(Kind.TRANSIT_PARTY_UPDATE, "dep-1-consignee"): (
                    Edge(first, (EdgeReason.REFERENCE,)),
                )
            },
        ),
    )


def test_changes_come_in_review_order_with_old_and_new_values() -> None:
    page = read_page(_plan())
    assert page.headers == ["action", "address", "from", "values (old → new)", "reason"]
    assert [row[:2] for row in page.rows] == [
        ["update", "TemplateGroup/eu-road"],
        ["create", "DepartureDeclaration/dep-1"],
        ["create", "TransitPartyUpdate/dep-1-consignee"],
    ]
    update = page.rows[0]
    assert update[3].splitlines() == [
        'name: "EU road" → "EU road <b>imports</b>"',
        f"DeclarationGuarantees[0].accessCode: {SENSITIVE} → {SENSITIVE}",
    ]
    assert update[4] == "changes name"
    assert page.row_classes == ["tone-update", "tone-create", "tone-create"]
    assert page.count("b") == 0


def test_secrets_never_appear_and_values_known_after_apply_say_so() -> None:
    text = _plan()
    for secret in ("7Q4Z", "OLD1", "NEW2"):
        assert secret not in text
    page = read_page(text)
    created = page.rows[1][3].splitlines()
    assert f"DeclarationGuarantees[0].accessCode = {SENSITIVE}" in created
    assert 'Principal.name = "Acme <Export> & Co"' in created
    assert page.rows[2][3].splitlines() == [
        'Consignee.eoriNo = "DE1"',
        "declarationId = (known after apply)",
    ]


def test_the_summary_and_the_graph_with_every_document() -> None:
    text = _plan()
    page = read_page(text)
    assert page.summary.startswith("Plan: 2 to create, 1 to update, 1 unchanged")
    assert page.count("g", "node") == 4
    assert page.count("path", "edge") == 1
    assert "DepartureDeclaration/dep-1" in page.svg_texts
    assert "<summary>Dependency graph (4 documents)</summary>" in text


def test_unchanged_documents_are_listed_when_asked() -> None:
    shown = render_plan(
        "html", view(change(Kind.MOVEMENT, "m", Action.NO_CHANGE), show_unchanged=True)
    )
    assert [row[0] for row in read_page(shown).rows] == ["no change"]
    hidden = render_plan("html", view(change(Kind.MOVEMENT, "m", Action.NO_CHANGE)))
    assert read_page(hidden).rows == []


def test_a_big_plan_draws_groups_and_lists_every_change() -> None:
    big = big_view(2_000)
    page = read_page(render_plan("html", big))
    assert len(page.rows) == 2_000
    assert 0 < page.count("g", "node") <= 50
    assert "grouped by kind and shipment" in render_plan("html", big)
