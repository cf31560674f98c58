"""Project-wide checks of what one document says about another.

- A ``${ref:}`` whose output cannot go into the field it feeds: a status (text) into an
  integer ``declarationId`` validates as a reference but fails at apply.
- A declaration ID taken from the wrong sort of declaration: an ExportCancellation cancels
  an export declaration (``DELETE /v1/declarations/{id}``), never the transit declaration
  of a DepartureDeclaration; a TransitPartyUpdate updates a transit declaration, not an
  export declaration nor a template group.
- A TransitPartyUpdate with ``variant: arrival`` (``PATCH /transit-declarations/{id}``)
  whose declaration is a departure of the batch: that is the departure variant's endpoint.

What each kind contributes is its model's (``kinds/<kind>.py``): the types of its outputs
(``output_types``), what its ID outputs are IDs of (``output_ids``), and the field that must
hold an ID of some sorts (``takes_id``, with its variants); the checks here ask the model.
- Two names of one kind that differ only by case (``mov-B4-arrival``, ``mov-b4-arrival``):
  the same document written twice, most likely.

They read only what the slim documents of a big batch keep (see
:func:`customs_batch.validation.batch.slim_document`): addresses, references, the positions
of both, and ``variant``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from typing import Any

from customs_batch.findings import Finding, Location, Severity, a_or_an
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.checks import IdSort, TakesId
from customs_batch.kinds.registry import KINDS, model_of
from customs_batch.manifest.document import Document, Reference
from customs_batch.resources import kind_schema

OUTPUT_TYPES: dict[Kind, dict[str, str]] = {
    kind: dict(model.output_types) for kind, model in KINDS.items()
}
"""The JSON type of each output a reference may name, by kind (each model's
``output_types``, whose names are its ``outputs``)."""
_TAKES: dict[Kind, TakesId] = {k: m.takes_id for k, m in KINDS.items() if m.takes_id}
_A = {"integer": "an integer", "string": "text", "boolean": "a boolean", "number": "a number"}


def check_cross_documents(
    documents: Sequence[Document], known: Mapping[Address, Document]
) -> list[Finding]:
    """Findings of what documents say about each other (``known``: the batch by address)."""
    findings: list[Finding] = []
    for document in documents:
        for reference in document.references:
            finding = _reference_type(document, reference)
            if finding is not None:
                findings.append(finding)
        takes = _TAKES.get(document.kind)
        if takes is not None:
            findings.extend(_declaration(document, takes, known))
    findings.extend(_names_differing_by_case(documents))
    return findings


def _finding(document: Document, rule: str, location: Location, message: str, hint: str) -> Finding:
    return Finding(rule, Severity.ERROR, message, location, hint, document=str(document.address))


def _where(document: Document) -> str:
    return f"{document.source.file}:{document.source.line}"


def _reference_location(document: Document, reference: Reference) -> Location:
    path = reference.path if reference.path[:1] == ("spec",) else ("spec", *reference.path)
    return document.locate(path)


# -- the type of a reference against its field ---------------------------------------------


def _reference_type(document: Document, reference: Reference) -> Finding | None:
    """A reference whose output's type the field does not take.

    Only fields that take no text are checked: a reference there must be the whole value
    (the schema holds it to that), and resolves to the output itself. In a text field a
    reference may sit inside text, which makes it text whatever the output.
    """
    output = OUTPUT_TYPES.get(reference.target.kind, {}).get(reference.field)
    path = reference.path[1:] if reference.path[:1] == ("spec",) else reference.path
    accepted = field_types(document.kind, tuple(path))
    if output is None or not accepted or "string" in accepted:
        return None
    if output in accepted or (output == "integer" and "number" in accepted):
        return None
    field = ".".join(str(part) for part in path)
    wanted = " or ".join(_A.get(t, t) for t in sorted(accepted))
    message = (
        f"{reference.text} puts the {reference.field} of {a_or_an(reference.target.kind.value)}, "
        f"{_A[output]}, into {field}, which takes {wanted}: apply would fail"
    )
    fitting = sorted(
        name
        for name, kind in OUTPUT_TYPES[reference.target.kind].items()
        if kind in accepted or (kind == "integer" and "number" in accepted)
    )
    if fitting:
        hint = "refer to " + " or ".join(f"${{ref:{reference.target}.{name}}}" for name in fitting)
    else:
        hint = f"{a_or_an(reference.target.kind.value)} has no output that is {wanted}: write the value"
    return _finding(
        document, "project.reference-type", _reference_location(document, reference), message, hint
    )


@lru_cache(maxsize=1024)
def field_types(kind: Kind, path: tuple[str | int, ...]) -> frozenset[str]:
    """The JSON types the field at ``path`` of a ``kind``'s spec takes, a reference aside;
    empty when the schema does not say."""
    schema = _schema(kind)
    node: Any = schema
    for part in path:
        node = _resolved(schema, node)
        if isinstance(part, int):
            node = node.get("items") if isinstance(node, dict) else None
        else:
            properties = node.get("properties") if isinstance(node, dict) else None
            node = properties.get(part) if isinstance(properties, dict) else None
        if node is None:
            return frozenset()
    return frozenset(_types(schema, _resolved(schema, node)))


@cache
def _schema(kind: Kind) -> dict[str, Any]:
    return kind_schema(kind)


def _resolved(schema: Mapping[str, Any], node: Any) -> Any:
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        target = node["$ref"]
        if not target.startswith("#/"):
            return {}
        found: Any = schema
        for key in target[2:].split("/"):
            found = found.get(key, {}) if isinstance(found, dict) else {}
        node = found
    return node


def _types(schema: Mapping[str, Any], node: Any) -> set[str]:
    if not isinstance(node, dict):
        return set()
    kind = node.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {str(k) for k in kind}
    found: set[str] = set()
    for alternative in node.get("anyOf", ()) or node.get("oneOf", ()):
        if isinstance(alternative, dict) and alternative.get("$ref") == "#/$defs/reference":
            continue  # a reference is what is checked here
        found |= _types(schema, _resolved(schema, alternative))
    return found


# -- which declaration a declarationId names -----------------------------------------------


def declaration_of(
    reference: Reference, known: Mapping[Address, Document], seen: frozenset[Address] = frozenset()
) -> IdSort | None:
    """What the output a reference names is the ID of, when the batch tells; else None."""
    target = reference.target
    named = model_of(target.kind).output_ids.get(reference.field)
    if named is None or named.sort is not None:
        return None if named is None else named.sort
    document = known.get(target)
    if document is None or target in seen:
        return None
    if named.repeats is not None:
        repeated = _reference_at(document, named.repeats)
        if repeated is not None:
            return declaration_of(repeated, known, seen | {target})
    return named.otherwise(document.spec) if named.otherwise is not None else None


def _reference_at(document: Document, field: str) -> Reference | None:
    """The reference written as the spec's ``field``, if any."""
    for reference in document.references:
        path = reference.path[1:] if reference.path[:1] == ("spec",) else reference.path
        if tuple(path) == (field,):
            return reference
    return None


