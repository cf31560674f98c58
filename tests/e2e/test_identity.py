"""One declaration, one object at the service, whatever happens to names and the state.

Each test plays a change a team makes between runs against a real ``sandbox serve`` and
counts what the emulator holds through its read endpoints.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e import batches
from tests.e2e.conftest import Project, Sandbox

pytestmark = pytest.mark.e2e

DEPARTURES = "manifests/departures.yaml"


def _plan(project: Project, *extra: str) -> tuple[int, dict[str, dict[str, Any]]]:
    done = project.run("plan", "--format", "json", *extra)
    assert done.stdout, done.stderr
    return done.returncode, {c["address"]: c for c in json.loads(done.stdout)["changes"]}


def _apply(project: Project, *extra: str) -> None:
    done = project.run("apply", "--auto-approve", *extra)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_renamed_departure_is_moved_not_declared_again(
    project: Project, sandbox: Sandbox
) -> None:
    project.write(DEPARTURES, batches.departures(2))
    _apply(project)
    assert len(sandbox.created_transit()) == 2
    declared = project.state()["DepartureDeclaration/dep-e2e-01"]["outputs"]["declarationId"]

    project.edit(DEPARTURES, "name: dep-e2e-01", "name: dep-renamed")
    code, changes = _plan(project)
    assert code == 0
    moved = changes["DepartureDeclaration/dep-renamed"]
    assert moved["action"] == "moved"
    assert "DepartureDeclaration/dep-e2e-01" in moved["reason"]
    assert "DepartureDeclaration/dep-e2e-01" not in changes  # not orphaned on top
    assert "1 moved" in project.run("plan").stdout

    _apply(project)
    assert len(sandbox.created_transit()) == 2
    state = project.state()
    assert "DepartureDeclaration/dep-e2e-01" not in state
    assert state["DepartureDeclaration/dep-renamed"]["outputs"]["declarationId"] == declared
    assert project.run("plan", "--detailed-exitcode").returncode == 0


def test_a_renamed_movement_is_moved_not_sent_again(project: Project, sandbox: Sandbox) -> None:
    project.write("manifests/movements.yaml", batches.movements(3, lanes=1))
    _apply(project)
    assert len(sandbox.movements()) == 3
    project.edit("manifests/movements.yaml", "name: mov-l0-02", "name: mov-second")
    code, changes = _plan(project)
    assert code == 0
    assert changes["Movement/mov-second"]["action"] == "moved"
    _apply(project)
    assert len(sandbox.movements()) == 3
    assert project.run("plan", "--detailed-exitcode").returncode == 0


def test_a_renamed_and_changed_departure_is_refused_until_the_rename_is_declared(
    project: Project, sandbox: Sandbox
) -> None:
    project.write(DEPARTURES, batches.departures(1))
    _apply(project)
    project.edit(DEPARTURES, "name: dep-e2e-01", "name: dep-renamed")
    project.edit(DEPARTURES, "name: Initech NV", "name: Initech Belgium NV")
    code, changes = _plan(project)
    assert code == 1, "a possible second declaration of the same goods must stop the pipeline"
    refused = changes["DepartureDeclaration/dep-renamed"]
    assert refused["action"] == "refused"
    assert "state mv DepartureDeclaration/dep-e2e-01 DepartureDeclaration/dep-renamed" in str(
        refused["reason"]
    )
    assert project.run("apply", "--auto-approve").returncode != 0
    assert len(sandbox.created_transit()) == 1

    moved = project.run(
        "state", "mv", "DepartureDeclaration/dep-e2e-01", "DepartureDeclaration/dep-renamed"
    )
    assert moved.returncode == 0, moved.stderr
    code, changes = _plan(project)
    assert changes["DepartureDeclaration/dep-renamed"]["action"] == "update"
    patched = sandbox.requests("PATCH", "parties")
    _apply(project)
    assert len(sandbox.created_transit()) == 1
    assert sandbox.requests("PATCH", "parties") == patched + 1
    record = project.state()["DepartureDeclaration/dep-renamed"]
    assert record["spec"]["Consignee"]["name"] == "Initech Belgium NV"


def test_state_rm_of_a_document_still_in_the_manifests_never_sends_it_again(
    project: Project, sandbox: Sandbox
) -> None:
    project.write(DEPARTURES, batches.departures(1))
    _apply(project)
    address = "DepartureDeclaration/dep-e2e-01"
    forgot = project.run("state", "rm", address)
    assert forgot.returncode == 0, forgot.stderr
    assert "tombstone" in forgot.stdout

    code, changes = _plan(project)
    assert code == 1
    assert changes[address]["action"] == "refused"
    assert "state restore" in changes[address]["reason"]
    assert project.run("apply", "--auto-approve").returncode != 0
    assert len(sandbox.created_transit()) == 1
    listed = project.run("state", "list").stdout
    assert f"{address}  forgotten" in listed

    assert project.run("state", "restore", address).returncode == 0
    assert project.run("plan", "--detailed-exitcode").returncode == 0

    # Removed from the manifests and forgotten, then written again under a new name: the
    # tombstone still knows it, so it is tracked again, not declared again.
    assert project.run("state", "rm", address).returncode == 0
    project.edit(DEPARTURES, "name: dep-e2e-01", "name: dep-again")
    _apply(project)
    assert len(sandbox.created_transit()) == 1
    assert project.state()["DepartureDeclaration/dep-again"]["status"] == "applied"

    # Said to be gone for good while the service still holds it: the service is asked,
    # and nothing is removed, so the same goods are still not declared again.
    assert project.run("state", "rm", "DepartureDeclaration/dep-again").returncode == 0
    gone = project.run("state", "rm", "--gone", "DepartureDeclaration/dep-again")
    assert gone.returncode == 3, gone.stdout + gone.stderr
    assert "still exists at the service" in gone.stderr
    assert project.state()["DepartureDeclaration/dep-again"]["status"] == "forgotten"
    code, changes = _plan(project)
    assert changes["DepartureDeclaration/dep-again"]["action"] == "refused"
    assert len(sandbox.created_transit()) == 1


def test_state_rm_gone_removes_a_declaration_customs_never_accepted(
    project: Project, sandbox: Sandbox
) -> None:
    # The emulator rejects a reference starting with INVALID (no processing time here).
    project.write(DEPARTURES, batches.departures(1).replace("E2E-0001", "INVALID-0001"))
    _apply(project)
    address = "DepartureDeclaration/dep-e2e-01"
    (declared,) = sandbox.created_transit()
    assert sandbox.created_transit()[declared]["status"] == "invalid"

    # Told it is gone: the service agrees (never accepted), so the record goes for good and
    # the same goods may be declared again.
    gone = project.run("state", "rm", "--gone", address)
    assert gone.returncode == 0, gone.stderr
    assert f"the service holds declarationId {declared} as invalid" in gone.stdout
    assert address not in project.state()
    _, changes = _plan(project)
    assert changes[address]["action"] == "create"


def test_a_copy_of_a_declaration_under_a_second_name_is_refused(
    project: Project, sandbox: Sandbox
) -> None:
    documents = list(yaml.safe_load_all(batches.departures(1)))
    copy = json.loads(json.dumps(documents[0]))
    copy["metadata"]["name"] = "dep-copy"
    copy["spec"]["loadingLocation"] = "Rotterdam Maasvlakte"  # not an identical request
    project.write(DEPARTURES, yaml.safe_dump_all([documents[0], copy], sort_keys=False))
    # validate says so before any plan: the offline check a pull request runs first.
    validated = project.run("validate")
    assert validated.returncode == 1, validated.stdout + validated.stderr
    said = validated.stdout + validated.stderr
    assert "error[project.same-declaration]" in said and "would declare it twice" in said
    planned = project.run("plan")
    assert planned.returncode == 1 and "project.same-declaration" in planned.stderr
    assert project.run("apply", "--auto-approve").returncode != 0
    assert sandbox.created_transit() == {}


def test_a_reference_written_in_another_unicode_form_is_never_declared_twice(
    project: Project, sandbox: Sandbox
) -> None:
    # "MÜLLER-0001" composed in one file and decomposed (U+0055 U+0308, as macOS file names
    # and some exports write it) in another, or re-exported with a space after it: the same
    # declaration, printed alike.
    composed = unicodedata.normalize("NFC", "MÜLLER-0001")
    decomposed = unicodedata.normalize("NFD", composed)
    (document,) = yaml.safe_load_all(batches.departures(1))
    document["spec"]["commercialReference"] = composed
    copy = json.loads(json.dumps(document))
    copy["metadata"]["name"] = "dep-mac"
    copy["spec"]["commercialReference"] = decomposed
    project.write(DEPARTURES, yaml.safe_dump_all([document, copy], sort_keys=False))
    validated = project.run("validate")
    assert validated.returncode == 1 and "error[project.same-declaration]" in validated.stdout
    assert project.run("apply", "--auto-approve").returncode != 0
    assert sandbox.created_transit() == {}

    project.write(DEPARTURES, yaml.safe_dump(document, sort_keys=False))
    _apply(project)
    for other in (decomposed, f"{composed} "):
        copy["spec"]["commercialReference"] = other
        project.write(DEPARTURES, yaml.safe_dump(copy, sort_keys=False))  # renamed, re-typed
        code, changes = _plan(project)
        assert code == 1
        refused = changes["DepartureDeclaration/dep-mac"]
        assert refused["action"] == "refused"
        assert "DepartureDeclaration/dep-e2e-01" in refused["reason"]
        assert "commercialReference only written differently" in refused["reason"]
        assert project.run("apply", "--auto-approve").returncode != 0
        assert len(sandbox.created_transit()) == 1


PARTY_UPDATE = """\
---
apiVersion: customs-batch/v1
kind: TransitPartyUpdate
metadata:
  name: dep-consignee-eori
