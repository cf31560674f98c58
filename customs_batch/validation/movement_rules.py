"""Rule checks of a Movement that JSON Schema cannot express: the customs-declaration rules
of POST /v1/shipments/{id}/movements, the party rule and the MRN of an external declaration."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from enum import Enum, StrEnum
from typing import Any, TypeVar

from customs_batch.findings import Finding, Severity
from customs_batch.manifest.document import Document
from customs_batch.validation import codes
from customs_batch.validation.common import is_reference, number_at, spec_finding


class Action(StrEnum):
    """The six movement actions."""

    VAH = "VAH"
    VAB = "VAB"
    ISL = "ISL"
    USL = "USL"
    ISC = "ISC"
    USC = "USC"


class Source(StrEnum):
    """Where a movement's customs declaration comes from."""

    INTERNAL = "INTERNAL"
    EXTERNAL = "EXTERNAL"
    RTO_LICENSE = "RTO_LICENSE"
    DECO = "DECO"
    ENTREPOT = "ENTREPOT"


_ISC_SOURCES = frozenset({Source.INTERNAL, Source.EXTERNAL, Source.ENTREPOT})
SOURCES_PER_ACTION: dict[Action, frozenset[Source]] = {
    Action.VAH: frozenset({Source.EXTERNAL, Source.RTO_LICENSE}),
    Action.VAB: frozenset({Source.EXTERNAL, Source.RTO_LICENSE}),
    Action.ISC: _ISC_SOURCES,
    Action.USC: _ISC_SOURCES | {Source.DECO},
    Action.ISL: frozenset(),
    Action.USL: frozenset(),
}
FIELDS_PER_SOURCE: dict[Source, tuple[str, ...]] = {
    Source.INTERNAL: ("declarationId",),
    Source.EXTERNAL: ("documentType", "declarationType", "declarationNumber"),
    Source.ENTREPOT: ("documentType",),
    Source.RTO_LICENSE: (),
    Source.DECO: (),
}
_DECLARATION_FIELDS = frozenset(
    {"declarationId", "documentType", "declarationType", "declarationNumber"}
)
# ISL and USL reuse the linked movement's declaration; the others need one unless on file.
_LINKED = frozenset({Action.ISL, Action.USL})
_NEEDS_PARTY = frozenset({Action.VAH, Action.VAB, Action.ISL, Action.USL})
# VAH, VAB, ISC and USC need a declaration unless one is on file (an allocation or the RTO
# licence); offline we cannot know, so its absence is a warning, not an error.
_WARN_WITHOUT_DECLARATION = frozenset({Action.VAH, Action.VAB, Action.ISC, Action.USC})


E = TypeVar("E", bound=Enum)


def _enum_value(enum: type[E], value: object) -> E | None:
    try:
        return enum(value)
    except ValueError:
        return None


def check_movement(document: Document, mrn_check_digit: Severity | None) -> list[Finding]:
    """Findings of the movement rules; an unknown action or source is the schema's finding."""
    action = _enum_value(Action, document.spec.get("action"))
    if action is None:
        return []
    return [
        *_party(document, action),
        *_declaration(document, action, mrn_check_digit),
        *_weight_without_packages(document),
    ]


def _weight_without_packages(document: Document) -> list[Finding]:
    """A movement of no packages that weighs something: one of the two is wrong."""
    quantity, weight = document.spec.get("quantity"), number_at(document.spec, "grossWeightKg")
    if quantity != 0 or isinstance(quantity, bool) or weight is None or weight <= 0:
        return []
    message = f"the movement moves 0 packages but weighs {weight:g} kg"
    hint = "write the number of packages moved in quantity, or 0 in grossWeightKg"
    return [
        spec_finding(document, "movement.weight-without-packages", ("quantity",), message, hint)
    ]


