"""Check a document against the JSON Schemas, its envelope and its kind's spec, and place
each violation."""

from __future__ import annotations

from typing import Any

from customs_batch.findings import Finding, Severity
from customs_batch.kinds import API_VERSION
from customs_batch.manifest.document import Document
from customs_batch.validation.schemas import CompiledSchema, envelope_schema, spec_schema


def check_spec_schema(document: Document) -> list[Finding]:
    """Findings for every way the document's spec breaks the schema of its kind.

    Each finding points at the offending value, or for a missing field at the mapping that
    lacks it; values a template produced point into the template.
    """
    spec = document.spec
    # jsonschema-rs reads plain dicts; a loader may hand over another Mapping.
    instance = spec if isinstance(spec, dict) else dict(spec)
    return _findings(document, spec_schema(document.kind), instance, ("spec",))


def check_envelope_schema(document: Document) -> list[Finding]:
    """Findings for every way the document's envelope, as loaded, breaks the envelope schema
    (its kind one of the registry's, its ``dependsOn`` addresses of registered kinds, its
    earlier names): the schema whose lists of kinds come from the registry."""
    return _findings(document, envelope_schema(), envelope_of(document), ())


def envelope_of(document: Document) -> dict[str, Any]:
    """The envelope of a loaded document as the envelope schema reads it (its spec and
    values are the kind's schema's and the template's business)."""
    metadata: dict[str, Any] = {"name": document.name}
    if document.depends_on:
        metadata["dependsOn"] = [str(address) for address in document.depends_on]
    if document.labels:
        metadata["labels"] = dict(document.labels)
    if document.annotations:
        metadata["annotations"] = dict(document.annotations)
    if document.previous_names:
        metadata["previousNames"] = list(document.previous_names)
    envelope: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": document.kind.value,
        "metadata": metadata,
    }
    if document.template is not None:
        envelope["template"] = document.template
    return envelope


def _findings(
    document: Document, schema: CompiledSchema, instance: object, at: tuple[str, ...]
) -> list[Finding]:
    findings: list[Finding] = []
    for violation in schema.violations(instance):
        location = document.locate((*at, *violation.path))
        hint = violation.hint
        if violation.cell_hint is not None and location.cell() is not None:
            hint = violation.cell_hint
        findings.append(
            Finding(
                rule=violation.rule,
                severity=Severity.ERROR,
                message=violation.message,
                location=location,
                hint=hint,
                document=str(document.address),
                sensitive=violation.sensitive,
            )
        )
    return findings
