"""A throwaway kind added through the steps of docs/architecture.md ("How to add a kind"), in a
copy of the package: validate, plan, apply and status handle it, and so does the emulator.

The kind, ``CustomsSeal``, is a seal number registered with a customs office at an endpoint
neither the client nor the emulator has (``POST /v1/seals``, ``GET /v1/seals/{id}``). Each
step is applied to the copy exactly as the page lists it: its name in ``Kind`` and its
operation in ``Operation``, its schema, its module (whose ``MODEL`` the registry finds, and
which makes the client call), its emulator module (whose ``OPERATIONS`` the emulator finds)
and its own tests, which run in the copy. The commands run as ``python -m customs_batch``
with the copy first on the path.
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

KIND_MODULE = '''"""CustomsSeal: a seal number registered with a customs office (POST /v1/seals)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

from customs_batch.jsontypes import JSONObject
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.actions import Operation
from customs_batch.kinds.checks import OFFICE
from customs_batch.kinds.model import (
    Example,
    Found,
    KindModel,
    Outputs,
    Refreshed,
    Request,
    identity_of,
    number,
    repeat_unknown,
)

if TYPE_CHECKING:
    from customs_batch.client import CustomsClient, Endpoint
    from customs_batch.state.model import ResourceRecord

OUTPUT_TYPES = {"sealId": "integer", "sealNumber": "string", "status": "string"}
OUTPUTS = frozenset(OUTPUT_TYPES)
REGISTER, READ = "POST /v1/seals", "GET /v1/seals/{seal_id}"


class CustomsSealSpec(TypedDict):
    sealNumber: str
    officeCode: str
    companyId: int | str


def spec_of(spec: JSONObject) -> CustomsSealSpec:
    return cast(CustomsSealSpec, spec)


def _endpoint(text: str) -> Endpoint:
    from customs_batch.client import Endpoint  # validate loads this module, not the client

    return Endpoint.parse(text)


def _outputs(answer: Mapping[str, Any]) -> Outputs:
    return {name: answer[name] for name in OUTPUTS if name in answer}


def _register(client: CustomsClient, request: Request) -> Outputs:
    return _outputs(client.call(_endpoint(REGISTER), body=spec_of(request.spec)))


def _read(client: CustomsClient, seal_id: int) -> Mapping[str, Any]:
    answer: Mapping[str, Any] = client.call(_endpoint(READ), path={"seal_id": seal_id})
    return answer


def _read_back(
    client: CustomsClient, address: Address, remote_id: str, spec: Mapping[str, Any]
) -> Found:
    seal = _read(client, number(remote_id, address))
    held = {k: seal[k] for k in ("sealNumber", "officeCode", "companyId") if k in seal}
    return Found(outputs=_outputs(seal), remote_spec=held, service_state=seal.get("status"))


def _refresh(
    client: CustomsClient, records: Sequence[ResourceRecord]
) -> dict[str, Refreshed | None]:
    from customs_batch.client import NotFoundError

    found: dict[str, Refreshed | None] = {}
    for record in records:
        seal_id = record.outputs.get("sealId")
        if not isinstance(seal_id, int):
            continue
        try:
            seal = _read(client, seal_id)
        except NotFoundError:
            found[record.address] = None
            continue
        found[record.address] = Refreshed(service_state=seal.get("status"), outputs=_outputs(seal))
    return found


EXAMPLE = Example(
    "customs-seal",
    """\\
apiVersion: customs-batch/v1
kind: CustomsSeal
metadata:
  name: my-seal
spec: {sealNumber: NL000999, officeCode: NL000396, companyId: 1}
""",
)

MODEL = KindModel(
    kind=Kind.CUSTOMS_SEAL,
    spec_type=CustomsSealSpec,
    schema="customs-seal",
    example=EXAMPLE,
    outputs=OUTPUTS,
    output_types=OUTPUT_TYPES,
    id_field="sealId",
    create=Operation.REGISTER_SEAL,
    send={Operation.REGISTER_SEAL: _register},
    after_unknown=repeat_unknown(Operation.REGISTER_SEAL, None),
    read_back=_read_back,
    refresh=_refresh,
    has_status=True,
    identity=identity_of("companyId", "sealNumber"),
    code_fields=((("officeCode",), OFFICE),),
    immutable="{fields} of a registered seal cannot change: register another seal",
)
'''

EMULATOR_MODULE = '''"""Customs seals: a seal number registered with an office, read back by its ID."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract as C
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.request_schemas import spec_body_schema
from customs_batch.sandbox.web import check_schema, fail, json_body, json_response

KIND = "CustomsSeal"
TABLE = "seals"
SEAL_BODY = op.Body("CustomsSeal", lambda: spec_body_schema("customs-seal"))


async def register_seal(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """POST /v1/seals."""
    body = await json_body(request)
    check_schema(sandbox.request_validators[SEAL_BODY], body)
    with sandbox.store.lock():
        seal_id = sandbox.store.next_id(TABLE)
        record: JsonObject = {"sealId": seal_id, **body, "status": "registered"}
        sandbox.store.put(TABLE, seal_id, record)
    return json_response(record, C.CREATED)


async def get_seal(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/seals/{id}."""
    seal = sandbox.store.get(TABLE, request.path_params["id"])
    if seal is None:
        fail(C.NOT_FOUND, f"seal {request.path_params['id']} not found")
    return json_response(seal)


