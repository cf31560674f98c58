"""Project-wide checks: what no single document shows, only the batch as a whole."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from customs_batch.findings import Finding, Location, Severity
from customs_batch.kinds import OUTPUT_FIELDS, Address, Kind
from customs_batch.manifest.document import Document, Reference
from customs_batch.validation.common import is_reference
from customs_batch.validation.cross_document import check_cross_documents
from customs_batch.validation.cycles import find_cycles
from customs_batch.validation.order import check_order
from customs_batch.validation.ownership import check_owners


def check_project(documents: Sequence[Document], broken: Collection[Address] = ()) -> list[Finding]:
    """Findings about the batch: addresses, references, cycles, duplicated work, party
    fields written by two documents, movements of one HAWB in several files without order.

    ``broken`` are the addresses of documents left out for an error already reported: they
    are in the batch, so a reference to one is not reported again as naming nothing.
    """
    first: dict[Address, Document] = {}
    findings: list[Finding] = []
    for document in documents:
        earlier = first.setdefault(document.address, document)
        if earlier is not document:
            findings.append(_duplicate_address(document, earlier))
    findings.extend(_references(documents, first, frozenset(broken)))
    findings.extend(_cycles(first))
    findings.extend(_duplicate_template_codes(documents))
    findings.extend(_duplicate_requests(documents))
    findings.extend(_deactivated_hawbs(documents))
    findings.extend(check_owners(documents))
    findings.extend(check_order(documents))
    findings.extend(check_cross_documents(documents, first))
    return findings


def where(document: Document) -> str:
    """``file:line`` of a document, for messages naming another document."""
    return f"{document.source.file}:{document.source.line}"


def _finding(
    document: Document,
    rule: str,
    location: Location,
    message: str,
    hint: str,
    severity: Severity = Severity.ERROR,
) -> Finding:
    return Finding(rule, severity, message, location, hint, document=str(document.address))


def _duplicate_address(document: Document, earlier: Document) -> Finding:
    message = f"{document.address} is defined twice; the first is at {where(earlier)}"
    hint = "names must be unique within a kind: rename one of them"
    return _finding(
        document, "project.duplicate-address", document.locate(("metadata", "name")), message, hint
    )


def reference_location(document: Document, reference: Reference) -> Location:
    """Where a reference was written (its path may be given with or without ``spec``)."""
    path = reference.path if reference.path[:1] == ("spec",) else ("spec", *reference.path)
    return document.locate(path)


def broken_addresses(findings: Iterable[Finding]) -> frozenset[Address]:
    """The addresses that loading findings name: documents written but not built."""
    named = {finding.document for finding in findings if finding.document is not None}
    return frozenset(a for a in map(Address.parse, named) if a is not None)


def _references(
    documents: Sequence[Document], known: dict[Address, Document], broken: frozenset[Address]
) -> list[Finding]:
    findings = []
    for document in documents:
        for reference in document.references:
            if reference.target in broken and reference.target not in known:
                continue
            finding = _reference(document, reference, known)
            if finding is not None:
                findings.append(finding)
        for index, target in enumerate(document.depends_on):
            if target not in known and target not in broken:
                location = document.locate(("metadata", "dependsOn", index))
                message = f"dependsOn names {target}, which is not in the batch"
                hint = "check the kind and name, or remove the entry"
                rule = "project.unknown-dependency"
                findings.append(_finding(document, rule, location, message, hint))
    return findings


def _reference(
    document: Document, reference: Reference, known: dict[Address, Document]
) -> Finding | None:
    location = reference_location(document, reference)
    target = reference.target
    if target not in known:
        message = f"{reference.text} refers to {target}, which is not in the batch"
        hint = "check the kind and name, or add the document it refers to"
        return _finding(document, "project.unknown-reference", location, message, hint)
    fields = OUTPUT_FIELDS[target.kind]
    if reference.field in fields:
        return None
    message = f"{reference.text}: a {target.kind.value} has no outcome field {reference.field!r}"
    hint = f"use one of: {', '.join(sorted(fields))}"
    return _finding(document, "project.unknown-output-field", location, message, hint)


def _cycles(known: dict[Address, Document]) -> list[Finding]:
    """One finding per cycle, at the ``dependsOn`` entry or reference of its first document
    that closes it (removing any one edge of the cycle breaks it). A cycle of thousands of
    documents is still one finding naming its first few members and their count: a finding
    per member, each printing the whole path, grew as the square of its length."""
    # Only a document that names another can be on a cycle: the rest (every row of a
    # spreadsheet, say) are left out of the search and its tables.
    edges: dict[Address, list[Address]] = {}
    for address, doc in known.items():
        if doc.references or doc.depends_on:
            targets = (*(r.target for r in doc.references), *doc.depends_on)
            edges[address] = [t for t in targets if t in known]
    findings = []
    hint = "break the cycle: remove a reference or a dependsOn entry from one of these documents"
    for cycle in find_cycles(edges):
        document = known[cycle[0]]
        location = _edge_location(document, cycle[1 % len(cycle)])
        message = describe_cycle([str(address) for address in cycle])
        findings.append(_finding(document, "project.cycle", location, message, hint))
    return findings


CYCLE_SHOWN = 5  # members of a cycle a message names before it counts the rest


def describe_cycle(members: Sequence[str]) -> str:
    """``dependency cycle: a -> b -> a``; a longer cycle names its first members and a count."""
    if len(members) <= CYCLE_SHOWN:
        return "dependency cycle: " + " -> ".join((*members, members[0]))
    shown = " -> ".join(members[:CYCLE_SHOWN])
    rest = len(members) - CYCLE_SHOWN
    return (
        f"dependency cycle of {len(members):,} documents: {shown} -> ... "
        f"({rest:,} more) -> {members[0]}"
    )


def _edge_location(document: Document, target: Address) -> Location:
    """Where ``document`` names ``target``: its dependsOn entry, else its reference."""
    for index, named in enumerate(document.depends_on):
        if named == target:
            return document.locate(("metadata", "dependsOn", index))
    for reference in document.references:
        if reference.target == target:
            return reference_location(document, reference)
    return document.locate(())


def _duplicate_template_codes(documents: Sequence[Document]) -> list[Finding]:
    """Each template group sharing its code with another of the same company, at its code."""
    groups: dict[tuple[str, str], list[Document]] = {}
    for document in documents:
        code, company = document.spec.get("code"), document.spec.get("companyId")
        if (
            document.kind is not Kind.TEMPLATE_GROUP
            or not isinstance(code, str)
            or is_reference(code)
        ):
            continue
        groups.setdefault((repr(company), code), []).append(document)  # repr: hashable
    findings = []
    hint = "the service keeps codes unique per company: choose another code"
    for group in groups.values():
        for document in group if len(group) > 1 else ():
            others = [other for other in group if other is not document]
            more = f" (and {len(others) - 1} more)" if len(others) > 1 else ""
            there = others[0].locate(("spec", "code"))
            message = (
                f"template-group code {document.spec['code']!r} of company "
                f"{document.spec.get('companyId')} is also used by {others[0].address} at "
                f"{there.file}:{there.line}{more}"
            )
            location = document.locate(("spec", "code"))
            findings.append(
                _finding(document, "project.duplicate-template-code", location, message, hint)
            )
    return findings


def _canonical(spec: Any) -> str:
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), default=str)


_SCALARS = (str, int, float, bool)  # a tuple: isinstance with a union is slower


def _fingerprint(document: Document) -> int:
    """A cheap key that equal specs of one kind share: a hash of the kind and the top-level
    scalar fields. Only a hash is kept: the sets themselves, one per document, were most of
    the memory of this check over 100,000 spreadsheet rows; documents whose hashes collide
    are told apart by their kind and canonical JSON anyway."""
    scalars = frozenset(
        (key, value)
        for key, value in document.spec.items()
        if value is None or isinstance(value, _SCALARS)
    )
    return hash((document.kind, scalars))


def _duplicate_requests(documents: Sequence[Document]) -> list[Finding]:
    # Canonical JSON is the exact test but costs tens of microseconds a document: only
    # documents whose cheap fingerprints collide pay for it. A fingerprint seen once keeps
    # its document alone, not in a list: most of 100,000 rows are seen once.
    groups: dict[int, Document | list[Document]] = {}
    for document in documents:
        # Two equal template groups share their code: the code check reports them already.
        if document.kind is Kind.TEMPLATE_GROUP:
            continue
        key = _fingerprint(document)
        group = groups.setdefault(key, document)
        if isinstance(group, list):
            group.append(document)
        elif group is not document:
            groups[key] = [group, document]
    findings = []
    for group in groups.values():
        seen: dict[tuple[Kind, str], Document] = {}
        for document in group if isinstance(group, list) else ():
            earlier = seen.setdefault((document.kind, _canonical(document.spec)), document)
            if earlier is not document and earlier.address != document.address:
                findings.append(_duplicate_request(document, earlier))
    return findings


def _duplicate_request(document: Document, earlier: Document) -> Finding:
    message = (
        f"{document.address} would send the same request as {earlier.address} at {where(earlier)}"
    )
    # Two equal movements may be meant (two loads of the same size); anything else twice is a mistake.
    severity = Severity.WARNING if document.kind is Kind.MOVEMENT else Severity.ERROR
    hint = "remove one of them, or change what differs"
    if severity is Severity.WARNING:
        hint += "; if both movements are meant, ignore this warning"
    location = document.locate(("spec",))
    return _finding(document, "project.duplicate-request", location, message, hint, severity)


def _hawb_key(document: Document) -> tuple[str, str] | None:
    shipment, hawb = document.spec.get("shipmentId"), document.spec.get("hawbId")
    if (
        isinstance(shipment, str)
        and isinstance(hawb, str)
        and not is_reference(shipment)
        and not is_reference(hawb)
    ):
        return shipment, hawb
    return None


def _deactivated_hawbs(documents: Sequence[Document]) -> list[Finding]:
    # Only the HAWBs some document deactivates are looked for among the movements: a table
    # of every movement's HAWB would hold a list per row of a 100,000-row export.
    deactivated = {
        _hawb_key(document)
        for document in documents
        if document.kind is Kind.HAWB_DEACTIVATION and _hawb_key(document) is not None
    }
    movements: dict[tuple[str, str], list[Document]] = {}
    for document in documents if deactivated else ():
        key = _hawb_key(document) if document.kind is Kind.MOVEMENT else None
        if key in deactivated:
            assert key is not None
            movements.setdefault(key, []).append(document)
    findings = []
    for document in documents:
        key = _hawb_key(document) if document.kind is Kind.HAWB_DEACTIVATION else None
        if key is None or key not in movements:
            continue
        moving = movements[key]
        others = f" (and {len(moving) - 1} more movements)" if len(moving) > 1 else ""
        message = (
            f"HAWB {key[1]} of {key[0]} is deactivated in the same batch that moves it with "
            f"{moving[0].address}{others}: the order matters"
        )
        hint = (
            "once a movement on the HAWB is sent the service refuses the deactivation, and a "
            "deactivated HAWB is not moved: apply them in separate batches, or make the order "
            "explicit with dependsOn"
        )
        location = document.locate(("spec", "hawbId"))
        findings.append(
            _finding(
                document,
                "project.hawb-deactivated-with-movements",
                location,
                message,
                hint,
                Severity.WARNING,
            )
        )
    return findings