def _declaration(
    document: Document, action: Action, mrn_check_digit: Severity | None
) -> list[Finding]:
    declaration = document.spec.get("customsDeclaration")
    if declaration is None:
        if action in _WARN_WITHOUT_DECLARATION:
            return [_missing_declaration(document, action)]
        return []
    if not isinstance(declaration, Mapping):
        return []
    if action in _LINKED:
        message = f"{action.value} movements must not carry customsDeclaration"
        hint = f"remove customsDeclaration: {action.value} reuses the linked movement's declaration"
        return [_at(document, "movement.declaration-forbidden", None, message, hint)]
    source = _enum_value(Source, declaration.get("source"))
    if source is None:
        return []
    findings = _source_fields(document, source, declaration)
    allowed = SOURCES_PER_ACTION[action]
    if source not in allowed:
        names = ", ".join(sorted(s.value for s in allowed))
        message = f"source {source.value} is not accepted for {action.value} movements"
        hint = f"use one of: {names}"
        findings.insert(0, _at(document, "movement.source-not-allowed", "source", message, hint))
    if source is Source.EXTERNAL:
        findings.extend(_external_mrn(document, declaration, mrn_check_digit))
    return findings


def _at(document: Document, rule: str, field: str | None, message: str, hint: str) -> Finding:
    """An error at ``customsDeclaration`` or at one of its fields."""
    path = ("customsDeclaration",) if field is None else ("customsDeclaration", field)
    return spec_finding(document, rule, path, message, hint)


def _party(document: Document, action: Action) -> list[Finding]:
    if action not in _NEEDS_PARTY or "partyId" in document.spec:
        return []
    message = f"{action.value} movements need partyId"
    hint = "add partyId: the RTO party (rpty_...) the goods move to or from"
    return [_at_action(document, "movement.party-required", message, hint)]


def _at_action(
    document: Document, rule: str, message: str, hint: str, severity: Severity = Severity.ERROR
) -> Finding:
    """A finding about a field the action requires: on the ``action:`` line, which is what
    asks for it, with the path of the spec that lacks it."""
    finding = spec_finding(document, rule, ("action",), message, hint, severity)
    return dataclasses.replace(
        finding, location=dataclasses.replace(finding.location, path=("spec",))
    )


def _missing_declaration(document: Document, action: Action) -> Finding:
    names = ", ".join(sorted(s.value for s in SOURCES_PER_ACTION[action]))
    message = (
        f"{action.value} movements need customsDeclaration unless a declaration is on file: "
        "an allocation or the RTO licence"
    )
    hint = (
        f"add customsDeclaration (source one of {names}); if an allocation or the RTO licence "
        "covers this movement, ignore this warning"
    )
    return _at_action(document, "movement.declaration-missing", message, hint, Severity.WARNING)


def _source_fields(
    document: Document, source: Source, declaration: Mapping[str, Any]
) -> list[Finding]:
    wanted = FIELDS_PER_SOURCE[source]
    findings = [
        _at(
            document,
            "movement.source-field-missing",
            None,
            f'customsDeclaration with source {source.value} needs "{field}"',
            f'add "{field}"',
        )
        for field in wanted
        if field not in declaration
    ]
    listed = ", ".join(wanted) if wanted else "no other field"
    for field in sorted(_DECLARATION_FIELDS.intersection(declaration).difference(wanted)):
        message = f'"{field}" is not allowed with source {source.value}'
        hint = f"remove it: source {source.value} takes {listed}"
        findings.append(_at(document, "movement.source-field-forbidden", field, message, hint))
    return findings


def _external_mrn(
    document: Document, declaration: Mapping[str, Any], severity: Severity | None
) -> list[Finding]:
    written = declaration.get("declarationNumber")
    if not isinstance(written, str) or is_reference(written):
        return []
    # A cell copied from a customs letter often brings a space along: the MRN within is
    # checked all the same, and the space is an error of its own (it would be sent).
    number = codes.without_spaces(written)
    if not codes.looks_like_mrn(number):
        return []
    path = ("customsDeclaration", "declarationNumber")
    hint = "write the MRN exactly as customs issued it, in capitals and without spaces"
    findings = []
    spaced = codes.spaced_problem(written, "MRN")
    if spaced is not None:
        findings.append(spec_finding(document, "mrn.format", path, spaced, hint))
    problem = codes.mrn_format_problem(number)
    if problem is not None:
        return [*findings, spec_finding(document, "mrn.format", path, problem, hint)]
    problem = codes.mrn_check_problem(number)
    if problem is None or severity is None:
        return findings
    hint = "check the MRN for a typing error; --mrn-check-digit warning|off relaxes this check"
    return [*findings, spec_finding(document, "mrn.check-digit", path, problem, hint, severity)]