spec:
  declarationId: ${ref:DepartureDeclaration/dep-e2e-01.declarationId}
  Consignee:
    eoriNo: BE0123456789
"""


def test_a_second_party_update_of_other_fields_of_a_party_is_sent(
    project: Project, sandbox: Sandbox
) -> None:
    # Each party PATCH writes the fields it names, each field has one writer: an update of
    # another Consignor field beside an applied one is a second write, not a second
    # declaration (validate passes it, and so does plan).
    def update(name: str, field: str) -> str:
        return (
            PARTY_UPDATE.replace("dep-consignee-eori", name)
            .replace("  Consignee:", "  Consignor:")
            .replace("    eoriNo: BE0123456789", f"    {field}")
        )

    project.write(DEPARTURES, batches.departures(1))
    project.write("manifests/updates.yaml", update("consignor-city", "city: Rotterdam"))
    _apply(project)
    patched = sandbox.requests("PATCH", "parties")
    project.write(
        "manifests/updates.yaml",
        update("consignor-city", "city: Rotterdam") + update("consignor-street", "street: Kai 2"),
    )
    assert project.run("validate").returncode == 0
    code, changes = _plan(project)
    assert code == 0, changes
    assert changes["TransitPartyUpdate/consignor-street"]["action"] == "create"
    _apply(project)
    assert sandbox.requests("PATCH", "parties") == patched + 1
    assert len(sandbox.created_transit()) == 1
    assert project.run("plan", "--detailed-exitcode").returncode == 0


def test_a_party_update_follows_its_departure_when_it_is_resubmitted(
    project: Project, sandbox: Sandbox
) -> None:
    project.write(DEPARTURES, batches.departures(1).replace("E2E-0001", "INVALID-0001"))
    project.write("manifests/updates.yaml", PARTY_UPDATE)
    first = project.run("apply", "--auto-approve", "--wait")
    assert first.returncode == 1, first.stdout + first.stderr
    state = project.state()
    rejected = state["DepartureDeclaration/dep-e2e-01"]["outputs"]["declarationId"]

    project.edit(DEPARTURES, "INVALID-0001", "E2E-0101")
    code, changes = _plan(project)
    assert code == 0, changes
    assert changes["DepartureDeclaration/dep-e2e-01"]["action"] == "resubmit"
    follows = changes["TransitPartyUpdate/dep-consignee-eori"]
    assert follows["action"] in ("update", "create"), follows
    _apply(project, "--wait")

    state = project.state()
    replacement = state["DepartureDeclaration/dep-e2e-01"]["outputs"]["declarationId"]
    assert replacement != rejected
    update = state["TransitPartyUpdate/dep-consignee-eori"]
    # Sent to the replacement, which answered it (the answer's ID is recorded).
    assert update["spec"]["declarationId"] == replacement
    assert update["outputs"]["declarationId"] == replacement
    assert update["status"] == "applied"
    assert project.run("plan", "--detailed-exitcode").returncode == 0


def test_a_rename_declared_in_the_manifest_moves_and_sends_only_the_change(
    project: Project, sandbox: Sandbox
) -> None:
    project.write(DEPARTURES, batches.departures(1))
    _apply(project)
    project.edit(DEPARTURES, "name: dep-e2e-01", "name: dep-renamed\n  previousNames: [dep-e2e-01]")
    project.edit(DEPARTURES, "name: Initech NV", "name: Initech Belgium NV")
    code, changes = _plan(project)
    assert code == 0, changes
    change = changes["DepartureDeclaration/dep-renamed"]
    assert change["action"] == "update"
    assert "DepartureDeclaration/dep-e2e-01" not in changes
    patched = sandbox.requests("PATCH", "parties")
    _apply(project)
    assert len(sandbox.created_transit()) == 1
    assert sandbox.requests("PATCH", "parties") == patched + 1
    assert set(project.state()) == {"DepartureDeclaration/dep-renamed"}
    assert project.run("plan", "--detailed-exitcode").returncode == 0


def test_import_of_a_declaration_that_declares_something_else_records_nothing(
    project: Project, sandbox: Sandbox
) -> None:
    # The seed's transit declaration 7002: 800 kg to BE212000; the document: another weight.
    project.write(DEPARTURES, batches.departures(1).replace("name: dep-e2e-01", "name: dep-legacy"))
    before = len(sandbox.get("/v1/declarations/transit", itemsPerPage=100)["result"])
    imported = project.run("import", "DepartureDeclaration/dep-legacy", "7002")
    assert imported.returncode == 1, imported.stdout + imported.stderr
    assert "totalWeight" in imported.stderr and "Nothing was recorded" in imported.stderr
    assert "DepartureDeclaration/dep-legacy" not in project.state()
    _, changes = _plan(project)
    assert changes["DepartureDeclaration/dep-legacy"]["action"] == "create"
    assert len(sandbox.get("/v1/declarations/transit", itemsPerPage=100)["result"]) == before


def test_a_doubled_export_is_stopped_by_the_large_change_guard_until_allowed(
    project: Project, sandbox: Sandbox
) -> None:
    settings = project.environment()
    settings["large_change_guard"] = {"min_records": 50, "max_create_share": 0.5}
    project.environment = lambda: settings  # type: ignore[method-assign]
    project.write_config()
    original = batches.movements(15, lanes=4)
    project.write("manifests/movements.yaml", original)
    _apply(project)  # a first bulk load into an empty state is not stopped
    assert len(sandbox.movements()) == 60
    # A re-exported sheet with every row twice: 60 more creates on a state of 60 records.
    again = []
    for document in yaml.safe_load_all(original):
        document["metadata"]["name"] = document["metadata"]["name"].replace("mov-", "again-")
        document["spec"]["quantity"] += 100
        again.append(document)
    project.write("manifests/movements.yaml", original + "---\n" + yaml.safe_dump_all(again))
    code, changes = _plan(project)
    assert code == 0 and changes["Movement/again-l0-01"]["action"] == "create"
    shown = project.run("plan").stdout
    assert "Large change" in shown
    stopped = project.run("apply", "--auto-approve")
    assert stopped.returncode == 1, stopped.stdout + stopped.stderr
    assert "--allow-large-change" in stopped.stdout + stopped.stderr
    assert len(sandbox.movements()) == 60, "the guard stops before anything is sent"


def test_two_owners_of_a_party_field_and_unordered_movements_send_nothing(
    project: Project, sandbox: Sandbox
) -> None:
    project.write(DEPARTURES, batches.departures(1))
    project.write(
        "manifests/updates.yaml",
        PARTY_UPDATE.replace("    eoriNo: BE0123456789", "    street: Kai 2"),
    )
    refused = project.run("apply", "--auto-approve")
    assert refused.returncode == 1
    assert "project.two-owners" in refused.stdout + refused.stderr
    assert sandbox.created_transit() == {}

    (project.root / "manifests" / "updates.yaml").unlink()
    first, second = batches.movements(2, lanes=1).split("---\n", 1)
    project.write("manifests/a-movements.yaml", first)
    project.write("manifests/b-movements.yaml", second)
    refused = project.run("apply", "--auto-approve")
    assert refused.returncode == 1
    assert "project.movement-order" in refused.stdout + refused.stderr
    assert sandbox.created_transit() == {} and sandbox.movements() == []


_ROWS_MANIFEST = """\
apiVersion: customs-batch/v1
kind: Movement
forEach: {file: ../data/movements.csv}
metadata:
  name: "mv-{{ row.Action | lower }}-{{ row_number }}"