OPERATIONS = (
    op.ApiOperation(
        "POST", "/v1/seals", register_seal, "Register a seal", body=SEAL_BODY, status=C.CREATED
    ),
    op.ApiOperation("GET", "/v1/seals/{id:int}", get_seal, "Get a seal", (op.ID,)),
)
'''

KIND_TESTS = '''"""CustomsSeal: known by its company and number; registered and read at the emulator."""

from __future__ import annotations

import pytest

from customs_batch.client import CustomsClient, RateLimit, RateLimiter, RequestRefusedError, Sender
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.model import Request
from customs_batch.kinds.registry import model_of
from customs_batch.sandbox import InProcessTransport, create_app
from tests.kinds.helpers import identity

KIND = Kind.CUSTOMS_SEAL
SPEC = {"sealNumber": "NL000123", "officeCode": "NL000396", "companyId": 1}


def test_its_identity_is_its_company_and_number() -> None:
    assert identity(KIND, {**SPEC, "officeCode": "NL000397"}) == identity(KIND, SPEC)
    assert identity(KIND, {**SPEC, "sealNumber": "NL000124"}) != identity(KIND, SPEC)


def test_it_is_registered_and_read_back_at_the_emulator() -> None:
    transport = InProcessTransport(create_app(rate_limit=None))
    limiter = RateLimiter(RateLimit.parse("off"))
    sender = Sender("http://sandbox.test", "sandbox-key", rate_limiter=limiter, transport=transport)
    model = model_of(KIND)
    with CustomsClient(sender) as client:
        outputs = model.send[model.create](client, Request(KIND, SPEC, {}))
        assert outputs == {"sealId": 1, "sealNumber": "NL000123", "status": "registered"}
        found = model.read_back(client, Address(KIND, "seal"), "1", SPEC)
        assert found.remote_spec == SPEC and found.service_state == "registered"
        with pytest.raises(RequestRefusedError):  # the emulator holds the body to the schema
            model.send[model.create](client, Request(KIND, {**SPEC, "sealNumber": 7}, {}))
