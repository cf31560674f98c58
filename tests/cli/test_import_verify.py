"""`import` and `state adopt` compare the object with the document before recording it,
against the built-in emulator (its seed: transit declaration 7001 of 1200 kg to DE004073,
7002 of 800 kg to BE212000, template group 1 "Default" without templates)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord
from tests.cli.conftest import run

DEPARTURE = "DepartureDeclaration/dep-rtm-ant-0002"
"""60 kg from NL000396 to BE212000 (examples/manifests/departures.yaml)."""
TEMPLATES = [{"procedureType": "H1", "declarationOffice": "NL000396", "incoterm": "DAP"}]


def _state(project: Path) -> LocalBackend:
    return LocalBackend(project / ".customs-batch" / "local")


def _group_at_the_emulator(project: Path, group_id: int) -> dict[str, object]:
    """What the emulator holds, templates included (the API does not list them)."""
    database = project / ".customs-batch" / "local" / "sandbox.sqlite3"
    with sqlite3.connect(database) as connection:
        (body,) = connection.execute(
            "SELECT body FROM records WHERE tbl = 'templateGroups' AND id = ?", (str(group_id),)
        ).fetchone()
    found: dict[str, object] = json.loads(body)
    return found


def _changes(capsys: pytest.CaptureFixture[str], address: str) -> list[tuple[str, list[str]]]:
    code, out, _ = run(capsys, "plan", "--format", "json", "--target", address)
    assert code in (0, 2), out
    return [(c["action"], c["changed"]) for c in json.loads(out)["changes"]]


def test_import_refuses_a_declaration_that_is_not_what_the_document_declares(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "import", DEPARTURE, "7002")
    assert code == 1, out + err
    assert "7002 is not what DepartureDeclaration/dep-rtm-ant-0002 declares" in err
    assert "totalWeight: the manifest says 60.0, the service holds 800.0" in err
    assert "Nothing was recorded" in err
    assert DEPARTURE not in _state(project).read().resources
    # Plan still creates it: nothing was taken as imported.
    assert _changes(capsys, DEPARTURE) == [("create", [])]


@pytest.mark.parametrize(
    ("address", "ident"), [(DEPARTURE, "99999"), ("ExportCancellation/cancel-export-501", "99999")]
)
def test_import_of_an_id_the_service_does_not_hold_says_so_and_what_to_do(
    project: Path, capsys: pytest.CaptureFixture[str], address: str, ident: str
) -> None:
    # Found probing: it printed the client's bare 404 (`error: not found (GET ... -> 404)`),
    # naming neither the document nor that nothing was recorded.
    code, out, err = run(capsys, "import", address, ident)
    assert code == 3, out + err
    assert err.startswith(f"error: {address}: the service holds nothing at {ident}: not found")
    assert "hint: nothing was recorded; check the ID (`customs-batch get` reads" in err
    assert address not in _state(project).read().resources


def test_import_of_a_matching_declaration_sends_the_parties_it_cannot_read(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = project / "manifests" / "departures.yaml"
    manifest.write_text(manifest.read_text().replace("totalWeight: 60.0", "totalWeight: 800.0"))
    code, out, err = run(capsys, "import", DEPARTURE, "7002")
    assert code == 0, err
    assert "compared with the service: " in out and "totalWeight" in out
    assert "sent by the next apply: Principal, Consignor, Consignee" in out
    # The parties the service does not give back are sent once, then nothing is left to do.
    assert _changes(capsys, DEPARTURE) == [("update", ["Consignee", "Consignor", "Principal"])]
    code, out, _ = run(capsys, "apply", "--auto-approve", "--target", DEPARTURE)
    assert code == 0, out
    assert _changes(capsys, DEPARTURE) == [("no-change", [])]


def test_an_imported_template_group_gets_its_templates(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    group = {
        "apiVersion": "customs-batch/v1",
        "kind": "TemplateGroup",
        "metadata": {"name": "default"},
        "spec": {
            "name": "Default group",
            "code": "DEFAULT",
            "companyId": 1,
            "isDefault": True,
            "DeclarationTemplates": TEMPLATES,
        },
    }
    (project / "manifests" / "default-group.yaml").write_text(json.dumps(group))
    code, out, err = run(capsys, "import", "TemplateGroup/default", "1")
    assert code == 0, err
    assert "name: the manifest says 'Default group', the service holds 'Default'" in out
    assert "(the API does not list a group's templates):" in out
    assert "sent by the next apply: DeclarationTemplates" in out
    assert _changes(capsys, "TemplateGroup/default") == [
        ("update", ["DeclarationTemplates", "name"])
    ]
    code, out, _ = run(capsys, "apply", "--auto-approve", "--target", "TemplateGroup/default")
    assert code == 0, out
    held = _group_at_the_emulator(project, 1)
    assert (held["name"], held["DeclarationTemplates"]) == ("Default group", TEMPLATES)
    assert _changes(capsys, "TemplateGroup/default") == [("no-change", [])]


def test_import_refuses_a_template_group_of_another_code(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by an outside probe: a group document of code MY-ROAD imported at the seeded
    # group 1 (code DEFAULT) was recorded, and the next apply PATCHed the company's DEFAULT
    # group into MY-ROAD: a group is known by its code (refresh calls another code at its
    # ID another object), and nothing in the state said the document stood for group 1.
    group = {
        "apiVersion": "customs-batch/v1",
        "kind": "TemplateGroup",
        "metadata": {"name": "my-group"},
        "spec": {"name": "My road imports", "code": "MY-ROAD", "companyId": 1},
    }
    (project / "manifests" / "my-group.yaml").write_text(json.dumps(group))
    code, out, err = run(capsys, "import", "TemplateGroup/my-group", "1")
    assert code == 1, out + err
    said = " ".join(err.split())
    # At the line and column the code is written on (the file is one line of JSON).
    column = json.dumps(group).index('"MY-ROAD"') + 1
    assert (
        "template group 1 has code 'DEFAULT' at the service, and TemplateGroup/my-group "
        f"({Path('manifests') / 'my-group.yaml'}:1:{column}) says 'MY-ROAD'"
    ) in said
    # Nothing is recorded, so no apply changes the fields that differ.
    assert "code: the manifest says 'MY-ROAD', the service holds 'DEFAULT' (changeable" in said
    assert "the next apply changes it" not in said
    assert "the next apply would change that group's code to 'MY-ROAD'" in said
    assert "Nothing was recorded" in said
    assert "set the document's code to 'DEFAULT', import it" in said
    assert "TemplateGroup/my-group" not in _state(project).read().resources
    assert _changes(capsys, "TemplateGroup/my-group") == [("create", [])]
    assert _group_at_the_emulator(project, 1)["code"] == "DEFAULT"


def _eu_road_changed_there(project: Path, capsys: pytest.CaptureFixture[str], **fields: str) -> int:
    """Apply TemplateGroup/eu-road, then change ``fields`` of it at the emulator (by
    someone else, or another group given its ID): its ID."""
    group = "TemplateGroup/eu-road"
    assert run(capsys, "apply", "--auto-approve", "--target", group)[0] == 0
    group_id = _state(project).read().resources[group].outputs["id"]
    assert isinstance(group_id, int)
    paths = ", ".join("?, ?" for _ in fields)
    values = [item for name, value in fields.items() for item in (f"$.{name}", value)]
    database = project / ".customs-batch" / "local" / "sandbox.sqlite3"
    with sqlite3.connect(database) as connection:
        connection.execute(
            f"UPDATE records SET body = json_set(body, {paths}) "
            "WHERE tbl = 'templateGroups' AND id = ?",
            (*values, str(group_id)),
        )
    return group_id


def test_a_group_whose_code_changed_there_is_imported_back_at_the_id_its_history_gave_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # refresh's way out for a group whose code someone changed at the service: `state rm
    # --gone`, then `import` at its ID, which the history of the apply that created it keeps.
    group = "TemplateGroup/eu-road"
    group_id = _eu_road_changed_there(project, capsys, code="X-1")
    code, out, _ = run(capsys, "refresh")
    assert code == 0, out
    said = " ".join(out.split())
    assert (
        f"`customs-batch state rm --gone {group}`, then `customs-batch import {group} "
        f"{group_id}` takes it back as the service holds it (a template group under another "
        "code than its document's only when this environment's history holds an answer that "
        f"gave {group} {group_id}; else `import` says how)"
    ) in said
    assert run(capsys, "state", "rm", "--gone", group)[0] == 0
    code, out, err = run(capsys, "import", group, str(group_id))
    assert code == 0, out + err
    assert "code: the manifest says 'EU-ROAD', the service holds 'X-1'" in out
    # (A code change is planned with the whole batch: a selection could leave out another
    # document that declares the group's old code.)
    code, out, _ = run(capsys, "plan", "--format", "json")
    assert code == 0, out
    (change,) = [c for c in json.loads(out)["changes"] if c["address"] == group]
    assert (change["action"], change["changed"]) == ("update", ["DeclarationTemplates", "code"])
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    assert _group_at_the_emulator(project, group_id)["code"] == "EU-ROAD"


def test_the_way_out_does_not_take_another_group_the_id_was_given_to_again(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by an outside probe: after a sandbox reset, the ID the history gave the group
    # went to a colleague's group (another code, another name); refresh's way out (`state
    # rm --gone`, then `import` at that ID) took it, and the next apply rewrote the
    # colleague's group into the document's. Code and name both differing: refused.
    group = "TemplateGroup/eu-road"
    group_id = _eu_road_changed_there(project, capsys, code="SEA-FREIGHT", name="Colleague sea")
    assert run(capsys, "refresh")[0] == 0
    assert run(capsys, "state", "rm", "--gone", group)[0] == 0
    code, out, err = run(capsys, "import", group, str(group_id))
    assert code == 1, out + err
    said = " ".join(err.split())
    assert (
        f"template group {group_id} has code 'SEA-FREIGHT' and name 'Colleague sea' at the service"
    ) in said
    assert f"if group {group_id} is not yours, do not import it" in said
    assert group not in _state(project).read().resources
    code, out, _ = run(capsys, "plan", "--format", "json")
    (change,) = [c for c in json.loads(out)["changes"] if c["address"] == group]
    assert change["action"] == "create"
    assert _group_at_the_emulator(project, group_id)["code"] == "SEA-FREIGHT"


def test_import_refuses_a_cancellation_that_was_never_requested(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found probing from outside: `import ExportCancellation/NAME 502` of an export
    # declaration nobody had asked to cancel (submitted at the service) was recorded, and
    # the plan then said "502 is cancellation_requested at the service: not decided yet",
    # untrue; apply's read then took its status for customs refusing the cancellation, and
    # it was never requested. So was an import declaration (601), which none cancels.
    manifests = project / "manifests"
    for ident in (502, 601):
        (manifests / f"cancel-{ident}.yaml").write_text(
            "apiVersion: customs-batch/v1\nkind: ExportCancellation\n"
            f"metadata:\n  name: cancel-{ident}\nspec:\n  declarationId: {ident}\n"
        )
    code, _, err = run(capsys, "import", "ExportCancellation/cancel-502", "502")
    assert code == 1, err
    said = " ".join(err.split())
    assert "export declaration 502 is submitted at the service: it was not cancelled" in said
    code, _, err = run(capsys, "import", "ExportCancellation/cancel-601", "601")
    assert code == 1, err
    assert "601 is an import declaration at the service" in " ".join(err.split())
    resources = _state(project).read().resources
    assert "ExportCancellation/cancel-502" not in resources
    assert "ExportCancellation/cancel-601" not in resources
    assert _changes(capsys, "ExportCancellation/cancel-502") == [("create", [])]

    # Its cancellation requested by a colleague elsewhere: what the document asks for.
    database = project / ".customs-batch" / "local" / "sandbox.sqlite3"
    with sqlite3.connect(database) as connection:
        connection.execute(
            "UPDATE records SET body = json_set(body, '$.status', 'cancellation_requested') "
            "WHERE tbl = 'declarations' AND id = '502'"
        )
    code, out, err = run(capsys, "import", "ExportCancellation/cancel-502", "502")
    assert code == 0, out + err
    assert _state(project).read().resources["ExportCancellation/cancel-502"].outputs == {
        "declarationId": 502,
        "canceled": False,
    }


def test_import_refuses_a_deactivation_that_never_happened(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "import", "HawbDeactivation/hawb-a3-duplicate", "hawb_a3")
    assert code == 1
    assert "HAWB hawb_a3 is still active: it was never deactivated" in err
    assert "HawbDeactivation/hawb-a3-duplicate" not in _state(project).read().resources


@pytest.mark.parametrize("written", ["12x", "700_2", "hawb_a1"])
def test_adopt_of_what_is_no_id_of_the_kind_is_a_usage_error_before_anything_is_asked(
    project: Path, capsys: pytest.CaptureFixture[str], written: str
) -> None:
    # `state adopt DEPARTURE 12x` exited 3, as if the state or the service had failed,
    # after locking the state and connecting; `get declaration 12x` exits 64.
    assert run(capsys, "apply", "--auto-approve", "--target", DEPARTURE)[0] == 0
    with _state(project).open("test") as session:
        record = session.state.resources[DEPARTURE]
        session.record(record.with_changes(status=RecordStatus.PENDING, outputs={}))
    code, out, err = run(capsys, "state", "adopt", DEPARTURE, written)
    assert code == 64, out + err
    assert f"{written!r} is not an ID of a DepartureDeclaration" in err
    assert _state(project).read().resources[DEPARTURE].status is RecordStatus.PENDING


def test_adopt_refuses_a_declaration_the_attempt_did_not_send(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "apply", "--auto-approve", "--target", DEPARTURE)[0] == 0
    with _state(project).open("test") as session:
        record = session.state.resources[DEPARTURE]
        session.record(record.with_changes(status=RecordStatus.PENDING, outputs={}))

    code, _, err = run(capsys, "state", "adopt", DEPARTURE, "7001")
    assert code == 1
    assert "7001 is not what the last request of DepartureDeclaration/dep-rtm-ant-0002 sent" in err
    assert "destinationOffice: the manifest says 'BE212000', the service holds 'DE004073'" in err
    assert "state forget DepartureDeclaration/dep-rtm-ant-0002" in err
    assert _state(project).read().resources[DEPARTURE].status is RecordStatus.PENDING


def test_a_group_only_imported_whose_code_changed_there_is_taken_back_as_the_refusal_says(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No apply answered with its ID, so the history cannot say the document stood for it:
    # import refuses, and the way out it prints (the service's code in the document, import,
    # then the code wanted) takes the group back without a second one.
    group = {
        "apiVersion": "customs-batch/v1",
        "kind": "TemplateGroup",
        "metadata": {"name": "default"},
        "spec": {"name": "Default", "code": "DEFAULT", "companyId": 1},
    }
    manifest = project / "manifests" / "default-group.yaml"
    manifest.write_text(json.dumps(group))
    assert run(capsys, "import", "TemplateGroup/default", "1")[0] == 0
    database = project / ".customs-batch" / "local" / "sandbox.sqlite3"
    with sqlite3.connect(database) as connection:
        connection.execute(
            "UPDATE records SET body = json_set(body, '$.code', 'X-1') "
            "WHERE tbl = 'templateGroups' AND id = '1'"
        )
    assert run(capsys, "refresh")[0] == 0
    assert run(capsys, "state", "rm", "--gone", "TemplateGroup/default")[0] == 0
    code, out, err = run(capsys, "import", "TemplateGroup/default", "1")
    assert code == 1, out + err
    said = " ".join(err.split())
    assert "(no answer in this environment's history gave it that ID)" in said
    assert "set the document's code to 'X-1', import it, then set the code you want" in said
    assert "TemplateGroup/default" not in _state(project).read().resources

    manifest.write_text(json.dumps(group).replace('"DEFAULT"', '"X-1"'))
    assert run(capsys, "import", "TemplateGroup/default", "1")[0] == 0
    manifest.write_text(json.dumps(group))
    code, out, _ = run(capsys, "plan", "--format", "json")
    assert code == 0, out
    (change,) = [c for c in json.loads(out)["changes"] if c["address"] == "TemplateGroup/default"]
    assert (change["action"], change["changed"]) == ("update", ["code"])


def test_adopt_refuses_a_template_group_of_another_code(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The creation of eu-road (code EU-ROAD) had an unknown outcome, and the ID adopted is
    # the seeded group 1 (code DEFAULT): it was recorded, and the next apply PATCHed the
    # company's DEFAULT group into EU-ROAD. The lost request made a group of its own code.
    group = "TemplateGroup/eu-road"
    assert run(capsys, "apply", "--auto-approve", "--target", group)[0] == 0
    with _state(project).open("test") as session:
        record = session.state.resources[group]
        session.record(record.with_changes(status=RecordStatus.UNKNOWN, outputs={}))
    code, out, err = run(capsys, "state", "adopt", group, "1")
    assert code == 1, out + err
    said = " ".join(err.split())
    assert (
        "template group 1 has code 'DEFAULT' at the service, and the last request of "
        f"{group} sent 'EU-ROAD'"
    ) in said
    assert "Nothing was recorded" in said and f"state forget {group}" in said
    assert _state(project).read().resources[group].status is RecordStatus.UNKNOWN
    assert _group_at_the_emulator(project, 1)["code"] == "DEFAULT"


def _set_at_the_emulator(project: Path, group_id: int, **fields: object) -> None:
    """Another group at ``group_id`` (its ID given again after a sandbox reset, say)."""
    body = {**_group_at_the_emulator(project, group_id), **fields}
    database = project / ".customs-batch" / "local" / "sandbox.sqlite3"
    with sqlite3.connect(database) as connection:
        connection.execute(
            "UPDATE records SET body = ? WHERE tbl = 'templateGroups' AND id = ?",
            (json.dumps(body), str(group_id)),
        )


@pytest.mark.parametrize("given", ["own", "written otherwise"])
def test_adopt_refuses_a_lost_update_of_a_template_group(
    project: Path, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    # Found in review: the PATCH of eu-road's code to EU-ROAD-2 lost its answer, and apply
    # then found a colleague's group at its ID (code COLLEAGUE, the same name). `state adopt
    # ... 02` took it (the ID written otherwise passed the check of the record's own), and
    # the next apply would have PATCHed the document into that group.
    group = "TemplateGroup/eu-road"
    assert run(capsys, "apply", "--auto-approve", "--target", group)[0] == 0
    with _state(project).open("test") as session:
        record = session.state.resources[group]
        lost = record.with_changes(
            status=RecordStatus.UNKNOWN,
            operation="update-template-group",
            spec={**record.spec, "code": "EU-ROAD-2"},
            not_found_at="2026-11-27T12:00:00.000Z",
            found_instead="code 'COLLEAGUE' there, 'EU-ROAD-2' recorded",
        )
        session.record(lost)
    group_id = int(str(record.outputs["id"]))
    _set_at_the_emulator(project, group_id, code="COLLEAGUE")
    remote_id = str(group_id) if given == "own" else f"0{group_id}"

    code, out, err = run(capsys, "state", "adopt", group, remote_id)

    assert code == 1, out + err
    said = " ".join(err.split())
    assert (
        f"the last request of {group} was an update of {group_id}, whose answer was lost"
    ) in said
    assert "Nothing was recorded" in said
    assert f"`customs-batch state forget {group}`, then `customs-batch import {group}" in said
    assert "replacing" not in said
    assert _state(project).read().resources[group] == lost
    assert _group_at_the_emulator(project, group_id)["code"] == "COLLEAGUE"


def test_adopt_refuses_a_deactivation_that_never_happened(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address = "HawbDeactivation/hawb-a3-duplicate"
    spec = {"shipmentId": "shp_7Hk2Lm", "hawbId": "hawb_a3"}
    with _state(project).open("test") as session:
        session.record(ResourceRecord(address, RecordStatus.UNKNOWN, "create", spec))
    code, _, err = run(capsys, "state", "adopt", address, "hawb_a3")
    assert code == 1
    assert "still active" in err and f"state forget {address}" in err
    assert _state(project).read().resources[address].status is RecordStatus.UNKNOWN


OTHER = "DepartureDeclaration/dep-other"


def _other_departure(project: Path) -> None:
    """A second departure, ``dep-other``: another reference, other goods and another
    consignee than dep-rtm-ant-0002, with the same weight and offices (so nothing the
    service gives back tells the two apart)."""
    manifest = project / "manifests" / "departures.yaml"
    text = manifest.read_text()
    second = text[text.index("apiVersion", text.index("name: dep-rtm-ant-0002") - 200) :]
    other = (
        second.replace("name: dep-rtm-ant-0002", "name: dep-other")
        .replace("ACME-2026-0002", "OTHER-2026-0099")
        .replace("Initech NV", "Umbrella NV")
    )
    assert other != second
    (project / "manifests" / "other.yaml").write_text(other)


def test_import_refuses_an_id_another_record_holds(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "apply", "--auto-approve", "--target", DEPARTURE)[0] == 0
    declared = _state(project).read().resources[DEPARTURE].outputs["declarationId"]
    _other_departure(project)

    code, out, err = run(capsys, "import", OTHER, str(declared))
    assert code == 3, out + err
    assert f"{declared} is already recorded as {DEPARTURE}" in err
    assert f"state mv {DEPARTURE} {OTHER}" in err
    assert f"state rm --gone {DEPARTURE}" not in err  # the service holds it: refused
    assert OTHER not in _state(project).read().resources
    # Plan still creates it as a declaration of its own: nothing goes to the other one.
    assert _changes(capsys, OTHER) == [("create", [])]

    # A tombstone still holds its object.
    assert run(capsys, "state", "rm", DEPARTURE)[0] == 0
    code, _, err = run(capsys, "import", OTHER, str(declared))
    assert code == 3
    assert f"the tombstone of {DEPARTURE} (forgotten by `customs-batch state rm`)" in err
    assert OTHER not in _state(project).read().resources


def test_the_hint_of_an_id_another_record_holds_can_be_followed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "apply", "--auto-approve", "--target", DEPARTURE)[0] == 0
    declared = _state(project).read().resources[DEPARTURE].outputs["declarationId"]
    _other_departure(project)
    code, _, err = run(capsys, "import", OTHER, str(declared))
    assert code == 3
    moved = f"state mv {DEPARTURE} {OTHER}"
    assert moved in err

    assert run(capsys, "state", *moved.split()[1:])[0] == 0
    resources = _state(project).read().resources
    assert resources[OTHER].outputs["declarationId"] == declared
    assert DEPARTURE not in resources


def test_import_refuses_a_template_group_another_record_holds(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "apply", "--auto-approve", "--target", "TemplateGroup/eu-road")[0] == 0
    group_id = _state(project).read().resources["TemplateGroup/eu-road"].outputs["id"]
    manifest = project / "manifests" / "template-groups.yaml"
    other = manifest.read_text().replace("name: eu-road", "name: other-group")
    (project / "manifests" / "other-group.yaml").write_text(other.replace("EU-ROAD", "OTHER"))

    code, _, err = run(capsys, "import", "TemplateGroup/other-group", str(group_id))
    assert code == 3, err
    assert f"{group_id} is already recorded as TemplateGroup/eu-road" in err
    assert "TemplateGroup/other-group" not in _state(project).read().resources
    assert _changes(capsys, "TemplateGroup/other-group") == [("create", [])]


def test_adopt_refuses_an_id_another_record_holds(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "apply", "--auto-approve", "--target", DEPARTURE)[0] == 0
    declared = _state(project).read().resources[DEPARTURE].outputs["declarationId"]
    _other_departure(project)
    # dep-other's submission had an unknown outcome; the object it is told it created is
    # dep-rtm-ant-0002's (the same weight and offices: the comparison alone cannot tell).
    spec = dict(_state(project).read().resources[DEPARTURE].spec)
    spec["commercialReference"] = "OTHER-2026-0099"
    with _state(project).open("test") as session:
        session.record(ResourceRecord(OTHER, RecordStatus.UNKNOWN, "submit-departure", spec))

    code, _, err = run(capsys, "state", "adopt", OTHER, str(declared))
    assert code == 3, err
    assert f"{declared} is already recorded as {DEPARTURE}" in err
    assert f"state forget {OTHER}" in err
    assert _state(project).read().resources[OTHER].status is RecordStatus.UNKNOWN


def test_adopt_of_an_id_a_record_holds_that_refresh_found_taken_says_how_to_adopt_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found probing from outside: after a sandbox reset, a lost submission's declaration
    # was given the ID an older record still held. `state adopt` of it said "the attempt
    # did not create it ... `state forget` if it created none (the next apply sends it
    # again)": followed, the declaration would have been submitted twice. Once refresh has
    # found another object at that record's ID, the refusal says so and how to adopt it.
    assert run(capsys, "apply", "--auto-approve", "--target", DEPARTURE)[0] == 0
    declared = _state(project).read().resources[DEPARTURE].outputs["declarationId"]
    _other_departure(project)
    spec = dict(_state(project).read().resources[DEPARTURE].spec)
    spec["commercialReference"] = "OTHER-2026-0099"
    with _state(project).open("test") as session:
        holder = session.state.resources[DEPARTURE]
        session.record(
            holder.with_changes(
                not_found_at="2026-11-28T15:32:52.187Z",
                found_instead=f"the service holds another object at {declared}",
            )
        )
        session.record(ResourceRecord(OTHER, RecordStatus.UNKNOWN, "submit-departure", spec))

    code, _, err = run(capsys, "state", "adopt", OTHER, str(declared))
    assert code == 3, err
    said = " ".join(err.split())
    assert f"{declared} is recorded as {DEPARTURE}, but the service no longer holds" in said
    assert "did not create it" not in said and f"state forget {OTHER}" not in said
    assert f"state rm --gone {DEPARTURE}`, then `customs-batch state adopt {OTHER}" in said
    assert _state(project).read().resources[OTHER].status is RecordStatus.UNKNOWN


def test_adopt_refuses_the_rejected_declaration_a_lost_resubmission_replaces(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A rejected departure, corrected and submitted again; that answer lost. The rejected
    # one agrees with the attempt where the comparison looks, but it is what the attempt
    # replaced: adopted, the new declaration was tracked by nothing.
    assert run(capsys, "apply", "--auto-approve", "--target", DEPARTURE)[0] == 0
    record = _state(project).read().resources[DEPARTURE]
    rejected = record.outputs["declarationId"]
    earlier = {"outputs": dict(record.outputs), "remoteStatus": "invalid", "spec": record.spec}
    with _state(project).open("test") as session:
        session.record(
            record.with_changes(
                status=RecordStatus.UNKNOWN,
                operation="resubmit-departure",
                outputs={},
                superseded=(earlier,),
            )
        )
    code, _, err = run(capsys, "state", "adopt", DEPARTURE, str(rejected))
    assert code == 3, err
    assert f"{rejected} is the object {DEPARTURE}'s last attempt was replacing" in err
    assert "Nothing was recorded" in err
    assert _state(project).read().resources[DEPARTURE].status is RecordStatus.UNKNOWN


def test_the_hint_of_a_template_group_conflict_can_be_followed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    group = "TemplateGroup/eu-road"
    assert run(capsys, "apply", "--auto-approve", "--target", group)[0] == 0
    group_id = _state(project).read().resources[group].outputs["id"]
    with _state(project).open("test") as session:  # the record lost, the group still there
        session.forget(group)
    code, out, err = run(capsys, "apply", "--auto-approve", "--target", group)
    assert code == 1, out + err
    hint = f"`customs-batch import {group} {group_id}` records it"
    assert hint in out + err
    assert _state(project).read().resources[group].never_created

    code, out, err = run(capsys, "import", group, str(group_id))
    assert code == 0, out + err
    record = _state(project).read().resources[group]
    assert (record.status, record.outputs["id"], record.error) == (
        RecordStatus.APPLIED,
        group_id,
        None,
    )
    # The templates the service does not list are sent once; then nothing is left to do.
    assert _changes(capsys, group) == [("update", ["DeclarationTemplates"])]
    assert run(capsys, "apply", "--auto-approve", "--target", group)[0] == 0
    assert _changes(capsys, group) == [("no-change", [])]

    # A record of an object that exists is still never replaced by an import.
    code, _, err = run(capsys, "import", group, str(group_id))
    assert code == 3
    assert f"{group} is already in the state" in err


def test_import_of_the_object_a_tombstone_keeps_says_to_restore_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `state rm` left a tombstone of the group; importing its own ID back is `state restore`:
    # the hint named `state rm --gone`, which says the object no longer exists.
    group = "TemplateGroup/eu-road"
    assert run(capsys, "apply", "--auto-approve", "--target", group)[0] == 0
    group_id = _state(project).read().resources[group].outputs["id"]
    assert run(capsys, "state", "rm", group)[0] == 0
    code, out, err = run(capsys, "import", group, str(group_id))
    assert code == 3, out + err
    assert f"{group} is in the state as a tombstone of {group_id} (`state rm` forgot it)" in err
    assert f"hint: `customs-batch state restore {group}` tracks {group_id} again" in err
    assert "--gone" not in err
    assert _state(project).read().resources[group].status is RecordStatus.FORGOTTEN
    # Another ID: that one is refused as before, the tombstone's object named.
    code, _, err = run(capsys, "import", group, "1")
    assert code == 3
    assert f"{group} is in the state as a tombstone of {group_id}" in err
    assert f"`customs-batch state rm --gone {group}` first" in err


@pytest.mark.parametrize("written", ["0{}", " {} ", "00{}"])
def test_import_of_a_tombstones_object_written_otherwise_says_to_restore_it(
    project: Path, capsys: pytest.CaptureFixture[str], written: str
) -> None:
    # The ID as typed was compared with the tombstone's as text: `import ADDR 02` of the
    # group 2 it keeps was told to `state rm --gone` (the object gone) and import "another
    # object". The service reads 02 as 2, and so is it compared now.
    group = "TemplateGroup/eu-road"
    assert run(capsys, "apply", "--auto-approve", "--target", group)[0] == 0
    group_id = _state(project).read().resources[group].outputs["id"]
    assert run(capsys, "state", "rm", group)[0] == 0
    code, out, err = run(capsys, "import", group, written.format(group_id))
    assert code == 3, out + err
    assert f"hint: `customs-batch state restore {group}` tracks {group_id} again" in err
    assert "--gone" not in err
    assert _state(project).read().resources[group].status is RecordStatus.FORGOTTEN


def _document_of_7002_at(project: Path, capsys: pytest.CaptureFixture[str], status: str) -> None:
    """The example departure written as 7002 declares it, and 7002 ``status`` at the
    emulator (a decision of customs the API cannot make)."""
    manifest = project / "manifests" / "departures.yaml"
    manifest.write_text(manifest.read_text().replace("totalWeight: 60.0", "totalWeight: 800.0"))
    assert run(capsys, "get", "transit", "7002")[0] == 0  # the emulator's store is made
    database = project / ".customs-batch" / "local" / "sandbox.sqlite3"
    with sqlite3.connect(database) as connection:
        connection.execute(
            "UPDATE records SET body = json_set(body, '$.status', ?) "
            "WHERE tbl = 'transitDeclarations' AND id = '7002'",
            (status,),
        )


def test_import_of_a_declaration_customs_cancelled_does_not_promise_its_parties(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by an outside probe: import of a departure customs cancelled said its parties
    # were "sent by the next apply", while the next plan holds it for a decision and apply
    # sends nothing to it.
    _document_of_7002_at(project, capsys, "canceled")
    code, out, err = run(capsys, "import", DEPARTURE, "7002")
    assert code == 0, err
    assert "sent by the next apply: " not in out
    assert (
        "not sent by the next apply (7002 is canceled at the service, and nothing is sent to "
        "it: `customs-batch plan` says the ways out): Principal, Consignor, Consignee"
    ) in out
    code, out, _ = run(capsys, "plan", "--format", "json", "--target", DEPARTURE)
    assert code == 1, out
    (change,) = json.loads(out)["changes"]
    assert (change["action"], change["requests"]) == ("needs-decision", 0)


def test_import_of_a_declaration_customs_rejected_says_it_is_replaced(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found in review: import of a departure customs found invalid said its parties were
    # "not sent by the next apply ... nothing is sent to it", while the next plan resubmits
    # the document: a new declaration, carrying those parties.
    _document_of_7002_at(project, capsys, "invalid")
    code, out, err = run(capsys, "import", DEPARTURE, "7002")
    assert code == 0, err
    assert "nothing is sent to it" not in out
    assert (
        "not sent to 7002, which is invalid at the service (customs never accepted it): the "
        "next apply submits the document as a new declaration that replaces it, with them "
        "(`customs-batch plan` shows it): Principal, Consignor, Consignee"
    ) in out
    code, out, _ = run(capsys, "plan", "--format", "json", "--target", DEPARTURE)
    (change,) = json.loads(out)["changes"]
    assert change["action"] == "resubmit"


@pytest.mark.parametrize("written", ["{} ", " {}", "{}\t"])
def test_import_of_a_movement_id_written_with_spaces_is_the_movement_recorded(
    project: Path, capsys: pytest.CaptureFixture[str], written: str
) -> None:
    # The API cannot read a movement back: its ID was taken as typed, and the check that
    # no other record stands for it compared the text, so `import ADDR 'mov_… '` made a
    # second record of another document's movement (and this document's own movement was
    # then never sent). The ID is taken without the spaces around it.
    arrival, storage = "Movement/mov-a1-arrival", "Movement/mov-a1-storage-in"
    assert run(capsys, "apply", "--auto-approve", "--target", arrival)[0] == 0
    movement_id = _state(project).read().resources[arrival].outputs["movementId"]
    code, out, err = run(capsys, "import", storage, written.format(movement_id))
    assert code == 3, out + err
    assert f"{movement_id} is already recorded as {arrival}" in err
    assert storage not in _state(project).read().resources


@pytest.mark.parametrize("written", ["MOV_00000009", "mov_0000000\uff19", "mov_", "mov_00 01"])
def test_import_refuses_what_is_no_movement_id(
    project: Path, capsys: pytest.CaptureFixture[str], written: str
) -> None:
    code, out, err = run(capsys, "import", "Movement/mov-a1-storage-in", written)
    assert code == 64, out + err
    assert f"{written!r} is not a movement ID (mov_ followed by letters and digits" in err
    assert "Movement/mov-a1-storage-in" not in _state(project).read().resources


@pytest.mark.parametrize(
    ("address", "written"),
    [
        ("Movement/mov-a1-storage-in", "mov_" + "x" * 100_000),
        ("HawbDeactivation/x", "hawb_" + "x" * 100_000),
        ("Movement/mov-a1-storage-in", "mov_" + "x" * 125),
    ],
)
def test_import_refuses_an_id_longer_than_any_and_records_nothing(
    project: Path, capsys: pytest.CaptureFixture[str], address: str, written: str
) -> None:
    # `import Movement/x mov_` + 100,000 characters recorded that ID (a movement cannot be
    # read back to check it), and the next apply's requests carried it.
    code, out, err = run(capsys, "import", address, written)
    assert code == 64, out + err
    assert f"({len(written):,} characters) is not a" in err
    assert "its IDs have at most 128 characters" in err and len(err) < 1_000
    assert address not in _state(project).read().resources


def test_import_takes_a_movement_id_of_any_opaque_characters(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The API document calls what follows mov_ an opaque string: an ID with '_' or '-' the
    # service may give (mov_V1StGXR8_Z5jdHi6B-myT) is taken, as before IDs were checked.
    storage = "Movement/mov-a1-storage-in"
    code, out, err = run(capsys, "import", storage, "mov_V1StGXR8_Z5jdHi6B-myT")
    assert code == 0, out + err
    record = _state(project).read().resources[storage]
    assert record.outputs["movementId"] == "mov_V1StGXR8_Z5jdHi6B-myT"


def test_import_of_a_hawb_id_written_with_spaces_is_that_hawb(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ' hawb_a3 ' was compared as text with the shipment's HAWBs: the shipment "has no HAWB
    # ' hawb_a3 '", untrue. It is the HAWB hawb_a3, still active at the emulator.
    hawb = "HawbDeactivation/hawb-a3-duplicate"
    code, out, err = run(capsys, "import", hawb, " hawb_a3 ")
    assert code != 0, out + err
    assert "has no HAWB" not in err
    assert "HAWB hawb_a3 is still active: it was never deactivated" in err
    assert hawb not in _state(project).read().resources


@pytest.mark.parametrize("written", ["700_2", "+7002", "\u0667\u0660\u0660\u0662", "7002.0"])
def test_import_refuses_a_numeric_id_the_service_would_not_read_as_one(
    project: Path, capsys: pytest.CaptureFixture[str], written: str
) -> None:
    # Python's int() took '700_2' for 7002 (and '+7002', Arabic-Indic digits), so import read,
    # compared and could record the declaration 7002; the service's paths read the digits
    # 0-9 only. Nothing is read: the typed text is no ID, a mistake on the command line
    # (exit 64, as `get declaration 700_2` says it; docs/environments.md: "as import and
    # state adopt read it ... refused (exit 64)"), caught before the state or the service
    # is opened.
    code, out, err = run(capsys, "import", DEPARTURE, written)
    assert code == 64, out + err
    assert f"{written!r} is not an ID of a DepartureDeclaration" in err
    assert "compared with the service" not in err
    assert not (project / ".customs-batch").exists()  # no state opened, nothing asked


def test_import_reads_a_numeric_id_with_leading_zeros_as_the_service_does(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "import", DEPARTURE, "007002")
    assert code == 1, out + err
    assert "7002 is not what DepartureDeclaration/dep-rtm-ant-0002 declares" in err


def test_import_of_the_rejected_declaration_a_resubmission_replaced_says_so(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It said "ID is already recorded as DEPARTURE", as if that record stood for it now.
    # DEPARTURE's declaration rejected, corrected and submitted again (as 7001, say).
    assert run(capsys, "apply", "--auto-approve", "--target", DEPARTURE)[0] == 0
    record = _state(project).read().resources[DEPARTURE]
    rejected = record.outputs["declarationId"]
    earlier = {"outputs": dict(record.outputs), "remoteStatus": "invalid", "spec": record.spec}
    with _state(project).open("test") as session:
        session.record(
            record.with_changes(
                operation="resubmit-departure",
                outputs={"declarationId": 7001, "status": "processing"},
                superseded=(earlier,),
            )
        )
    _other_departure(project)

    code, out, err = run(capsys, "import", OTHER, str(rejected))
    assert code == 3, out + err
    said = " ".join(err.split())
    assert (
        f"{rejected} is the rejected declaration that the resubmission of {DEPARTURE} "
        "replaced (customs rejected it, and the corrected document was submitted again as "
        "7001)"
    ) in said
    assert "already recorded as" not in said
    assert f"`customs-batch state mv {DEPARTURE} {OTHER}` moves its record" in said
    assert f"let `customs-batch apply` submit {OTHER} as a new one" in said
    assert OTHER not in _state(project).read().resources


def test_import_prints_the_services_text_with_its_escapes_escaped(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by a probe: a group another client named with a terminal escape was printed
    # by `import` (and `state adopt`) as it came, in the outputs and the comparison.
    code, _, err = run(capsys, "get", "template-groups")
    assert code == 0, err
    database = project / ".customs-batch" / "local" / "sandbox.sqlite3"
    held = _group_at_the_emulator(project, 1)
    held["name"] = "De\x1b[2Jfault"
    with sqlite3.connect(database) as connection:
        connection.execute(
            "UPDATE records SET body = ? WHERE tbl = 'templateGroups' AND id = '1'",
            (json.dumps(held),),
        )
    group = {
        "apiVersion": "customs-batch/v1",
        "kind": "TemplateGroup",
        "metadata": {"name": "default"},
        "spec": {"name": "Default group", "code": "DEFAULT", "companyId": 1, "isDefault": True},
    }
    (project / "manifests" / "default-group.yaml").write_text(json.dumps(group))
    code, out, err = run(capsys, "import", "TemplateGroup/default", "1")
    assert code == 0, err
    assert "\x1b" not in out
    assert "name=De\\x1b[2Jfault" in out
    assert "the service holds 'De\\x1b[2Jfault'" in out


def _action(capsys: pytest.CaptureFixture[str], address: str) -> str:
    """What the plan of the whole batch (no selection: a rename is seen) does to it."""
    code, out, _ = run(capsys, "plan", "--format", "json")
    assert code in (0, 2), out
    (action,) = [c["action"] for c in json.loads(out)["changes"] if c["address"] == address]
    return str(action)


def test_import_refuses_another_object_for_a_declaration_another_record_holds(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by a probe: a document renamed (plan: moved, the same request as a record)
    # was imported at the ID of another declaration that the service's detail cannot tell
    # from it (the same weight and offices): a second record of one declaration, and the
    # next apply sent the document's parties to the other declaration.
    manifest = project / "manifests" / "departures.yaml"
    text = manifest.read_text()
    # 800 kg from NL000396 to BE212000, as the emulator's seeded 7002 (another client's).
    heavy = text.replace("totalWeight: 60.0", "totalWeight: 800.0").replace(
        "grossMass: 60.0", "grossMass: 800.0"
    )
    manifest.write_text(heavy)
    assert run(capsys, "apply", "--auto-approve", "--target", DEPARTURE)[0] == 0
    declared = _state(project).read().resources[DEPARTURE].outputs["declarationId"]
    assert declared != 7002
    renamed = "DepartureDeclaration/dep-renamed"
    manifest.write_text(heavy.replace("name: dep-rtm-ant-0002", "name: dep-renamed"))
    assert _action(capsys, renamed) == "moved"

    code, out, err = run(capsys, "import", renamed, "7002")
    assert code == 3, out + err
    assert f"{DEPARTURE} records what {renamed} declares" in err
    assert f"at {declared}" in err
    assert "Nothing was recorded" in err
    assert f"state mv {DEPARTURE} {renamed}" in err
    assert renamed not in _state(project).read().resources
    assert _action(capsys, renamed) == "moved"

    # A tombstone of that declaration holds it all the same.
    manifest.write_text(heavy)
    assert run(capsys, "state", "rm", DEPARTURE)[0] == 0
    manifest.write_text(heavy.replace("name: dep-rtm-ant-0002", "name: dep-renamed"))
    code, out, err = run(capsys, "import", renamed, "7002")
    assert code == 3, out + err
    assert f"the tombstone of {DEPARTURE}" in err
    assert renamed not in _state(project).read().resources


def test_import_for_a_declaration_whose_submission_is_undecided_says_to_adopt_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its record holds no ID yet: the ID given may be what its lost request created.
    assert run(capsys, "apply", "--auto-approve", "--target", DEPARTURE)[0] == 0
    with _state(project).open("test") as session:
        record = session.state.resources[DEPARTURE]
        declared = record.outputs["declarationId"]
        session.record(record.with_changes(status=RecordStatus.PENDING, outputs={}))
    manifest = project / "manifests" / "departures.yaml"
    renamed = "DepartureDeclaration/dep-renamed"
    manifest.write_text(manifest.read_text().replace("name: dep-rtm-ant-0002", "name: dep-renamed"))

    code, out, err = run(capsys, "import", renamed, str(declared))
    assert code == 3, out + err
    assert f"{DEPARTURE} records what {renamed} declares" in err
    assert "a request whose outcome is unknown" in err
    assert f"state adopt {DEPARTURE} {declared}" in err
    assert renamed not in _state(project).read().resources
    assert _state(project).read().resources[DEPARTURE].status is RecordStatus.PENDING