spec:
  shipmentId: %s
  hawbId: %s
  action: "{{ row.Action }}"
  quantity: "{{ row.Packages }}"
  grossWeightKg: "{{ row.Weight }}"
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: %s
"""


def _rows(*rows: tuple[str, int]) -> str:
    lines = ["Action,Packages,Weight"]
    lines += [f"{action},{packages},{packages}.5" for action, packages in rows]
    return "\n".join(lines) + "\n"


def test_a_row_inserted_above_movements_named_by_row_number_declares_nothing_twice(
    project: Project, sandbox: Sandbox
) -> None:
    shipment, hawb, party = batches.LANES[0]
    assert hawb is not None
    project.write("manifests/rows.yaml", _ROWS_MANIFEST % (shipment, hawb, party))
    project.write("data/movements.csv", _rows(("ISL", 2), ("ISL", 3)))
    _apply(project)
    assert sorted(m["quantity"] for m in sandbox.movements()) == [2, 3]

    # A row of 1 package inserted above them: every later row's name moves on by one, and
    # the last name, new, asks for what the one before it recorded.
    project.write("data/movements.csv", _rows(("ISL", 1), ("ISL", 2), ("ISL", 3)))
    code, changes = _plan(project)
    assert code == 1
    last = changes["Movement/mv-isl-4"]
    assert last["action"] == "refused"
    assert "state mv Movement/mv-isl-3 Movement/mv-isl-4" in last["reason"]
    project.run("apply", "--auto-approve")
    assert sorted(m["quantity"] for m in sandbox.movements()) == [2, 3]

    # The way out the plan names: each record to the name that now holds its request, and
    # the new movement after those already sent.
    for old, new in (("mv-isl-3", "mv-isl-4"), ("mv-isl-2", "mv-isl-3")):
        moved = project.run("state", "mv", f"Movement/{old}", f"Movement/{new}")
        assert moved.returncode == 0, moved.stderr
    code, changes = _plan(project)
    assert code == 1
    assert "put its document after" in changes["Movement/mv-isl-2"]["reason"]
    # (numbered from one further on, the rows sent keep the names their records now have)
    project.write("data/movements.csv", _rows(("ISL", 2), ("ISL", 3), ("ISL", 1)))
    project.edit("manifests/rows.yaml", "{{ row_number }}", "{{ row_number + 1 }}")
    code, changes = _plan(project)
    assert code == 0, changes
    assert changes["Movement/mv-isl-5"]["action"] == "create"
    _apply(project)
    assert sorted(m["quantity"] for m in sandbox.movements()) == [1, 2, 3]


def test_a_movement_after_the_last_one_sent_is_created_once_one_before_it_is_forgotten(
    project: Project, sandbox: Sandbox
) -> None:
    # a, b and c sent; b removed from the sheet and `state rm`-ed (it stays at the service).
    # A new d after c was refused "put its document after c", where it already was.
    shipment, hawb, party = batches.LANES[0]
    assert hawb is not None
    named = _ROWS_MANIFEST.replace("{{ row_number }}", "{{ row.Ref }}")
    project.write("manifests/rows.yaml", named % (shipment, hawb, party))

    def sheet(*refs: str) -> str:
        packages = {"a": 1, "b": 2, "c": 3, "d": 4}
        lines = ["Ref,Action,Packages,Weight"]
        lines += [f"{ref},ISL,{packages[ref]},{packages[ref]}.5" for ref in refs]
        return "\n".join(lines) + "\n"

    project.write("data/movements.csv", sheet("a", "b", "c"))
    _apply(project)
    project.write("data/movements.csv", sheet("a", "c"))
    forgot = project.run("state", "rm", "Movement/mv-isl-b")
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    project.write("data/movements.csv", sheet("a", "c", "d"))
    code, changes = _plan(project, "--detailed-exitcode")
    assert code == 2, changes
    assert changes["Movement/mv-isl-d"]["action"] == "create"
    _apply(project)
    assert sorted(m["quantity"] for m in sandbox.movements()) == [1, 2, 3, 4]
    assert project.run("plan", "--detailed-exitcode").returncode == 0


def test_import_of_an_object_another_document_holds_sends_nothing_to_it(
    project: Project, sandbox: Sandbox
) -> None:
    project.write(DEPARTURES, batches.departures(1))
    _apply(project)
    (declared,) = sandbox.created_transit()
    # Another declaration: another reference, other goods and consignee; the same weight
    # and offices, so the service's detail cannot tell the two apart.
    other = (
        batches.departures(1)
        .replace("name: dep-e2e-01", "name: dep-other")
        .replace("E2E-0001", "OTHER-0001")
        .replace("'731821'", "'732690'")
        .replace("Initech NV", "Umbrella NV")
    )
    assert other.count("Umbrella NV") == 1 and "732690" in other
    project.write("manifests/other.yaml", other)

    imported = project.run("import", "DepartureDeclaration/dep-other", str(declared))
    assert imported.returncode == 3, imported.stdout + imported.stderr
    assert "already recorded as DepartureDeclaration/dep-e2e-01" in imported.stderr
    assert "DepartureDeclaration/dep-other" not in project.state()

    patched = sandbox.requests("PATCH", "parties")
    _apply(project)
    created = sandbox.created_transit()
    assert len(created) == 2, "dep-other is a declaration of its own"
    assert sandbox.requests("PATCH", "parties") == patched, "nothing was sent to the first"
    state = project.state()
    assert state["DepartureDeclaration/dep-other"]["outputs"]["declarationId"] != declared
    assert project.run("plan", "--detailed-exitcode").returncode == 0


def test_a_state_lost_with_its_backup_and_journal_is_known_by_its_history(
    project: Project, sandbox: Sandbox
) -> None:
    project.write(DEPARTURES, batches.departures(2))
    _apply(project)
    for name in ("state.json", "state.json.backup", "journal.jsonl"):
        (project.state_dir / name).unlink(missing_ok=True)
    assert "DepartureDeclaration/dep-e2e-01" in project.run("history").stdout

    for argv in (("plan",), ("apply", "--auto-approve")):
        refused = project.run(*argv)
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert "its history (history.jsonl) records what apply sent" in refused.stderr
        assert "--allow-empty-state" in refused.stderr
    assert len(sandbox.created_transit()) == 2, "nothing was declared again"


def test_a_party_update_naming_a_rejected_declaration_by_its_id_is_refused(
    project: Project, sandbox: Sandbox
) -> None:
    address = "DepartureDeclaration/dep-e2e-01"
    project.write(DEPARTURES, batches.departures(1).replace("E2E-0001", "INVALID-0001"))
    _apply(project)
    (rejected,) = sandbox.created_transit()
    assert project.run("refresh").returncode in (0, 1)  # learns it is invalid
    project.edit(DEPARTURES, "INVALID-0001", "E2E-0001")  # corrected: submitted again
    _apply(project)
    current = project.state()[address]["outputs"]["declarationId"]
    assert current != rejected

    update = (
        "apiVersion: customs-batch/v1\nkind: TransitPartyUpdate\n"
        "metadata: {name: consignee-eori}\n"
        "spec: {declarationId: %s, variant: departure, Consignee: {eoriNo: DE123456789012345}}\n"
    )
    project.write("manifests/party.yaml", update % rejected)
    code, changes = _plan(project)
    assert code == 1
    refused = changes["TransitPartyUpdate/consignee-eori"]
    assert refused["action"] == "refused"
    assert f"submitted again as {current}" in refused["reason"]
    patched = sandbox.requests("PATCH", "parties")
    assert project.run("apply", "--auto-approve").returncode != 0
    assert sandbox.requests("PATCH", "parties") == patched

    # By a reference, it follows the resubmission.
    project.write("manifests/party.yaml", update % f"'${{ref:{address}.declarationId}}'")
    _apply(project)
    assert sandbox.requests("PATCH", "parties") == patched + 1
    assert project.state()["TransitPartyUpdate/consignee-eori"]["outputs"]["declarationId"] == (
        current
    )


_GROUPS_MANIFEST = """\
apiVersion: customs-batch/v1
kind: TemplateGroup
forEach: {file: ../data/groups.csv}
metadata:
  name: "group-{{ row_number }}"