def _declaration(
    document: Document, takes: TakesId, known: Mapping[Address, Document]
) -> list[Finding]:
    reference = _reference_at(document, takes.field)
    if reference is None:
        return []
    named = declaration_of(reference, known)
    if named is None:
        return []
    location = _reference_location(document, reference)
    target = known.get(reference.target)
    there = f" at {_where(target)}" if target is not None else ""
    if named not in takes.accepts:
        message = (
            f"{reference.text} is the ID of {named} ({reference.target}{there}), but "
            f"{takes.purpose}"
        )
        return [_finding(document, "project.wrong-declaration", location, message, takes.hint)]
    variant = document.spec.get("variant")
    for rule in takes.variants:
        if rule.value == variant and named in rule.refuses:
            message = (
                f"variant {rule.value} {rule.says}, but {reference.text} is the ID of {named} "
                f"{reference.target}{there}"
            )
            where = document.locate(("spec", "variant"))
            return [_finding(document, rule.rule, where, message, rule.hint)]
    return []


# -- names that differ only by case --------------------------------------------------------


def _names_differing_by_case(documents: Sequence[Document]) -> list[Finding]:
    # Only names with a capital are kept, by kind and folded name: two all-lower-case names
    # that are equal are the same address (project.duplicate-address), and a batch of
    # 100,000 such names builds no second table. A name seen once keeps its document alone,
    # not in a list. The tables are keyed by plain strings: looking up 100,000 Address
    # objects (each hashed anew) took 60% of the time of this check (measured).
    tables: dict[Kind, dict[str, Document | list[Document]]] = {}
    for document in documents:
        name = document.name
        folded = name.casefold()
        if folded == name:
            continue
        table = tables.get(document.kind)
        if table is None:
            table = tables[document.kind] = {}
        group = table.setdefault(folded, document)
        if isinstance(group, list):
            group.append(document)
        elif group is not document:
            table[folded] = [group, document]
    if not tables:
        return []
    # The all-lower-case spelling of a kept name, wherever it was written: one string
    # lookup a document (a capitalised name is never a folded one).
    lowers: dict[tuple[Kind, str], Document] = {}
    for document in documents:
        table = tables.get(document.kind)
        if table is not None and document.name in table:
            lowers.setdefault((document.kind, document.name), document)
    findings: list[Finding] = []
    for kind, table in tables.items():
        for folded, group in table.items():
            lower = lowers.get((kind, folded))
            if lower is not None or isinstance(group, list):
                findings.extend(_twins(group, lower))
    return findings


def _twins(group: Document | list[Document], lower: Document | None) -> list[Finding]:
    """A finding for each spelling of a name after the first, in the order written; an
    address written twice counts once (project.duplicate-address reports it)."""
    members = list(group) if isinstance(group, list) else [group]
    if lower is not None:
        members.append(lower)
    by_name: dict[str, Document] = {}
    for member in sorted(members, key=lambda d: (d.source.file, d.source.line, d.index)):
        by_name.setdefault(member.name, member)
    spellings = list(by_name.values())
    return [_case_twin(document, spellings[0]) for document in spellings[1:]]


def _case_twin(document: Document, earlier: Document) -> Finding:
    message = (
        f"{document.address} differs from {earlier.address} at {_where(earlier)} only by "
        "case: the same document written twice?"
    )
    hint = (
        "remove one of them; if both are meant, give them names that differ by more than "
        "case (names in other capitals are easily taken for one another)"
    )
    location = document.locate(("metadata", "name"))
    return _finding(document, "project.name-case", location, message, hint)
