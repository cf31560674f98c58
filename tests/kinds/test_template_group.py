"""TemplateGroup: known by its company and code; changed in place."""

from __future__ import annotations

from customs_batch.kinds import Kind
from customs_batch.kinds.registry import model_of
from tests.kinds.helpers import identity

KIND = Kind.TEMPLATE_GROUP
SPEC = {"companyId": 1, "code": "EU-ROAD", "name": "EU road"}


def test_its_identity_is_company_and_code() -> None:
    base = identity(KIND, SPEC)
    assert identity(KIND, {**SPEC, "code": "EU-RAIL"}) != base
    assert identity(KIND, {**SPEC, "companyId": 2}) != base
    assert identity(KIND, {**SPEC, "name": "Road, EU"}) == base


def test_its_name_code_and_templates_change_in_place_and_a_409_is_looked_up() -> None:
    model = model_of(KIND)
    assert {"name", "code", "isDefault", "DeclarationTemplates"} <= model.mutable
    assert "companyId" not in model.mutable
    assert model.on_conflict is not None and model.id_field == "id"


def test_another_group_at_its_id_is_told_by_its_code_not_by_its_name() -> None:
    """What refresh reads at a recorded ID: the same group with another name (drift the
    next apply changes back), another group with another code or company."""
    model = model_of(KIND)
    assert model.another_object(SPEC, {**SPEC, "name": "Other", "isDefault": True}) is None
    assert model.another_object(SPEC, {**SPEC, "code": "SEA"}) == (
        "code 'SEA' there, 'EU-ROAD' recorded"
    )
    assert model.another_object(SPEC, {**SPEC, "companyId": 2}) is not None