spec:
  name: "{{ row.Name }}"
  code: "{{ row.Code }}"
  companyId: 1
  DeclarationTemplates:
    - {procedureType: H1, declarationOffice: NL000396, countryOfDestination: NL}
"""


def _groups(sandbox: Sandbox) -> dict[int, str]:
    listed = sandbox.get("/v1/declaration-templates/groups", itemsPerPage=100)
    return {g["id"]: g["code"] for g in listed["result"] if g["code"] != "DEFAULT"}


def test_a_row_inserted_in_a_sheet_of_groups_named_by_row_turns_no_group_into_another(
    project: Project, sandbox: Sandbox
) -> None:
    project.write("manifests/groups.yaml", _GROUPS_MANIFEST)
    project.write("data/groups.csv", "Name,Code\nRoad,ROAD\nRail,RAIL\n")
    _apply(project)
    before = _groups(sandbox)
    assert sorted(before.values()) == ["RAIL", "ROAD"]
    rail = project.state()["TemplateGroup/group-3"]["outputs"]["id"]

    # A row inserted in the middle: group-3 now names the AIR row, group-4 the RAIL one.
    project.write("data/groups.csv", "Name,Code\nRoad,ROAD\nAir,AIR\nRail,RAIL\n")
    code, changes = _plan(project)
    assert code == 1
    shifted = changes["TemplateGroup/group-3"]
    assert shifted["action"] == "refused", shifted
    way_out = "state mv TemplateGroup/group-3 TemplateGroup/group-4"
    assert way_out in shifted["reason"]
    assert changes["TemplateGroup/group-4"]["action"] == "refused"
    assert way_out in changes["TemplateGroup/group-4"]["reason"]
    patched = sandbox.requests("PATCH", "groups")
    project.run("apply", "--auto-approve")
    assert sandbox.requests("PATCH", "groups") == patched
    assert _groups(sandbox) == before, "the RAIL group must stay the RAIL group"

    moved = project.run("state", "mv", "TemplateGroup/group-3", "TemplateGroup/group-4")
    assert moved.returncode == 0, moved.stderr
    code, changes = _plan(project)
    assert code == 0, changes
    assert changes["TemplateGroup/group-3"]["action"] == "create"
    _apply(project)
    after = _groups(sandbox)
    assert after[rail] == "RAIL"
    assert sorted(after.values()) == ["AIR", "RAIL", "ROAD"]
    assert project.run("plan", "--detailed-exitcode").returncode == 0


def test_two_groups_renamed_into_each_others_names_keep_their_objects(
    project: Project, sandbox: Sandbox
) -> None:
    project.write("manifests/groups.yaml", _GROUPS_MANIFEST)
    project.write("data/groups.csv", "Name,Code\nRoad,ROAD\nRail,RAIL\n")
    _apply(project)
    before = _groups(sandbox)

    project.write("data/groups.csv", "Name,Code\nRail,RAIL\nRoad,ROAD\n")
    code, changes = _plan(project)
    assert code == 1
    for me in ("group-2", "group-3"):
        reason = changes[f"TemplateGroup/{me}"]["reason"]
        assert changes[f"TemplateGroup/{me}"]["action"] == "refused"
        assert f"state mv TemplateGroup/{me} TemplateGroup/{me}-previous`, and the same" in reason
    project.run("apply", "--auto-approve")
    assert _groups(sandbox) == before

    # The way out, followed literally: each record aside, then plan moves them.
    for source in ("group-2", "group-3"):
        moved = project.run(
            "state", "mv", f"TemplateGroup/{source}", f"TemplateGroup/{source}-previous"
        )
        assert moved.returncode == 0, moved.stderr
    code, changes = _plan(project)
    assert code == 0, changes
    assert changes["TemplateGroup/group-2"]["action"] == "moved"
    assert changes["TemplateGroup/group-3"]["action"] == "moved"
    _apply(project)
    assert _groups(sandbox) == before
    assert project.run("plan", "--detailed-exitcode").returncode == 0


def test_apply_exits_1_while_the_plan_holds_a_rejection_as_plan_does(
    project: Project, sandbox: Sandbox
) -> None:
    # A departure customs found invalid blocks the plan (exit 1): apply says so too, with
    # nothing else to send, rather than "Nothing to apply" and exit 0.
    project.write(DEPARTURES, batches.departures(1).replace("E2E-0001", "INVALID-0001"))
    _apply(project)
    assert project.run("refresh").returncode == 0  # reads that customs found it invalid
    code, changes = _plan(project)
    assert code == 1 and changes["DepartureDeclaration/dep-e2e-01"]["action"] == "rejected"
    again = project.run("apply", "--auto-approve")
    assert again.returncode == 1, again.stdout + again.stderr
    assert "Nothing to apply" not in again.stdout
    assert len(sandbox.created_transit()) == 1, "nothing sent again"


_ROW_UPDATES = """\
---
apiVersion: customs-batch/v1
kind: TransitPartyUpdate
metadata:
  name: eori-01
