"""Template groups: create, unique code per company, PATCH only what is sent, list by company."""

from __future__ import annotations

import gc
import json
import tracemalloc

import httpx
import pytest

from tests.sandbox.conftest import FakeClock

GROUPS = "/v1/declaration-templates/groups"


def test_create_returns_the_group(api: httpx.Client) -> None:
    response = api.post(GROUPS, json={"name": "EU road", "code": "EUROAD", "companyId": 1})
    assert response.status_code == 201
    group = response.json()
    assert (group["name"], group["code"], group["isDefault"], group["companyId"]) == (
        "EU road",
        "EUROAD",
        False,
        1,
    )
    assert group["id"] == 2 and group["createdAt"].endswith("Z")


def test_duplicate_code_in_the_same_company_is_409(api: httpx.Client) -> None:
    response = api.post(GROUPS, json={"name": "Again", "code": "DEFAULT", "companyId": 1})
    assert response.status_code == 409
    assert (
        api.post(
            GROUPS, json={"name": "Other company", "code": "DEFAULT", "companyId": 2}
        ).status_code
        == 201
    )


def test_create_refuses_bad_bodies(api: httpx.Client) -> None:
    assert api.post(GROUPS, json={"name": "No code", "companyId": 1}).status_code == 400
    templates = [{"procedureType": "4000", "colour": "red"}]
    bad = {"name": "x", "code": "X", "companyId": 1, "DeclarationTemplates": templates}
    assert api.post(GROUPS, json=bad).status_code == 400


def test_patch_changes_only_what_is_sent(api: httpx.Client) -> None:
    response = api.patch(f"{GROUPS}/1", json={"name": "Renamed"})
    assert response.status_code == 200
    assert {k: response.json()[k] for k in ("id", "name", "code", "isDefault")} == {
        "id": 1,
        "name": "Renamed",
        "code": "DEFAULT",
        "isDefault": True,
    }
    assert "updatedAt" in response.json()


def test_patch_replaces_the_templates(api: httpx.Client) -> None:
    templates = [{"procedureType": "4000", "declarationOffice": "NL000396"}]
    assert api.patch(f"{GROUPS}/1", json={"DeclarationTemplates": templates}).status_code == 200


def test_patch_to_a_used_code_is_409_and_unknown_group_404(api: httpx.Client) -> None:
    api.post(GROUPS, json={"name": "EU road", "code": "EUROAD", "companyId": 1})
    assert api.patch(f"{GROUPS}/2", json={"code": "DEFAULT"}).status_code == 409
    assert api.patch(f"{GROUPS}/99", json={"name": "x"}).status_code == 404
    assert api.patch(f"{GROUPS}/1", json={"companyId": 3}).status_code == 400


def test_list_with_company_filter(api: httpx.Client) -> None:
    api.post(GROUPS, json={"name": "Other", "code": "OTHER", "companyId": 2})
    body = api.get(GROUPS, params={"companyId": 2}).json()
    assert set(body) == {"page", "itemsPerPage", "result"}
    assert body["result"] == [
        {"id": 2, "name": "Other", "code": "OTHER", "isDefault": False, "companyId": 2}
    ]
    assert len(api.get(GROUPS).json()["result"]) == 2


def test_a_code_follows_its_group_through_a_patch(api: httpx.Client) -> None:
    api.post(GROUPS, json={"name": "EU road", "code": "EUROAD", "companyId": 1})
    assert api.patch(f"{GROUPS}/2", json={"code": "ROAD"}).status_code == 200
    assert api.patch(f"{GROUPS}/2", json={"code": "ROAD"}).status_code == 200  # its own code
    again = {"name": "Again", "code": "EUROAD", "companyId": 1}
    assert api.post(GROUPS, json=again).status_code == 201  # freed by the PATCH
    taken = api.post(GROUPS, json={**again, "code": "ROAD"})
    assert taken.status_code == 409
    assert taken.json()["message"] == "code ROAD is already used by template group 2 of company 1"


@pytest.mark.parametrize(
    "patch",
    [
        {},
        {"name": "Default"},
        {"code": "DEFAULT", "isDefault": True},
        {"DeclarationTemplates": []},
    ],
)
def test_a_patch_that_changes_nothing_keeps_updated_at(
    api: httpx.Client, clock: FakeClock, patch: dict[str, object]
) -> None:
    """Found probing: a PATCH of nothing ({}) or of the values the group holds answered a
    new updatedAt, and the group kept it, as if it had been changed: a client telling
    changes by updatedAt saw one that never was (as a repeated HAWB DELETE did, 2017763)."""
    first = api.patch(f"{GROUPS}/1", json={"name": "Renamed"}).json()["updatedAt"]
    clock.advance(60.0)
    before = api.patch(f"{GROUPS}/1", json={"name": "Default"}).json()["updatedAt"]
    assert before != first  # the rename back was a change
    clock.advance(60.0)
    response = api.patch(f"{GROUPS}/1", json=patch)
    assert response.status_code == 200, response.text
    assert response.json()["updatedAt"] == before
    clock.advance(60.0)
    assert api.patch(f"{GROUPS}/1", json={"name": "Again"}).json()["updatedAt"] != before


def test_a_groups_templates_are_held_in_about_their_size(api: httpx.Client) -> None:
    # Found probing: the templates were kept parsed, about 25 times their size (a 900 KB
    # group of 300,000 empty templates held 23 MB; ten such groups 230 MB).
    def create(code: str) -> None:
        group = {"name": "n", "code": code, "companyId": 1, "DeclarationTemplates": [{}] * 100_000}
        response = api.post(GROUPS, json=group)
        assert response.status_code == 201, response.text

    create("WARM")  # the first builds what every one uses
    size = len(json.dumps([{}] * 100_000))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        create("HELD")
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert retained < 2 * size, f"{retained:,} bytes held for {size:,} bytes of templates"


def test_a_patch_of_the_templates_held_in_another_key_order_changes_nothing(
    api: httpx.Client, clock: FakeClock
) -> None:
    templates = [{"incoterm": "FCA", "procedureType": "D1", "PreviousDocuments": []}]
    stamp = api.patch(f"{GROUPS}/1", json={"DeclarationTemplates": templates}).json()["updatedAt"]
    clock.advance(60.0)
    reordered = [dict(reversed(list(templates[0].items())))]
    response = api.patch(f"{GROUPS}/1", json={"DeclarationTemplates": reordered})
    assert response.json()["updatedAt"] == stamp
    clock.advance(60.0)
    changed = [{**templates[0], "incoterm": "EXW"}]
    response = api.patch(f"{GROUPS}/1", json={"DeclarationTemplates": changed})
    assert response.json()["updatedAt"] != stamp
