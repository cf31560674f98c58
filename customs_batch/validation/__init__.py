"""Validation: JSON Schemas, customs rule checks, project-wide checks and report formats."""