spec:
  declarationId: ${ref:DepartureDeclaration/dep-e2e-01.declarationId}
  Consignee:
    eoriNo: %s
---
apiVersion: customs-batch/v1
kind: TransitPartyUpdate
metadata:
  name: eori-02
spec:
  declarationId: ${ref:DepartureDeclaration/dep-e2e-02.declarationId}
  Consignee:
    eoriNo: %s
"""


def test_party_updates_through_departure_names_that_swapped_send_nothing_anywhere(
    project: Project, sandbox: Sandbox
) -> None:
    """Two departures renamed into each other's names (as rows reordered in a sheet named
    by row number), each party update going with its row: through the swapped names, each
    EORI would be written on the other row's declaration."""
    project.write(DEPARTURES, batches.departures(2))
    project.write("manifests/updates.yaml", _ROW_UPDATES % ("BE0123456789", "BE0987654321"))
    _apply(project)
    state = project.state()
    declared = {
        name: state[f"DepartureDeclaration/{name}"]["outputs"]["declarationId"]
        for name in ("dep-e2e-01", "dep-e2e-02")
    }
    patched = sandbox.requests("PATCH", "parties")

    swapped = batches.departures(2).replace("dep-e2e-01", "dep-e2e-xx")
    swapped = swapped.replace("dep-e2e-02", "dep-e2e-01").replace("dep-e2e-xx", "dep-e2e-02")
    project.write(DEPARTURES, swapped)
    project.write("manifests/updates.yaml", _ROW_UPDATES % ("BE0987654321", "BE0123456789"))
    code, changes = _plan(project)
    assert code == 1
    for row, name in (("01", "dep-e2e-01"), ("02", "dep-e2e-02")):
        assert changes[f"DepartureDeclaration/{name}"]["action"] == "refused"
        update = changes[f"TransitPartyUpdate/eori-{row}"]
        assert update["action"] == "refused", update
        assert f"refers to DepartureDeclaration/{name}, refused in this plan" in update["reason"]
    project.run("apply", "--auto-approve")
    assert sandbox.requests("PATCH", "parties") == patched
    assert len(sandbox.created_transit()) == 2

    # The ways out the plans name: the departures' records first, then the updates'.
    for kind, prefix in (("DepartureDeclaration", "dep-e2e-"), ("TransitPartyUpdate", "eori-")):
        for source, target in (("01", "01-previous"), ("02", "01")):
            moved = project.run(
                "state", "mv", f"{kind}/{prefix}{source}", f"{kind}/{prefix}{target}"
            )
            assert moved.returncode == 0, moved.stderr
        if kind == "DepartureDeclaration":
            code, changes = _plan(project)
            assert code == 1
            assert changes["DepartureDeclaration/dep-e2e-02"]["action"] == "moved"
            assert (
                "state mv TransitPartyUpdate/eori-01 TransitPartyUpdate/eori-01-previous`, and"
                in changes["TransitPartyUpdate/eori-01"]["reason"]
            )
    _apply(project)
    assert sandbox.requests("PATCH", "parties") == patched
    state = project.state()
    assert (
        state["DepartureDeclaration/dep-e2e-01"]["outputs"]["declarationId"]
        == (declared["dep-e2e-02"])
    )
    assert state["TransitPartyUpdate/eori-01"]["spec"]["Consignee"]["eoriNo"] == "BE0987654321"
    assert project.run("plan", "--detailed-exitcode").returncode == 0


