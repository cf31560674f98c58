"""TemplateGroup: known by its company and code; changed in place."""

from __future__ import annotations

from customs_batch.kinds import Kind
from customs_batch.kinds.actions import Operation
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


def test_the_read_before_an_update_lists_the_groups_of_its_company_until_it_finds_it() -> None:
    """The API reads no single group: the read before a PATCH listed every group of every
    company, every page, for each update (143 groups, 30 updates: 60 GETs where the plan
    said 30). It asks for the record's company and stops at the page holding the ID."""
    from collections.abc import Iterator
    from types import SimpleNamespace
    from typing import Any

    from customs_batch.client import TemplateGroupFilter
    from customs_batch.state import RecordStatus, ResourceRecord

    pages_read: list[int] = []

    class Groups:
        def iter_template_groups(self, filters: TemplateGroupFilter) -> Iterator[Any]:
            assert filters.company_id == 1
            for page in range(1, 4):
                pages_read.append(page)
                for n in range(100):
                    ident = (page - 1) * 100 + n + 1
                    raw = {"id": ident, "code": f"C{ident}", "name": "n", "companyId": 1}
                    yield SimpleNamespace(raw=raw)

    model = model_of(KIND)
    assert model.read_target is not None
    record = ResourceRecord(
        "TemplateGroup/g", RecordStatus.APPLIED, "create", {**SPEC, "code": "C150"}, {"id": 150}
    )
    found = model.read_target(Groups(), [record])  # type: ignore[arg-type]
    read = found["TemplateGroup/g"]
    assert read is not None and read.remote_spec["code"] == "C150"
    assert pages_read == [1, 2]  # not page 3
    gone = ResourceRecord("TemplateGroup/h", RecordStatus.APPLIED, "create", SPEC, {"id": 999})
    pages_read.clear()
    assert model.read_target(Groups(), [gone]) == {"TemplateGroup/h": None}  # type: ignore[arg-type]
    assert pages_read == [1, 2, 3]


def test_is_default_or_the_templates_left_out_of_an_applied_group_are_refused() -> None:
    """The PATCH changes only the fields it is given: deleting `isDefault: true` from the
    document was planned as an update, reported done, and the service kept true (the
    next plan then said No changes)."""
    from customs_batch.planning import Action, plan_changes
    from customs_batch.state import RecordStatus, ResourceRecord, State
    from tests.planning.helpers import doc

    sent = {**SPEC, "isDefault": True, "DeclarationTemplates": [{"name": "t"}]}
    record = ResourceRecord("TemplateGroup/g", RecordStatus.APPLIED, "create", sent, {"id": 7})
    state = State(lineage="lin", serial=3)
    state.apply(record.address, record)
    for left_out in ("isDefault", "DeclarationTemplates"):
        spec = {k: v for k, v in sent.items() if k != left_out}
        [change] = plan_changes([doc(KIND, "g", spec, 0)], state).changes
        assert change.action is Action.REFUSED, change.reason
        assert f"no longer writes {left_out}" in change.reason
    written = {**sent, "isDefault": False}
    [change] = plan_changes([doc(KIND, "g", written, 0)], state).changes
    assert change.action is Action.UPDATE


def test_is_default_false_left_out_is_no_change() -> None:
    """Found in review: deleting `isDefault: false` (the API's default) was refused as a
    value the PATCH would leave at the service; the service holds false either way."""
    from customs_batch.planning import Action, plan_changes
    from customs_batch.state import RecordStatus, ResourceRecord, State
    from tests.planning.helpers import doc

    sent = {**SPEC, "isDefault": False}
    record = ResourceRecord("TemplateGroup/g", RecordStatus.APPLIED, "create", sent, {"id": 7})
    state = State(lineage="lin", serial=3)
    state.apply(record.address, record)
    [change] = plan_changes([doc(KIND, "g", dict(SPEC), 0)], state).changes
    assert change.action is Action.NO_CHANGE, change.reason
    renamed = {**SPEC, "name": "Road"}
    [change] = plan_changes([doc(KIND, "g", renamed, 0)], state).changes
    assert change.action is Action.UPDATE, change.reason


