"""A throwaway kind added through the steps of docs/architecture.md ("How to add a kind"), in a
copy of the package: validate, plan, apply and status handle it, and so does the emulator.

The kind, ``TemplateSet``, is a template group made from a name and a code: the service's
endpoint exists (``POST /v1/declaration-templates/groups``), so steps 4 and 5 (a new client
call, a new emulator handler) have nothing to add, and the emulator answers it as it is.
Every other step is applied to the copy exactly as the page lists it; the commands run as
``python -m customs_batch`` with the copy first on the path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from customs_batch.kinds import Kind

ROOT = Path(__file__).resolve().parents[2]

KIND_MODULE = '''"""TemplateSet: a template group made from a name and a code."""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict, cast

from customs_batch.jsontypes import JSONObject
from customs_batch.kinds import OUTPUT_FIELDS, Kind, template_group
from customs_batch.kinds.actions import Operation
from customs_batch.kinds.checks import OFFICE
from customs_batch.kinds.model import (
    KindModel,
    Outputs,
    Request,
    identity_of,
    outputs_of,
    repeat_unknown,
)

if TYPE_CHECKING:
    from customs_batch.client import CustomsClient

OUTPUTS = OUTPUT_FIELDS[Kind.TEMPLATE_SET]


class Template(TypedDict):
    declarationOffice: NotRequired[str]


class TemplateSetSpec(TypedDict):
    companyId: int | str
    name: str
    code: str
    DeclarationTemplates: NotRequired[list[Template]]


def spec_of(spec: JSONObject) -> TemplateSetSpec:
    return cast(TemplateSetSpec, spec)


def _create(client: CustomsClient, request: Request) -> Outputs:
    return outputs_of(OUTPUTS, client.create_template_group(spec_of(request.spec)))


MODEL = KindModel(
    kind=Kind.TEMPLATE_SET,
    spec_type=TemplateSetSpec,
    outputs=OUTPUTS,
    id_field="id",
    create=Operation.CREATE_TEMPLATE_SET,
    send={Operation.CREATE_TEMPLATE_SET: _create},
    after_unknown=repeat_unknown(Operation.CREATE_TEMPLATE_SET, None),
    read_back=template_group.MODEL.read_back,
    refresh=template_group.MODEL.refresh,
    has_status=True,
    identity=identity_of("companyId", "code"),
    code_fields=((("DeclarationTemplates", "*", "declarationOffice"), OFFICE),),
    immutable="{fields} of a template set cannot change",
)
'''

KIND_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://customs-batch.dev/schemas/template-set.schema.json",
    "title": "TemplateSet spec",
    "description": "A template group made from a name and a code.",
    "type": "object",
    "properties": {
        "companyId": {
            "description": "The company the group belongs to.",
            "anyOf": [{"type": "integer", "minimum": 1}, {"$ref": "#/$defs/reference"}],
        },
        "name": {"type": "string", "description": "The group's name."},
        "code": {"type": "string", "description": "The group's code."},
        "DeclarationTemplates": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"declarationOffice": {"type": "string", "description": "Office."}},
                "additionalProperties": False,
            },
        },
    },
    "required": ["companyId", "name", "code"],
    "additionalProperties": False,
    "$defs": {
        "reference": {
            "type": "string",
            "x-kinds": "reference",
            "description": "A reference to another document's outcome: ${ref:Kind/name.field}.",
        }
    },
}

MANIFEST = """\
apiVersion: customs-batch/v1
kind: TemplateSet
metadata:
  name: set-1
spec:
  name: Set one
  code: SET-ONE
  companyId: 1
  DeclarationTemplates: [{declarationOffice: NL000396}]
---
apiVersion: customs-batch/v1
kind: TemplateGroup
metadata:
  name: group-1
  dependsOn: [TemplateSet/set-1]
spec:
  name: ${ref:TemplateSet/set-1.code} copy
  code: SET-ONE-COPY
  companyId: 1