def test_a_party_update_following_a_renamed_and_changed_departure_waits_for_its_state_mv(
    project: Project, sandbox: Sandbox
) -> None:
    project.write(DEPARTURES, batches.departures(1))
    project.write("manifests/updates.yaml", PARTY_UPDATE)
    _apply(project)
    patched = sandbox.requests("PATCH", "parties")

    project.edit(DEPARTURES, "name: dep-e2e-01", "name: dep-renamed")
    project.edit(DEPARTURES, "name: Initech NV", "name: Initech Belgium NV")
    project.edit("manifests/updates.yaml", "dep-e2e-01.", "dep-renamed.")
    project.edit("manifests/updates.yaml", "BE0123456789", "BE0987654321")
    code, changes = _plan(project)
    assert code == 1
    update = changes["TransitPartyUpdate/dep-consignee-eori"]
    assert update["action"] == "refused"
    assert "this plan does not create DepartureDeclaration/dep-renamed" in update["reason"]
    assert "state rm" not in update["reason"]
    project.run("apply", "--auto-approve")
    assert sandbox.requests("PATCH", "parties") == patched

    # The departure's state mv is the whole way out: both are then updates of its object.
    moved = project.run(
        "state", "mv", "DepartureDeclaration/dep-e2e-01", "DepartureDeclaration/dep-renamed"
    )
    assert moved.returncode == 0, moved.stderr
    code, changes = _plan(project)
    assert code == 0, changes
    assert changes["TransitPartyUpdate/dep-consignee-eori"]["action"] == "update"
    _apply(project)
    assert sandbox.requests("PATCH", "parties") == patched + 2
    assert len(sandbox.created_transit()) == 1
    assert project.run("plan", "--detailed-exitcode").returncode == 0


