"""The TemplateGroup kind's endpoints: create a declaration template group, PATCH what is
sent; and the list by company its read-back uses. A group's templates are never answered:
they are kept packed (``records.Packed``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract
from customs_batch.sandbox import operations as op
from customs_batch.sandbox.auth import Caller
from customs_batch.sandbox.context import Sandbox
from customs_batch.sandbox.listing import result_page
from customs_batch.sandbox.records import JsonObject, Packed, timestamp, unpacked
from customs_batch.sandbox.request_schemas import (
    template_group_body_schema,
    template_group_patch_schema,
)
from customs_batch.sandbox.store import Table
from customs_batch.sandbox.web import Query, check_schema, fail, json_body, json_response

KIND = "TemplateGroup"
"""The kind whose requests this module serves (``customs_batch.kinds.Kind``)."""

_LIST_FIELDS = ("id", "name", "code", "isDefault", "companyId")
GROUP_BODY = op.Body("TemplateGroup", template_group_body_schema)
GROUP_PATCH = op.Body("TemplateGroupPatch", template_group_patch_schema)


def _refuse_duplicate_code(sandbox: Sandbox, company_id: int, code: str, group_id: int) -> None:
    # An indexed lookup: a scan of every group made each create slower than the one before.
    for group in sandbox.store.find(Table.TEMPLATE_GROUPS, companyId=company_id, code=code):
        if group["id"] != group_id:
            fail(
                contract.DUPLICATE_CODE,
                f"code {code} is already used by template group {group['id']} of company {company_id}",
            )


async def create_group(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """POST /v1/declaration-templates/groups; the code is unique per company (409)."""
    body = await json_body(request)
    body = check_schema(sandbox.request_validators[GROUP_BODY], body)
    stamp = timestamp(sandbox.clock())
    with sandbox.store.lock():
        _refuse_duplicate_code(sandbox, body["companyId"], body["code"], 0)
        group_id = sandbox.store.next_id(Table.TEMPLATE_GROUPS)
        record: JsonObject = {
            "id": group_id,
            "name": body["name"],
            "code": body["code"],
            "isDefault": body.get("isDefault", False),
            "companyId": body["companyId"],
            "DeclarationTemplates": Packed.of(body.get("DeclarationTemplates", [])),
            "createdAt": stamp,
            "updatedAt": stamp,
        }
        sandbox.store.put(Table.TEMPLATE_GROUPS, group_id, record)
    fields = ("id", "name", "code", "isDefault", "companyId", "createdAt")
    return json_response({f: record[f] for f in fields}, contract.CREATED)


async def update_group(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """PATCH /v1/declaration-templates/groups/{id}: only the fields sent change (and
    ``updatedAt`` only when one of them does)."""
    group_id = request.path_params["id"]
    body = await json_body(request)
    body = check_schema(sandbox.request_validators[GROUP_PATCH], body)
    with sandbox.store.lock():
        group = sandbox.store.get(Table.TEMPLATE_GROUPS, group_id)
        if group is None:
            fail(contract.NOT_FOUND, f"template group {group_id} not found")
        if "code" in body:
            _refuse_duplicate_code(sandbox, group["companyId"], body["code"], group_id)
        updated = {**group, **body}
        # A PATCH of the values held changes nothing, updatedAt neither.
        if any(unpacked(group.get(name)) != value for name, value in body.items()):
            if "DeclarationTemplates" in body:
                updated["DeclarationTemplates"] = Packed.of(body["DeclarationTemplates"])
            updated["updatedAt"] = timestamp(sandbox.clock())
            sandbox.store.put(Table.TEMPLATE_GROUPS, group_id, updated)
    fields = ("id", "name", "code", "isDefault", "updatedAt")
    return json_response({f: updated[f] for f in fields})


async def list_groups(request: Request, sandbox: Sandbox, caller: Caller) -> Response:
    """GET /v1/declaration-templates/groups, optionally of one company."""
    query = Query(request.query_params)
    company = query.optional_integer(contract.COMPANY_ID)
    records = [
        {f: g[f] for f in _LIST_FIELDS}
        for g in sandbox.store.values(Table.TEMPLATE_GROUPS)
        if company is None or g["companyId"] == company
    ]
    return result_page(query, records, item_count=False)


C = contract
_DUPLICATE_CODE = {str(C.DUPLICATE_CODE): "the company already has a template group with this code"}
OPERATIONS = (
    op.ApiOperation(
        "POST",
        C.TEMPLATE_GROUPS,
        create_group,
        "Create a template group",
        body=GROUP_BODY,
        status=C.CREATED,
        errors=_DUPLICATE_CODE,
    ),
    op.ApiOperation(
        "GET",
        C.TEMPLATE_GROUPS,
        list_groups,
        "List template groups",
        (op.query(C.COMPANY_ID, op.ID_NUMBER), op.PAGE, op.size(C.ITEMS_PER_PAGE)),
    ),
    op.ApiOperation(
        "PATCH",
        C.TEMPLATE_GROUP,
        update_group,
        "Update a template group",
        (op.ID,),
        GROUP_PATCH,
        errors=_DUPLICATE_CODE,
    ),
)
"""The endpoints of this module (see ``operations.py``)."""