'''

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://customs-batch.dev/schemas/customs-seal.schema.json",
    "title": "CustomsSeal spec",
    "description": "A seal number registered with a customs office.",
    "type": "object",
    "properties": {
        "sealNumber": {"type": "string", "description": "The seal's number."},
        "officeCode": {"type": "string", "description": "The customs office."},
        "companyId": {
            "description": "The company that registers it.",
            "anyOf": [{"type": "integer", "minimum": 1}, {"$ref": "#/$defs/reference"}],
        },
    },
    "required": ["sealNumber", "officeCode", "companyId"],
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
kind: CustomsSeal
metadata:
  name: seal-1
spec:
  sealNumber: NL000123
  officeCode: NL000396
  companyId: 1
---
apiVersion: customs-batch/v1
kind: TemplateGroup
metadata:
  name: group-1
spec:
  name: ${ref:CustomsSeal/seal-1.sealNumber} group
  code: SEAL-GROUP
  companyId: 1
"""


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name}: {old!r}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _add_the_kind(source: Path) -> None:
    """The steps of "How to add a kind", on a copy of the package in ``source``."""
    kinds = source / "customs_batch" / "kinds"
    # 1. Its name in Kind, its operation in Operation.
    _edit(
        kinds / "__init__.py",
        '    EXPORT_CANCELLATION = "ExportCancellation"\n',
        '    EXPORT_CANCELLATION = "ExportCancellation"\n    CUSTOMS_SEAL = "CustomsSeal"\n',
    )
    _edit(
        kinds / "actions.py",
        '    CANCEL_EXPORT = "cancel-export"\n',
        '    CANCEL_EXPORT = "cancel-export"\n    REGISTER_SEAL = "register-seal"\n',
    )
    # 2. Its schema: no list of kinds to edit anywhere.
    schema = source / "schemas" / "customs-seal.schema.json"
    schema.write_text(json.dumps(SCHEMA, indent=2) + "\n", encoding="utf-8")
    # 3. Its module, with its MODEL and its client call: the registry finds it.
    (kinds / "customs_seal.py").write_text(KIND_MODULE, encoding="utf-8")
    # 4. Its endpoint in the emulator: a module of its own, which the emulator finds.
    (source / "customs_batch" / "sandbox" / "seals.py").write_text(
        EMULATOR_MODULE, encoding="utf-8"
    )
    # 5. Its tests.
    (source / "tests" / "kinds" / "test_customs_seal.py").write_text(KIND_TESTS, encoding="utf-8")


def _copy(root: Path, source: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("customs_batch", "schemas", "templates"):
        shutil.copytree(root / name, source / name, ignore=ignore)
    (source / "tests" / "kinds").mkdir(parents=True)
    (source / "tests" / "sandbox").mkdir()
    for name in (
        "tests/__init__.py",
        "tests/kinds/__init__.py",
        "tests/kinds/helpers.py",
        "tests/kinds/test_specs.py",
        "tests/sandbox/__init__.py",
        "tests/sandbox/test_endpoints.py",
    ):
        shutil.copy(root / name, source / name)


def _env(source: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(source), "PYTHONDONTWRITEBYTECODE": "1"}


def _run(project: Path, source: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "customs_batch", *argv],
        cwd=project,
        env=_env(source),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _pytest(source: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *argv],
        cwd=source,
        env=_env(source),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_kind_added_as_the_docs_say_is_validated_planned_applied_and_followed(
    tmp_path: Path,
) -> None:
    assert Kind.parse("CustomsSeal") is None  # the package under test does not know it
    source, project = tmp_path / "src", tmp_path / "project"
    _copy(ROOT, source)
    _add_the_kind(source)
    (project / "manifests").mkdir(parents=True)
    (project / "manifests" / "seals.yaml").write_text(MANIFEST, encoding="utf-8")

    # Its own tests pass in the copy (its identity, its client call against the emulator), and
    # so do the check of every kind's spec type against its schema and the check that every
    # kind has its emulator module, which now cover it.
    tested = _pytest(source, "tests/kinds", "tests/sandbox/test_endpoints.py")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    for test in (
        "test_customs_seal.py::test_its_identity_is_its_company_and_number PASSED",
        "test_customs_seal.py::test_it_is_registered_and_read_back_at_the_emulator PASSED",
        "test_specs.py::test_the_spec_type_of_every_kind_is_its_schema[CustomsSeal] PASSED",
        "test_endpoints.py::test_every_kind_has_exactly_one_emulator_module PASSED",
        "test_endpoints.py::test_every_write_endpoint_is_a_kinds PASSED",
    ):
        assert test in tested.stdout, tested.stdout

    validated = _run(project, source, "validate")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "0 errors, 0 warnings in 2 documents" in validated.stdout

    planned = _run(project, source, "plan")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "+ create         CustomsSeal/seal-1" in planned.stdout

    applied = _run(project, source, "apply", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "done     CustomsSeal/seal-1  sealId=1 sealNumber=NL000123 status=registered" in (
        applied.stdout
    )
    assert "done     TemplateGroup/group-1" in applied.stdout  # its reference resolved

    # status reads it back from the emulator's new endpoint (GET /v1/seals/{id}).
    status = _run(project, source, "status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert status.stdout.startswith("CustomsSeal/seal-1  "), status.stdout
    assert "registered" in status.stdout.splitlines()[0]
    groups = _run(project, source, "get", "template-groups", "--format", "json")
    assert "NL000123 group" in {g["name"] for g in json.loads(groups.stdout)}
    again = _run(project, source, "plan")
    assert "Plan: 0 to create, 0 to update, 2 unchanged" in again.stdout, again.stdout

    # What its module declares is checked: its code fields, the types of its outputs.
    second_seal = (
        "---\napiVersion: customs-batch/v1\nkind: CustomsSeal\nmetadata: {name: seal-2}\n"
        "spec: {sealNumber: NL000124, officeCode: NL000396, "
        "companyId: '${ref:CustomsSeal/seal-1.sealNumber}'}\n"
    )
    (project / "manifests" / "seals.yaml").write_text(
        MANIFEST.replace("NL000396", "nl-396") + second_seal, encoding="utf-8"
    )
    refused = _run(project, source, "validate", "--format", "json")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    found = {(f["rule"], f["document"]) for f in json.loads(refused.stdout)["findings"]}
    assert found == {
        ("code.customs-office", "CustomsSeal/seal-1"),
        ("project.reference-type", "CustomsSeal/seal-2"),  # its sealNumber is text
    }

    # The spec type is held to the schema: a field the schema gains and the type lacks fails.
    schema_file = source / "schemas" / "customs-seal.schema.json"
    drifted = json.loads(schema_file.read_text(encoding="utf-8"))
    drifted["properties"]["note"] = {"type": "string"}
    schema_file.write_text(json.dumps(drifted), encoding="utf-8")
    failed = _pytest(source, "tests/kinds/test_specs.py", "-k", "CustomsSeal")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "spec.note: in the schema, not in the type" in failed.stdout

    # init writes its example with the others, and the new project validates clean.
    started = _run(tmp_path, source, "init", "fresh")
    assert started.returncode == 0, started.stdout + started.stderr
    assert (tmp_path / "fresh" / "manifests" / "customs-seal.yaml").is_file()
    fresh = _run(tmp_path / "fresh", source, "validate")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert "0 errors, 0 warnings in 7 documents" in fresh.stdout
