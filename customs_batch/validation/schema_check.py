"""Check a document's spec against its kind's JSON Schema and place each violation."""

from __future__ import annotations

from customs_batch.findings import Finding, Severity
from customs_batch.manifest.document import Document
from customs_batch.validation.schemas import spec_schema


def check_spec_schema(document: Document) -> list[Finding]:
    """Findings for every way the document's spec breaks the schema of its kind.

    Each finding points at the offending value, or for a missing field at the mapping that
    lacks it; values a template produced point into the template.
    """
    spec = document.spec
    # jsonschema-rs reads plain dicts; a loader may hand over another Mapping.
    instance = spec if isinstance(spec, dict) else dict(spec)
    return [
        Finding(
            rule=violation.rule,
            severity=Severity.ERROR,
            message=violation.message,
            location=document.locate(("spec", *violation.path)),
            hint=violation.hint,
            document=str(document.address),
        )
        for violation in spec_schema(document.kind).violations(instance)
    ]