@pytest.mark.parametrize("declared", [False, True], ids=["same request", "previousNames"])
def test_a_renamed_departure_whose_id_holds_another_object_sends_nothing_through_it(
    tmp_path: Path, project: Project, sandbox: Sandbox, declared: bool
) -> None:
    """The service's data was reset and the departure's ID given to another client's
    declaration; refresh notes it. Found by an outside probe: the departure renamed and its
    party update edited in the same run were planned `moved` + `update`, exit 0, and apply
    sent the party update to the other client's declaration. The rename carries what its
    record is: held for a decision, the party update with it, and nothing is sent; the way
    out the plan names (the record where it is) then lets it be created anew."""
    project.write(DEPARTURES, batches.departures(1))
    project.write("manifests/updates.yaml", PARTY_UPDATE)
    _apply(project)
    old, new = "DepartureDeclaration/dep-e2e-01", "DepartureDeclaration/dep-renamed"
    declared_id = project.state()[old]["outputs"]["declarationId"]
    sandbox.port = int(sandbox.url.rsplit(":", 1)[1].split("/")[0])  # the same service
    sandbox.stop()
    for lost in sandbox.directory.glob("sandbox.sqlite3*"):
        lost.unlink()  # its data reset to the seed
    sandbox.start()
    other = Project(tmp_path / "other-client", sandbox)
    other.write(DEPARTURES, batches.departures(1).replace("101.0", "150.0"))
    _apply(other)
    assert other.state()[old]["outputs"]["declarationId"] == declared_id
    assert project.run("refresh", "--detailed-exitcode").returncode == 1

    renamed = (
        "name: dep-renamed\n  previousNames: [dep-e2e-01]" if declared else "name: dep-renamed"
    )
    project.edit(DEPARTURES, "name: dep-e2e-01", renamed)
    project.edit("manifests/updates.yaml", "dep-e2e-01.", "dep-renamed.")
    project.edit("manifests/updates.yaml", "BE0123456789", "BE0987654321")
    code, changes = _plan(project, "--detailed-exitcode")
    assert code == 1
    held = changes[new]
    assert held["action"] == "needs-decision", held
    assert "another object" in held["reason"]
    assert f"state rm --gone {old}" in held["reason"]
    update = changes["TransitPartyUpdate/dep-consignee-eori"]
    # Its own record too: refresh noted the update's declaration as its departure's, another
    # object at the number (it took no status from that other client's declaration).
    assert update["action"] == "needs-decision"
    assert f"the record of {old}, which stands for it" in update["reason"]
    applied = project.run("apply", "--auto-approve")
    assert applied.returncode == 1, applied.stdout + applied.stderr
    assert sandbox.requests("PATCH", "parties") == 0, "a write went to another client's object"
    assert old in project.state() and new not in project.state()

    # The way out the plan names: the record where it is; the document is then created.
    gone = project.run("state", "rm", "--gone", old)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    _, changes = _plan(project)
    assert changes[new]["action"] == "create"
    assert "moved_from" not in changes[new] and "movedFrom" not in changes[new]
