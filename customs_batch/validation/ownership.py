"""One owner per remote field: no two documents write the same party field of a declaration.

A departure in the manifests owns every party field it writes: when it changes, apply sends
the change as a party update of that declaration, from the departure's own document. A
``TransitPartyUpdate`` of that departure (its ``declarationId`` a
``${ref:DepartureDeclaration/….declarationId}``) may write only the fields the departure
leaves out; otherwise the two documents would each think they set the field, and after
either changes the service holds one while plan calls the other unchanged. Two party updates
of one declaration may not write one field either. A party update of a declaration made
elsewhere (a literal ID) is checked against the other updates of that ID only: whether a
literal ID is a departure of the manifests is known only from the state, not offline (the
plan refuses those clashes: ``planning/owners.py``).

Which kinds write party fields, and whose, is their model's ``parties``
(``kinds/<kind>.py``): an owner writes its own declaration's (a departure), an update names
the declaration it writes in a spec field (a party update's ``declarationId``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from customs_batch.findings import Finding, JsonPath
from customs_batch.kinds import Kind
from customs_batch.kinds.checks import Parties
from customs_batch.kinds.registry import KINDS
from customs_batch.manifest.document import JSON, Document
from customs_batch.validation.common import is_reference, spec_finding

RULE = "project.two-owners"
PARTIES = ("Principal", "Consignor", "Consignee")
Field = tuple[str, str]
"""A party field of a declaration: (party role, field name), e.g. ("Consignee", "street")."""


PARTY_FIELDS_KEY = "\0party-fields"
"""Where the slim copy of a document (``validation/batch.py``) keeps the party fields its
spec writes, instead of the parties themselves."""


def party_fields(spec: Mapping[str, JSON]) -> list[Field]:
    """The party fields a document's spec writes, in the order it writes them."""
    if PARTY_FIELDS_KEY in spec:
        return list(spec[PARTY_FIELDS_KEY])
    fields: list[Field] = []
    for role in PARTIES:
        party = spec.get(role)
        if isinstance(party, Mapping):
            fields.extend((role, str(name)) for name in party)
    return fields


_PARTIES: dict[Kind, Parties] = {k: m.parties for k, m in KINDS.items() if m.parties}
"""The kinds that write party fields (asked of every document of a batch)."""


def _parties(document: Document) -> Parties | None:
    return _PARTIES.get(document.kind)


def _owns(document: Document) -> bool:
    """Whether the document writes the party fields of its own declaration (a departure)."""
    parties = _parties(document)
    return parties is not None and parties.updates is None


def _target(document: Document, field: str) -> tuple[str, ...] | None:
    """The declaration a party update is aimed at (its spec's ``field``): a departure of the
    batch by its address, or a literal ID (with the variant: departure and arrival IDs are
    told apart)."""
    value = document.spec.get(field)
    for reference in document.references:
        owner = _PARTIES.get(reference.target.kind)
        if (
            owner is not None
            and owner.updates is None
            and reference.field == owner.id_output
            and reference.path in ((field,), ("spec", field))
            and reference.text == value
        ):
            return ("departure", str(reference.target))
    if value is None or is_reference(value) or isinstance(value, (dict, list)):
        return None
    return ("literal", str(document.spec.get("variant", "departure")), str(value))


def check_owners(documents: Sequence[Document]) -> list[Finding]:
    """A finding for each party update that writes a party field another document writes."""
    updates = [(d, field) for d in documents if (field := _updated_by(d)) is not None]
    if not updates:
        return []
    departures = {str(d.address): d for d in documents if _owns(d)}
    owners: dict[tuple[str, ...], dict[Field, Document]] = {}
    findings: list[Finding] = []
    for update, field in sorted(updates, key=lambda u: u[0].index):
        target = _target(update, field)
        if target is None:
            continue
        owned = owners.get(target)
        if owned is None:
            owned = owners[target] = {}
            departure = departures.get(target[1]) if target[0] == "departure" else None
            if departure is not None:
                owned.update(dict.fromkeys(party_fields(departure.spec), departure))
        # By the owner's address: a document (its spec a dict) cannot be a key.
        clashes: dict[str, tuple[Document, list[Field]]] = {}
        for written in party_fields(update.spec):
            owner = owned.setdefault(written, update)
            if owner is not update:
                clashes.setdefault(str(owner.address), (owner, []))[1].append(written)
        findings.extend(_clash(update, owner, fields) for owner, fields in clashes.values())
    return findings


def owner_keys(document: Document) -> tuple[str, ...]:
    """What this check can relate ``document`` to another file's documents by (see
    :func:`customs_batch.validation.project.meeting_keys`): the declaration whose party
    fields it writes, as its own (a departure) or as an update of another."""
    parties = _parties(document)
    if parties is None:
        return ()
    if parties.updates is None:
        return ("o\0departure\0" + str(document.address),)
    target = _target(document, parties.updates)
    return () if target is None else ("o\0" + "\0".join(target),)


def _updated_by(document: Document) -> str | None:
    """The spec field naming the declaration whose parties the document updates, if any."""
    parties = _parties(document)
    return parties.updates if parties is not None else None


def _clash(update: Document, owner: Document, fields: list[Field]) -> Finding:
    names = ", ".join(f"{role}.{name}" for role, name in fields)
    are = "is" if len(fields) == 1 else "are"
    where = f"{owner.source.file}:{owner.source.line}"
    path: JsonPath = fields[0]
    declaration = update.spec.get(_updated_by(update) or "declarationId")
    if _owns(owner):
        message = (
            f"{names} of the declaration of {owner.address} {are} written by two documents: "
            f"this party update and {owner.address} at {where}"
        )
        hint = (
            f"{owner.address} owns every party field it writes: make the change in "
            f"{owner.address} (apply sends it as a party update of its declaration) and remove "
            f"{names} from {update.address}. A party update of a departure in the manifests "
            "may only write the fields the departure leaves out"
        )
    else:
        message = (
            f"{names} of declaration {declaration} {are} written by two documents: "
            f"{update.address} and {owner.address} at {where}"
        )
        hint = (
            f"each field of a declaration has one owner: write {names} in one of the two "
            "party updates only (or merge them into one document)"
        )
    return spec_finding(update, RULE, path, message, hint)
