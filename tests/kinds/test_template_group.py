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
