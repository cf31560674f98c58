"""TemplateGroup: a group of declaration templates, unique by its code within a company.

Created by POST; name, code, isDefault and the templates change in place by PATCH. After an
unknown outcome it is looked up by its code before it is created again; a 409 for a code the
service already holds is looked up the same way and adopted when the manifests describe the
group exactly, or explained (how to import it) when they do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict, cast

from customs_batch.errors import CustomsBatchError
from customs_batch.jsontypes import JSONObject
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.actions import Action, Operation
from customs_batch.kinds.checks import (
    COUNTRY,
    INCOTERM,
    OFFICE,
    TRANSPORT_MODE,
    CodeFields,
    IdSort,
    OutputId,
    UniqueField,
)
from customs_batch.kinds.model import (
    Conflict,
    Decision,
    Example,
    Found,
    ImportAt,
    ImportRefused,
    KindModel,
    Outputs,
    Refreshed,
    Request,
    UnknownOutcome,
    identity_of,
    number,
    numeric_id,
    outputs_of,
    unknown_and_retargeted,
)

if TYPE_CHECKING:
    from customs_batch.client import CustomsClient, Record
    from customs_batch.state.model import ResourceRecord

OUTPUT_TYPES = {"id": "integer", "code": "string", "name": "string"}
"""What its outcome records (the fields ``${ref:TemplateGroup/name.field}`` may name), and
their JSON types."""
OUTPUTS = frozenset(OUTPUT_TYPES)
MUTABLE = frozenset({"name", "code", "isDefault", "DeclarationTemplates"})
COMPARED: tuple[Literal["name", "code", "isDefault", "companyId"], ...] = (
    "name",
    "code",
    "isDefault",
    "companyId",
)
"""The fields a group at the service is compared on (its templates are not listed back)."""


class DocumentReference(TypedDict):
    """A previous or supporting document of a declaration template."""

    documentCategory: NotRequired[int]
    typeCode: NotRequired[str]
    description: NotRequired[str]


class DeclarationTemplate(TypedDict):
    """The customs field defaults of one declaration template."""

    procedureType: NotRequired[str]
    declarationType: NotRequired[str]
    additionalDeclarationType: NotRequired[str]
    representation: NotRequired[str]
    declarationOffice: NotRequired[str]
    customsOfficeOfExport: NotRequired[str]
    customsOfficeOfExit: NotRequired[str]
    supervisingOffice: NotRequired[str]
    customsWarehouseType: NotRequired[str]
    customsWarehouseID: NotRequired[str]
    goodsLocationType: NotRequired[str]
    goodsLocationAddressType: NotRequired[str]
    countryOfDispatch: NotRequired[str]
    countryOfDestination: NotRequired[str]
    countryOfBorder: NotRequired[str]
    arrivalTransportName: NotRequired[str]
    arrivalTransportNameType: NotRequired[str]
    arrivalTransportType: NotRequired[str]
    borderTransportType: NotRequired[str]
    natureOfTransaction: NotRequired[str]
    methodOfPayment: NotRequired[str]
    currentProcedureCode: NotRequired[str]
    previousProcedureCode: NotRequired[str]
    additionalProcedureCodes: NotRequired[str]
    additionalCodeTARIC: NotRequired[str]
    additionalCodeNational: NotRequired[str]
    preferenceCode: NotRequired[str]
    customsValuationMethod: NotRequired[str]
    incoterm: NotRequired[str]
    incotermLocation: NotRequired[str]
    PreviousDocuments: NotRequired[list[DocumentReference]]
    SupportingDocuments: NotRequired[list[DocumentReference]]


class TemplateGroupSpec(TypedDict):
    """The spec of a TemplateGroup, the body of its creation, as
    ``schemas/template-group.schema.json`` describes it (``tests/kinds/test_specs.py``
    holds the two together)."""

    name: str
    code: str
    companyId: int
    isDefault: NotRequired[bool]
    DeclarationTemplates: NotRequired[list[DeclarationTemplate]]


def spec_of(spec: JSONObject) -> TemplateGroupSpec:
    """A template group's spec as its type. Only for a spec its schema has validated (a
    document being planned or applied, the record of one sent): the check is not made
    again."""
    return cast(TemplateGroupSpec, spec)


def _create(client: CustomsClient, request: Request) -> Outputs:
    return outputs_of(OUTPUTS, client.create_template_group(spec_of(request.spec)))


def _find(client: CustomsClient, spec: TemplateGroupSpec) -> Record | None:
    company = spec.get("companyId")
    from customs_batch.client import TemplateGroupFilter

    filters = TemplateGroupFilter(company_id=company if isinstance(company, int) else None)
    for group in client.iter_template_groups(filters):
        if group.raw.get("code") == spec.get("code"):
            return group
    return None


def _find_or_create(client: CustomsClient, request: Request) -> Outputs:
    """After an attempt whose outcome is unknown: the group with the code, when it is what
    the document describes, else a new one. A group that differs (the document was edited
    since, or the code is another's) is not taken unseen: refused as a 409 would be. Its
    templates, which the service does not list, are taken as the attempt sent them when
    the document's are still those (``request.changed`` holds what changed since)."""
    spec = spec_of(request.spec)
    found = _find(client, spec)
    if found is None:
        return _create(client, request)
    why = _not_adoptable(found, spec, templates_sent="DeclarationTemplates" not in request.changed)
    if why is None:
        return outputs_of(OUTPUTS, found)
    from customs_batch.client import RequestRefusedError

    group_id = found.raw.get("id")
    said = (
        f"a template group with code {spec.get('code')!r} is at the service (id {group_id}) "
        f"{why}. If it is this document's group (the one the attempt whose outcome was unknown "
        f"created), `customs-batch import` of this document with ID {group_id} records it, and "
        "the next plan shows what the manifests would change; if it is another group, give "
        "this document a code of its own"
    )
    raise RequestRefusedError(
        said,
        status=409,
        body={"statusCode": 409, "message": said},  # what the run records and shows
        operation=Operation.FIND_OR_CREATE_TEMPLATE_GROUP.value,
    )


def _not_adoptable(
    found: Record, spec: TemplateGroupSpec, *, templates_sent: bool = False
) -> str | None:
    """Why the group ``found`` with the code is not taken as the document's (None: it is
    what the document describes, field by field, and the document names no templates, or
    ``templates_sent``: they are those a request of this document sent, which may have
    made the group)."""
    differing = [
        name for name in COMPARED if name in spec and found.raw.get(name, spec[name]) != spec[name]
    ]
    if differing:
        return f"and differs in {', '.join(differing)}"
    if "DeclarationTemplates" in spec and not templates_sent:
        return (
            "and its templates cannot be compared (the service does not list them back), so "
            "it is not adopted unseen"
        )
    return None


def _update(client: CustomsClient, request: Request) -> Outputs:
    """The fields that changed (what the plan shows it sends); every field of the document
    a PATCH writes when the plan names none (an update repeated after an unknown outcome:
    the record already holds the document, so nothing differs from it)."""
    writable = {k: v for k, v in request.spec.items() if k in MUTABLE}
    body = {k: v for k, v in writable.items() if k in request.changed} or writable
    group = client.update_template_group(int(request.outputs["id"]), body)
    return outputs_of(OUTPUTS, group, request.outputs)


def _after_unknown(unknown: UnknownOutcome) -> Decision:
    retargeted = [name for name in unknown.edited if name in ("code", "companyId")]
    if retargeted and not unknown.exists:
        # Looked up by its new code, a group the first request created under the old one
        # would not be found: a second group.
        return unknown_and_retargeted(unknown, retargeted)
    if unknown.exists:
        return Decision(
            Action.UPDATE,
            Operation.UPDATE_TEMPLATE_GROUP,
            "the outcome of the last attempt is unknown; the request is safe to repeat",
        )
    return Decision(
        Action.CREATE,
        Operation.FIND_OR_CREATE_TEMPLATE_GROUP,
        "the outcome of the last attempt is unknown; the group is looked up by its unique "
        "code first and created only if it is not there",
    )


def _on_conflict(client: CustomsClient, address: Address, request: Request) -> Conflict:
    """A 409 on creation: the code is taken. Look the group up and compare."""
    spec = spec_of(request.spec)
    found = _find(client, spec)
    code = spec.get("code")
    if found is None:
        return Conflict(
            None,
            False,
            f"the service refused code {code!r} as taken, but lists no group with it for "
            "this key: it may belong to another company; choose another code",
        )
    group_id = found.raw.get("id")
    why = _not_adoptable(found, spec)
    if why is None:
        return Conflict(outputs_of(OUTPUTS, found), True, f"adopted existing group {group_id}")
    return Conflict(
        outputs_of(OUTPUTS, found),
        False,
        f"a template group with code {code!r} already exists at the service (id {group_id}) "
        f"{why}. If it is this document's group (created before its record was removed, or "
        f"made outside customs-batch for it), `customs-batch import {address} {group_id}` "
        "records it, and the next plan shows what the manifests would change; if it is "
        "another group, give this document a code of its own",
    )


def _read_back(client: CustomsClient, address: Address, remote_id: str, spec: JSONObject) -> Found:
    wanted = number(remote_id, address)
    for group in client.iter_template_groups():
        if group.raw.get("id") == wanted:
            return Found(
                outputs=outputs_of(OUTPUTS, group),
                remote_spec={k: group.raw[k] for k in COMPARED if k in group.raw},
                unread="the API does not list a group's templates",
            )
    raise CustomsBatchError(
        f"the service has no template group {wanted}",
        hint="`customs-batch get template-groups` lists them",
    )


_identity = identity_of("companyId", "code")
"""What makes a group the same at the service: its company and code."""


def _import_check(at: ImportAt) -> ImportRefused | None:
    """A group at the ID under another code than the document's is another group (a group
    is known by its code within its company, as ``refresh`` tells it): imported, it would be
    recorded as the document's, and the next apply would PATCH its code and name into the
    document's, rewriting someone else's group (a mistyped ID). Taken only when the state
    says the address stood for that ID: a group whose code was changed at the service, taken
    back as ``refresh``'s way out says (``state rm --gone``, then ``import``), which the
    next apply changes back, when its name is the document's (a group whose code and name
    both differ may be another one the ID was given to again: refused, with the way to take
    it over). Adopted never: the lost creation sent its code, and made a group of that
    code."""
    held, wanted = at.held.get("code"), at.spec.get("code")
    if held is None or wanted is None or _identity({**at.spec, "code": held}) == _identity(at.spec):
        return None  # the same group (a code written with other spaces or in another form)
    if at.its_own():
        name, named = at.held.get("name"), at.spec.get("name")
        if name == named:
            return None  # its code changed at the service, its name as the document's
        # The history gave the address this ID, but the group there has another code AND
        # another name: what a group of someone else looks like once the ID was given again
        # (a sandbox reset), as much as one whose code and name a colleague both changed.
        # The API gives nothing else to tell them apart (no creation time in the list).
        where = "" if at.where is None else f" ({at.where('code')})"
        return ImportRefused(
            f"template group {at.remote_id} has code {held!r} and name {name!r} at the "
            f"service, and {at.address}{where} says {wanted!r} and {named!r}: the history "
            f"gave {at.address} the ID {at.remote_id}, but a group whose code and name both "
            "differ may be another group the ID was given to again (after a sandbox reset, "
            "say), and once imported, the next apply would change its code and name to the "
            "document's. Nothing was recorded",
            hint=f"if group {at.remote_id} is not yours, do not import it: the next apply "
            f"creates {at.address} anew (its record is gone); if it is yours, its code and "
            f"name changed at the service, set the document's code to {held!r}, import it, "
            "then set the code you want: the next plan shows the change, and apply makes it",
        )
    if at.sent:
        return ImportRefused(
            f"template group {at.remote_id} has code {held!r} at the service, and the last "
            f"request of {at.address} sent {wanted!r}: another code is another group, which "
            "that request did not create, and once adopted, the next apply would change "
            f"that group's code to {wanted!r} at the service. Nothing was recorded",
            hint=f"adopt the group of code {wanted!r} that request created (`customs-batch "
            "get template-groups` lists each group's code), or `customs-batch state forget "
            f"{at.address}` if it created none (the next apply looks the code up first, and "
            "creates the group only if it is not there)",
        )
    where = "" if at.where is None else f" ({at.where('code')})"
    return ImportRefused(
        f"template group {at.remote_id} has code {held!r} at the service, and "
        f"{at.address}{where} says {wanted!r}: another code is another group, "
        f"and once imported, the next apply would change that group's code to {wanted!r} at "
        f"the service. The state does not say that {at.address} stood for {at.remote_id} "
        "(no answer in this environment's history gave it that ID). Nothing was recorded",
        hint="check the ID (`customs-batch get template-groups` lists each group's code); "
        f"if you mean to take group {at.remote_id} over (or it is {at.address}'s own, its "
        f"code changed at the service), set the document's code to {held!r}, import it, "
        "then set the code you want: the next plan shows the change, and apply makes it",
    )


def _refresh(
    client: CustomsClient, records: Sequence[ResourceRecord]
) -> dict[str, Refreshed | None]:
    groups = {group.raw.get("id"): group for group in client.iter_template_groups()}
    found: dict[str, Refreshed | None] = {}
    for record in records:
        found[record.address] = _read(groups.get(record.outputs.get("id")), record)
    return found


def _read(group: Record | None, record: ResourceRecord) -> Refreshed | None:
    """What the service holds of ``record``'s group (``group``, None: not found)."""
    if group is None:
        return None
    return Refreshed(
        outputs=outputs_of(OUTPUTS, group, record.outputs),
        remote_spec={k: group.raw[k] for k in COMPARED if k in group.raw},
    )


def _read_target(
    client: CustomsClient, records: Sequence[ResourceRecord]
) -> dict[str, Refreshed | None]:
    """The group each update goes to, read before its PATCH (``reads_first``). The API
    reads no single group: the groups of the record's company are listed, 100 a request,
    until its ID is found (one request for a company of up to 100 groups), where
    ``_refresh`` lists every group for each run of ``refresh``."""
    from customs_batch.client import TemplateGroupFilter

    found: dict[str, Refreshed | None] = {}
    for record in records:
        wanted = record.outputs.get("id")
        company = record.spec.get("companyId")
        filters = TemplateGroupFilter(company_id=company if isinstance(company, int) else None)
        group = next(
            (g for g in client.iter_template_groups(filters) if g.raw.get("id") == wanted), None
        )
        found[record.address] = _read(group, record)
    return found


CODE_FIELDS: CodeFields = tuple(
    (("DeclarationTemplates", "*", field), rule)
    for field, rule in (
        ("declarationOffice", OFFICE),
        ("customsOfficeOfExport", OFFICE),
        ("customsOfficeOfExit", OFFICE),
        ("supervisingOffice", OFFICE),
        ("countryOfDispatch", COUNTRY),
        ("countryOfDestination", COUNTRY),
        ("countryOfBorder", COUNTRY),
        ("incoterm", INCOTERM),
        ("arrivalTransportType", TRANSPORT_MODE),
        ("borderTransportType", TRANSPORT_MODE),
    )
)
"""Which field of a template group's templates holds which sort of code."""


EXAMPLE = Example(
    "template-group",
    """\
apiVersion: customs-batch/v1
kind: TemplateGroup
metadata:
  name: my-group
spec:
  name: My road imports
  code: MY-ROAD
  companyId: 1
  DeclarationTemplates:
    - {procedureType: H1, declarationOffice: NL000396, countryOfDestination: NL}
""",
)
"""What ``customs-batch init`` writes: ``manifests/template-group.yaml``."""


MODEL = KindModel(
    kind=Kind.TEMPLATE_GROUP,
    spec_type=TemplateGroupSpec,
    schema="template-group",
    example=EXAMPLE,
    outputs=OUTPUTS,
    output_types=OUTPUT_TYPES,
    id_field="id",
    typed_id=numeric_id,
    create=Operation.CREATE_TEMPLATE_GROUP,
    send={
        Operation.CREATE_TEMPLATE_GROUP: _create,
        Operation.FIND_OR_CREATE_TEMPLATE_GROUP: _find_or_create,
        Operation.UPDATE_TEMPLATE_GROUP: _update,
    },
    update=Operation.UPDATE_TEMPLATE_GROUP,
    sent_again="create a second group of its code",
    updates_recorded_id=True,
    reads_first=frozenset({Operation.UPDATE_TEMPLATE_GROUP}),
    # The API reads no single group: that read lists the company's groups, 100 a request,
    # as does the look-up by code of a creation whose answer was lost.
    reads_a_list=frozenset(
        {Operation.UPDATE_TEMPLATE_GROUP, Operation.FIND_OR_CREATE_TEMPLATE_GROUP}
    ),
    read_target=_read_target,
    mutable=MUTABLE,
    # The PATCH changes only the fields it is given: isDefault or the templates left out
    # of the document stay at the service as they were sent.
    kept_when_left_out=frozenset({"isDefault", "DeclarationTemplates"}),
    left_out_means={"isDefault": False},  # the API's default
    after_unknown=_after_unknown,
    read_back=_read_back,
    refresh=_refresh,
    on_conflict=_on_conflict,
    import_check=_import_check,
    told_after_loss=frozenset({"name"}),
    identity=_identity,
    code_fields=CODE_FIELDS,
    immutable="{fields} of a template group cannot be changed: the API has no call for it. "
    "Revert the change, or create the group you want under a new name and code",
    output_ids={"id": OutputId(IdSort.TEMPLATE_GROUP)},
    unique=UniqueField(
        field="code",
        within="companyId",
        what="template-group code",
        within_word="company",
        hint="the service keeps codes unique per company: choose another code",
    ),
)