def test_an_import_at_a_group_of_another_code_is_refused_unless_the_state_says_it_was_its_own() -> (
    None
):
    """`import` of a document of code EU-ROAD at group 1, the company's DEFAULT: recorded,
    the next apply PATCHed DEFAULT into EU-ROAD (a mistyped ID rewrote a colleague's group).
    A group whose code was changed at the service is taken back all the same when the state
    says the address stood for that ID (refresh's way out: `state rm --gone`, then
    `import`)."""
    from dataclasses import replace

    from customs_batch.kinds import Address
    from customs_batch.kinds.model import ImportAt

    model = model_of(KIND)
    assert model.import_check is not None
    address = Address(KIND, "eu-road")
    asked: list[str] = []

    def at(held: dict[str, object], *, its_own: bool) -> ImportAt:
        def own() -> bool:
            asked.append("history")
            return its_own

        return ImportAt(address, "1", SPEC, held, lambda name: f"m.yaml:3 ({name})", own)

    refused = model.import_check(at({**SPEC, "code": "DEFAULT"}, its_own=False))
    assert refused is not None
    assert refused.message.startswith(
        "template group 1 has code 'DEFAULT' at the service, and TemplateGroup/eu-road "
        "(m.yaml:3 (code)) says 'EU-ROAD'"
    )
    assert "change that group's code to 'EU-ROAD'" in refused.message
    assert refused.message.endswith("Nothing was recorded")
    assert "set the document's code to 'DEFAULT', import it" in refused.hint
    assert model.import_check(at({**SPEC, "code": "DEFAULT"}, its_own=True)) is None
    assert asked == ["history", "history"]
    # The same code (another name: drift the next apply changes back): the history is not read.
    assert model.import_check(at({**SPEC, "name": "Other"}, its_own=False)) is None
    # A code the identity takes as the same (other spaces around it): the same group.
    assert model.import_check(at({**SPEC, "code": " EU-ROAD"}, its_own=False)) is None
    assert asked == ["history", "history"]
    # `state adopt`: the lost creation sent EU-ROAD, and made a group of that code.
    lost = replace(at({**SPEC, "code": "DEFAULT"}, its_own=False), where=None, sent=True)
    refused = model.import_check(lost)
    assert refused is not None
    assert "and the last request of TemplateGroup/eu-road sent 'EU-ROAD'" in refused.message
    assert "`customs-batch state forget TemplateGroup/eu-road`" in refused.hint


def test_an_import_the_history_allows_is_refused_when_the_name_differs_too() -> None:
    """After a sandbox reset, the ID the history gave the address went to a colleague's group
    (SEA-FREIGHT, 'Colleague sea'): refresh's way out (`state rm --gone`, then `import`) took
    it, and the next apply rewrote it into the document's group. A group whose code and name
    both differ is refused even when the history gave the address its ID."""
    from customs_batch.kinds import Address
    from customs_batch.kinds.model import ImportAt

    model = model_of(KIND)
    assert model.import_check is not None
    address = Address(KIND, "eu-road")
    held = {**SPEC, "code": "SEA-FREIGHT", "name": "Colleague sea"}
    at = ImportAt(address, "3", SPEC, held, lambda name: f"m.yaml:7 ({name})", lambda: True)
    refused = model.import_check(at)
    assert refused is not None
    assert refused.message.startswith(
        "template group 3 has code 'SEA-FREIGHT' and name 'Colleague sea' at the service"
    )
    assert "the ID was given to again" in refused.message
    assert "if group 3 is not yours, do not import it" in refused.hint
    # Its code changed at the service, its name the document's: taken back.
    renamed = ImportAt(address, "3", SPEC, {**SPEC, "code": "SEA-FREIGHT"}, None, lambda: True)
    assert model.import_check(renamed) is None


def test_while_an_update_is_unknown_a_group_of_its_code_under_another_name_is_another() -> None:
    """Found by an outside probe: a group's code change EU-ROAD -> EU-ROAD-B whose answer
    was lost, then a sandbox reset, and a colleague's group 'Colleague sea' of code EU-ROAD-B
    given the same ID: the repeat took it for ours (the code the lost request sent) and
    PATCHed our name and templates into it. While the outcome is unknown, the name tells."""
    from customs_batch.state import RecordStatus, ResourceRecord

    model = model_of(KIND)
    sent = {**SPEC, "code": "EU-ROAD-B", "name": "EU road imports"}
    record = ResourceRecord(
        "TemplateGroup/eu-road",
        RecordStatus.UNKNOWN,
        "update",
        sent,
        outputs={"id": 2, "code": "EU-ROAD", "name": "EU road imports"},
    )
    colleague = {**sent, "name": "Colleague sea"}
    instead = model.another_than_recorded(record, colleague)
    assert instead == "name 'Colleague sea' there, 'EU road imports' recorded"
    # As the request left it, or as its last answer gave it: its own.
    assert model.another_than_recorded(record, sent) is None
    assert model.another_than_recorded(record, {**sent, "code": "EU-ROAD"}) is None
    # An applied record: a name changed there is drift, as before.
    applied = ResourceRecord("TemplateGroup/eu-road", RecordStatus.APPLIED, "update", sent)
    assert model.another_than_recorded(applied, colleague) is None


def test_a_lost_creation_looked_up_by_its_code_is_counted_as_at_least_its_requests() -> None:
    # The look-up lists the company's groups, 100 a request, until the code is found: a
    # company of more than 100 groups takes more requests than the one page counted.
    model = model_of(Kind.TEMPLATE_GROUP)
    lookup = Operation.FIND_OR_CREATE_TEMPLATE_GROUP
    assert model.requests(lookup) == 2
    assert model.requests_at_least(lookup)
    assert not model.requests_at_least(Operation.CREATE_TEMPLATE_GROUP)
