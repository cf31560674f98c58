"""Validation: JSON Schemas, customs rule checks, project-wide checks and report formats."""

from customs_batch.validation.checks import validate_documents
from customs_batch.validation.schema_check import check_spec_schema
from customs_batch.validation.schemas import CompiledSchema, Violation, compiled, spec_schema

__all__ = [
    "CompiledSchema",
    "Violation",
    "check_spec_schema",
    "compiled",
    "spec_schema",
    "validate_documents",
]