"""


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name}: {old!r}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _add_the_kind(source: Path) -> None:
    """The steps of "How to add a kind", on a copy of the package in ``source``."""
    kinds = source / "customs_batch" / "kinds"
    # 1. Kind, _SCHEMA_NAMES and OUTPUT_FIELDS.
    init = kinds / "__init__.py"
    _edit(
        init,
        '    EXPORT_CANCELLATION = "ExportCancellation"\n',
        '    EXPORT_CANCELLATION = "ExportCancellation"\n    TEMPLATE_SET = "TemplateSet"\n',
    )
    _edit(
        init,
        '    Kind.EXPORT_CANCELLATION: "export-cancellation",\n',
        '    Kind.EXPORT_CANCELLATION: "export-cancellation",\n    Kind.TEMPLATE_SET: "template-set",\n',
    )
    _edit(
        init,
        '    Kind.EXPORT_CANCELLATION: frozenset({"declarationId", "canceled"}),\n',
        '    Kind.EXPORT_CANCELLATION: frozenset({"declarationId", "canceled"}),\n    Kind.TEMPLATE_SET: frozenset({"id", "code"}),\n',
    )
    # 2. Its schema; no list of kinds to edit anywhere.
    schema = source / "schemas" / "template-set.schema.json"
    schema.write_text(json.dumps(KIND_SCHEMA, indent=2) + "\n", encoding="utf-8")
    # 3. Its module and model in the registry, its operation.
    (kinds / "template_set.py").write_text(KIND_MODULE, encoding="utf-8")
    _edit(
        kinds / "registry.py", "    template_group,\n", "    template_group,\n    template_set,\n"
    )
    _edit(
        kinds / "registry.py",
        "            export_cancellation.MODEL,\n",
        "            export_cancellation.MODEL,\n            template_set.MODEL,\n",
    )
    _edit(
        kinds / "actions.py",
        '    CANCEL_EXPORT = "cancel-export"\n',
        '    CANCEL_EXPORT = "cancel-export"\n    CREATE_TEMPLATE_SET = "create-template-set"\n',
    )
    # Its outputs' JSON types, for references to them.
    _edit(
        source / "customs_batch" / "validation" / "cross_document.py",
        '    Kind.EXPORT_CANCELLATION: {"declarationId": "integer", "canceled": "boolean"},\n',
        '    Kind.EXPORT_CANCELLATION: {"declarationId": "integer", "canceled": "boolean"},\n'
        '    Kind.TEMPLATE_SET: {"id": "integer", "code": "string"},\n',
    )


def _copy(root: Path, source: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("customs_batch", "schemas", "templates"):
        shutil.copytree(root / name, source / name, ignore=ignore)


SPEC_CHECK = f"""\
import copy, sys
sys.path.append({str(ROOT)!r})  # after the copy: the tests' module, the copy's package
from customs_batch.kinds import Kind
from customs_batch.kinds.registry import model_of
from customs_batch.resources import kind_schema
from tests.kinds.test_specs import differences
kind = Kind.parse("TemplateSet")
schema = copy.deepcopy(kind_schema(kind))
if sys.argv[1:] == ["--drift"]:  # a field the schema has and the type has not
    schema["properties"]["note"] = {{"type": "string"}}
print(differences(model_of(kind).spec_type, schema))
"""
"""Prints what differs between the spec type of the copy's TemplateSet and its schema."""


def _run(project: Path, source: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return _python(project, source, "-m", "customs_batch", *argv)


def _python(project: Path, source: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(source), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, *argv],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_kind_added_as_the_docs_say_is_validated_planned_applied_and_followed(
    tmp_path: Path,
) -> None:
    assert Kind.parse("TemplateSet") is None  # the package under test does not know it
    source, project = tmp_path / "src", tmp_path / "project"
    _copy(ROOT, source)
    _add_the_kind(source)
    (project / "manifests").mkdir(parents=True)
    (project / "manifests" / "sets.yaml").write_text(MANIFEST, encoding="utf-8")

    # Its spec type is its schema, as tests/kinds/test_specs.py checks every kind's.
    compared = _python(project, source, "-c", SPEC_CHECK)
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert compared.stdout == "[]\n"
    drifted = _python(project, source, "-c", SPEC_CHECK, "--drift")
    assert drifted.stdout == "['spec.note: in the schema, not in the type']\n", drifted.stderr

    validated = _run(project, source, "validate")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "0 errors, 0 warnings in 2 documents" in validated.stdout

    planned = _run(project, source, "plan")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "+ create         TemplateSet/set-1" in planned.stdout

    applied = _run(project, source, "apply", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "done     TemplateSet/set-1  code=SET-ONE id=" in applied.stdout
    assert "done     TemplateGroup/group-1" in applied.stdout  # its references resolved

    status = _run(project, source, "status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert status.stdout.startswith("TemplateSet/set-1  ")

    # The emulator holds it, and the next plan has nothing to do.
    groups = _run(project, source, "get", "template-groups", "--format", "json")
    assert groups.returncode == 0, groups.stdout + groups.stderr
    assert {"SET-ONE", "SET-ONE-COPY"} <= {g["code"] for g in json.loads(groups.stdout)}
    again = _run(project, source, "plan")
    assert "Plan: 0 to create, 0 to update, 2 unchanged" in again.stdout, again.stdout

    # Its code fields, as its module names them, are checked.
    (project / "manifests" / "sets.yaml").write_text(
        MANIFEST.replace("NL000396", "nl-396"), encoding="utf-8"
    )
    refused = _run(project, source, "validate", "--format", "json")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    (finding,) = json.loads(refused.stdout)["findings"]
    assert (finding["rule"], finding["document"]) == ("code.customs-office", "TemplateSet/set-1")
